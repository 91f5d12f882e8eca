package runner

import (
	"encoding/json"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// EventType names a change the runner went through.
type EventType string

const (
	RunStarted      EventType = "run_started"
	TaskRestored    EventType = "task_restored"
	TaskStarted     EventType = "task_started"
	TaskRetrying    EventType = "task_retrying"
	TaskCompleted   EventType = "task_completed"
	TaskFailed      EventType = "task_failed"
	TaskSkipped     EventType = "task_skipped"
	TaskInterrupted EventType = "task_interrupted"
	// TaskHalted is an attempt stopped at a tool call that needs a
	// decision: the task waits for `session decide`, as a human task does.
	TaskHalted EventType = "task_halted"
	// TaskReused is a task held back by a re-run upstream whose inputs came
	// out byte-identical: its recorded result is taken over (early cut-off).
	TaskReused EventType = "task_reused"
	// TaskDelta is a piece of a streamed answer as it came: shown, never
	// recorded (a stream that breaks off is no result).
	TaskDelta EventType = "task_delta"
	// TaskStreamDiscarded drops the task_deltas of a request since it
	// began (or since the last such event): its stream failed and the
	// request is sent again, so the deltas that follow rebuild the result.
	// Message says why.
	TaskStreamDiscarded EventType = "task_stream_discarded"
	// RequestRetrying is an LLM request that failed and that the client
	// sends again after Delay (its Retry-After, else a backoff): Request
	// of MaxRequests, Error why. Shown, never recorded: a run that waits
	// minutes on a busy server says so.
	RequestRetrying EventType = "request_retrying"
	RunHalted       EventType = "halted"
	RunWarning      EventType = "warning"
	RunInfo         EventType = "info"        // worth saying, never worth a cron mail: --quiet drops it
	TaskLine        EventType = "task_output" // --verbose: a line of a command's stdout or stderr
	RunFinished     EventType = "run_finished"
	// The steps of an LLM agent's tool loop; their names are the journal's.
	ToolTurn    EventType = EventType(checkpoint.ToolTurnRecorded)
	ToolStarted EventType = EventType(checkpoint.ToolStarted)
	ToolResult  EventType = EventType(checkpoint.ToolFinished)
	ToolEnded   EventType = EventType(checkpoint.ToolLoopEnded)
	ToolResumed EventType = EventType(checkpoint.ToolLoopResumed)
	// RequestPaid is one LLM request's usage, journaled as it is paid
	// (Paid); the attempt's end event carries it again in its Usage.
	RequestPaid EventType = EventType(checkpoint.RequestPaid)
)

// Turn is one message of an agent's conversation, as the engine keeps it;
// Task is the task it was produced for, so that a per-task restore keeps
// only the turns of the tasks it reuses. The checkpoint stores it as a
// checkpoint.Message (run.go converts at the boundary).
type Turn struct {
	Role    string
	Content string
	Task    string
}

// Usage is the tokens an LLM task consumed, as the server counts them,
// and what they cost.
type Usage = checkpoint.Usage

// Halt is what a run stopped for when a human decision is due.
type Halt struct {
	Session     string   `json:"session"`
	Task        string   `json:"task"`
	Description string   `json:"description"`
	Options     []string `json:"options,omitempty"`
	Command     string   `json:"command"`            // records a decision; VALUE is a placeholder
	Commands    []string `json:"commands,omitempty"` // the exact command for each option
	// Budget, when set, says that the session's budget is reached: the
	// task waits for a larger one, not for a decision.
	Budget string `json:"budget,omitempty"`
	// Tool and Arguments name the call a tool halt is about.
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Loop, when set, names the limit that ended the task's tool loop
	// ("agents.w.max_turns (4)"): it waits for a higher one or for
	// `decide ... rerun` (LoopHaltError).
	Loop string `json:"loop,omitempty"`
}

// Event is one step of a run. The engine hands each to its Recorder (the
// checkpoint) before it goes on, and to its Observer (the user's output).
type Event struct {
	Time       time.Time `json:"time"`
	Type       EventType `json:"event"`
	Session    string    `json:"session,omitempty"`
	Task       string    `json:"task,omitempty"`
	Index      int       `json:"-"` // the task's position; -1 for run-level events
	Agent      string    `json:"agent,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	RetryCount int       `json:"retry_count,omitempty"`
	Result     string    `json:"result,omitempty"`
	// ResultBlob is a result stored out of line (Result is then ""): its
	// sha256 and size.
	ResultBlob *checkpoint.Blob `json:"result_blob,omitempty"`
	Error      string           `json:"error,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	Delay      *Millis          `json:"delay_ms,omitempty"`   // before the next attempt
	Elapsed    *Millis          `json:"elapsed_ms,omitempty"` // of the attempt or the run
	Usage      *Usage           `json:"usage,omitempty"`
	// OutputVariable is set when the result also went into the shared state.
	OutputVariable string `json:"output_variable,omitempty"`
	OutputValue    any    `json:"-"` // what it holds now (OutputValue)
	// Memory holds the turns a task added to its agent's conversation, for
	// agents with memory: true. It is checkpointed, never printed.
	Memory  []Turn   `json:"-"`
	Halt    *Halt    `json:"halt,omitempty"`
	Summary *Summary `json:"summary,omitempty"`
	Message string   `json:"message,omitempty"` // warnings, info, a task_output's line
	Delta   string   `json:"delta,omitempty"`   // task_delta: the text that came
	Stream  string   `json:"stream,omitempty"`  // task_output: stdout or stderr
	// Logs is, for a failed attempt whose output was kept, the command
	// that shows it.
	Logs string `json:"logs_command,omitempty"`
	// Tasks is, for run_started, how many tasks the team has.
	Tasks int `json:"tasks,omitempty"`
	// Tool is a tool loop step's payload, as journaled.
	Tool *checkpoint.ToolStep `json:"tool,omitempty"`
	// Paid is a request_paid event's usage: that request's, not in Usage,
	// which the attempt's end event has (no sum counts it twice).
	Paid *Usage `json:"paid,omitempty"`
	// Unended is, on an LLM attempt's task_started, what the attempt
	// counts should its run die before it ends (checkpoint.Call.NoEnd):
	// journaled, never shown, and no usage of this run's.
	Unended *Usage `json:"-"`
	// Request and MaxRequests are, for request_retrying, the LLM request
	// of the attempt that failed (1, 2, …) and how many the client sends
	// at most.
	Request     int32 `json:"request,omitempty"`
	MaxRequests int32 `json:"max_requests,omitempty"`
	// Overwritten: a task that runs after it (restored, or ended
	// already) set the same variable, and the shared state keeps its
	// value. Beside the two above, in room an Event has anyway: one
	// more word put a task's events in a larger size class.
	Overwritten bool `json:"-"`
}

// Millis is a duration printed as whole milliseconds in JSON events.
type Millis time.Duration

func (m Millis) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(m).Milliseconds())
}

func millis(d time.Duration) *Millis { m := Millis(d); return &m }

// Outcome is how a run ended.
type Outcome string

const (
	Succeeded   Outcome = "succeeded"
	Failed      Outcome = "failed"
	Halted      Outcome = "halted"
	Interrupted Outcome = "interrupted"
	StoreFailed Outcome = "store_failed"
)

// Summary counts what a run did.
type Summary struct {
	Session  string  `json:"session"`
	Outcome  Outcome `json:"outcome"`
	Total    int     `json:"total"`
	Restored int     `json:"restored"`
	Ran      int     `json:"ran"`
	Failed   int     `json:"failed"`
	Skipped  int     `json:"skipped"`
	Pending  int     `json:"pending"`        // not reached
	Resume   string  `json:"resume_command"` // how to continue this session
	Elapsed  Millis  `json:"elapsed_ms"`
	Tokens   int     `json:"total_tokens,omitempty"` // LLM tokens of this run (Usage.TotalTokens)
	// Usage is what this run's LLM requests cost, failed ones included;
	// SessionUsage the same for the whole session, this run included;
	// RestoredUsage what the restored tasks had cost when they ran: paid
	// once, not again. Their Calls are left out. nil: no LLM tokens.
	Usage         *Usage `json:"usage,omitempty"`
	SessionUsage  *Usage `json:"session_usage,omitempty"`
	RestoredUsage *Usage `json:"restored_usage,omitempty"`
	// RestoredPaid counts the restored tasks whose RestoredUsage it is (a
	// command task's restore saves no tokens).
	RestoredPaid int `json:"restored_paid_tasks,omitempty"`
	// FailedTasks names the tasks that failed, in file order.
	FailedTasks []string `json:"failed_tasks,omitempty"`
	// Unrecorded counts, and UnrecordedTasks names in file order, the
	// tasks that ran but whose completion (or failure) the store could not
	// take (the run lost its lock, say): not counted as ran (nor failed),
	// they run again on --continue.
	Unrecorded      int      `json:"unrecorded,omitempty"`
	UnrecordedTasks []string `json:"unrecorded_tasks,omitempty"`
	// MaybeRecorded counts, and MaybeRecordedTasks names, the tasks that
	// ran and whose record may have been written (the connection broke
	// before the store's answer came): --continue restores them if it
	// was, and runs them again if not.
	// Unkept, in a run that ended StoreFailed with its checkpoint
	// written, is what else could not be kept ("the output_file of task
	// b"): the run stopped for it, as the exit code (5) says.
	Unkept             string   `json:"unkept,omitempty"`
	MaybeRecorded      int      `json:"maybe_recorded,omitempty"`
	MaybeRecordedTasks []string `json:"maybe_recorded_tasks,omitempty"`
	// Outputs are the results of the completed tasks no other task reads:
	// what the team produced.
	Outputs []TaskOutput `json:"outputs,omitempty"`
	// CutOff counts the restored tasks that would have run again but for
	// the early cut-off (a re-run task's output came out unchanged).
	CutOff int `json:"cut_off,omitempty"`
	// Kept names the tasks --keep restored although their definition changed.
	Kept []string `json:"kept,omitempty"`
	// Halts are what a halted run waits for, each as its halted event says.
	Halts []*Halt `json:"halts,omitempty"`
	// Unsettled are the calls of tools that were not idempotent this run
	// left without a result (a signal stopped it, the task's timeout its
	// last attempt, the store failed): each the halt the next --continue
	// stops at unless it is decided first.
	Unsettled []*Halt `json:"unsettled,omitempty"`
}

// TaskOutput is one task's result.
type TaskOutput struct {
	Task   string `json:"task"`
	Result string `json:"result"`
	// ResultBlob is a result stored out of line (Result is then ""),
	// printed from the store.
	ResultBlob *checkpoint.Blob `json:"result_blob,omitempty"`
	out        Output
}
