//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A second Ctrl-C exits at once even when the run's own output is blocked
// (a pager that does not read, a terminal paused with Ctrl-S): the first
// one's notice, and the run's way out, wait on that output. Before, neither
// signal killed the task, and teamrun stayed until the reader went away.
func TestSecondSignalExitsWithBlockedOutput(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "team.yaml")
	team := "agents:\n  big: {shell: 'echo $$ > pid; seq 1 300000; exec sleep 100'}\ntasks:\n  a: {description: a, agent: big}\n"
	if err := os.WriteFile(spec, []byte(team), 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe() // never read: the run's -v lines fill it
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], "run", spec, "-v")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"))
	cmd.Dir, cmd.Stdout = dir, w
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var pid int
	for pid == 0 {
		select {
		case err := <-exited:
			t.Fatalf("ended before the task wrote its pid: %v\n%s", err, errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	// The task writes 2 MB of lines: wait until they fill the pipe (but
	// for the end of its last page, which the next line may not fit), so
	// that the run is blocked on it when the signals come.
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	// TIOCINQ is FIONREAD: the bytes the pipe holds unread.
	for n := 0; n < size-4096; n, _ = unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) {
		select {
		case err := <-exited:
			t.Fatalf("ended before its output filled the pipe: %v\n%s", err, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	for range 2 {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Not a timer on speed: it exits in about a second, or never.
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("still running a minute after the second SIGINT, its output blocked\n%s", errOut.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want 130\n%s", err, errOut.String())
	}
	if !dead(pid) {
		t.Errorf("the task's process %d outlived the run", pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// dead reports whether process pid is gone or a zombie (killed, its
// parent gone before it reaped it: init reaps it in its own time).
func dead(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	// The state follows the command name in parentheses: "pid (comm) S …".
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}
