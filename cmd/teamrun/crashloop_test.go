package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashLoopBinary kills the whole teamrun binary with SIGKILL at random
// instants, over and over, on sequential and workflow teams, each time
// resuming with --continue, until a run finishes by itself. Every task
// appends a line to a side-effect log when it runs, so the log says how
// often each task ran. Finished work is never run twice: a task runs again
// only when a kill interrupted it, so the runs beyond one per task are at
// most the tasks that were running at the kills. The final session holds
// every task's result, byte for byte. In the large team every result is
// over 1 MiB, stored out of line: a record never names a blob a kill lost
// (a resumed run would stop with exit 5).
func TestCrashLoopBinary(t *testing.T) {
	kills := 240
	if testing.Short() {
		kills = 30
	}
	teams := []struct {
		name     string
		workflow bool
		parallel int
	}{
		{"sequential", false, 1},
		{"workflow", true, 4},
	}
	if testing.Short() {
		teams = teams[1:]
	}
	for _, team := range teams {
		t.Run(team.name, func(t *testing.T) {
			crashLoop(t, team.workflow, team.parallel, kills/len(teams), false)
		})
	}
	// On top of the kills above.
	t.Run("large workflow", func(t *testing.T) { crashLoop(t, true, 4, kills/4, true) })
}

// crashLoop kills runs of fresh sessions until kills kills are done.
func crashLoop(t *testing.T, workflow bool, parallel, kills int, large bool) {
	start := time.Now()
	total, sessions := 0, 0
	for total < kills {
		total += crashSession(t, workflow, parallel, kills-total, large)
		sessions++
	}
	t.Logf("%d kills over %d sessions in %v", total, sessions, time.Since(start).Round(time.Millisecond))
}

// crashSession kills runs of one session (at most kills times) until one
// finishes by itself, checks what survived and returns the kills.
func crashSession(t *testing.T, workflow bool, parallel, kills int, large bool) int {
	dir := t.TempDir()
	const tasks = 24
	var spec strings.Builder
	if workflow {
		spec.WriteString("process: workflow\n")
	}
	// The task's work: a side effect, a moment of work, a result.
	pad := ""
	if large {
		pad = "head -c 1100000 /dev/zero | tr \"\\0\" x; "
	}
	fmt.Fprintf(&spec, "agents:\n  w:\n    shell: 'echo \"$TEAMRUN_TASK\" >> %s/effects.log; sleep 0.02; %secho \"result of $TEAMRUN_TASK\"'\ntasks:\n", dir, pad)
	for i := range tasks {
		fmt.Fprintf(&spec, "  t%02d:\n    description: step %d\n    agent: w\n", i, i)
		if workflow && i >= 4 {
			fmt.Fprintf(&spec, "    context: [t%02d, t%02d]\n", i-4, i-1-rand.IntN(3))
		}
	}
	specPath := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(specPath, []byte(spec.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "NO_COLOR=1")
	killed, finished := 0, false
	for round := 0; !finished; round++ {
		if round > kills+50 {
			t.Fatalf("no run finished after %d rounds", round)
		}
		cmd := exec.Command(os.Args[0], "run", specPath, "--continue", "--session", "s", "--max-parallel", fmt.Sprint(parallel), "--quiet")
		cmd.Env, cmd.Dir = env, dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		if killed < kills {
			select {
			case err = <-done:
				finished = true
			case <-time.After(time.Duration(rand.IntN(120_000)) * time.Microsecond):
				// teamrun alone: its tasks are left running, as after a
				// real crash, for the next run's orphan sweep to find.
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				killed++
				continue
			}
		} else {
			err = <-done
			finished = true
		}
		if err != nil {
			t.Fatalf("round %d: the run ended with %v\n%s", round, err, stderr.String())
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, line := range strings.Fields(string(log)) {
		runs[line]++
	}
	extra := 0
	for i := range tasks {
		name := fmt.Sprintf("t%02d", i)
		if runs[name] == 0 {
			t.Errorf("%s never ran", name)
		}
		extra += runs[name] - 1
	}
	// Each kill interrupts at most the tasks running then (parallel of
	// them, and one more each whose completion was in flight).
	if limit := killed * (parallel + 1); extra > limit {
		t.Errorf("%d runs beyond one per task after %d kills (at most %d): finished work ran again: %v", extra, killed, limit, runs)
	}
	// The whole session, results stored out of line included (and
	// checked).
	show := exec.Command(os.Args[0], "session", "export", "s")
	show.Env, show.Dir = env, dir
	out, err := show.Output()
	if err != nil {
		t.Fatalf("session export: %v", err)
	}
	for i := range tasks {
		if want := fmt.Sprintf("result of t%02d", i); !bytes.Contains(out, []byte(want)) {
			t.Errorf("the session lacks %q", want)
		}
	}
	t.Logf("%d kills; %d runs beyond one per task", killed, extra)
	return killed
}
