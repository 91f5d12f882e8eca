// Package runner runs a team: it schedules the tasks of a spec.Team
// (sequential or as a workflow DAG), runs their agents, hands every state
// change to a Recorder before it moves on, and reports progress.
package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/teamrun/teamrun/internal/ownfiles"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/backoff"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/runner/schedule"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Output is a task's output as later tasks read it (DESIGN §4); a restored
// result is rebuilt into the same shape.
type Output struct {
	Description  string `json:"description"`
	Raw          string `json:"raw"`
	Agent        string `json:"agent"`
	OutputFormat string `json:"output_format"`
	// Blob is set, and Raw empty, for a result stored out of line (over
	// checkpoint.BlobThreshold); Open, Text and Verify read it.
	Blob *checkpoint.Blob `json:"-"`
	open BlobOpener
}

// ContextOutput is the output of one context task, by name.
type ContextOutput struct {
	Task   string
	Output Output
}

// Job is one attempt of one task, ready for its agent.
type Job struct {
	Session        string
	Index          int
	Task           *spec.Task
	Agent          *spec.Agent
	Description    string // rendered
	ExpectedOutput string // rendered
	Context        []ContextOutput
	// Remembers is, for a task of an agent with memory: true, the tasks
	// whose turns it is sent, oldest first: its agent's tasks before it,
	// whatever order a --rerun made their turns in.
	Remembers []string
	Attempt   int            // 1, 2, … counted across runs
	State     map[string]any // a snapshot of the shared state; read only
	// OnDelta, when set, gets a streamed answer's text as it comes: a
	// preview for the user, never the result. OnDiscard is told when the
	// text it got so far is dropped (the stream failed, the request is
	// sent again), and why.
	OnDelta   func(text string)
	OnDiscard func(reason string)
	// Feedback is why this invocation's previous attempt was refused when
	// the agent can correct it (a result that did not fit output_schema);
	// "" otherwise.
	Feedback string
	// Record makes a step of an LLM agent's tool loop durable before the
	// loop goes on (nil: nothing is recorded). Decision is the recorded
	// decision for a tool call a crash left without its result.
	Record func(checkpoint.Record) error
	// Stage keeps a record (an LLM request's usage) to be made durable
	// with the next one, which follows at once (the turn or the attempt's
	// end), or by Flush, which the client calls before a retry's wait: a
	// kill -9 loses none of what was paid, at no fdatasync of its own.
	Stage    func(checkpoint.Record) error
	Flush    func() error
	Decision string
	Warn     func(msg string) // tells the user; nil: nobody
	// Admit, when the team has a budget, is asked before every LLM
	// request with its worst case (budget.go): it waits while requests
	// under way may need what is left, and refuses with a *BudgetError
	// once the budget is spent. done takes what the request reported.
	Admit func(ctx context.Context, r reservation) (done func(*Usage), err error)
}

// Result is what an agent produced.
type Result struct {
	Raw string
	// Blob is a result stored out of line (Raw is then ""): a command's
	// large output goes from its spool file to the store, not to memory.
	Blob   *checkpoint.Blob
	Usage  *Usage
	Memory []Turn // turns added to the agent's conversation, when it keeps memory
}

// Executor runs one attempt of a task by a command or LLM agent.
type Executor interface {
	Execute(ctx context.Context, job *Job) (Result, error)
}

// Recorder makes an event durable. The engine does not go on before it
// returns; an error stops the run (the store cannot be written). Tasks
// running side by side call it concurrently.
type Recorder interface {
	Record(Event) error
}

// Stager is a Recorder that can hold an event back: a staged event becomes
// durable with the next Record, in the same sync, or with Flush. The engine
// stages a completion only when the next thing it does is a Record or a
// Flush, and shows the event only once that returned, so nothing is
// acknowledged before it is durable.
type Stager interface {
	Stage(Event) error
	Flush() error
}

// MemoryKeeper learns the turns of a completed task once they are durable,
// so that the agent's next task sees them.
type MemoryKeeper interface {
	Remember(agent string, turns []Turn)
}

// Observer shows events to the user.
type Observer interface {
	Observe(Event)
}

// StoreError is a Recorder failure: the run stopped because its progress
// could not be made durable. It is also a file of teamrun's own for an
// attempt that could not be written (scratchFailure). Either is the
// store's failure, not the task's: the run stops (exit 5) and no attempt
// is spent on it.
type StoreError struct {
	Err error
	// Ended: the attempt came to its own end and only its result could
	// not be kept (its output's blob, its spool). It ran, and runs again
	// on --continue; a write that cut an attempt short, or one before the
	// attempt's command started, leaves this false.
	Ended bool
	// What could not be kept, when it is not the checkpoint: "the
	// context folder of task b".
	What string
}

func (e *StoreError) Error() string {
	if e.What != "" {
		return "cannot keep " + e.What + ": " + e.Err.Error()
	}
	return "cannot write the checkpoint: " + e.Err.Error()
}
func (e *StoreError) Unwrap() error { return e.Err }

// Losable is a session lock that can be lost while the run goes on (a
// database store's: its connection broke, or another run took the session
// over; the file store's: its lock file was removed or replaced). Lost is
// closed then, and LostErr says why.
type Losable interface {
	Lost() <-chan struct{}
	LostErr() error
}

// Engine runs one team once. Fill the fields, then call Run once.
type Engine struct {
	Session string
	Team    *spec.Team
	// Context holds each task's effective context as task indices
	// (spec.Team.ContextOf), for setup to build Graph from when it is
	// nil; the engine reads Graph's.
	Context [][]int
	// Graph, when set, is schedule.New of Team and Context, built by the
	// caller already (the restore's refuser asked it): setup builds it
	// when nil.
	Graph *schedule.Graph
	// Render fills the {placeholders} of a text of task t from the shared
	// state (spec.Team.RenderTask).
	Render func(t *spec.Task, text spec.TaskText, state map[string]any) string
	// State is the shared state; the engine updates it in place.
	State map[string]any
	// Initial is the shared state before any task set a variable (the
	// spec's variables, --var, a session's starting values): what a task
	// finds of an output_variable that no task it comes after set
	// (stateFor). nil: State as it starts.
	Initial map[string]any
	// Restored gives the output of task i when a checkpoint gave it back
	// completed (ok false: it did not; nil: none did). setup asks once for
	// each task: a map of them was 1.5 MB of a 10,000-task restore, made
	// while nothing is collected.
	Restored func(i int) (out Output, ok bool)
	// Held holds completed tasks that read a task running again: each
	// takes over its recorded output when what it reads comes out as
	// recorded (early cut-off). Recorded is the recorded result of each
	// task that runs again, to compare with: the restore decided both,
	// what today's team refuses of the restored results included.
	Held     map[int]Output
	Recorded map[int]checkpoint.Outcome
	// Blobs reads the results stored out of line; nil: the store keeps
	// none.
	Blobs BlobOpener
	// Guarded are teamrun's own files, which no output_file may be
	// (ownOutputFile).
	Guarded []ownfiles.Guard
	// Begun, when set, is told once the restored results are checked how
	// many of them are taken over (the run's header).
	Begun func(taken int)
	// Kept names the tasks --keep restored although they changed, for
	// the summary (the restore decided what --keep pins).
	Kept []string
	// Attempts holds each task's attempts so far (nil: none).
	Attempts []int
	// PriorUsage holds what each task's LLM requests cost before this run
	// (nil: none), for the session's totals in the summary; DroppedUsage
	// what records the session no longer holds cost (checkpoint's
	// TeamState.DroppedUsage): the budget counts both.
	PriorUsage   []*Usage
	DroppedUsage *Usage
	// ResultFrom holds, for a task whose result a tool loop made over
	// several attempts (resumed after a crash), the attempt that began it;
	// nil or 0: its last attempt alone made it.
	ResultFrom []int
	// Decisions holds the recorded human decisions, by task name.
	Decisions map[string]string
	Executor  Executor
	Memory    MemoryKeeper // may be nil
	Recorder  Recorder
	// Finish, when set, ends the recording once the run is over, before
	// its end is told (RunFinished): the file store folds its journal
	// into the session's file there. Its failure is the store's, as a
	// record's is: the summary and the outcome say so (StoreFailed), as
	// the exit code does.
	Finish func() error
	// Lock, when it can be lost, stops the run the moment it is: the
	// running tasks are cancelled and nothing more is recorded.
	Lock        Losable
	Observer    Observer
	MaxParallel int // workflow only; <1 means 4
	// ResumeCommand is printed in the summary; DecideCommand builds the
	// command that records a decision (value "" means a placeholder).
	ResumeCommand string
	DecideCommand func(task, value string) string
	// MaxBackoff caps the exponential retry delay; 0 means 5 minutes.
	MaxBackoff time.Duration
	// Sleep waits between attempts; nil means a timer that ctx cancels.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// Started is when the run began, for the summary's elapsed time; zero
	// means when Run was called.
	Started time.Time
	// Regrow says whether the end of task i, which sets an
	// output_variable, makes the task set expand again: a foreach over it
	// whose instances were not made from value, what it set on
	// completing, or, skipped, that were made from its recorded output,
	// where a new run has no list. nil: never. Then the engine starts
	// nothing more, lets what runs finish, and returns with Grew set and
	// no run_finished: the caller expands and runs the next pass.
	Regrow func(i int, value any, skipped bool) bool
	// Grew is set by Run when the pass ended so.
	Grew bool
	// RanBefore names the tasks an earlier pass of this invocation
	// completed: restored now, they count as run, not restored. UsedBefore
	// is what those passes' LLM requests cost.
	RanBefore  map[string]bool
	UsedBefore *Usage
	// CutBefore names the tasks an earlier pass cut off (task_reused):
	// restored now, they stay cut off, and are not said again.
	CutBefore map[string]bool
	// RestoredBefore names the tasks an earlier pass restored: that pass
	// said so (and wrote their output files back), this one does not again.
	RestoredBefore map[string]bool

	tasks []taskState
	graph *schedule.Graph
	sched *schedule.State // which task may go next: the one set of rules plan shares
	grow  bool            // a task's end asks for a new expansion (Regrow)
	// vars says which tasks' output_variable each task finds when it
	// starts (stateFor); values is what each completed task set, by
	// index, and names the variables any task sets.
	vars     *spec.VariableReads
	values   map[int]any
	names    []string
	texts    blobTexts // results stored out of line the restore read whole (readResult)
	recMu    sync.Mutex
	storeErr error
	staged   []Event // staged, not yet durable nor shown; under recMu
	// unrecorded are the tasks that ran to an end whose record the store
	// failed to take (the run lost its lock, say): they run again on
	// --continue, and the summary says so. Under recMu.
	unrecorded map[int]bool
	// maybe are those of unrecorded whose record's fate is unknown (the
	// connection broke before the store's answer came:
	// checkpoint.ErrMaybeWritten): --continue restores them if it was
	// written. Under recMu.
	maybe map[int]bool
	used  *Usage // what this run's LLM requests cost, without calls; under recMu
	// The budget's gate (budget.go), under recMu: what each task's
	// answered requests cost before its attempt's event is durable (then
	// it is in used), and the requests under way.
	pending  map[int]*Usage
	inflight map[int]reservation
	nextRes  int
	admitted *sync.Cond // on recMu: a request ended or usage was counted
}

// taskState is one task as the engine has it. Of its output (Output) it
// keeps what differs from task to task: the agent, the format and the
// blob opener are the team's and the engine's, added back by out (48
// bytes a task, not 96: 0.48 MB of a 10,000-task run's live heap).
type taskState struct {
	desc     string // the output's Description
	raw      string // the output's Raw ("" when blob is set)
	blob     *checkpoint.Blob
	attempts int32
	restored bool
	cutoff   bool // restored by the early cut-off
}

// setOut keeps o as the task's output; every output the engine takes is
// its task's agent's, in the format RAW, read through e.Blobs (out).
func (st *taskState) setOut(o Output) { st.desc, st.raw, st.blob = o.Description, o.Raw, o.Blob }

// out is task i's output as setOut kept it.
func (e *Engine) out(i int) Output {
	st := &e.tasks[i]
	return Output{Description: st.desc, Raw: st.raw, Agent: e.Team.Tasks[i].Agent, OutputFormat: "RAW"}.withBlob(st.blob, e.Blobs)
}

type attemptDone struct {
	halt        *Halt // the attempt stopped at a tool call that needs a decision
	i           int
	desc        string // the rendered description the agent saw
	res         Result
	text        string // the result as the engine reads it (resultText)
	err         error
	attempt     int
	elapsed     time.Duration
	interrupted bool
	usage       *Usage // of the last try (a success's is res.Usage)
	// unstarted: the budget's gate ended the try before its start was
	// recorded (admitFirst); attempt is the last one recorded.
	unstarted bool
}

// unkept reports whether the attempt came to its own end (not stopped by
// a store failure, nor by a write of its own that failed), yet the session
// will not know: its end, or its result, was not stored. It ran, but is
// not recorded.
func (d attemptDone) unkept() bool {
	var se *StoreError
	return !d.interrupted && (!errors.As(d.err, &se) || se.Ended)
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// record makes ev durable, then shows it. Once the store has failed,
// nothing more is recorded.
func (e *Engine) record(ev Event) error {
	e.recMu.Lock()
	if e.storeErr != nil {
		e.recMu.Unlock()
		return e.storeErr
	}
	ev.Session = e.Session
	if ev.Time.IsZero() {
		ev.Time = e.now()
	}
	if e.Recorder != nil {
		// Without a staged event to carry, tasks running side by side
		// record at the same time, so that the journal can sync their
		// records together (group commit). One that carries staged events
		// holds recMu, so that no event is staged meanwhile and the
		// events it shows are exactly those its sync made durable. (An
		// event staged while a free record runs may ride along with it
		// unseen; it is shown by the next flush, late but not early.)
		var carried []Event
		free := len(e.staged) == 0
		if free {
			e.recMu.Unlock()
		} else {
			carried = e.takeStagedLocked()
		}
		err := e.Recorder.Record(ev)
		if free {
			e.recMu.Lock()
		}
		if err != nil {
			if e.storeErr == nil {
				e.storeErr = &StoreError{Err: err}
			}
			e.unrecordedLocked(carried)
			e.maybeLocked(err, append(carried, ev))
			err := e.storeErr
			e.recMu.Unlock()
			return err
		}
		e.ackLocked(append(carried, ev))
		return nil
	}
	e.ackLocked([]Event{ev})
	return nil
}

// stage records ev with the next record, or at flush, when the Recorder
// can (a Stager); otherwise at once. The main loop flushes when the
// scheduling pass that follows starts no task whose start would carry ev.
func (e *Engine) stage(ev Event) error {
	st, ok := e.Recorder.(Stager)
	if !ok {
		return e.record(ev)
	}
	e.recMu.Lock()
	if e.storeErr != nil {
		e.recMu.Unlock()
		return e.storeErr
	}
	ev.Session = e.Session
	if ev.Time.IsZero() {
		ev.Time = e.now()
	}
	if err := st.Stage(ev); err != nil {
		e.storeErr = &StoreError{Err: err}
		e.recMu.Unlock()
		return e.storeErr
	}
	if e.staged == nil {
		// Room for the record that will carry it too (record appends
		// it): one list a task, not two.
		e.staged = make([]Event, 0, 2)
	}
	e.staged = append(e.staged, ev)
	e.recMu.Unlock()
	return nil
}

// flush makes what was staged durable, then shows it.
func (e *Engine) flush() error {
	e.recMu.Lock()
	if e.storeErr != nil || len(e.staged) == 0 {
		err := e.storeErr
		e.recMu.Unlock()
		return err
	}
	if err := e.Recorder.(Stager).Flush(); err != nil {
		e.storeErr = &StoreError{Err: err}
		staged := e.takeStagedLocked()
		e.unrecordedLocked(staged)
		e.maybeLocked(err, staged)
		e.recMu.Unlock()
		return e.storeErr
	}
	e.ackLocked(e.takeStagedLocked())
	return nil
}

// unrecordedLocked notes the tasks whose end is among evs, events the
// store failed to make durable: they ran, but the session does not know.
func (e *Engine) unrecordedLocked(evs []Event) {
	for _, ev := range evs {
		if ev.Type == TaskCompleted || ev.Type == TaskFailed {
			e.unrecordedTaskLocked(ev.Index)
		}
	}
}

// maybeLocked notes, when err says the write of evs may have been
// committed all the same, the tasks whose end is among them.
func (e *Engine) maybeLocked(err error, evs []Event) {
	if !errors.Is(err, checkpoint.ErrMaybeWritten) {
		return
	}
	for _, ev := range evs {
		if ev.Type == TaskCompleted || ev.Type == TaskFailed {
			if e.maybe == nil {
				e.maybe = map[int]bool{}
			}
			e.maybe[ev.Index] = true
		}
	}
}

func (e *Engine) unrecordedTaskLocked(i int) {
	if e.unrecorded == nil {
		e.unrecorded = map[int]bool{}
	}
	e.unrecorded[i] = true
}

func (e *Engine) takeStagedLocked() []Event {
	evs := e.staged
	e.staged = nil
	return evs
}

// ackLocked counts and shows durable events; it unlocks recMu first
// thing after the counting, so that observers never run under it.
func (e *Engine) ackLocked(evs []Event) {
	for _, ev := range evs {
		if ev.Usage != nil {
			e.used = totals(e.used.Plus(ev.Usage))
		}
		if endsAttempt(ev.Type) {
			// The attempt's usage, every request of it, is in used now.
			delete(e.pending, ev.Index)
		}
	}
	if e.admitted != nil {
		e.admitted.Broadcast()
	}
	e.recMu.Unlock()
	for _, ev := range evs {
		e.observe(ev)
	}
}

func (e *Engine) observe(ev Event) {
	if e.Observer == nil {
		return
	}
	ev.Session = e.Session
	if ev.Time.IsZero() {
		ev.Time = e.now()
	}
	e.Observer.Observe(ev)
}

func (e *Engine) setup(ctx context.Context) error {
	t := e.Team
	n := len(t.Tasks)
	g := e.Graph
	if g == nil {
		var err error
		if g, err = schedule.New(t, e.Context); err != nil {
			return fmt.Errorf("runner: %w", err)
		}
	}
	e.graph, e.sched = g, g.NewState()
	if e.State == nil {
		e.State = map[string]any{}
	}
	if e.Initial == nil {
		e.Initial = maps.Clone(e.State)
	}
	e.vars = g.VariableReads()
	for _, j := range e.vars.Outputs() {
		if name := t.Tasks[j].OutputVariable; !slices.Contains(e.names, name) {
			e.names = append(e.names, name)
		}
	}
	if e.Held == nil {
		e.Held = map[int]Output{}
	}
	if e.Recorded == nil {
		e.Recorded = map[int]checkpoint.Outcome{}
	}
	if e.Render == nil {
		e.Render = func(t *spec.Task, w spec.TaskText, _ map[string]any) string { return t.Text(w) }
	}
	e.tasks = make([]taskState, n)
	for i := range min(n, len(e.Attempts)) {
		e.tasks[i].attempts = int32(e.Attempts[i])
	}
	// The restore took over only the results today's team accepts, and
	// made the rest run again before the session was written (refuser):
	// the engine takes over what it is given.
	for i := range n {
		if e.Restored == nil {
			break
		}
		out, ok := e.Restored(i)
		if !ok {
			continue
		}
		raw, err := readResult(ctx, t.Tasks[i], out, e.texts)
		if err != nil {
			return err // run verified it: the store failed since
		}
		e.sched.Complete(i, raw)
		e.tasks[i].setOut(out)
		e.setValue(i, raw)
		e.tasks[i].restored = true
		e.tasks[i].cutoff = e.CutBefore[t.Tasks[i].Name]
	}
	if e.Begun != nil {
		taken := 0
		for i := range e.tasks {
			if e.tasks[i].restored {
				taken++
			}
		}
		e.Begun(taken)
	}
	return nil
}

// Run runs every task that is not done yet and returns what happened. The
// error is non-nil only when the checkpoint could not be written
// (*StoreError) or the engine was given an inconsistent team.
func (e *Engine) Run(ctx context.Context) (*Summary, error) {
	start := e.Started
	if start.IsZero() {
		start = e.now()
	}
	if err := e.setup(ctx); err != nil {
		return nil, err
	}
	for i := range e.tasks {
		if name := e.Team.Tasks[i].Name; e.tasks[i].restored && !e.RanBefore[name] && !e.RestoredBefore[name] {
			if !e.tasks[i].cutoff { // one an earlier pass cut off was said then
				e.observe(Event{Type: TaskRestored, Index: i, Task: e.Team.Tasks[i].Name,
					Agent: e.Team.Tasks[i].Agent, Result: e.tasks[i].raw, ResultBlob: e.tasks[i].blob})
			}
			e.restoreOutputFile(ctx, i)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if e.Lock != nil {
		go e.watchLock(runCtx, cancel)
	}

	parallel := 1
	if e.Team.Process == spec.Workflow {
		parallel = e.MaxParallel
		if parallel < 1 {
			parallel = 4
		}
	}
	results := make(chan attemptDone)
	var inline *attemptDone // the sequential attempt, run on this goroutine
	running := 0
	var (
		halts []*Halt
		// unsettled are, by task index, the calls of tools that were not
		// idempotent that an attempt's end (a signal, the task's timeout
		// on its last attempt, the store failing) left without a result:
		// the halts the next --continue stops at.
		unsettled = map[int]*Halt{}
		failed    bool
		stuck     []string
		outcome   = Succeeded
	)
	stopping := func() bool {
		return failed || e.grow || ctx.Err() != nil || e.storeFailed()
	}
	handle := func(d attemptDone) {
		running--
		if d.unstarted {
			// No attempt began: nothing to record. A refused task waits
			// for the budget, as one the gate halts in the middle does.
			if d.attempt > int(e.tasks[d.i].attempts) {
				e.tasks[d.i].attempts = int32(d.attempt) // a retry's: its try before was recorded
			}
			if d.halt != nil && !e.storeFailed() {
				e.sched.Wait(d.i)
				halts = append(halts, d.halt)
			} else {
				e.sched.Reset(d.i)
			}
			return
		}
		if h := e.unsettledHalt(d.err); h != nil {
			unsettled[d.i] = h
		}
		if e.storeFailed() {
			if d.unkept() {
				e.recMu.Lock()
				e.unrecordedTaskLocked(d.i)
				e.recMu.Unlock()
			}
			e.sched.Reset(d.i)
			cancel()
			return
		}
		if d.halt != nil {
			// The attempt ends here, what it paid recorded with it: the
			// task is no longer running but waits for the decision.
			t := e.Team.Tasks[d.i]
			if d.attempt > int(e.tasks[d.i].attempts) {
				e.tasks[d.i].attempts = int32(d.attempt)
			}
			ev := Event{Type: TaskHalted, Index: d.i, Task: t.Name, Agent: t.Agent, Attempt: d.attempt, RetryCount: max(d.attempt-1, 0),
				Error: haltedError(d.halt), Usage: d.usage}
			if d.elapsed > 0 {
				ev.Elapsed = millis(d.elapsed)
			}
			if err := e.record(ev); err != nil {
				e.sched.Reset(d.i)
				cancel()
				return
			}
			e.sched.Wait(d.i)
			halts = append(halts, d.halt)
			return
		}
		// The next record follows at once (the start of the task that
		// takes the freed slot, or the flush when none starts): the
		// completion goes with it, one sync for both.
		if err := e.finish(d, true); err != nil {
			cancel()
			return
		}
		if e.sched.Status(d.i) == schedule.Failed {
			failed = true
		}
	}
	for {
		var starting []*Job
		if !stopping() {
			progressed := true
			for progressed && !stopping() {
				progressed = false
				for _, i := range e.sched.Ready() {
					if stopping() || running >= parallel {
						break
					}
					if reason := e.sched.SkipReason(i); reason != nil {
						e.sched.Skip(i)
						_ = e.record(Event{Type: TaskSkipped, Index: i, Task: e.Team.Tasks[i].Name, Agent: e.Team.Tasks[i].Agent, Reason: e.skipText(reason)})
						if e.Regrow != nil && e.Team.Tasks[i].OutputVariable != "" && e.Regrow(i, nil, true) {
							e.grow = true
						}
						progressed = true
						continue
					}
					if out, text, why, ok := e.cutOff(runCtx, i); ok {
						if err := e.reuse(runCtx, i, out, text, why); err != nil {
							cancel()
						}
						progressed = true
						continue
					}
					if e.graph.Human(i) {
						if h, err := e.human(i); err != nil {
							cancel()
						} else if h != nil {
							// Independent branches go on; what needs
							// the decision waits for the next run.
							e.sched.Wait(i)
							halts = append(halts, h)
						} else if e.sched.Status(i) == schedule.Failed {
							failed = true
						}
						progressed = true
						continue
					}
					e.sched.Start(i)
					running++
					starting = append(starting, e.job(i))
				}
			}
		}
		switch {
		case len(starting) == 1 && parallel == 1:
			// One at a time: on this goroutine, no hand-off to another
			// and back for every task.
			d := e.attempts(runCtx, starting[0], false)
			inline = &d
		case len(starting) == 1:
			job := starting[0]
			go func() { results <- e.attempts(runCtx, job, false) }()
		case len(starting) > 1:
			// A gated task records its own start, once the budget admits
			// its first request (admitFirst).
			var now []*Job
			for _, job := range starting {
				if !e.gated(job.Index) {
					now = append(now, job)
				}
			}
			if err := e.startAll(runCtx, now); err != nil {
				for _, job := range starting {
					e.sched.Reset(job.Index)
				}
				running -= len(starting)
				cancel()
				break
			}
			for _, job := range starting {
				started := !e.gated(job.Index)
				go func() { results <- e.attempts(runCtx, job, started) }()
			}
		}
		if inline == nil && !slices.ContainsFunc(starting, func(j *Job) bool { return !e.gated(j.Index) }) {
			// No task's start will carry a staged completion at once (a
			// gated task's waits for the budget): it is made durable,
			// and shown, before the engine waits or ends.
			_ = e.flush()
		}
		if running == 0 {
			if !stopping() && len(halts) == 0 {
				for _, i := range e.sched.Pending() {
					stuck = append(stuck, e.Team.Tasks[i].Name)
				}
			}
			break
		}
		var d attemptDone
		if inline != nil {
			d, inline = *inline, nil
		} else {
			d = <-results
		}
		handle(d)
		// What else has ended meanwhile is handled now too, so that the
		// tasks that take the freed slots start together: their starts
		// and these completions are made durable by one sync.
	drained:
		for running > 0 {
			select {
			case d := <-results:
				handle(d)
			default:
				break drained
			}
		}
	}

	if e.grow && !failed && ctx.Err() == nil && !e.storeFailed() {
		// Not the end: the caller expands the task set and goes on, so
		// neither the halts nor the summary are this pass's to tell
		// (unless the recording cannot be ended: then it is the end).
		if e.finishRecording() {
			e.Grew = true
			return e.summary(Succeeded, e.now().Sub(start)), nil
		}
	}
	switch {
	case e.storeFailed():
		outcome = StoreFailed
	case ctx.Err() != nil:
		outcome = Interrupted
	case failed:
		outcome = Failed
	case len(halts) > 0:
		outcome = Halted
	case len(stuck) > 0:
		// Only a cycle through condition routes can get here; validation
		// should have refused it.
		outcome = Failed
		e.observe(Event{Type: RunWarning, Index: -1, Message: "these tasks can never start (their dependencies form a cycle): " + strings.Join(stuck, ", ")})
	}
	sum := e.summary(outcome, e.now().Sub(start))
	for _, i := range slices.Sorted(maps.Keys(unsettled)) {
		sum.Unsettled = append(sum.Unsettled, unsettled[i])
	}
	if outcome == Halted {
		sum.Halts = halts
		// The halted task becomes the checkpoint's current task.
		for _, h := range halts {
			_ = e.record(Event{Type: RunHalted, Index: -1, Task: h.Task, Halt: h})
		}
	}
	if recorded := e.finishRecording(); !recorded || e.storeFailed() {
		// What the run's end is told as is what its exit code says: a
		// halt the store did not take, or a session file it could not
		// write (a full disk), is a store failure (exit 5).
		sum.Outcome = StoreFailed
		// A file of an attempt's (a scratch file, an output_file) is
		// named instead when the checkpoint itself was written.
		e.recMu.Lock()
		failure := e.storeErr
		e.recMu.Unlock()
		var se *StoreError
		if recorded && errors.As(failure, &se) {
			sum.Unkept = se.What
		}
	}
	e.observe(Event{Type: RunFinished, Index: -1, Summary: sum, Elapsed: millis(e.now().Sub(start))})
	if e.storeFailed() {
		return sum, e.storeErr
	}
	return sum, nil
}

// watchLock fails the store and cancels the run once the lock is lost,
// rather than at the next record: a long task would otherwise go on for a
// run that may no longer write.
func (e *Engine) watchLock(ctx context.Context, cancel context.CancelFunc) {
	select {
	case <-ctx.Done():
		return
	case <-e.Lock.Lost():
	}
	err := e.Lock.LostErr()
	if err == nil {
		err = errors.New("the session's lock was lost")
	}
	e.failStore(&StoreError{Err: err})
	cancel()
}

// failStore keeps se as the run's store failure, unless one is kept
// already: the first is the one the run ends with.
func (e *Engine) failStore(se *StoreError) {
	e.recMu.Lock()
	if e.storeErr == nil {
		e.storeErr = se
	}
	e.recMu.Unlock()
}

// finishRecording calls Finish, once; false when it failed, which fails
// the store.
func (e *Engine) finishRecording() bool {
	finish := e.Finish
	if finish == nil {
		return true
	}
	e.Finish = nil
	if err := finish(); err != nil {
		e.failStore(&StoreError{Err: err})
		return false
	}
	return true
}

func (e *Engine) storeFailed() bool {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	return e.storeErr != nil
}

func (e *Engine) agentOf(i int) *spec.Agent {
	name := e.Team.Tasks[i].Agent
	if name == spec.HumanAgent {
		return &spec.Agent{Name: name, Kind: spec.Human}
	}
	for _, a := range e.Team.Agents {
		if a.Name == name {
			return a
		}
	}
	return &spec.Agent{Name: name, Kind: spec.Human}
}

// skipText words a skip reason for the events and the checkpoint.
func (e *Engine) skipText(r *schedule.Reason) string {
	switch r.Cause {
	case schedule.GateSkipped:
		return fmt.Sprintf("%s was skipped", e.Team.Tasks[r.Gate].Name)
	case schedule.RoutedElsewhere:
		return fmt.Sprintf("%s routed %q elsewhere", e.Team.Tasks[r.Gate].Name, r.Value)
	case schedule.RepeatDone:
		return fmt.Sprintf("%s's result contains %q: the repeat is done", e.Team.Tasks[r.Gate].Name, r.Value)
	default:
		return "every task it reads was skipped"
	}
}

func (e *Engine) contextOf(i int) []ContextOutput {
	var out []ContextOutput
	for _, c := range e.graph.Context(i) {
		if e.sched.Status(c) == schedule.Completed {
			out = append(out, ContextOutput{Task: e.Team.Tasks[c].Name, Output: e.out(c)})
		}
	}
	return out
}

func (e *Engine) job(i int) *Job {
	t := e.Team.Tasks[i]
	ctx := e.contextOf(i)
	view := e.stateFor(i)
	state := t.Scope(view)
	if t.Expanded().Iteration > 0 && (len(ctx) > 0 || e.Team.FillsNoPrevious()) {
		// A repeat iteration's {previous_output}: the output of the last
		// task it reads, the iteration before it from the second on.
		prev := ""
		if len(ctx) > 0 {
			prev = ctx[len(ctx)-1].Output.Raw
		}
		state = maps.Clone(state)
		state[spec.PreviousOutput] = prev
	}
	return &Job{
		Session:        e.Session,
		Index:          i,
		Task:           t,
		Agent:          e.agentOf(i),
		Description:    e.Render(t, spec.DescriptionText, state),
		ExpectedOutput: e.Render(t, spec.ExpectedOutputText, state),
		Context:        ctx,
		Remembers:      e.remembered(i),
		Attempt:        int(e.tasks[i].attempts) + 1,
		OnDelta: func(text string) {
			// To the user only: the recorder never sees a stream's pieces.
			e.observe(Event{Time: e.now(), Type: TaskDelta, Session: e.Session, Index: i, Task: t.Name, Agent: t.Agent, Delta: text})
		},
		OnDiscard: func(reason string) {
			e.observe(Event{Time: e.now(), Type: TaskStreamDiscarded, Session: e.Session, Index: i, Task: t.Name, Agent: t.Agent, Message: reason})
		},
		State:    jobState(t, view),
		Record:   func(r checkpoint.Record) error { return e.record(e.stepEvent(i, r)) },
		Stage:    func(r checkpoint.Record) error { return e.stage(e.stepEvent(i, r)) },
		Flush:    e.flush,
		Decision: e.Decisions[t.Name],
		Warn: func(msg string) {
			e.observe(Event{Type: RunWarning, Index: i, Task: t.Name, Message: msg})
		},
	}
}

// remembered is Job.Remembers of task i: the chain of Graph.Remembers.
func (e *Engine) remembered(i int) []string {
	var out []string
	for p, _ := e.graph.Remembers(i); p >= 0; p, _ = e.graph.Remembers(p) {
		out = append(out, e.Team.Tasks[p].Name)
	}
	slices.Reverse(out)
	return out
}

// jobState is the shared state a job of t sees (its agent's texts, its
// commands' TEAMRUN_VAR_<NAME>), a snapshot of view (what t finds:
// stateFor): a foreach instance's item is bound in it, as in the
// instance's own texts (Task.Scope).
func jobState(t *spec.Task, view map[string]any) map[string]any {
	if t.Expanded().As != "" {
		return t.Scope(view)
	}
	state := maps.Clone(view)
	if state == nil {
		state = map[string]any{}
	}
	return state
}

// human completes a human task from its recorded decision, or returns the
// halt that asks for one.
func (e *Engine) human(i int) (*Halt, error) {
	t := e.Team.Tasks[i]
	desc := e.Render(t, spec.DescriptionText, t.Scope(e.stateFor(i)))
	value, ok := e.Decisions[t.Name]
	if !ok {
		h := &Halt{Session: e.Session, Task: t.Name, Description: desc, Options: t.Options()}
		if e.DecideCommand != nil {
			h.Command = e.DecideCommand(t.Name, "")
			for _, o := range t.Options() {
				h.Commands = append(h.Commands, e.DecideCommand(t.Name, o))
			}
		}
		return h, nil
	}
	err := e.graph.ValidDecision(i, value)
	if err == nil {
		_, err = t.CheckOutput(value) // a decision is the task's result like any other
	}
	if err != nil && e.DecideCommand != nil {
		// Recorded unchecked (the spec was missing) or since made wrong
		// by an edit: a new decision replaces it.
		err = fmt.Errorf("%w: record another with `%s`", err, e.DecideCommand(t.Name, ""))
	}
	if err == nil && t.OutputFile() != "" {
		var path string
		if path, err = e.outputPath(t, e.stateFor(i)); err == nil {
			err = writeOutputFile(path, strings.NewReader(value), e.Started)
		}
	}
	// No attempt: a decision is no try, and the session counts none
	// (checkpoint.AttemptNote words it so in run and plan alike).
	return nil, e.finish(attemptDone{i: i, desc: desc, res: Result{Raw: value}, text: value, err: err}, false)
}

// attempts runs a task's attempts within one invocation: the first and up
// to MaxRetries more, with capped exponential backoff between them.
// started says the first attempt's start is recorded already (startAll).
func (e *Engine) attempts(ctx context.Context, job *Job, started bool) attemptDone {
	t := job.Task
	first := job.Attempt
	feedback := ""
	// A decision settles the one call its halt named and is spent once a
	// tool record carries it, as the session's copy is (applyTool): a
	// retry that resumes the loop at a later call a timeout hid must halt
	// on that call, not run it again on the earlier call's decision.
	decision := job.Decision
	for try := 0; ; try++ {
		j := *job
		j.Attempt = first + try
		j.Feedback = feedback
		j.Decision = decision
		if rec := job.Record; rec != nil {
			j.Record = func(r checkpoint.Record) error {
				if r.Tool != nil && r.Tool.Decision != "" {
					decision = ""
				}
				return rec(r)
			}
		}
		release := func() {}
		if e.gated(j.Index) {
			admit, rel, why, err := e.admitFirst(ctx, &j)
			switch {
			case why != "":
				// No LLM request once the budget cannot take it, nor
				// an attempt that sends none; command tasks and other
				// branches go on.
				return attemptDone{i: j.Index, halt: e.budgetHalt(j.Index, why), attempt: j.Attempt - 1, unstarted: true}
			case err != nil:
				return attemptDone{i: j.Index, err: err, attempt: j.Attempt - 1, unstarted: true, interrupted: true}
			}
			j.Admit, release = admit, rel
		}
		if try > 0 || !started {
			if err := e.record(e.startedEvent(ctx, &j)); err != nil {
				release()
				return attemptDone{i: j.Index, err: err, attempt: j.Attempt}
			}
		}
		if try == 0 {
			if note, ok := noListNote(t); ok {
				// Said as its start is, in a new run as in a resumed one.
				e.observe(Event{Type: RunInfo, Index: -1, Message: note})
			}
		}
		start := e.now()
		res, err := e.Executor.Execute(ctx, &j)
		release()
		elapsed := e.now().Sub(start)
		used := paidUsage(err)
		out := e.output(j.Description, t, res)
		text := res.Raw
		if err == nil {
			text, err = resultText(ctx, t, out)
		}
		if err == nil {
			// Whatever the agent: a model may ignore response_format, and
			// a command's stdout is held to the same schema.
			_, err = t.CheckOutput(text)
		}
		if err == nil {
			if _, ok := e.graph.Route(j.Index, text); !ok {
				err = errors.New(e.graph.NoRoute(j.Index, text))
			}
		}
		if err == nil && t.OutputFile() != "" {
			// Before the completion is recorded: a crash in between runs
			// the task again, which writes the file again.
			var path string
			if path, err = e.outputPath(t, j.State); err == nil {
				// What the attempt paid is durable before the file's
				// write, which may take a while.
				if err = e.flush(); err == nil {
					if err = writeOutput(ctx, path, out, e.Started); err != nil {
						err = outputFileFailure(t.Name, path, err)
					}
				}
			}
		}
		if err == nil {
			return attemptDone{i: j.Index, desc: j.Description, res: res, text: text, attempt: j.Attempt, elapsed: elapsed}
		}
		if used == nil {
			used = res.Usage // a success that routing refused was paid for too
		}
		if h := e.toolHalt(err); h != nil {
			return attemptDone{i: j.Index, halt: h, attempt: j.Attempt, elapsed: elapsed, usage: used}
		}
		var be *BudgetError
		if errors.As(err, &be) && ctx.Err() == nil {
			// Not retried: the budget is as spent on the next try.
			return attemptDone{i: j.Index, halt: e.budgetHalt(j.Index, be.Why), attempt: j.Attempt, elapsed: elapsed, usage: used}
		}
		if ctx.Err() != nil {
			return attemptDone{i: j.Index, err: err, attempt: j.Attempt, elapsed: elapsed, interrupted: true, usage: used}
		}
		var decided *DecidedFailError
		var se *StoreError
		var clash *ToolClashError
		var final attemptsEnder
		// Not retried: a store that cannot take the result is no better a
		// moment later, and it is the store's failure, not the task's; nor
		// is an agent's tool list that names one tool twice, nor a failure
		// that says no new attempt can help (an LLM account out of credit,
		// a refused key).
		if try >= t.MaxRetries || errors.As(err, &decided) || errors.As(err, &se) || errors.As(err, &clash) ||
			errors.As(err, &final) && final.EndsAttempts() {
			return attemptDone{i: j.Index, err: err, attempt: j.Attempt, elapsed: elapsed, usage: used}
		}
		feedback = ""
		if errors.Is(err, spec.ErrOutputSchema) {
			feedback = err.Error()
		}
		delay := e.backoff(t.RetryDelay, try)
		if rerr := e.record(Event{Type: TaskRetrying, Index: j.Index, Task: t.Name, Agent: t.Agent, Attempt: j.Attempt, RetryCount: j.Attempt - 1,
			Error: err.Error(), Delay: millis(delay), Elapsed: millis(elapsed), Usage: used}); rerr != nil {
			return attemptDone{i: j.Index, err: rerr, attempt: j.Attempt}
		}
		if err := e.sleep(ctx, delay); err != nil {
			return attemptDone{i: j.Index, err: err, attempt: j.Attempt, interrupted: true}
		}
	}
}

// attemptsEnder is a failure that can say no new attempt of its task
// could help (llm.Error): the same request would meet it again.
type attemptsEnder interface{ EndsAttempts() bool }

// DefaultRetryDelay is the first retry's delay when a task sets no
// retry_delay. Retrying at once, back to back, rarely helps: what failed
// (a server, a lock, the network) needs a moment, and DESIGN §2 promises
// exponential backoff.
const DefaultRetryDelay = time.Second

func (e *Engine) backoff(base time.Duration, try int) time.Duration {
	limit := e.MaxBackoff
	if limit <= 0 {
		limit = 5 * time.Minute
	}
	if base <= 0 {
		base = DefaultRetryDelay
	}
	return backoff.Delay(base, limit, try+1)
}

func (e *Engine) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// requestRetried shows that an LLM request of job (an attempt's) is sent
// again after a wait, before the wait: never recorded.
func (e *Engine) requestRetried(j *Job, r llm.Retry) {
	e.observe(Event{Time: e.now(), Type: RequestRetrying, Index: j.Index, Task: j.Task.Name, Agent: j.Task.Agent,
		Attempt: j.Attempt, Request: int32(r.Attempt), MaxRequests: int32(r.MaxAttempts), Error: r.Why, Delay: millis(r.Wait)})
}

// unendedCounter is an Executor that can tell what an attempt of job
// counts should its run die before the attempt ends: a request it may
// have had under way. A kill -9 leaves nothing else to count it by: a
// record of each request as it is sent would cost a sync each.
type unendedCounter interface {
	unendedUsage(ctx context.Context, job *Job) *Usage
}

// startedEvent is the start of j's attempt, with what it counts should
// it never end (unendedCounter), which its start's record carries and
// its end's takes back.
func (e *Engine) startedEvent(ctx context.Context, j *Job) Event {
	t := j.Task
	ev := Event{Type: TaskStarted, Index: j.Index, Task: t.Name, Agent: t.Agent, Attempt: j.Attempt, RetryCount: j.Attempt - 1}
	if c, ok := e.Executor.(unendedCounter); ok {
		ev.Unended = c.unendedUsage(ctx, j)
	}
	return ev
}

// startAll records the starts of jobs, about to run side by side, with
// the completions staged before them: one sync for all, where each start
// recorded by its own goroutine would wait for the one before.
func (e *Engine) startAll(ctx context.Context, jobs []*Job) error {
	for _, j := range jobs {
		if err := e.stage(e.startedEvent(ctx, j)); err != nil {
			return err
		}
	}
	return e.flush()
}

// finish records how a task's attempts ended and updates the shared state.
// With stage, a completion is staged (see Stager) rather than recorded.
func (e *Engine) finish(d attemptDone, stage bool) error {
	st := &e.tasks[d.i]
	t := e.Team.Tasks[d.i]
	if d.attempt > int(st.attempts) {
		st.attempts = int32(d.attempt)
	}
	var se *StoreError
	if errors.As(d.err, &se) {
		// An attempt that could not hand its result to the store (its
		// output's blob, its spool) stops the run as a failed record does.
		e.sched.Reset(d.i)
		e.failStore(se)
		if d.unkept() {
			e.recMu.Lock()
			e.unrecordedTaskLocked(d.i)
			e.recMu.Unlock()
		}
		return d.err
	}
	ev := Event{Index: d.i, Task: t.Name, Agent: t.Agent, Attempt: d.attempt, RetryCount: max(d.attempt-1, 0)}
	if d.elapsed > 0 {
		ev.Elapsed = millis(d.elapsed)
	}
	switch {
	case d.interrupted:
		e.sched.Reset(d.i)
		ev.Type = TaskInterrupted
		ev.Error = "interrupted"
		ev.Usage = d.usage
	case d.err != nil:
		e.sched.Fail(d.i)
		ev.Type = TaskFailed
		ev.Error = d.err.Error()
		ev.Usage = d.usage
	default:
		e.sched.Complete(d.i, d.text)
		st.setOut(e.output(d.desc, t, d.res))
		ev.Type = TaskCompleted
		ev.Result, ev.ResultBlob = d.res.Raw, d.res.Blob
		ev.Usage = d.res.Usage
		ev.Memory = d.res.Memory
		e.completeVariable(d.i, d.text, &ev)
	}
	record := e.record
	if stage && ev.Type == TaskCompleted {
		record = e.stage
	}
	if err := record(ev); err != nil {
		if ev.Type != TaskInterrupted {
			e.recMu.Lock()
			e.unrecordedTaskLocked(d.i)
			e.recMu.Unlock()
		}
		return err
	}
	// A staged completion's turns are learnt now: only a task whose
	// start (the sync that carries the completion) was recorded reads them.
	if len(ev.Memory) > 0 && e.Memory != nil {
		e.Memory.Remember(t.Agent, ev.Memory)
	}
	return nil
}

func (e *Engine) summary(outcome Outcome, elapsed time.Duration) *Summary {
	s := &Summary{Session: e.Session, Outcome: outcome, Total: len(e.tasks), Resume: e.ResumeCommand, Elapsed: Millis(elapsed), Kept: e.Kept}
	e.recMu.Lock()
	s.Usage = e.used
	unrecorded, maybe := e.unrecorded, e.maybe
	e.recMu.Unlock()
	if e.UsedBefore != nil {
		// The session's usage has the earlier passes' already (their
		// tasks' records): only this run's total adds them.
		s.Usage = totals(e.UsedBefore.Plus(s.Usage))
	}
	if s.Usage != nil {
		s.Tokens = s.Usage.TotalTokens
	}
	s.SessionUsage = e.sessionUsage()
	for i, u := range e.PriorUsage {
		if u == nil || i >= len(e.tasks) {
			continue
		}
		if e.tasks[i].restored && i < len(e.Attempts) && !e.RanBefore[e.Team.Tasks[i].Name] {
			// What running it again would cost: the attempt that produced
			// the result, not the failures before it (with a tool loop
			// resumed across attempts, all of its attempts).
			from := e.Attempts[i]
			if i < len(e.ResultFrom) && e.ResultFrom[i] > 0 {
				from = e.ResultFrom[i]
			}
			paid := attemptsUsage(u, from, e.Attempts[i])
			if HasUsage(paid) { // an estimate too: restored_usage counts it
				s.RestoredPaid++
			}
			s.RestoredUsage = totals(s.RestoredUsage.Plus(paid))
		}
	}
	// One that counts no request is none: --json leaves it out rather
	// than show "usage": {}.
	for _, u := range []**Usage{&s.Usage, &s.SessionUsage, &s.RestoredUsage} {
		if !HasUsage(*u) {
			*u = nil
		}
	}
	read := make([]bool, len(e.tasks))
	for i := range e.tasks {
		for _, c := range e.graph.Context(i) {
			read[c] = true
		}
		// The list a foreach ran over is read by it, not an output.
		for _, a := range e.Team.Tasks[i].Expanded().After {
			if j := e.Team.TaskIndex(a); j >= 0 {
				read[j] = true
			}
		}
	}
	for i, st := range e.tasks {
		if e.sched.Status(i) == schedule.Completed && !read[i] && !unrecorded[i] {
			s.Outputs = append(s.Outputs, TaskOutput{Task: e.Team.Tasks[i].Name, Result: st.raw, ResultBlob: st.blob, out: e.out(i)})
		}
	}
	for i, st := range e.tasks {
		status := e.sched.Status(i)
		switch {
		case unrecorded[i] && maybe[i]:
			s.MaybeRecorded++
			s.MaybeRecordedTasks = append(s.MaybeRecordedTasks, e.Team.Tasks[i].Name)
		case unrecorded[i]:
			s.Unrecorded++
			s.UnrecordedTasks = append(s.UnrecordedTasks, e.Team.Tasks[i].Name)
		case status == schedule.Completed && st.restored && !e.RanBefore[e.Team.Tasks[i].Name]:
			s.Restored++
			if st.cutoff {
				s.CutOff++
			}
		case status == schedule.Completed:
			s.Ran++
		case status == schedule.Failed:
			s.Failed++
			s.FailedTasks = append(s.FailedTasks, e.Team.Tasks[i].Name)
		case status == schedule.Skipped:
			s.Skipped++
		default:
			s.Pending++
		}
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// completeVariable sets what task i, completing now (run or taken over
// by the early cut-off), sets (setVariable), and asks for a new expansion
// when a foreach over it was made from another value or waits for it
// (Regrow): both ways of completing expand the foreach alike.
func (e *Engine) completeVariable(i int, text string, ev *Event) {
	if e.setVariable(i, text, ev) && e.Regrow != nil && e.Regrow(i, ev.OutputValue, false) {
		e.grow = true
	}
}

// setVariable puts what task i's result text sets (spec.Task.Sets) in the
// shared state and on ev, the event that records it; false when it sets
// nothing. A restored result's is set by the restore (checkpoint.Choice.Sets).
func (e *Engine) setVariable(i int, text string, ev *Event) bool {
	name, v := e.setValue(i, text)
	if name == "" {
		return false
	}
	ev.OutputVariable, ev.OutputValue = name, v
	// A task that runs after it and set the variable already (restored
	// past a task run again) left what a new run's state would hold.
	for j := range e.values {
		if j != i && e.Team.Tasks[j].OutputVariable == name && e.sched.Status(j) == schedule.Completed && e.vars.After(i, j) {
			ev.Overwritten = true
			return true
		}
	}
	e.State[name] = v
	return true
}

// setValue keeps what task i's result text sets, for stateFor.
func (e *Engine) setValue(i int, text string) (string, any) {
	t := e.Team.Tasks[i]
	if t.OutputVariable == "" {
		return "", nil
	}
	name, v := t.Sets(text)
	if name != "" {
		if e.values == nil {
			e.values = map[int]any{}
		}
		e.values[i] = v
	}
	return name, v
}

// stateFor is the shared state as task i finds it when it starts, as a
// new run of the same tasks would: each output_variable as the last of
// the completed tasks that can have left it (spec.VariableReads.Sources)
// set it, else as it was before any task set it (Initial). The shared
// state holds what the last task to end set, which on a resumed run may
// be a task restored past i, or i's own last run.
func (e *Engine) stateFor(i int) map[string]any {
	if len(e.names) == 0 || i < 0 || i >= len(e.Team.Tasks) {
		return e.State
	}
	var last map[string]int // by variable, the source whose value stands
	e.vars.Sources(i, func(j int) {
		if _, ok := e.values[j]; !ok || e.sched.Status(j) != schedule.Completed {
			return
		}
		name := e.Team.Tasks[j].OutputVariable
		if b, ok := last[name]; ok && e.vars.After(j, b) {
			return // b ends after j
		}
		if last == nil {
			last = map[string]int{}
		}
		last[name] = j // else the later in the file
	})
	view, cloned := e.State, false
	for _, name := range e.names {
		var want any
		j, ok := last[name]
		if ok {
			want = e.values[j]
		} else {
			want, ok = e.Initial[name]
		}
		cur, has := e.State[name]
		if ok == has && (!ok || reflect.DeepEqual(cur, want)) {
			continue
		}
		if !cloned {
			view, cloned = maps.Clone(e.State), true
			if view == nil {
				view = map[string]any{}
			}
		}
		if ok {
			view[name] = want
		} else {
			delete(view, name)
		}
	}
	return view
}

// output is what task t's agent produced as later tasks read it.
func (e *Engine) output(desc string, t *spec.Task, res Result) Output {
	return Output{Description: desc, Raw: res.Raw, Agent: t.Agent, OutputFormat: "RAW"}.withBlob(res.Blob, e.Blobs)
}
