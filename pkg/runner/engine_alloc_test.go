package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/spec"
)

// nopStager is a Stager that keeps nothing: what the engine allocates is
// its own.
type nopStager struct{ nopRecorder }

func (nopStager) Stage(Event) error { return nil }
func (nopStager) Flush() error      { return nil }

// A sequential run stages each completion and records it with the next
// start: what the engine allocates a task, counted over the tasks a
// second team of the same kind adds, stays within a bound (a list of
// staged events grown by that record was 384 bytes a task more).
func TestEngineAllocationPerTask(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector allocates on its own")
	}
	run := func(n int) uint64 {
		var tasks []*spec.Task
		for i := range n {
			tasks = append(tasks, task(fmt.Sprintf("t%d", i)))
		}
		tm, cx := team(spec.Sequential, tasks...)
		exec := &fakeExec{fn: func(context.Context, *Job) (Result, error) { return Result{}, nil }}
		return testenv.Allocated(3, func() {
			e := newEngine(tm, cx, exec, nopStager{})
			if sum, err := e.Run(context.Background()); err != nil || sum.Ran != n {
				t.Fatalf("%v %+v", err, sum)
			}
		})
	}
	small, large := run(200), run(1200)
	perTask := float64(large-small) / 1000
	t.Logf("%.0f bytes a task", perTask)
	if perTask > 2500 {
		t.Errorf("the engine allocates %.0f bytes a task, more than 2500", perTask)
	}
}
