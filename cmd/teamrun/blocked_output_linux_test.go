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

// One SIGTERM (a service manager's stop) ends a run whose stdout nobody
// reads: the notice is on stderr at once, and once the output has taken
// nothing for outputGrace the run exits 143 without waiting for it, its
// task stopped and its session resumable. Before, nothing reached stderr
// and the process stayed until the reader read again (or a SIGKILL).
func TestFirstSignalWithBlockedOutput(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "team.yaml")
	team := "agents:\n  big: {shell: 'if [ ! -e pid ]; then echo $$ > pid; seq 1 300000; exec sleep 100; fi; echo again'}\n" +
		"tasks:\n  a: {description: a, agent: big}\n"
	if err := os.WriteFile(spec, []byte(team), 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe() // never read: the run's -v lines fill it
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	env := append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"))
	cmd := exec.Command(os.Args[0], "run", spec, "-v", "--session", "s1")
	cmd.Env, cmd.Dir, cmd.Stdout = env, dir, w
	errOut := &syncBuffer{}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The pipe is full: the run waits on its stdout.
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	filled := time.After(time.Minute)
	for {
		if n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ); err != nil { // TIOCINQ is FIONREAD
			t.Fatal(err)
		} else if n >= size-64 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("ended before its output filled the pipe: %v\n%s", err, errOut.String())
		case <-filled:
			_ = cmd.Process.Kill()
			t.Fatalf("its output did not fill the pipe in a minute\n%s", errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Not timers on speed: each comes in seconds, or never.
	never := time.After(time.Minute)
	for !strings.Contains(errOut.String(), "terminated (SIGTERM): stopping the running tasks") {
		select {
		case err := <-exited:
			t.Fatalf("ended (%v) without the notice first\n%s", err, errOut.String())
		case <-never:
			_ = cmd.Process.Kill()
			t.Fatalf("no notice on stderr a minute after the SIGTERM, its stdout blocked\n%s", errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("still running a minute after the SIGTERM, its stdout blocked\n%s", errOut.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit: %v, want 143\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "stdout has taken nothing for 5s") {
		t.Errorf("stderr does not say why it did not wait for its output:\n%s", errOut.String())
	}
	if pid <= 0 {
		t.Errorf("the task wrote no pid: %q", b)
	} else if !dead(pid) {
		t.Errorf("the task's process %d outlived the run", pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	resume := exec.Command(os.Args[0], "run", spec, "--continue", "--session", "s1")
	resume.Env, resume.Dir = env, dir
	if out, err := resume.CombinedOutput(); err != nil || !strings.Contains(string(out), "summary done: 0 restored, 1 ran") {
		t.Errorf("--continue: %v\n%s", err, out)
	}
}
