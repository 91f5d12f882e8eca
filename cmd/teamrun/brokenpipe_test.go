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

// A run whose stdout's reader goes away (`teamrun run … | head -1`) goes on
// to the end, its lines dropped: SIGPIPE used to end it at its next line as
// kill -9 does, mid-attempt. It ends saying the output is incomplete (exit
// 5), and a command it starts still gets SIGPIPE as usual.
func TestRunOutlivesItsReader(t *testing.T) {
	dir := t.TempDir()
	spec := `agents:
  w: {shell: 'sleep 0.3; echo "$TEAMRUN_TASK done"; touch "$TEAMRUN_TASK.done"'}
  p: {command: [bash, -c, 'yes | head -1 >/dev/null; echo "${PIPESTATUS[0]}" > pipestatus']}
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w}
  c: {description: c, agent: p}
`
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first line
	cmd := exec.Command(os.Args[0], "run", "team.yaml", "--session", "s")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"))
	cmd.Dir = dir
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	w.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("run: %v, want exit 5\n%s", err, stderr.String())
	}
	if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("killed by %v at its first line; want the run to go on\n%s", ws.Signal(), stderr.String())
	}
	if ee.ExitCode() != 5 || !strings.Contains(stderr.String(), "the output is incomplete") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 5 saying the output is incomplete", ee.ExitCode(), stderr.String())
	}
	for _, f := range []string{"a.done", "b.done"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("task %s did not finish: %v", strings.TrimSuffix(f, ".done"), err)
		}
	}
	// yes, started by a task, dies of SIGPIPE (141) when head is done,
	// as it does outside teamrun: the handler is not inherited.
	got, err := os.ReadFile(filepath.Join(dir, "pipestatus"))
	if err != nil || strings.TrimSpace(string(got)) != "141" {
		t.Errorf("yes in a task ended with %q (%v), want 141 (SIGPIPE)", got, err)
	}
}

// Only a run outlives its reader. run's help and a completion under run
// end at a broken pipe as every other command does (SIGPIPE, the shell's
// 141): they used to say the output is incomplete and exit 5, which says
// the session store failed.
func TestRunHelpEndsAtBrokenPipe(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--help"},
		{"run", "-h"},
		{"--help", "run"},
		{"help", "run"},
		{"run", "team.yaml", "--help"},
		{"run", "-", completionFlag}, // run's flags
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader is gone before the first line
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(t.TempDir(), "home"))
			cmd.Stdout = w
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err = cmd.Run()
			w.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("exit 0 (%v), want SIGPIPE\n%s", err, stderr.String())
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
				t.Errorf("exit %d, stderr:\n%s\nwant SIGPIPE, as any program", ee.ExitCode(), stderr.String())
			}
		})
	}
}
