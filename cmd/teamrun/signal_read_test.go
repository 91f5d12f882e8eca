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

// A command that writes nothing stops at SIGINT or SIGTERM as any program
// does, even while it waits on a pipe it was given as its FILE (it used to
// catch the signal and go on waiting).
func TestReadOnlyCommandStopsAtSignal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
	}{
		{[]string{"validate"}, syscall.SIGINT},
		{[]string{"fingerprint"}, syscall.SIGTERM},
		{[]string{"plan"}, syscall.SIGINT},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "team.yaml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
			cmd := exec.Command(os.Args[0], append(tc.args, fifo)...)
			cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"))
			cmd.Dir = dir
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Opening the FIFO for writing returns once teamrun opened it
			// to read: it is then blocked in the read.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait() // before the fix: blocked here for good
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("wait: %v", err)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != tc.sig {
				t.Errorf("%v: want it ended by %v", ee, tc.sig)
			}
		})
	}
}

// A command that writes catches SIGINT and SIGTERM to finish its writes,
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
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "team.yaml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
			home := filepath.Join(dir, "home")
			cmd := exec.Command(os.Args[0], append(tc.args, fifo)...)
			cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+home)
			cmd.Dir = dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Its signal handlers are in place before it opens the FIFO.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait() // before the fix: blocked here for good
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("wait: %v, want exit %d\n%s", err, tc.code, stderr.String())
			}
			if got, want := stderr.String(), "teamrun: interrupted while reading "+fifo+"; "+tc.says+"\n"; got != want {
				t.Errorf("stderr %q, want %q", got, want)
			}
			if entries, _ := os.ReadDir(filepath.Join(home, "sessions")); len(entries) > 0 {
				t.Errorf("%d files written in the store", len(entries))
			}
		})
	}
}
