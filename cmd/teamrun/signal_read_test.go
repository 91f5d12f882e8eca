package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// signalWhileReading starts teamrun with args and a FIFO as its last
// argument, waits until it is blocked reading it, sends sig and returns
// how it ended, its stderr, the FIFO's path and the store folder.
func signalWhileReading(t *testing.T, args []string, sig syscall.Signal) (ee *exec.ExitError, stderr, fifo, home string) {
	t.Helper()
	dir := t.TempDir()
	fifo, home = filepath.Join(dir, "team.yaml"), filepath.Join(dir, "home")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	cmd := exec.Command(os.Args[0], append(args, fifo)...)
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+home)
	cmd.Dir = dir
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the FIFO for writing returns once teamrun opened it to
	// read: it is then blocked in the read (its signal handlers, if any,
	// are in place before that).
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait() // before the fixes: blocked here for good
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v\n%s", err, errOut.String())
	}
	return ee, errOut.String(), fifo, home
}

// A command that writes nothing stops at SIGINT or SIGTERM as any program
// does, even while it waits on a pipe it was given as its FILE (it used to
// catch the signal and go on waiting); at SIGQUIT (Ctrl-\) it exits 131
// at once, not with Go's dump of its goroutines and exit 2 (bad usage).
func TestReadOnlyCommandStopsAtSignal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
	}{
		{[]string{"validate"}, syscall.SIGINT},
		{[]string{"fingerprint"}, syscall.SIGTERM},
		{[]string{"plan"}, syscall.SIGINT},
		{[]string{"validate"}, syscall.SIGQUIT},
		{[]string{"plan"}, syscall.SIGQUIT},
	} {
		t.Run(tc.args[0]+" "+tc.sig.String(), func(t *testing.T) {
			ee, stderr, _, _ := signalWhileReading(t, tc.args, tc.sig)
			ws, ok := ee.Sys().(syscall.WaitStatus)
			if tc.sig == syscall.SIGQUIT {
				if ee.ExitCode() != 131 || stderr != "" {
					t.Errorf("%v, want exit 131 and nothing on stderr; stderr:\n%.500s", ee, stderr)
				}
				return
			}
			if !ok || !ws.Signaled() || ws.Signal() != tc.sig {
				t.Errorf("%v: want it ended by %v", ee, tc.sig)
			}
		})
	}
}

// A command that writes catches SIGINT, SIGTERM and SIGHUP to finish its writes,
// but while it still waits on the pipe it reads first (run's spec, the
// file import reads) it has written nothing: the signal ends it then,
// with the signal's exit code and nothing written.
func TestWritingCommandStopsAtSignalWhileReading(t *testing.T) {
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
		code int
		says string
	}{
		{[]string{"run"}, syscall.SIGINT, 130, "nothing was run"},
		{[]string{"run", "--continue"}, syscall.SIGTERM, 143, "nothing was run"},
		{[]string{"session", "import"}, syscall.SIGINT, 130, "nothing was imported"},
		// SIGHUP too (a closed terminal): it used to kill the command
		// mid-write, as it was not caught.
		{[]string{"session", "import"}, syscall.SIGHUP, 129, "nothing was imported"},
		{[]string{"run"}, syscall.SIGHUP, 129, "nothing was run"},
		// SIGQUIT (Ctrl-\) as well, not Go's dump of its goroutines and
		// exit 2.
		{[]string{"run"}, syscall.SIGQUIT, 131, "nothing was run"},
	} {
		t.Run(strings.Join(tc.args, " ")+" "+tc.sig.String(), func(t *testing.T) {
			ee, stderr, fifo, home := signalWhileReading(t, tc.args, tc.sig)
			if ee.ExitCode() != tc.code {
				t.Fatalf("%v, want exit %d\n%s", ee, tc.code, stderr)
			}
			if want := "teamrun: interrupted while reading " + fifo + "; " + tc.says + "\n"; stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
			if entries, _ := os.ReadDir(filepath.Join(home, "sessions")); len(entries) > 0 {
				t.Errorf("%d files written in the store", len(entries))
			}
		})
	}
}

// A signal whoever started teamrun set to be ignored stays ignored, as in
// any program: `nohup teamrun run` outlives the closed terminal, and a run
// under `trap ” INT TERM QUIT` goes on at those signals. teamrun used to
// catch them all, and stopped the run (exit 129, 130, 143, 131).
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	dir := t.TempDir()
	fifo, home := filepath.Join(dir, "team.yaml"), filepath.Join(dir, "home")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	cmd := exec.Command("sh", "-c", `trap '' HUP; exec "$0" run "$1"`, os.Args[0], fifo)
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+home)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Open for writing returns once teamrun opened it to read: its signal
	// handling is in place by then.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("agents:\n  sh: {shell: 'echo ran'}\ntasks:\n  a: {description: a, agent: sh}\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v, want the run to go on and succeed; output:\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "ran") {
		t.Errorf("the task's output is missing:\n%s", out.String())
	}
}
