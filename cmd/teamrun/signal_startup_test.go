package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal at any moment of a run's start-up stops it: the run exits with
// the signal's code (or, before teamrun handles signals at all, dies of
// it), and its session, if it made one, is not done. The signal is sent
// ever later, each start a little after the last one's, until several
// runs in a row were already under way (their tasks started): the sweep
// covers the whole start-up, however long it takes on this machine. The
// spec is over 32 KiB and run with --continue, so that the start-up takes
// a while (loadingGC). Before, the run command registered its own handler
// only once its flags were read and its collector set, and a signal that
// came before was taken by main's handler and ignored: the run went on,
// and one of 800 quick tasks ended done, exit 0.
func TestSignalDuringStartup(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "agents.yaml")
	var b strings.Builder
	b.WriteString("name: startup\nagents:\n  sh: {shell: 'true'}\ntasks:\n")
	for i := range 800 {
		fmt.Fprintf(&b, "  t%d: {description: \"task %d %s\", agent: sh}\n", i, i, strings.Repeat("x", 20))
	}
	if b.Len() < hugeLoadFrom {
		t.Fatalf("the spec is %d bytes, under the %d that make its loading slow", b.Len(), hugeLoadFrom)
	}
	if err := os.WriteFile(spec, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	env := append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+home)
	signals := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}
	const underWay = 6 // runs in a row that were under way: the start-up is behind
	inARow := 0
	// A point of the start-up, not a limit on anything: each run is
	// signalled a little later than the one before, by 1 ms, then by a
	// sixteenth (a loaded machine starts a process slowly).
	var d time.Duration
	for i := 0; inARow < underWay; i, d = i+1, d+max(time.Millisecond, d/16) {
		if d > time.Minute {
			t.Fatalf("after %d signals, no %d runs in a row were under way when theirs came", i, underWay)
		}
		sig := signals[i%len(signals)]
		id := fmt.Sprintf("s%d", i)
		cmd := exec.Command(os.Args[0], "run", spec, "--continue", "--session", id)
		cmd.Env, cmd.Dir = env, dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s at start-up point %d (%v): %v, want exit %d; the signal was lost\n%s", sig, i, d, err, 128+int(sig), stderr.String())
		}
		ws, _ := ee.Sys().(syscall.WaitStatus)
		if (!ws.Signaled() || ws.Signal() != sig) && ee.ExitCode() != 128+int(sig) {
			t.Fatalf("%s at start-up point %d (%v): %v, want exit %d\n%s", sig, i, d, err, 128+int(sig), stderr.String())
		}
		if strings.Contains(stderr.String(), "stopping the running tasks") {
			inARow++
		} else {
			inARow = 0
		}
	}
	list := exec.Command(os.Args[0], "session", "list", "--json")
	list.Env, list.Dir = env, dir
	out, err := list.Output()
	if err != nil {
		t.Fatalf("session list: %v", err)
	}
	var got struct {
		Sessions []struct{ ID, Status string }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("session list --json: %v\n%s", err, out)
	}
	for _, s := range got.Sessions {
		if s.Status == "done" {
			t.Errorf("session %s is done: the signal sent while it started did not stop it", s.ID)
		}
	}
}
