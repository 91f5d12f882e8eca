package checkpoint

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// RecordKind is the kind of a journal record.
type RecordKind string

const (
	// TaskStarted: Task, Attempt (0: one more than before), Host, PGID,
	// and Usage, for an LLM attempt, what it counts should it never end
	// (Call.NoEnd): the journal has no record of a request under way,
	// which would cost a sync per request, so a start with no end is
	// taken to have paid for one. The attempt's end record carries the
	// task's usage without it (Usage.WithoutAttempt).
	TaskStarted      RecordKind = "started"
	TaskCompleted    RecordKind = "completed" // Task, Result, Variables, Usage
	TaskFailed       RecordKind = "failed"    // Task, Error, RetryCount
	TaskSkipped      RecordKind = "skipped"   // Task
	CurrentTask      RecordKind = "current"   // Task
	DecisionRecorded RecordKind = "decision"  // Task, Value
	// RequestPaid is one LLM request's usage, journaled as soon as it is
	// answered (or cut off), before the answer is judged or another
	// request is sent: a kill -9 before the attempt's end loses none of
	// what was paid. Its Usage is that request's alone (Task, Attempt,
	// Usage), added to the task's; the attempt's end record carries its
	// requests again, in place of these (Usage.WithoutAttempt).
	RequestPaid RecordKind = "request_paid"
)

// Record is one transition. State and Agent+Messages may accompany any
// kind: they are applied in the same durable step, so a completion, its
// output_variable and the agent's new turns land together.
type Record struct {
	Kind       RecordKind
	Task       string
	Attempt    int
	Result     string
	Blob       *Blob // a result stored out of line (PutBlob first); Result is then ""
	Variables  map[string]any
	Usage      *Usage
	Error      string
	RetryCount int
	State      map[string]any
	Value      string
	Agent      string
	Messages   []Message
	Tool       *ToolStep // the tool records' payload (toolrecord.go)
	// Host and PGID, on a started record, say where the task runs: the
	// host name and the process group of the run that started it, so that
	// a run on another host can say where it may still be running.
	Host string
	PGID int
	At   time.Time // zero: now
}

type recordWire struct {
	Kind       RecordKind     `json:"k"`
	Task       string         `json:"task,omitempty"`
	Attempt    int            `json:"attempt,omitempty"`
	Result     *result        `json:"result,omitempty"`
	Variables  map[string]any `json:"variables"` // {} and absent differ
	Usage      *Usage         `json:"usage,omitempty"`
	Error      *text          `json:"error,omitempty"`
	RetryCount int            `json:"retry_count,omitempty"`
	State      map[string]any `json:"state,omitempty"`
	Value      *text          `json:"value,omitempty"`
	Agent      string         `json:"agent,omitempty"`
	Messages   []Message      `json:"messages,omitempty"`
	Tool       *ToolStep      `json:"tool,omitempty"`
	Host       string         `json:"host,omitempty"` // absent in older sessions
	PGID       int            `json:"pgid,omitempty"`
	At         time.Time      `json:"at"`
}

func optText(s string) *text {
	if s == "" {
		return nil
	}
	t := text(s)
	return &t
}

func (t *text) str() string {
	if t == nil {
		return ""
	}
	return string(*t)
}

func (r Record) wire() recordWire {
	var res *result
	if r.Result != "" || r.Blob != nil {
		res = &result{text: text(r.Result), blob: r.Blob}
	}
	return recordWire{Kind: r.Kind, Task: r.Task, Attempt: r.Attempt, Result: res,
		Variables: wireMap(r.Variables), Usage: r.Usage, Error: optText(r.Error), RetryCount: r.RetryCount,
		State: wireMap(r.State), Value: optText(r.Value), Agent: r.Agent, Messages: r.Messages, Tool: r.Tool, Host: r.Host, PGID: r.PGID, At: r.At}
}

func (w recordWire) record() Record {
	r := Record{Kind: w.Kind, Task: w.Task, Attempt: w.Attempt,
		Variables: w.Variables, Usage: w.Usage, Error: w.Error.str(), RetryCount: w.RetryCount,
		State: w.State, Value: w.Value.str(), Agent: w.Agent, Messages: w.Messages, Tool: w.Tool, Host: w.Host, PGID: w.PGID, At: w.At}
	if w.Result != nil {
		r.Result, r.Blob = string(w.Result.text), w.Result.blob
	}
	if r.Variables != nil {
		plainMap(r.Variables)
	}
	if r.State != nil {
		plainMap(r.State)
	}
	return r
}

func (r *Record) validate() error {
	switch r.Kind {
	case TaskStarted, TaskCompleted, TaskFailed, TaskSkipped, CurrentTask, DecisionRecorded:
		if r.Task == "" {
			return fmt.Errorf("%s record without a task", r.Kind)
		}
	case ToolTurnRecorded, ToolStarted, ToolFinished, ToolLoopEnded, ToolLoopResumed:
		if err := r.validateTool(); err != nil {
			return err
		}
	case RequestPaid:
		if r.Task == "" || r.Usage == nil {
			return fmt.Errorf("%s record without a task or its usage", r.Kind)
		}
	default:
		return &unknownKind{r.Kind}
	}
	if len(r.Messages) > 0 && r.Agent == "" {
		return fmt.Errorf("%s record with messages but no agent", r.Kind)
	}
	if r.Blob != nil {
		if r.Kind != TaskCompleted || r.Result != "" {
			return fmt.Errorf("%s record of task %q: a blob reference is a completed task's whole result", r.Kind, r.Task)
		}
		if err := r.Blob.Valid(); err != nil {
			return fmt.Errorf("%s record of task %q: %w", r.Kind, r.Task, err)
		}
	}
	if r.Attempt < 0 || r.RetryCount < 0 || r.PGID < 0 {
		return fmt.Errorf("%s record of task %q: negative count", r.Kind, r.Task)
	}
	return nil
}

// apply folds one validated record into s; O(size of the record).
func (s *Session) apply(r Record) {
	at := r.At.UTC()
	s.UpdatedAt, s.Checkpoint.Timestamp = at, at
	if len(r.State) > 0 {
		if s.Team.State == nil {
			s.Team.State = map[string]any{}
		}
		for k, v := range r.State {
			s.Team.State[k] = v
		}
	}
	var t *TaskRecord
	cutOff := false // a held task completed with no attempt: its recorded result reused
	switch r.Kind {
	case TaskStarted, TaskCompleted, TaskFailed, TaskSkipped:
		var ok bool
		if t, ok = s.Task(r.Task); !ok {
			// A transition of a task the snapshot did not list: keep it
			// rather than lose an acknowledged record.
			s.Team.Tasks = append(s.Team.Tasks, TaskRecord{ID: len(s.Team.Tasks), Name: r.Task, Status: StatusPending})
			s.index[r.Task] = len(s.Team.Tasks) - 1
			s.indexed = len(s.Team.Tasks)
			t = &s.Team.Tasks[len(s.Team.Tasks)-1]
		}
		if s.Hold != nil {
			_, held := s.Hold.Tasks[r.Task]
			cutOff = held && r.Kind == TaskCompleted && t.Status != StatusRunning
		}
		// An early cut-off held it: now it is decided; completed or
		// skipped, what --keep pinned over it no longer waits for it.
		s.decided(r.Task, r.Kind == TaskCompleted || r.Kind == TaskSkipped)
	}
	switch r.Kind {
	case TaskStarted:
		if r.Attempt > 0 {
			t.Attempts = r.Attempt
		} else {
			t.Attempts++
		}
		s.startAttempt(t, Attempt{N: t.Attempts, Start: at, Outcome: StatusRunning})
		if r.Usage != nil {
			t.Usage = t.Usage.Plus(r.Usage)
		}
		// StartedAt shares the attempt's start, as its end shares
		// FinishedAt: neither is ever written through.
		t.Status, t.Error, t.StartedAt, t.FinishedAt = StatusRunning, "", &t.History[len(t.History)-1].Start, nil
		t.Host, t.PGID = r.Host, r.PGID
		s.Checkpoint.CurrentTask = r.Task
	case TaskCompleted:
		t.Status, t.Result, t.Blob, t.Variables, t.Usage, t.Error, t.FinishedAt = StatusCompleted, r.Result, r.Blob, r.Variables, r.Usage.orNil(), "", s.endAt(t, at)
		t.Host, t.PGID = "", 0
		if r.RetryCount > 0 {
			t.RetryCount = r.RetryCount
		}
		s.endToolLog(r.Task, "completed")
		t.endAttempt(t.FinishedAt, StatusCompleted, r.Result, r.Blob, "")
		if cutOff {
			t.reusedAsRecorded()
		}
	case TaskFailed:
		t.Status, t.Error, t.RetryCount, t.FinishedAt = StatusFailed, r.Error, r.RetryCount, s.endAt(t, at)
		t.Host, t.PGID = "", 0
		t.endAttempt(t.FinishedAt, StatusFailed, "", nil, r.Error)
		if r.Usage != nil {
			t.Usage = r.Usage.orNil()
		}
	case TaskSkipped:
		t.Status, t.FinishedAt = StatusSkipped, timeAt(at)
		t.Host, t.PGID = "", 0
	case CurrentTask:
		s.Checkpoint.CurrentTask = r.Task
		// Written for a halt: a held task halts only once the early
		// cut-off let it go (what it reads changed), so its hold is
		// decided, and a decision recorded from now on is a new one about
		// the new input (Restored.decideHeld judges held tasks only).
		s.decided(r.Task, false)
	case DecisionRecorded:
		if s.Checkpoint.Decisions == nil {
			s.Checkpoint.Decisions = map[string]string{}
		}
		s.Checkpoint.Decisions[r.Task] = r.Value
	case RequestPaid:
		if t, ok := s.Task(r.Task); ok {
			t.Usage = t.Usage.Plus(r.Usage)
		}
	case ToolTurnRecorded, ToolStarted, ToolFinished, ToolLoopEnded, ToolLoopResumed:
		// A turn's Usage is what sessions written before RequestPaid
		// records carry; a turn today has none (its requests are paid).
		if r.Tool != nil && r.Tool.Usage != nil && r.Kind == ToolTurnRecorded {
			if t, ok := s.Task(r.Task); ok {
				t.Usage = t.Usage.Plus(r.Tool.Usage)
			}
		}
		s.applyTool(r)
	}
	if r.Kind == TaskCompleted || r.Kind == TaskSkipped {
		s.dropKept(r.Task)
	}
	// Messages may ride on any record (a completion and the turns that
	// produced it land together); append-only, so O(size of the record).
	if r.Agent != "" && len(r.Messages) > 0 {
		if s.Memory == nil {
			s.Memory = map[string][]Message{}
		}
		s.Memory[r.Agent] = append(s.Memory[r.Agent], r.Messages...)
		if s.Checkpoint.MemorySummary == nil {
			s.Checkpoint.MemorySummary = map[string]int{}
		}
		s.Checkpoint.MemorySummary[r.Agent] = len(s.Memory[r.Agent])
	}
}

// dropKept drops the records kept for the instances of task, a foreach's
// join that waited for its producer (TeamState.Deferred), once it ends:
// it ends only when the producer did not complete (a route skipped it),
// so the foreach had no list and its instances are no tasks of the run,
// nor of a later one, which makes them anew if the producer runs. Kept,
// they counted as open tasks (session list: interrupted) after a run that
// ended done. O(tasks), only for a join that has such records.
func (s *Session) dropKept(task string) {
	if len(s.Team.Deferred) == 0 {
		return // nearly every record: nothing to look at, no closure made
	}
	of := func(n string) bool {
		rest, ok := strings.CutPrefix(n, task+"[")
		return ok && strings.HasSuffix(rest, "]")
	}
	if !slices.ContainsFunc(s.Team.Deferred, of) {
		return
	}
	s.Team.Tasks = slices.DeleteFunc(s.Team.Tasks, func(t TaskRecord) bool { return of(t.Name) && slices.Contains(s.Team.Deferred, t.Name) })
	if s.Team.Deferred = slices.DeleteFunc(s.Team.Deferred, of); len(s.Team.Deferred) == 0 {
		s.Team.Deferred = nil
	}
	s.reindex()
}

// startAttempt adds a to t's history. A first attempt gets a block with
// room for its end (open until endAt); a later one is appended.
func (s *Session) startAttempt(t *TaskRecord, a Attempt) {
	if len(t.History) > 0 {
		s.close(&t.History[0]) // an attempt that never ended
		t.History = append(t.History, a)
		return
	}
	b := &attemptBlock{a: [1]Attempt{a}}
	t.History = b.a[:]
	s.open = append(s.open, b)
}

// endAt is where t's attempt under way ends, at: its block's room when
// startAttempt gave it one, else a time of its own.
func (s *Session) endAt(t *TaskRecord, at time.Time) *time.Time {
	if n := len(t.History); n == 1 && t.History[0].End == nil {
		if b := s.close(&t.History[0]); b != nil {
			b.end = at
			return &b.end
		}
	}
	return timeAt(at)
}

// close takes the block of attempt a out of s.open and returns it (nil
// when a has none). The open blocks are those of the tasks running at
// once: a few.
func (s *Session) close(a *Attempt) *attemptBlock {
	for k, b := range s.open {
		if &b.a[0] == a {
			s.open = slices.Delete(s.open, k, k+1)
			return b
		}
	}
	return nil
}

// timeAt is a pointer to a copy of at: taken only where one is kept, so
// that apply's own at stays off the heap for the records that keep none.
func timeAt(at time.Time) *time.Time { return &at }

// endAttempt closes the attempt under way, if any (a decision or an early
// cut-off completes a task without one), at end: the task's FinishedAt,
// one time shared rather than a copy a task (neither is ever written
// through).
// reusedAsRecorded makes t, a held task the early cut-off reused, the
// record it was before the hold: the "previous" result the hold kept is
// this very one (session diff would offer an empty diff), and its times
// are its last attempt's, as a restored task's are.
func (t *TaskRecord) reusedAsRecorded() {
	if t.PreviousOutcome().Same(t.Outcome()) {
		t.Previous = nil
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if a := &t.History[i]; a.Outcome == StatusCompleted && a.End != nil {
			t.StartedAt, t.FinishedAt = &a.Start, a.End
			break
		}
	}
}

func (t *TaskRecord) endAttempt(end *time.Time, outcome Status, result string, blob *Blob, why string) {
	n := len(t.History)
	if n == 0 || t.History[n-1].End != nil {
		return
	}
	a := &t.History[n-1]
	a.End, a.Outcome, a.Error = end, outcome, why
	switch {
	case outcome == StatusCompleted && blob != nil:
		a.Digest = blob.Digest // the same sha256 Digest would compute
	case outcome == StatusCompleted:
		a.Digest = Digest(result)
	}
}
