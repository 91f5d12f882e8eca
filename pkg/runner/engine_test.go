package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/schedule"
	"github.com/teamrun/teamrun/pkg/spec"
)

// fakeExec answers each job with fn and remembers what it was given.
type fakeExec struct {
	mu   sync.Mutex
	jobs []Job
	fn   func(ctx context.Context, j *Job) (Result, error)
}

func (f *fakeExec) Execute(ctx context.Context, j *Job) (Result, error) {
	f.mu.Lock()
	f.jobs = append(f.jobs, *j)
	f.mu.Unlock()
	if f.fn == nil {
		return Result{Raw: "out:" + j.Task.Name}, nil
	}
	return f.fn(ctx, j)
}

func (f *fakeExec) ran() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for _, j := range f.jobs {
		names = append(names, j.Task.Name)
	}
	return names
}

// memRecorder keeps events; failAt makes the n-th Record fail (1-based),
// with failWith when set.
type memRecorder struct {
	mu       sync.Mutex
	events   []Event
	failAt   int
	failWith error
}

func (m *memRecorder) Record(ev Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failAt > 0 && len(m.events)+1 == m.failAt {
		return cmp.Or(m.failWith, errors.New("disk full"))
	}
	m.events = append(m.events, ev)
	return nil
}

func (m *memRecorder) lines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, ev := range m.events {
		out = append(out, fmt.Sprintf("%s %s %d", ev.Type, ev.Task, ev.Attempt))
	}
	return out
}

type taskOpt func(*spec.Task)

func ctxOf(names ...string) taskOpt {
	return func(t *spec.Task) { t.Context, t.HasContext = names, true }
}
func retries(n int, d time.Duration) taskOpt {
	return func(t *spec.Task) { t.MaxRetries, t.RetryDelay = n, d }
}
func cond(value string, next ...string) taskOpt {
	return func(t *spec.Task) { t.SetCondition(append(t.Condition(), spec.Route{Value: value, Next: next})) }
}
func agent(name string) taskOpt { return func(t *spec.Task) { t.Agent = name } }
func outVar(v string) taskOpt   { return func(t *spec.Task) { t.OutputVariable = v } }
func options(o ...string) taskOpt {
	return func(t *spec.Task) { t.SetOptions(o) }
}

func task(name string, opts ...taskOpt) *spec.Task {
	t := &spec.Task{Name: name, Description: "do " + name, Agent: "worker"}
	for _, o := range opts {
		o(t)
	}
	return t
}

// team builds a team and its effective context the way spec.ContextOf
// defines it: sequential tasks without context read the previous task.
func team(process spec.Process, tasks ...*spec.Task) (*spec.Team, [][]int) {
	t := &spec.Team{Name: "t", Process: process, Tasks: tasks,
		Agents: []*spec.Agent{{Name: "worker", Kind: spec.CommandAgent, Shell: "true"}}}
	idx := map[string]int{}
	for i, task := range tasks {
		idx[task.Name] = i
	}
	ctx := make([][]int, len(tasks))
	for i, task := range tasks {
		switch {
		case task.HasContext:
			for _, c := range task.Context {
				ctx[i] = append(ctx[i], idx[c])
			}
		case process == spec.Sequential && i > 0:
			ctx[i] = []int{i - 1}
		}
	}
	return t, ctx
}

func newEngine(tm *spec.Team, ctx [][]int, ex Executor, rec Recorder) *Engine {
	return &Engine{
		Session: "s1", Team: tm, Context: ctx, Executor: ex, Recorder: rec,
		Sleep:         func(ctx context.Context, d time.Duration) error { return ctx.Err() },
		DecideCommand: func(task, v string) string { return "teamrun session decide s1 " + task + " " + v },
	}
}

func TestSequentialContextAndState(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a", outVar("first")), task("b"), task("c", ctxOf("a")))
	ex := &fakeExec{}
	rec := &memRecorder{}
	e := newEngine(tm, cx, ex, rec)
	e.State = map[string]any{"topic": "go"}
	sum, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != Succeeded || sum.Ran != 3 || sum.Restored != 0 {
		t.Fatalf("summary %+v", sum)
	}
	want := []string{"task_started a 1", "task_completed a 1", "task_started b 1", "task_completed b 1", "task_started c 1", "task_completed c 1"}
	if got := rec.lines(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if got := e.State["first"]; got != "out:a" {
		t.Fatalf("output_variable: state[first] = %v", got)
	}
	jb := ex.jobs[1]
	if len(jb.Context) != 1 || jb.Context[0].Task != "a" || jb.Context[0].Output.Raw != "out:a" || jb.Context[0].Output.OutputFormat != "RAW" {
		t.Fatalf("b's context = %+v, want a's output", jb.Context)
	}
	if jb.State["first"] != "out:a" {
		t.Fatalf("b's state snapshot misses the output variable: %v", jb.State)
	}
	if jc := ex.jobs[2]; len(jc.Context) != 1 || jc.Context[0].Task != "a" {
		t.Fatalf("c's context = %+v, want a", jc.Context)
	}
	if rec.events[1].OutputVariable != "first" {
		t.Fatalf("completed event of a does not name its output variable: %+v", rec.events[1])
	}
}

func TestSequentialFailureStops(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a"), task("b", retries(2, time.Second)), task("c"))
	var delays []time.Duration
	ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) {
		if j.Task.Name == "b" {
			return Result{}, errors.New("boom")
		}
		return Result{Raw: "ok"}, nil
	}}
	rec := &memRecorder{}
	e := newEngine(tm, cx, ex, rec)
	e.MaxBackoff = 3 * time.Second
	e.Sleep = func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil }
	sum, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != Failed || sum.Failed != 1 || sum.Pending != 1 || !slices.Equal(sum.FailedTasks, []string{"b"}) {
		t.Fatalf("summary %+v", sum)
	}
	if got := ex.ran(); !slices.Equal(got, []string{"a", "b", "b", "b"}) {
		t.Fatalf("ran %v", got)
	}
	if !slices.Equal(delays, []time.Duration{time.Second, 2 * time.Second}) {
		t.Fatalf("delays %v", delays)
	}
	last := rec.events[len(rec.events)-1]
	if last.Type != TaskFailed || last.Attempt != 3 || last.RetryCount != 2 || last.Error != "boom" {
		t.Fatalf("last event %+v", last)
	}
}

func TestBackoffCapped(t *testing.T) {
	e := &Engine{MaxBackoff: 5 * time.Second}
	tests := []struct {
		base time.Duration
		try  int
		want time.Duration
	}{
		{0, 0, time.Second}, // no retry_delay: DefaultRetryDelay (was 0: back to back)
		{0, 1, 2 * time.Second},
		{0, 3, 5 * time.Second},
		{time.Second, 0, time.Second},
		{time.Second, 1, 2 * time.Second},
		{time.Second, 2, 4 * time.Second},
		{time.Second, 3, 5 * time.Second},
		{time.Second, 60, 5 * time.Second},
		{10 * time.Second, 0, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := e.backoff(tt.base, tt.try); got != tt.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", tt.base, tt.try, got, tt.want)
		}
	}
}

func TestRetrySucceedsAndAttemptsCountAcrossRuns(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a", retries(1, 0)))
	ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) {
		if j.Attempt == 3 {
			return Result{}, errors.New("flaky")
		}
		return Result{Raw: fmt.Sprint(j.Attempt)}, nil
	}}
	rec := &memRecorder{}
	e := newEngine(tm, cx, ex, rec)
	e.Attempts = []int{2} // two attempts in earlier runs
	sum, _ := e.Run(context.Background())
	if sum.Outcome != Succeeded {
		t.Fatalf("summary %+v", sum)
	}
	want := []string{"task_started a 3", "task_retrying a 3", "task_started a 4", "task_completed a 4"}
	if got := rec.lines(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if rec.events[3].RetryCount != 3 || rec.events[3].Result != "4" {
		t.Fatalf("completed %+v", rec.events[3])
	}
}

func TestWorkflowMaxParallel(t *testing.T) {
	var tasks []*spec.Task
	for i := range 8 {
		tasks = append(tasks, task(fmt.Sprintf("t%d", i), ctxOf()))
	}
	tasks = append(tasks, task("join", ctxOf("t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7")))
	tm, cx := team(spec.Workflow, tasks...)
	var cur, peak atomic.Int32
	gate := make(chan struct{})
	var once sync.Once
	ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == 3 {
			once.Do(func() { close(gate) })
		}
		if j.Task.Name != "join" {
			<-gate // hold until three run at once: proves parallelism
		}
		return Result{Raw: j.Task.Name}, nil
	}}
	e := newEngine(tm, cx, ex, &memRecorder{})
	e.MaxParallel = 3
	sum, err := e.Run(context.Background())
	if err != nil || sum.Outcome != Succeeded || sum.Ran != 9 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if p := peak.Load(); p != 3 {
		t.Fatalf("peak parallelism %d, want 3", p)
	}
	jobs := ex.jobs
	if last := jobs[len(jobs)-1]; last.Task.Name != "join" || len(last.Context) != 8 {
		t.Fatalf("join ran with context %d, last job %s", len(last.Context), last.Task.Name)
	}
}

func routingTeam(process spec.Process) (*spec.Team, [][]int) {
	return team(process,
		task("draft", ctxOf()),
		task("review", ctxOf("draft"), cond("approve", "publish"), cond("reject", "revise", "notify")),
		task("publish", ctxOf("review")),
		task("revise", ctxOf("review")),
		task("notify", ctxOf("revise")),
		task("final", ctxOf("publish", "revise")),
	)
}

func TestConditionRouting(t *testing.T) {
	tests := []struct {
		name     string
		process  spec.Process
		decision string
		ran      []string
		skipped  []string
	}{
		{"workflow approve", spec.Workflow, "approve", []string{"draft", "review", "publish", "final"}, []string{"notify", "revise"}},
		{"workflow reject", spec.Workflow, " reject\n", []string{"draft", "review", "revise", "notify", "final"}, []string{"publish"}},
		{"sequential approve", spec.Sequential, "approve", []string{"draft", "review", "publish", "final"}, []string{"notify", "revise"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, cx := routingTeam(tt.process)
			ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) {
				if j.Task.Name == "review" {
					return Result{Raw: tt.decision}, nil
				}
				return Result{Raw: j.Task.Name}, nil
			}}
			rec := &memRecorder{}
			sum, err := newEngine(tm, cx, ex, rec).Run(context.Background())
			if err != nil || sum.Outcome != Succeeded {
				t.Fatalf("summary %+v, %v", sum, err)
			}
			got := ex.ran()
			slices.Sort(got)
			want := slices.Clone(tt.ran)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("ran %v, want %v", got, want)
			}
			var skipped []string
			for _, ev := range rec.events {
				if ev.Type == TaskSkipped {
					skipped = append(skipped, ev.Task)
				}
			}
			slices.Sort(skipped)
			if !slices.Equal(skipped, tt.skipped) {
				t.Fatalf("skipped %v, want %v", skipped, tt.skipped)
			}
			if sum.Skipped != len(tt.skipped) {
				t.Fatalf("summary skipped %d", sum.Skipped)
			}
		})
	}
}

func TestRouteMismatchFailsTheAttempt(t *testing.T) {
	tm, cx := routingTeam(spec.Workflow)
	ex := &fakeExec{fn: func(_ context.Context, j *Job) (Result, error) { return Result{Raw: "maybe"}, nil }}
	sum, _ := newEngine(tm, cx, ex, &memRecorder{}).Run(context.Background())
	if sum.Outcome != Failed || !slices.Equal(sum.FailedTasks, []string{"review"}) {
		t.Fatalf("summary %+v", sum)
	}
}

// restoredOf is Engine.Restored giving back the outputs in m.
func restoredOf(m map[int]Output) func(int) (Output, bool) {
	return func(i int) (Output, bool) { out, ok := m[i]; return out, ok }
}

func TestRestoredResultsFeedContextAndRouting(t *testing.T) {
	tm, cx := routingTeam(spec.Workflow)
	ex := &fakeExec{}
	rec := &memRecorder{}
	e := newEngine(tm, cx, ex, rec)
	e.Restored = restoredOf(map[int]Output{
		0: {Description: "do draft", Raw: "the draft", Agent: "worker", OutputFormat: "RAW"},
		1: {Description: "do review", Raw: "reject\n", Agent: "worker", OutputFormat: "RAW"},
	})
	sum, err := e.Run(context.Background())
	if err != nil || sum.Outcome != Succeeded || sum.Restored != 2 || sum.Ran != 3 || sum.Skipped != 1 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	got := ex.ran()
	slices.Sort(got)
	if !slices.Equal(got, []string{"final", "notify", "revise"}) {
		t.Fatalf("ran %v", got)
	}
	for _, j := range ex.jobs {
		if j.Task.Name == "revise" && (len(j.Context) != 1 || j.Context[0].Output.Raw != "reject\n") {
			t.Fatalf("revise's context %+v", j.Context)
		}
	}
	for _, ev := range rec.events {
		if ev.Task == "draft" || ev.Task == "review" {
			t.Fatalf("a restored task was recorded again: %+v", ev)
		}
	}
}

func TestHumanHaltAndDecision(t *testing.T) {
	mk := func() (*spec.Team, [][]int) {
		return team(spec.Sequential,
			task("draft"),
			task("approve", agent(spec.HumanAgent), options("yes", "no"), cond("yes", "ship"), cond("no")),
			task("ship"),
		)
	}
	t.Run("halt", func(t *testing.T) {
		tm, cx := mk()
		ex := &fakeExec{}
		rec := &memRecorder{}
		e := newEngine(tm, cx, ex, rec)
		var obs obsRecorder
		e.Observer = &obs
		sum, err := e.Run(context.Background())
		if err != nil || sum.Outcome != Halted || sum.Ran != 1 || sum.Pending != 2 {
			t.Fatalf("summary %+v, %v", sum, err)
		}
		h := obs.find(RunHalted).Halt
		if h == nil || h.Task != "approve" || h.Session != "s1" || h.Description != "do approve" ||
			!slices.Equal(h.Options, []string{"yes", "no"}) ||
			!slices.Equal(h.Commands, []string{"teamrun session decide s1 approve yes", "teamrun session decide s1 approve no"}) {
			t.Fatalf("halt %+v", h)
		}
	})
	for _, tt := range []struct {
		decision string
		outcome  Outcome
		ran      []string
	}{
		{"yes", Succeeded, []string{"ship"}},
		{"no", Succeeded, nil},
		{"maybe", Failed, nil},
	} {
		t.Run("decided "+tt.decision, func(t *testing.T) {
			tm, cx := mk()
			ex := &fakeExec{}
			rec := &memRecorder{}
			e := newEngine(tm, cx, ex, rec)
			e.Restored = restoredOf(map[int]Output{0: {Raw: "d"}})
			e.Decisions = map[string]string{"approve": tt.decision}
			sum, err := e.Run(context.Background())
			if err != nil || sum.Outcome != tt.outcome {
				t.Fatalf("summary %+v, %v", sum, err)
			}
			if got := ex.ran(); !slices.Equal(got, tt.ran) {
				t.Fatalf("ran %v, want %v", got, tt.ran)
			}
			if tt.outcome == Succeeded && (rec.events[0].Type != TaskCompleted || rec.events[0].Result != tt.decision) {
				t.Fatalf("first event %+v", rec.events[0])
			}
		})
	}
}

type obsRecorder struct {
	mu     sync.Mutex
	events []Event
}

func (o *obsRecorder) Observe(ev Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
}

func (o *obsRecorder) find(tp EventType) Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ev := range o.events {
		if ev.Type == tp {
			return ev
		}
	}
	return Event{}
}

func TestInterruptRecordsNotCompleted(t *testing.T) {
	tm, cx := team(spec.Workflow, task("a", ctxOf()), task("b", ctxOf()), task("c", ctxOf("a", "b")))
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 2)
	ex := &fakeExec{fn: func(ctx context.Context, j *Job) (Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return Result{}, ctx.Err()
	}}
	go func() { <-started; <-started; cancel() }()
	rec := &memRecorder{}
	sum, err := newEngine(tm, cx, ex, rec).Run(ctx)
	if err != nil || sum.Outcome != Interrupted || sum.Pending != 3 || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	n := 0
	for _, ev := range rec.events {
		if ev.Type == TaskInterrupted {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d interrupted events, want 2: %q", n, rec.lines())
	}
}

func TestStoreFailureStops(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a"), task("b"), task("c"))
	ex := &fakeExec{}
	rec := &memRecorder{failAt: 4} // b's completion
	sum, err := newEngine(tm, cx, ex, rec).Run(context.Background())
	var se *StoreError
	if !errors.As(err, &se) || sum.Outcome != StoreFailed {
		t.Fatalf("err %v, summary %+v", err, sum)
	}
	if got := ex.ran(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("ran %v", got)
	}
}

// lostLock is a Losable whose loss the test triggers.
type lostLock struct {
	gone chan struct{}
	once sync.Once
}

func (l *lostLock) Lost() <-chan struct{} { return l.gone }
func (l *lostLock) LostErr() error {
	select {
	case <-l.gone:
		return errors.New("the session was taken over by another run")
	default:
		return nil
	}
}
func (l *lostLock) lose() { l.once.Do(func() { close(l.gone) }) }

// TestLostLockStopsTheRun: the run stops the moment its lock is lost, not
// when the running task ends: the task is cancelled, nothing more is
// recorded, and the run fails with the lock's reason.
func TestLostLockStopsTheRun(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a"), task("long"), task("c"))
	lock := &lostLock{gone: make(chan struct{})}
	ex := &fakeExec{fn: func(ctx context.Context, j *Job) (Result, error) {
		if j.Task.Name != "long" {
			return Result{Raw: "ok"}, nil
		}
		lock.lose()
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(time.Minute):
			return Result{Raw: "finished after all"}, nil
		}
	}}
	rec := &memRecorder{}
	e := newEngine(tm, cx, ex, rec)
	e.Lock = lock
	sum, err := e.Run(context.Background())
	var se *StoreError
	if !errors.As(err, &se) || sum.Outcome != StoreFailed || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("err %v, summary %+v", err, sum)
	}
	want := []string{"task_started a 1", "task_completed a 1", "task_started long 1"}
	if got := rec.lines(); !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q (nothing after the loss)", got, want)
	}
	if got := ex.ran(); !slices.Equal(got, []string{"a", "long"}) {
		t.Errorf("ran %v", got)
	}
}

func TestRenderAtRunTime(t *testing.T) {
	tm, cx := team(spec.Sequential, task("a", outVar("x")), task("b"))
	tm.Tasks[1].Description = "use {x}"
	ex := &fakeExec{}
	e := newEngine(tm, cx, ex, &memRecorder{})
	e.Render = func(tk *spec.Task, w spec.TaskText, st map[string]any) string {
		s := tk.Text(w)
		for k, v := range st {
			s = strings.ReplaceAll(s, "{"+k+"}", fmt.Sprint(v))
		}
		return s
	}
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := ex.jobs[1].Description; d != "use out:a" {
		t.Fatalf("b's description %q", d)
	}
}

func TestHaltLetsIndependentBranchesFinish(t *testing.T) {
	tm, cx := team(spec.Workflow,
		task("draft", ctxOf()),
		task("ok", agent(spec.HumanAgent), ctxOf("draft")),
		task("ship", ctxOf("ok")),
		task("archive", ctxOf("draft")),
	)
	ex := &fakeExec{}
	rec := &memRecorder{}
	sum, err := newEngine(tm, cx, ex, rec).Run(context.Background())
	if err != nil || sum.Outcome != Halted || sum.Ran != 2 || sum.Pending != 2 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	got := ex.ran()
	slices.Sort(got)
	if !slices.Equal(got, []string{"archive", "draft"}) {
		t.Fatalf("ran %v", got)
	}
	if last := rec.events[len(rec.events)-1]; last.Type != RunHalted || last.Task != "ok" || last.Halt == nil {
		t.Fatalf("last recorded event %+v, want the halt", last)
	}
}

// A task that ran but whose end the store did not take is neither ran nor
// failed in the summary: it is unrecorded, and runs again on --continue.
func TestSummaryUnrecorded(t *testing.T) {
	fails := func(name string) func(ctx context.Context, j *Job) (Result, error) {
		return func(ctx context.Context, j *Job) (Result, error) {
			if j.Task.Name == name {
				return Result{}, errors.New("exit status 1")
			}
			return Result{Raw: "ok"}, nil
		}
	}
	storeFails := func(name string, ended bool) func(ctx context.Context, j *Job) (Result, error) {
		return func(ctx context.Context, j *Job) (Result, error) {
			if j.Task.Name == name {
				return Result{}, &StoreError{Err: errors.New("store a result: duplicate key"), Ended: ended}
			}
			return Result{Raw: "ok"}, nil
		}
	}
	maybe := fmt.Errorf("connection lost: %w", checkpoint.ErrMaybeWritten)
	for _, tc := range []struct {
		name     string
		rec      Recorder
		fn       func(ctx context.Context, j *Job) (Result, error)
		lose     bool // the lock is lost while b runs, which ends all the same
		ran      int
		failed   int
		pending  int
		unrecord []string
		maybe    []string
	}{
		{name: "result not kept", rec: &memRecorder{}, fn: storeFails("b", true), ran: 1, pending: 1, unrecord: []string{"b"}},
		{name: "cut short by a write of its own: it did not end", rec: &memRecorder{}, fn: storeFails("b", false), ran: 1, pending: 2},
		{name: "completion refused", rec: &memRecorder{failAt: 4}, ran: 1, pending: 1, unrecord: []string{"b"}},
		{name: "failure refused", rec: &memRecorder{failAt: 4}, fn: fails("b"), ran: 1, pending: 1, unrecord: []string{"b"}},
		// a's start, a's completion with b's start, then c's start carrying
		// b's staged completion.
		{name: "staged completion refused", rec: &stagingRecorder{failAt: 3}, ran: 1, pending: 1, unrecord: []string{"b"}},
		{name: "lock lost while it ran", rec: &memRecorder{}, lose: true, ran: 1, pending: 1, unrecord: []string{"b"}},
		{name: "start refused: it never ran", rec: &memRecorder{failAt: 3}, ran: 1, pending: 2},
		{name: "nothing refused", rec: &memRecorder{}, ran: 3},
		// The connection broke before the store's answer came: the
		// completion may be in the session.
		{name: "completion's fate unknown", rec: &memRecorder{failAt: 4, failWith: maybe}, ran: 1, pending: 1, maybe: []string{"b"}},
		{name: "staged completion's fate unknown", rec: &stagingRecorder{failAt: 3, failWith: maybe}, ran: 1, pending: 1, maybe: []string{"b"}},
		{name: "start's fate unknown: it never ran", rec: &memRecorder{failAt: 3, failWith: maybe}, ran: 1, pending: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm, cx := team(spec.Sequential, task("a"), task("b"), task("c"))
			lock := &lostLock{gone: make(chan struct{})}
			fn := tc.fn
			if tc.lose {
				fn = func(ctx context.Context, j *Job) (Result, error) {
					if j.Task.Name == "b" {
						lock.lose()
						<-ctx.Done() // the loss is noticed; b ends all the same
					}
					return Result{Raw: "ok"}, nil
				}
			}
			e := newEngine(tm, cx, &fakeExec{fn: fn}, tc.rec)
			e.Lock = lock
			sum, _ := e.Run(context.Background())
			if sum.Ran != tc.ran || sum.Failed != tc.failed || sum.Pending != tc.pending || sum.Unrecorded != len(tc.unrecord) ||
				!slices.Equal(sum.UnrecordedTasks, tc.unrecord) {
				t.Errorf("ran %d failed %d not run %d unrecorded %d %q, want %d %d %d %q",
					sum.Ran, sum.Failed, sum.Pending, sum.Unrecorded, sum.UnrecordedTasks, tc.ran, tc.failed, tc.pending, tc.unrecord)
			}
			if sum.MaybeRecorded != len(tc.maybe) || !slices.Equal(sum.MaybeRecordedTasks, tc.maybe) {
				t.Errorf("maybe recorded %d %q, want %q", sum.MaybeRecorded, sum.MaybeRecordedTasks, tc.maybe)
			}
			for _, o := range sum.Outputs {
				if slices.Contains(tc.unrecord, o.Task) || slices.Contains(tc.maybe, o.Task) {
					t.Errorf("the summary shows the output of %s, which the session does not have", o.Task)
				}
			}
		})
	}
}

// A graph the caller built (the restore's refuser asked it) is the one the
// engine runs on: it is not built a second time.
func TestEngineRunsOnTheGraphItIsGiven(t *testing.T) {
	tm, cx := routingTeam(spec.Workflow)
	g, err := schedule.New(tm, cx)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(tm, cx, &fakeExec{}, &memRecorder{})
	e.Graph = g
	e.Restored = restoredOf(map[int]Output{0: {Raw: "the draft"}, 1: {Raw: "approve\n"}})
	sum, err := e.Run(context.Background())
	if err != nil || sum.Outcome != Succeeded || sum.Restored != 2 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if e.graph != g {
		t.Error("the engine built a graph of its own")
	}
}

// The recording is ended (Finish: the file store folds its journal into
// the session's file) before the run's end is told, once: when that
// fails (a full disk), the summary and RunFinished say the store failed,
// as the error and the exit code (5) do, whatever the tasks did. The
// summary said done, failed or halted, and --json's run_finished
// "failed", while teamrun exited 5.
func TestFinishFailureIsTheOutcome(t *testing.T) {
	full := errors.New("cannot write /s/s1.json: no space left on device")
	for _, tt := range []struct {
		name    string
		tasks   []*spec.Task
		fails   bool // b fails
		finish  error
		outcome Outcome
	}{
		{name: "done", tasks: []*spec.Task{task("a"), task("b")}, outcome: Succeeded},
		{name: "done, not folded in", tasks: []*spec.Task{task("a"), task("b")}, finish: full, outcome: StoreFailed},
		{name: "failed", tasks: []*spec.Task{task("a"), task("b")}, fails: true, outcome: Failed},
		{name: "halted", tasks: []*spec.Task{task("a"), task("b", agent(spec.HumanAgent), options("yes", "no"))}, outcome: Halted},
		{name: "failed, not folded in", tasks: []*spec.Task{task("a"), task("b")}, fails: true, finish: full, outcome: StoreFailed},
		{name: "halted, not folded in", tasks: []*spec.Task{task("a"), task("b", agent(spec.HumanAgent), options("yes", "no"))}, finish: full, outcome: StoreFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tm, cx := team(spec.Sequential, tt.tasks...)
			ex := &fakeExec{fn: func(ctx context.Context, j *Job) (Result, error) {
				if tt.fails && j.Task.Name == "b" {
					return Result{}, errors.New("exit status 1")
				}
				return Result{Raw: "ok"}, nil
			}}
			e := newEngine(tm, cx, ex, &memRecorder{})
			var obs obsRecorder
			e.Observer = &obs
			calls := 0
			e.Finish = func() error {
				if obs.find(RunFinished).Summary != nil {
					t.Error("Finish was called after the run's end was told")
				}
				calls++
				return tt.finish
			}
			sum, err := e.Run(context.Background())
			if calls != 1 {
				t.Errorf("Finish called %d times, want once", calls)
			}
			told := obs.find(RunFinished).Summary
			if sum == nil || told == nil || sum.Outcome != tt.outcome || told.Outcome != tt.outcome {
				t.Fatalf("summary %+v, told %+v; want outcome %s", sum, told, tt.outcome)
			}
			var se *StoreError
			if (tt.finish != nil) != errors.As(err, &se) || tt.finish != nil && !errors.Is(err, full) {
				t.Errorf("error %v, want a *StoreError of %v", err, tt.finish)
			}
		})
	}
}

// The summary tells a task whose record's fate is unknown apart from one
// not recorded: --continue restores the first if it was written.
func TestSummaryWordsUnrecorded(t *testing.T) {
	var b strings.Builder
	writeResult(&b, &Summary{Outcome: StoreFailed, Ran: 1, Unrecorded: 1, UnrecordedTasks: []string{"t3"},
		MaybeRecorded: 1, MaybeRecordedTasks: []string{"t2"}, Total: 4}, style{})
	want := "summary stopped: the checkpoint could not be written: 0 restored, 1 ran, 1 ran but not recorded (t3: it runs again on --continue), " +
		"1 ran and may have been recorded (t2: --continue restores what was, and runs the rest again), 0 failed, 0 skipped of 4 tasks in "
	if !strings.HasPrefix(b.String(), want) {
		t.Fatalf("got  %q\nwant %q…", b.String(), want)
	}
}
