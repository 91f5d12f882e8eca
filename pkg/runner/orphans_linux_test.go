package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestHasEnvEntry(t *testing.T) {
	tests := []struct {
		environ string
		want    bool
	}{
		{"A=1\x00TEAMRUN_SESSION=s1\x00B=2\x00", true},
		{"TEAMRUN_SESSION=s1", true},
		{"TEAMRUN_SESSION=s10\x00", false}, // another session
		{"X_TEAMRUN_SESSION=s1\x00", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := hasEnvEntry([]byte(tt.environ), []byte("TEAMRUN_SESSION=s1")); got != tt.want {
			t.Errorf("hasEnvEntry(%q) = %v, want %v", tt.environ, got, tt.want)
		}
	}
}

func TestStatField(t *testing.T) {
	dir := t.TempDir()
	// A command name with spaces and parentheses must not shift the fields.
	stat := "4242 (a (b) c) S 17 4240 4240 0 -1 4194560"
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := statField(dir, 1); got != 17 {
		t.Errorf("ppid %d, want 17", got)
	}
	if got := processGroup(dir); got != 4240 {
		t.Errorf("pgrp %d, want 4240", got)
	}
	if got := processGroup(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("pgrp of a missing process %d, want 0", got)
	}
}

// TestKillOrphans: a process left by a dead run of the session dies with
// its group (a child that has no TEAMRUN_SESSION of its own too); a
// process of another session is left alone.
func TestKillOrphans(t *testing.T) {
	id := fmt.Sprintf("orphan-test-%d", os.Getpid())
	start := func(session string) *exec.Cmd {
		// The child clears its environment: only its group ties it to the task.
		cmd := exec.Command("/bin/sh", "-c", "env -i /bin/sh -c 'sleep 60' & wait")
		cmd.Env = append(os.Environ(), "TEAMRUN_SESSION="+session)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
		return cmd
	}
	ours := start(id)
	other := start(id + "-other")
	// Wait for the child: it is in the group once it runs sleep.
	waitForGroupSize(t, ours.Process.Pid, 2)

	found := killOrphans(id)
	// The child may not have cleared its environment yet; then it is found too.
	if !slices.Contains(found, ours.Process.Pid) || slices.Contains(found, other.Process.Pid) {
		t.Fatalf("found %v, want %d and not %d", found, ours.Process.Pid, other.Process.Pid)
	}
	_ = ours.Wait()
	waitForGroupSize(t, ours.Process.Pid, 0)
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Fatalf("the other session's process: %v", err)
	}
}

// waitForGroupSize polls /proc until the group has n live members; a slow
// machine only makes it wait longer.
func waitForGroupSize(t *testing.T, pgid, n int) {
	t.Helper()
	var got int
	for range 3000 {
		got = 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			dir := filepath.Join("/proc", e.Name())
			if processGroup(dir) == pgid && statState(dir) != "Z" {
				got++
			}
		}
		if got == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("group %d has %d live processes, want %d", pgid, got, n)
}

func statState(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return ""
	}
	s := string(b)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' && i+3 <= len(s) {
			return s[i+2 : i+3]
		}
	}
	return ""
}
