package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// stagingRecorder is a Stager: each Record or Flush is one "sync" that
// carries what was staged before it. failAt makes the n-th sync fail.
type stagingRecorder struct {
	mu       sync.Mutex
	staged   []string
	batches  [][]string
	failAt   int
	failWith error                // the failure at failAt; nil: "disk full"
	onSync   func(batch []string) // called with each sync's records, under mu
}

func (s *stagingRecorder) Stage(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged = append(s.staged, fmt.Sprintf("%s %s", ev.Type, ev.Task))
	return nil
}

func (s *stagingRecorder) sync(extra ...string) error {
	if s.failAt > 0 && len(s.batches)+1 == s.failAt {
		return cmp.Or(s.failWith, errors.New("disk full"))
	}
	s.batches = append(s.batches, append(s.staged, extra...))
	s.staged = nil
	if s.onSync != nil {
		s.onSync(s.batches[len(s.batches)-1])
	}
	return nil
}

func (s *stagingRecorder) Record(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sync(fmt.Sprintf("%s %s", ev.Type, ev.Task))
}

func (s *stagingRecorder) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.staged) == 0 {
		return nil
	}
	return s.sync()
}

func (s *stagingRecorder) syncs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.batches)
}

// syncObserver notes, for every event shown, how many syncs were done.
type syncObserver struct {
	rec   *stagingRecorder
	mu    sync.Mutex
	shown []string
}

func (o *syncObserver) Observe(ev Event) {
	if ev.Type != TaskStarted && ev.Type != TaskCompleted {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.shown = append(o.shown, fmt.Sprintf("%s %s after %d", ev.Type, ev.Task, o.rec.syncs()))
}

func TestSequentialOneSyncPerTask(t *testing.T) {
	for _, process := range []spec.Process{spec.Sequential, spec.Workflow} {
		t.Run(string(process), func(t *testing.T) {
			tm, cx := team(process, task("a"), task("b", ctxOf("a")), task("c", ctxOf("b")))
			rec := &stagingRecorder{}
			obs := &syncObserver{rec: rec}
			e := newEngine(tm, cx, &fakeExec{}, rec)
			e.Observer = obs
			sum, err := e.Run(context.Background())
			if err != nil || sum.Outcome != Succeeded {
				t.Fatalf("%v %+v", err, sum)
			}
			// A completion goes with the next start; the last one alone.
			want := [][]string{{"task_started a"}, {"task_completed a", "task_started b"}, {"task_completed b", "task_started c"}, {"task_completed c"}}
			if !slices.EqualFunc(rec.batches, want, slices.Equal) {
				t.Fatalf("syncs\n got %q\nwant %q", rec.batches, want)
			}
			// Nothing is shown before the sync that made it durable.
			wantShown := []string{"task_started a after 1", "task_completed a after 2", "task_started b after 2",
				"task_completed b after 3", "task_started c after 3", "task_completed c after 4"}
			if !slices.Equal(obs.shown, wantShown) {
				t.Fatalf("shown\n got %q\nwant %q", obs.shown, wantShown)
			}
		})
	}
}

// A staged completion whose sync fails is never shown nor counted done.
func TestStagedCompletionLostWithItsSync(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a"), task("b"), task("c"))
	rec := &stagingRecorder{failAt: 2} // the sync of a's completion and b's start
	obs := &syncObserver{rec: rec}
	e := newEngine(tm, cx, &fakeExec{}, rec)
	e.Observer = obs
	sum, err := e.Run(context.Background())
	var se *StoreError
	if !errors.As(err, &se) || sum.Outcome != StoreFailed {
		t.Fatalf("err %v, summary %+v", err, sum)
	}
	if got := strings.Join(obs.shown, "; "); got != "task_started a after 1" {
		t.Fatalf("shown: %s", got)
	}
}

// Tasks running side by side do not wait for one another's staged
// completions: with another task in flight, a completion is recorded at once.
func TestParallelCompletionsNotStaged(t *testing.T) {
	tm, cx := team(spec.Workflow, task("a", ctxOf()), task("b", ctxOf()))
	release := make(chan struct{})
	var once sync.Once
	ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) {
		if j.Task.Name == "b" {
			// b ends only after a's completion was recorded; should that
			// never come, the batches below say so instead of a hang.
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
		return Result{Raw: "ok"}, nil
	}}
	rec := &stagingRecorder{onSync: func(batch []string) {
		if slices.Contains(batch, "task_completed a") {
			once.Do(func() { close(release) })
		}
	}}
	e := newEngine(tm, cx, ex, rec)
	e.MaxParallel = 2
	if sum, err := e.Run(context.Background()); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("%v %+v", err, sum)
	}
	// a ended while b ran: its completion was recorded alone, at once,
	// not held back until b's.
	if !slices.ContainsFunc(rec.batches, func(b []string) bool { return slices.Equal(b, []string{"task_completed a"}) }) {
		t.Fatalf("batches %q: a's completion waited", rec.batches)
	}
}

// In a workflow, the completion that frees a slot goes with the start of
// the task that takes it.
func TestParallelCompletionCarriedByNextStart(t *testing.T) {
	tm, cx := team(spec.Workflow, task("a", ctxOf()), task("b", ctxOf()), task("c", ctxOf()))
	bStarted, cStarted := make(chan struct{}), make(chan struct{})
	ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) {
		switch j.Task.Name {
		case "a":
			<-bStarted // a ends while b runs
		case "b":
			close(bStarted)
			<-cStarted // b runs until c took a's slot
		case "c":
			close(cStarted)
		}
		return Result{Raw: "ok"}, nil
	}}
	rec := &stagingRecorder{}
	obs := &syncObserver{rec: rec}
	e := newEngine(tm, cx, ex, rec)
	e.Observer = obs
	e.MaxParallel = 2
	if sum, err := e.Run(context.Background()); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("%v %+v", err, sum)
	}
	if !slices.ContainsFunc(rec.batches, func(b []string) bool {
		return slices.Equal(b, []string{"task_completed a", "task_started c"})
	}) {
		t.Fatalf("batches %q: a's completion did not go with c's start", rec.batches)
	}
	for _, b := range rec.batches {
		if len(b) == 0 {
			t.Fatalf("an empty sync: %q", rec.batches)
		}
	}
}

// Tasks that start together, side by side, are made durable by one sync
// (each recording its own start waited for the one before it).
func TestParallelStartsShareASync(t *testing.T) {
	tm, cx := team(spec.Workflow, task("a", ctxOf()), task("b", ctxOf()), task("c", ctxOf()), task("d", ctxOf()), task("e", ctxOf("a", "b", "c", "d")))
	rec := &stagingRecorder{}
	obs := &syncObserver{rec: rec}
	e := newEngine(tm, cx, &fakeExec{}, rec)
	e.Observer = obs
	e.MaxParallel = 4
	if sum, err := e.Run(context.Background()); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("%v %+v", err, sum)
	}
	first := []string{"task_started a", "task_started b", "task_started c", "task_started d"}
	if len(rec.batches) == 0 || !slices.Equal(rec.batches[0], first) {
		t.Fatalf("syncs %q; want the first to be %q", rec.batches, first)
	}
	// None is shown before that sync.
	for _, s := range obs.shown[:4] {
		if !strings.HasSuffix(s, "after 1") {
			t.Fatalf("shown %q", obs.shown)
		}
	}
}
