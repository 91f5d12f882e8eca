package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestStartupInitIsLight: teamrun's own packages do next to nothing at
// package init, which every command pays (--version included): regular
// expressions and tables are made on first use. It counts what the Go
// runtime reports (GODEBUG=inittrace=1: bytes and allocations, not time).
func TestStartupInitIsLight(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--version")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("teamrun --version: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (github\.com/teamrun/teamrun/\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	found := 0
	for _, m := range line.FindAllSubmatch(out, -1) {
		found++
		bytes, _ := strconv.Atoi(string(m[2]))
		allocs, _ := strconv.Atoi(string(m[3]))
		if bytes > 4096 || allocs > 64 {
			t.Errorf("init of %s: %d bytes, %d allocations (want ≤ 4096, ≤ 64): make it on first use", m[1], bytes, allocs)
		}
	}
	if found == 0 {
		t.Fatalf("no init trace of teamrun's packages in:\n%s", out)
	}
}
