//go:build linux

// ru_maxrss is in KiB on Linux, in bytes on macOS; the teams below need a
// POSIX shell. The other platforms have no RSS benchmark.

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Peak memory (issue 14, item 9): the whole binary's peak RSS, from the
// kernel's rusage of the finished process, for a task whose output is
// 200 MB (run, and --continue restoring it) and for --continue of a
// session whose spec is 100 MB.
//
//	go test ./bench -run '^$' -bench RSS -benchtime 1x
//
// peak-MB is the figure; out-MB (or spec-MB) what it is measured against.

// peakRSS runs teamrun with args and returns its peak RSS in bytes.
func peakRSS(b *testing.B, bin, home, dir string, args ...string) int64 {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TEAMRUN_HOME="+home, "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr // stdout (the 200 MB output) goes to /dev/null
	if err := cmd.Run(); err != nil {
		b.Fatalf("teamrun %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Skip("no rusage on this system")
	}
	return ru.Maxrss * 1024 // KiB on Linux
}

func BenchmarkRSSOutput200MB(b *testing.B) {
	const size = 200_000_000
	dir := b.TempDir()
	bin := build(b, dir)
	spec := fmt.Sprintf("name: big\nagents:\n  big:\n    shell: \"head -c %d /dev/zero | tr '\\\\0' x\"\ntasks:\n  out: {description: out, agent: big}\n", size)
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(spec), 0o600); err != nil {
		b.Fatal(err)
	}
	var peak, cont int64
	for i := range b.N {
		home := filepath.Join(dir, fmt.Sprintf("home%d", i))
		peak = max(peak, peakRSS(b, bin, home, dir, "run", "team.yaml", "--session", "big"))
		// Restored: the blob is read back (checked, then printed).
		cont = max(cont, peakRSS(b, bin, home, dir, "run", "team.yaml", "--continue", "--session", "big"))
	}
	b.ReportMetric(float64(peak)/1e6, "peak-MB")
	b.ReportMetric(float64(cont)/1e6, "continue-peak-MB")
	b.ReportMetric(size/1e6, "out-MB")
}

func BenchmarkRSSSpec100MB(b *testing.B) {
	// 10 tasks of 10 MB descriptions each, all done: --continue restores
	// them.
	const tasks, desc = 10, 10_000_000
	dir := b.TempDir()
	bin := build(b, dir)
	var s strings.Builder
	s.WriteString("name: big\nagents:\n  t:\n    shell: \"wc -c\"\ntasks:\n")
	line := strings.Repeat("x", desc)
	for i := range tasks {
		fmt.Fprintf(&s, "  t%d:\n    description: %s\n    agent: t\n", i, line)
	}
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	first := peakRSS(b, bin, home, dir, "run", "team.yaml", "--session", "big")
	var peak int64
	for range b.N {
		peak = max(peak, peakRSS(b, bin, home, dir, "run", "team.yaml", "--continue", "--session", "big"))
	}
	b.ReportMetric(float64(peak)/1e6, "peak-MB")
	b.ReportMetric(float64(first)/1e6, "first-run-peak-MB")
	b.ReportMetric(float64(s.Len())/1e6, "spec-MB")
}
