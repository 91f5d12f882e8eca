// Package checkpoint is teamrun's durable session store: one JSON snapshot
// per session plus an append-only journal of task transitions, an exclusive
// per-session lock, the restore rules of DESIGN §4 and the project files
// (.teamrun/state.json, audit.log, config.yml).
package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamrun/teamrun/pkg/spec"
)

// FormatVersion is the newest session file format this package reads and
// writes; a newer file is refused with advice. Format 3 is a session with
// results stored out of line (blobs); one without any is still written as
// format 2, which older teamruns read.
const FormatVersion = 3

// Status is a task's state in a checkpoint.
type Status string

const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusSkipped   Status = "skipped"
)

// Session is one session file: the snapshot with the journal folded in.
// Field order is the JSON order; the small fields come first so List can
// read a summary without decoding the tasks.
type Session struct {
	FormatVersion int       `json:"format_version"`
	ID            string    `json:"session_id"`
	SpecPath      string    `json:"spec_path"`
	TeamName      string    `json:"team_name,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	// JournalOpen, in a file store's snapshot, says the run that wrote it
	// went on recording in its journal (of Epoch), which no snapshot has
	// absorbed yet: that journal gone is damage, not a session with
	// nothing recorded (the tasks it finished would run again). A run's
	// end writes its snapshot without it. It is in the head, before
	// Summary, so that List sees it without decoding the tasks. Only the
	// file store sets it, on the snapshot it writes, and clears it once
	// it has checked the one it read.
	JournalOpen bool `json:"journal_open,omitempty"`
	// Summary is recomputed on every snapshot; it is what List shows.
	Summary Counts `json:"summary"`
	// Epoch names the journal generation that belongs to this snapshot;
	// a journal with another epoch was already folded in and is ignored.
	Epoch string `json:"journal_epoch,omitempty"`
	// FoldedEpoch is the epoch of the journal this snapshot absorbed: a
	// crash before that journal was restarted leaves it behind, already
	// folded. A journal of any other epoch does not belong here (format 2).
	FoldedEpoch string `json:"folded_epoch,omitempty"`
	// FoldedRecords, when set, says the snapshot absorbed only the first
	// FoldedRecords records of that journal: a compaction written beside a
	// run that kept recording. A crash before the journal moved to the new
	// epoch leaves the old one, whose later records are still to apply.
	FoldedRecords int                  `json:"folded_records,omitempty"`
	Checkpoint    Checkpoint           `json:"checkpoint"`
	Team          TeamState            `json:"team"`
	Memory        map[string][]Message `json:"memory,omitempty"`
	// ToolLogs holds each task's tool loop, by task name (toolrecord.go).
	ToolLogs map[string]*ToolLog `json:"tool_logs,omitempty"`
	// Hold is the early cut-off the last run left undecided (hold.go);
	// absent when it held nothing, and in older sessions.
	Hold *Hold `json:"held,omitempty"`

	// JournalLeft: the store read the session with a journal beside its
	// snapshot (a run killed, or stopped by the store, before its end
	// folded it). A run that resumes it folds it at its end, even one that
	// records nothing (a full restore with nothing to run).
	JournalLeft bool `json:"-"`
	// Redact, when set, is applied to the texts the session's snapshot
	// and journal records store (redact.go): a run sets it to remove its
	// agents' keys, which a --var or a description rendered with one may
	// hold. The session in memory keeps the real texts.
	Redact func(string) string `json:"-"`

	index   map[string]int // task name -> position in Team.Tasks
	indexed int            // how many of Team.Tasks index covers
	// distinct says the tasks' names are known to differ (NewSession made
	// them from a task set): then Task looks where the last one was, just
	// after and before it, and at the first, before it builds index; a
	// sequential run, which records a task's end with the next one's start,
	// never builds it (0.4 MB at 10,000 tasks).
	distinct bool
	cursor   int
	// open are the attempts apply started in one block with room for
	// their end (attemptBlock) and has not ended: a task that runs once
	// keeps 112 bytes, not an attempt's 96 and its end's 24.
	open []*attemptBlock
}

// Counts is the summary kept at the top of a session file.
type Counts struct {
	Done  int `json:"tasks_done"`
	Total int `json:"tasks_total"`
}

// Checkpoint is where the run stands.
type Checkpoint struct {
	CurrentTask string            `json:"current_task"`
	Decisions   map[string]string `json:"decisions"`
	// MemorySummary is the number of messages kept per agent.
	MemorySummary map[string]int `json:"memory_summary"`
	Timestamp     time.Time      `json:"timestamp"`
}

// TeamState is the team payload of a session.
type TeamState struct {
	State map[string]any `json:"state"`
	// InitialState is the shared state the session's last run started
	// from: the spec's variables and that run's --var, without what
	// output_variable set since. The task definitions, and so
	// TasksFingerprint, were rendered with it, and a resumed run renders
	// them with it again (StartState). Absent in files written before it
	// existed.
	InitialState     map[string]any `json:"initial_state,omitempty"`
	Agents           []AgentRecord  `json:"agents"`
	Process          string         `json:"process"`
	Tasks            []TaskRecord   `json:"tasks"`
	TasksFingerprint string         `json:"tasks_fingerprint"`
	// DroppedUsage is what the LLM requests of task records the session
	// no longer holds cost (tasks removed from the spec, foreach
	// instances gone), without calls: paid all the same, so the session's
	// usage and its budget go on counting it (Session.Usage).
	DroppedUsage *Usage `json:"dropped_usage,omitempty"`
	// Deferred names the records of Tasks kept for the instances of a
	// foreach that waits for its producer (Restored.Deferred): not tasks
	// of the run, so no count of the session's tasks has them.
	Deferred []string `json:"deferred,omitempty"`
}

// AgentRecord is what a session keeps about an agent: never a secret.
type AgentRecord struct {
	Name   string `json:"name"`
	Kind   string `json:"kind,omitempty"`
	Key    string `json:"agent_key,omitempty"`
	Memory bool   `json:"memory,omitempty"`
	// Tools holds a key per tool (and "mcp:SERVER" per MCP server) of an
	// LLM agent, so that plan can say which one changed.
	Tools map[string]string `json:"tools,omitempty"`
}

// HaltedErrorPrefix begins the error recorded for a task halted in the
// middle, at a tool call or by the budget: a failed record, as an
// interrupted one is, since a wait has no status of its own. HaltedError
// tells it from a failure.
const HaltedErrorPrefix = "halted for a decision: "

// BudgetHaltPrefix begins the error recorded for a task halted by the
// session's budget, after its first request or between two: plan tells
// it from the other halts, whose reason it shows.
const BudgetHaltPrefix = HaltedErrorPrefix + "the session's budget is reached before its next LLM request: "

// HaltedError says whether a task's recorded error is a halt's.
func HaltedError(recorded string) bool { return strings.HasPrefix(recorded, HaltedErrorPrefix) }

// AttemptNote is " (attempt n)" for a line about a task's attempt n, and
// "" for n 0, no attempt: a human task makes none (its decision is not a
// try, and the session counts none), nor a task stopped before its first
// started. run and plan both word the attempt with it, so that they say
// the same of one task.
func AttemptNote(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (attempt %d)", n)
}

// InterruptedError is the error recorded for a task a signal stopped (a
// failed record, as a halt's is): it tells an interrupted task from a
// failed one.
const InterruptedError = "interrupted before it completed"

// Usage is what a task's LLM requests cost: the sums, and each request
// that reported usage (Calls), failed and retried ones included.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	TotalTokens      int `json:"total_tokens,omitempty"`
	CachedTokens     int `json:"cached_tokens,omitempty"`    // of the prompt tokens
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"` // of the completion tokens
	// CostUSD is the cost of the priced calls; UnpricedTokens the tokens of
	// calls whose model has no price, whose cost is unknown (never $0).
	CostUSD        float64 `json:"cost_usd,omitempty"`
	UnpricedTokens int     `json:"unpriced_tokens,omitempty"`
	// UnknownRequests counts requests cut off (Ctrl-C, a timeout) before
	// they reported usage: paid for, perhaps, but by how much is unknown.
	UnknownRequests int `json:"unknown_requests,omitempty"`
	// UnreportedRequests counts answers that reported no usage (a server
	// that counts none): billed, by how much unknown. EstimatedTokens and
	// EstimatedCostUSD are what their sizes make of them (Call's), which
	// a budget counts; they are in none of the sums above.
	UnreportedRequests int     `json:"unreported_requests,omitempty"`
	EstimatedTokens    int     `json:"estimated_tokens,omitempty"`
	EstimatedCostUSD   float64 `json:"estimated_cost_usd,omitempty"`
	// InterruptedEstimatedTokens and InterruptedEstimatedCostUSD are the
	// same estimate for the UnknownRequests (what was sent, and what came
	// before the cut): a budget counts them too, or requests cut off
	// again and again (a stalled stream, an answer over 32 MiB) would
	// spend without bound. They are in none of the sums above.
	InterruptedEstimatedTokens  int     `json:"interrupted_estimated_tokens,omitempty"`
	InterruptedEstimatedCostUSD float64 `json:"interrupted_estimated_cost_usd,omitempty"`
	Calls                       []Call  `json:"calls,omitempty"`
}

// Call is one HTTP request that was answered or reported usage, or that
// was cut off.
type Call struct {
	Model            string   `json:"model"`
	Attempt          int      `json:"attempt,omitempty"` // the task's attempt it belongs to
	Status           int      `json:"status"`            // HTTP status
	DurationMS       int64    `json:"duration_ms"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	TotalTokens      int      `json:"total_tokens"`
	CachedTokens     int      `json:"cached_tokens,omitempty"`
	ReasoningTokens  int      `json:"reasoning_tokens,omitempty"`
	CostUSD          *float64 `json:"cost_usd,omitempty"` // nil: the model has no price
	// Outcome is CallInterrupted for a request cut off by Ctrl-C or a
	// timeout, whose tokens are those a stream reported before, or
	// unknown (UsageUnknown); "" for an answered one, whose usage is
	// unknown when the answer reported none.
	Outcome      string `json:"outcome,omitempty"`
	UsageUnknown bool   `json:"usage_unknown,omitempty"`
	// EstimatedTokens and EstimatedCostUSD (nil: the model has no price)
	// are, for an answer that reported no usage or a request cut off
	// before it did, its tokens and cost estimated from its size: what a
	// budget counts of it.
	EstimatedTokens  int      `json:"estimated_tokens,omitempty"`
	EstimatedCostUSD *float64 `json:"estimated_cost_usd,omitempty"`
	// NoEnd marks what an attempt's start counts should the attempt never
	// end (a kill -9, a crash, a power cut): a request it may have had
	// under way, interrupted, its usage unknown, estimated from the size
	// of the attempt's first request. The attempt's end record replaces
	// it with the requests the attempt paid (TaskStarted).
	NoEnd bool `json:"no_end,omitempty"`
}

// CallInterrupted is the outcome of a request cut off by Ctrl-C or a
// timeout.
const CallInterrupted = "interrupted"

// Usage is what c adds to a usage: its tokens and its cost, or its tokens
// as unpriced (its model has no price), or one request of unknown usage
// (cut off, or answered without usage, with its estimate).
func (c Call) Usage() *Usage {
	u := &Usage{PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, TotalTokens: c.TotalTokens,
		CachedTokens: c.CachedTokens, ReasoningTokens: c.ReasoningTokens}
	switch {
	case c.UsageUnknown && c.Outcome == CallInterrupted:
		u.UnknownRequests, u.InterruptedEstimatedTokens = 1, c.EstimatedTokens
		if c.EstimatedCostUSD != nil {
			u.InterruptedEstimatedCostUSD = *c.EstimatedCostUSD
		}
	case c.UsageUnknown:
		u.UnreportedRequests, u.EstimatedTokens = 1, c.EstimatedTokens
		if c.EstimatedCostUSD != nil {
			u.EstimatedCostUSD = *c.EstimatedCostUSD
		}
	case c.CostUSD != nil:
		u.CostUSD = *c.CostUSD
	default:
		u.UnpricedTokens = c.TotalTokens
	}
	return u
}

// WithoutAttempt is u less its calls of attempt n: the turns of a tool
// loop record their requests as they go, and the attempt's end record
// carries them all again.
func (u *Usage) WithoutAttempt(n int) *Usage {
	if u == nil || n <= 0 || !slices.ContainsFunc(u.Calls, func(c Call) bool { return c.Attempt == n }) {
		return u
	}
	out := *u
	out.Calls = nil
	for _, c := range u.Calls {
		if c.Attempt != n {
			out.Calls = append(out.Calls, c)
			continue
		}
		out.addCounts(c.Usage(), -1)
	}
	return &out
}

// orNil is u, or nil when it holds no call and counts nothing: what a
// task paid once its attempt's start estimate is taken back (TaskStarted)
// by an end that paid nothing is none, not {}.
func (u *Usage) orNil() *Usage {
	if u == nil || len(u.Calls) > 0 || !reflect.DeepEqual(*u, Usage{Calls: u.Calls}) {
		return u
	}
	return nil
}

// Plus is u and o together; either may be nil (nil and nil: nil).
func (u *Usage) Plus(o *Usage) *Usage {
	if u == nil && o == nil {
		return nil
	}
	var s Usage
	for _, x := range []*Usage{u, o} {
		if x != nil {
			s.Add(x)
		}
	}
	return &s
}

// Add adds o, its counts and its calls, to u.
func (u *Usage) Add(o *Usage) {
	u.addCounts(o, 1)
	u.Calls = append(u.Calls, o.Calls...)
}

// addCounts adds sign (1 or -1) times o's counts, not its calls, to u:
// the one place that knows every count a usage has.
func (u *Usage) addCounts(o *Usage, sign int) {
	f := float64(sign)
	u.PromptTokens += sign * o.PromptTokens
	u.CompletionTokens += sign * o.CompletionTokens
	u.TotalTokens += sign * o.TotalTokens
	u.CachedTokens += sign * o.CachedTokens
	u.ReasoningTokens += sign * o.ReasoningTokens
	u.CostUSD = RoundCost(u.CostUSD + f*o.CostUSD)
	u.UnpricedTokens += sign * o.UnpricedTokens
	u.UnknownRequests += sign * o.UnknownRequests
	u.UnreportedRequests += sign * o.UnreportedRequests
	u.EstimatedTokens += sign * o.EstimatedTokens
	u.EstimatedCostUSD = RoundCost(u.EstimatedCostUSD + f*o.EstimatedCostUSD)
	u.InterruptedEstimatedTokens += sign * o.InterruptedEstimatedTokens
	u.InterruptedEstimatedCostUSD = RoundCost(u.InterruptedEstimatedCostUSD + f*o.InterruptedEstimatedCostUSD)
}

// RoundCost rounds dollars to a ten-billionth, far below any price of a
// token: float64 sums otherwise carry binary noise into the session file
// and the events ($0.000054999999999999995 for $0.000055).
func RoundCost(usd float64) float64 { return math.Round(usd*1e10) / 1e10 }

// Message is one turn of an agent's conversation. Task is the task it was
// produced for, so a per-task restore keeps only the turns of reused tasks.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Task    string `json:"task,omitempty"`
}

// TaskRecord is one task in a checkpoint: its definition as compared by the
// restore rules, and its state. Result and Error hold raw bytes; they are
// stored base64 with a marker when they are not UTF-8.
type TaskRecord struct {
	ID             int            `json:"id"`
	Name           string         `json:"name"`
	Agent          string         `json:"agent"`
	Description    string         `json:"description"`
	ExpectedOutput string         `json:"expected_output"`
	Key            string         `json:"key"`
	AgentKey       string         `json:"agent_key"`
	OwnKey         string         `json:"own_key,omitempty"` // spec.TaskDef.OwnKey; "" in older sessions
	Context        []string       `json:"context"`
	Status         Status         `json:"status"`
	Result         string         `json:"result"`
	RetryCount     int            `json:"retry_count"`
	Attempts       int            `json:"attempts"`
	Variables      map[string]any `json:"variables"`
	Error          string         `json:"error,omitempty"`
	StartedAt      *time.Time     `json:"started_at,omitempty"`
	FinishedAt     *time.Time     `json:"finished_at,omitempty"`
	Usage          *Usage         `json:"usage,omitempty"`
	// History is every attempt of the task in the session, oldest first.
	History []Attempt `json:"history,omitempty"`
	// Previous is the result the task had before it ran again (--rerun, a
	// changed definition), for `session diff`; nil when it has none. Few
	// records have one: behind a pointer it is 8 bytes a record, not 24
	// (its text and blob). It is never written through: a record copied
	// from another shares it (replace it instead).
	Previous *PreviousResult `json:"-"`
	// Blob is set, and Result empty, for a result stored out of line
	// (over BlobThreshold).
	Blob *Blob `json:"-"`
	// Host and PGID say, while the task runs, the host and process group
	// of the run that started it (absent in older sessions).
	Host string `json:"host,omitempty"`
	PGID int    `json:"pgid,omitempty"`
}

// Attempt is one attempt of a task as the session's history keeps it. Its
// LLM usage is the task's Usage.Calls of the same attempt number.
type Attempt struct {
	N       int        `json:"n"`
	Start   time.Time  `json:"start"`
	End     *time.Time `json:"end,omitempty"`
	Outcome Status     `json:"outcome"`                 // running, completed or failed
	Digest  string     `json:"result_digest,omitempty"` // sha256 of the result, when completed
	// Error is why a failed attempt failed (the timeline tells an
	// interrupted attempt from a failed one by it).
	Error string `json:"error,omitempty"`
}

// emptyDigest is Digest(""): a command that prints nothing is common, and
// its attempts share this string rather than hold 80 bytes each.
const emptyDigest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Digest is the history's digest of a result.
func Digest(result string) string {
	if result == "" {
		return emptyDigest
	}
	sum := sha256.Sum256([]byte(result))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TaskOutput is a restored result rebuilt as a task output (DESIGN §4), so
// later tasks' context and routing read it as if it had just been produced.
type TaskOutput struct {
	Description  string `json:"description"`
	Raw          string `json:"raw"`
	Agent        string `json:"agent"`
	OutputFormat string `json:"output_format"`
}

// Output is t's result as a task output (Raw empty for a result stored
// out of line).
func (t TaskRecord) Output() TaskOutput {
	return TaskOutput{Description: t.Description, Raw: t.Result, Agent: t.Agent, OutputFormat: "RAW"}
}

// NewTask is the pending record of a task definition. It shares the
// definition's context list, as it shares its texts: nothing writes to
// either, and Team.ContextOf makes a list for each definition, so a copy
// was 10,000 allocations (0.16 MB) more for a 10,000-task run, live
// beside the definitions while its session is made.
func NewTask(d spec.TaskDef) TaskRecord {
	t := TaskRecord{
		ID: d.ID, Name: d.Name, Agent: d.Agent, Description: d.Description,
		ExpectedOutput: d.ExpectedOutput, Key: d.Key, AgentKey: d.AgentKey, OwnKey: d.OwnKey,
		Status: StatusPending,
	}
	if len(d.Context) > 0 { // an empty list is recorded as none (null), as before
		t.Context = d.Context
	}
	return t
}

// NewSession builds a fresh session for a spec's tasks, all pending.
func NewSession(id, specPath, teamName string, process spec.Process, defs []spec.TaskDef, fingerprint string, now time.Time) *Session {
	s := newSession(id, specPath, teamName, process, defs, fingerprint, now, make([]TaskRecord, len(defs)))
	for i, d := range defs {
		s.Team.Tasks[i] = NewTask(d)
	}
	return s
}

// newSession is NewSession with records (one for each of defs) as its
// tasks, left as they are; nil: a list of its own, each record zero.
func newSession(id, specPath, teamName string, process spec.Process, defs []spec.TaskDef, fingerprint string, now time.Time, records []TaskRecord) *Session {
	if records == nil {
		records = make([]TaskRecord, len(defs))
	}
	return &Session{
		FormatVersion: FormatVersion, ID: id, SpecPath: specPath, TeamName: teamName,
		CreatedAt: now.UTC(), UpdatedAt: now.UTC(),
		Checkpoint: Checkpoint{Decisions: map[string]string{}, MemorySummary: map[string]int{}, Timestamp: now.UTC()},
		Team: TeamState{State: map[string]any{}, Process: string(process), TasksFingerprint: fingerprint,
			Tasks: records},
		distinct: true,
	}
}

// Continue builds the session for a new run of old's id from the spec's
// current tasks and what Restore kept: tasks in defs order carrying their
// restored records, the restored state, decisions and memory.
//
// The session takes over r's records (Restored.Task then finds its own):
// one list of 10,000 records fewer while a restore loads. When those
// are old's own (a full restore that changed none, shareRecords), old is
// left without tasks: its list is the new session's, which the run changes.
func Continue(old *Session, r *Restored, process spec.Process, defs []spec.TaskDef, fingerprint string, now time.Time) *Session {
	var records []TaskRecord
	if r != nil && !r.taken && len(r.records) == len(defs) && len(r.Deferred) == 0 {
		records, r.taken = r.records, true
		if r.shared {
			r.shared = false
			defer old.dropTasks()
		}
	}
	s := newSession(old.ID, old.SpecPath, old.TeamName, process, defs, fingerprint, now, records)
	s.CreatedAt = old.CreatedAt
	// A continuation: Begin may replace the file it came from, and reads
	// what that file absorbed to switch its journal safely.
	s.Epoch, s.FoldedEpoch, s.FoldedRecords = old.Epoch, old.FoldedEpoch, old.FoldedRecords
	s.Team.Agents = old.Team.Agents
	for i := range s.Team.Tasks {
		t := &s.Team.Tasks[i]
		def := NewTask(defs[i])
		rec, ok := (*TaskRecord)(nil), false
		if r != nil {
			rec, ok = r.Task(def.Name)
		}
		if !ok {
			*t = def
			continue
		}
		if rec != t { // not one of the records taken over: a copy
			*t = *rec
		}
		// The definition is today's; the state is the restored one.
		t.ID, t.Agent, t.Description, t.ExpectedOutput = def.ID, def.Agent, def.Description, def.ExpectedOutput
		if r.keepsKeys(defs[i], t) {
			continue
		}
		t.Key, t.AgentKey, t.OwnKey, t.Context = def.Key, def.AgentKey, def.OwnKey, def.Context
	}
	if r != nil && len(r.Deferred) > 0 {
		// Not removed from the file: made anew when the producer finishes.
		s.Team.Tasks = append(s.Team.Tasks, r.Deferred...)
		for _, t := range r.Deferred {
			s.Team.Deferred = append(s.Team.Deferred, t.Name)
		}
	}
	s.ToolLogs = carryToolLogs(old, s)
	if r == nil {
		s.Team.DroppedUsage = droppedUsage(old, s)
		return s
	}
	for k, v := range r.State {
		s.Team.State[k] = v
	}
	for k, v := range r.Decisions {
		s.Checkpoint.Decisions[k] = v
	}
	if len(r.Memory) > 0 {
		s.Memory = map[string][]Message{}
		for a, msgs := range r.Memory {
			s.Memory[a] = append([]Message(nil), msgs...)
			s.Checkpoint.MemorySummary[a] = len(msgs)
		}
	}
	s.Team.DroppedUsage = droppedUsage(old, s)
	s.Hold = r.hold()
	return s
}

// dropTasks empties s's list of tasks, taken over by its continuation.
func (s *Session) dropTasks() {
	s.Team.Tasks, s.index, s.indexed, s.cursor = nil, nil, 0, 0
}

// droppedUsage is what old's requests cost that s, its continuation, no
// longer holds in a task's record: old's own dropped usage, and that of
// each task s lacks or keeps without its usage.
func droppedUsage(old, s *Session) *Usage {
	out := old.Team.DroppedUsage
	for i := range old.Team.Tasks {
		t := &old.Team.Tasks[i]
		if t.Usage == nil {
			continue
		}
		if now, ok := s.Task(t.Name); !ok || now.Usage == nil {
			out = out.Plus(t.Usage).withoutCalls()
		}
	}
	return out
}

// Usage is what the session's LLM requests cost, without calls: every
// task's, and those of records it no longer holds (DroppedUsage).
func (s *Session) Usage() *Usage {
	out := s.Team.DroppedUsage
	for i := range s.Team.Tasks {
		if u := s.Team.Tasks[i].Usage; u != nil {
			out = out.Plus(u).withoutCalls()
		}
	}
	return out
}

// withoutCalls is u's sums alone.
func (u *Usage) withoutCalls() *Usage {
	if u == nil {
		return nil
	}
	c := *u
	c.Calls = nil
	return &c
}

// StartState is the shared state a run of sess starts from, and renders
// its task definitions (and so the fingerprint) with: the initial state
// sess stored, the spec's variables it lacks, and this run's --var over
// all. A run started with --var and resumed without it so renders the
// very texts it fingerprinted (the checkpoint's state carries the --var
// values, and renders the tasks), except a value stored redacted (Redact),
// which the run must give again (runner.TaskSetOf refuses it). sess nil: a
// new session, the spec's variables and --var.
func StartState(sess *Session, team *spec.Team, overrides map[string]string) map[string]any {
	state := team.InitialState(overrides)
	if sess == nil {
		return state
	}
	for k, v := range sess.Team.InitialState {
		if _, forced := overrides[k]; !forced {
			state[k] = v
		}
	}
	return state
}

// Task returns the record of the named task.
func (s *Session) Task(name string) (*TaskRecord, bool) {
	if s.distinct && s.index == nil {
		for _, i := range [...]int{s.cursor, s.cursor + 1, s.cursor - 1, 0} {
			if i >= 0 && i < len(s.Team.Tasks) && s.Team.Tasks[i].Name == name {
				s.cursor = i
				return &s.Team.Tasks[i], true
			}
		}
	}
	if s.index == nil || s.indexed != len(s.Team.Tasks) {
		s.reindex()
	}
	i, ok := s.index[name]
	if !ok {
		return nil, false
	}
	return &s.Team.Tasks[i], true
}

func (s *Session) reindex() {
	s.index = make(map[string]int, len(s.Team.Tasks))
	for i, t := range s.Team.Tasks {
		if _, dup := s.index[t.Name]; !dup { // a hand-edited file may repeat a name
			s.index[t.Name] = i
		}
	}
	s.indexed = len(s.Team.Tasks)
}

// KeptRecords are the names of the records s keeps for the instances of
// a foreach that waits for its producer (TeamState.Deferred): not tasks of
// its run. nil when there are none.
func (s *Session) KeptRecords() map[string]bool {
	if len(s.Team.Deferred) == 0 {
		return nil
	}
	kept := make(map[string]bool, len(s.Team.Deferred))
	for _, n := range s.Team.Deferred {
		kept[n] = true
	}
	return kept
}

func (s *Session) counts() Counts {
	deferred := s.KeptRecords()
	var c Counts
	for _, t := range s.Team.Tasks {
		if deferred[t.Name] {
			continue
		}
		c.Total++
		if t.Status == StatusCompleted {
			c.Done++
		}
	}
	return c
}

// clone is a deep-enough copy for handing out: maps and slices are fresh.
func (s *Session) clone() *Session {
	c := *s
	c.open = nil // its attempts are copies: their ends get times of their own
	c.Team.Tasks = append([]TaskRecord(nil), s.Team.Tasks...)
	for i := range c.Team.Tasks {
		// Apply closes the last attempt in place: the copy needs its own.
		if h := c.Team.Tasks[i].History; h != nil {
			c.Team.Tasks[i].History = append([]Attempt(nil), h...)
		}
	}
	c.Team.Agents = append([]AgentRecord(nil), s.Team.Agents...)
	c.Team.State = copyMap(s.Team.State)
	if s.Team.InitialState != nil {
		c.Team.InitialState = copyMap(s.Team.InitialState)
	}
	c.Checkpoint.Decisions = copyStrings(s.Checkpoint.Decisions)
	c.Checkpoint.MemorySummary = map[string]int{}
	for k, v := range s.Checkpoint.MemorySummary {
		c.Checkpoint.MemorySummary[k] = v
	}
	if s.Memory != nil {
		c.Memory = map[string][]Message{}
		for k, v := range s.Memory {
			c.Memory[k] = append([]Message(nil), v...)
		}
	}
	c.ToolLogs = cloneToolLogs(s.ToolLogs)
	c.Hold = s.Hold.clone()
	c.Team.Deferred = slices.Clone(s.Team.Deferred)
	c.index, c.indexed = nil, 0
	return &c
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyStrings(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---- JSON-safe text: raw bytes that survive a JSON round trip ----

// b64Key marks a string stored base64 because it is not UTF-8; mapKey
// wraps a user mapping whose only key starts with "$", so that no user value
// ever reads as a marker (format 2 on).
const (
	b64Key = "$base64"
	mapKey = "$map"
)

// escapeMarker wraps a user mapping that has the shape of a marker.
func escapeMarker(m map[string]any) map[string]any {
	if len(m) == 1 {
		for k := range m {
			if strings.HasPrefix(k, "$") {
				return map[string]any{mapKey: m}
			}
		}
	}
	return m
}

// Text is a string that marshals as a JSON string when it is UTF-8 and as
// {"$base64": "..."} otherwise, so it comes back byte for byte: the one
// form of a text that may not be UTF-8 (a result, an error, a line of
// output) in the session's JSON and in run --json's events alike.
type Text string

// text is Text, as this package's records have long named it.
type text = Text

func (t Text) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		return marshalNoEscape(string(t))
	}
	return json.Marshal(map[string]string{b64Key: base64.StdEncoding.EncodeToString([]byte(t))})
}

func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var m map[string]string
		err := json.Unmarshal(b, &m)
		enc, ok := m[b64Key]
		if err != nil || !ok || len(m) != 1 {
			return fmt.Errorf("expected a string or {%q: \"...\"}, a text stored with the base64 marker", b64Key)
		}
		raw, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return fmt.Errorf("bad %s text: %w", b64Key, err)
		}
		*t = text(raw)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	// Fast path for the common case, a result without escapes.
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 &&
		bytes.IndexByte(b[1:len(b)-1], '"') < 0 && utf8.Valid(b[1:len(b)-1]) {
		*t = text(b[1 : len(b)-1])
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = text(s)
	return nil
}

// marshalNoEscape encodes v without HTML escaping, so results read as written.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

type taskRecordJSON TaskRecord

type taskRecordWire struct {
	taskRecordJSON
	Result      result  `json:"result"`
	Error       text    `json:"error,omitempty"`
	Previous    *result `json:"previous_result,omitempty"`
	PreviousKey string  `json:"previous_key,omitempty"`
}

// wire is t's result fields as stored.
func (t *TaskRecord) wire() taskRecordWire {
	w := taskRecordWire{taskRecordJSON: taskRecordJSON(*t), Result: result{text: text(t.Result), blob: t.Blob}, Error: text(t.Error)}
	if p := t.Previous; p != nil {
		w.Previous, w.PreviousKey = &result{text: text(p.Text), blob: p.Blob}, p.Key
	}
	return w
}

// PreviousResult is a record's previous result and the task key it was
// made under ("" in older sessions): --keep of it (keptResult) says so
// when the definition changed since.
type PreviousResult struct {
	Outcome
	Key string
}

// previous is a result kept as a record's Previous: nil for none (an
// empty text, no blob), as the file then has none.
func previous(text string, blob *Blob, key string) *PreviousResult {
	if text == "" && blob == nil {
		return nil
	}
	return &PreviousResult{Outcome: Outcome{Text: text, Blob: blob}, Key: key}
}

// PreviousOutcome is t's previous result; the zero Outcome when it has none.
func (t *TaskRecord) PreviousOutcome() Outcome {
	if t.Previous == nil {
		return Outcome{}
	}
	return t.Previous.Outcome
}

// previousKey is the key t's previous result was made under.
func (t *TaskRecord) previousKey() string {
	if t.Previous == nil {
		return ""
	}
	return t.Previous.Key
}

// record is the task a wire form holds.
func (w *taskRecordWire) record() TaskRecord {
	t := TaskRecord(w.taskRecordJSON)
	t.Result, t.Blob, t.Error = string(w.Result.text), w.Result.blob, string(w.Error)
	t.Previous = nil
	if w.Previous != nil {
		t.Previous = previous(string(w.Previous.text), w.Previous.blob, w.PreviousKey)
	}
	return t
}

func (t TaskRecord) MarshalJSON() ([]byte, error) { return marshalNoEscape(t.encodable()) }

// encodable is t's wire form with its variables as stored.
func (t *TaskRecord) encodable() taskRecordWire {
	w := t.wire()
	w.Variables = wireMap(t.Variables)
	if w.Variables == nil {
		w.Variables = map[string]any{}
	}
	return w
}

type teamStateJSON TeamState

func (t TeamState) MarshalJSON() ([]byte, error) {
	t.State = wireMap(t.State)
	t.InitialState = wireMap(t.InitialState)
	if t.State == nil {
		t.State = map[string]any{}
	}
	return marshalNoEscape(teamStateJSON(t))
}

func (t *TaskRecord) UnmarshalJSON(b []byte) error {
	var w taskRecordWire
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // plainValue turns numbers back into int64 or float64
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*t = w.record()
	return nil
}

type messageJSON Message

type messageWire struct {
	messageJSON
	Content text `json:"content"`
}

func (m Message) MarshalJSON() ([]byte, error) {
	return marshalNoEscape(messageWire{messageJSON: messageJSON(m), Content: text(m.Content)})
}

func (m *Message) UnmarshalJSON(b []byte) error {
	var w messageWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message(w.messageJSON)
	m.Content = string(w.Content)
	return nil
}

// ---- values JSON may not hold: variables and shared state ----

// safeValue returns v in a form encoding/json writes without loss: non-UTF-8
// strings become base64 markers. ok is false when v cannot be written at all
// (NaN, infinities, non-string map keys, unknown types that fail to encode).
func safeValue(v any) (out any, ok bool) {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return x, true
	case float32:
		f := float64(x)
		return x, !math.IsNaN(f) && !math.IsInf(f, 0)
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case string:
		if utf8.ValidString(x) {
			return x, true
		}
		return map[string]any{b64Key: base64.StdEncoding.EncodeToString([]byte(x))}, true
	case []any:
		res := make([]any, len(x))
		for i, e := range x {
			var ok bool
			if res[i], ok = safeValue(e); !ok {
				return nil, false
			}
		}
		return res, true
	case map[string]any:
		res := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, false
			}
			var ok bool
			if res[k], ok = safeValue(e); !ok {
				return nil, false
			}
		}
		return escapeMarker(res), true
	case []string:
		res := make([]any, len(x))
		for i, e := range x {
			res[i], _ = safeValue(e)
		}
		return res, true
	case map[string]string:
		res := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, false
			}
			res[k], _ = safeValue(e)
		}
		return escapeMarker(res), true
	case map[any]any:
		// YAML mappings with non-string keys: JSON objects cannot hold them.
		return nil, false
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, false
		}
		var back any
		if err := json.Unmarshal(b, &back); err != nil {
			return nil, false
		}
		return back, true
	}
}

// safeVariables degrades a task's variables field as a whole (DESIGN §4):
// the in-memory value stays raw; wireValue converts it when it is written.
func safeVariables(task string, vars map[string]any) (map[string]any, []string) {
	if vars == nil {
		return nil, nil
	}
	if _, ok := safeValue(vars); !ok {
		return map[string]any{}, []string{fmt.Sprintf("task %q: its variables cannot be stored as JSON (NaN, infinity or a mapping with non-string keys); stored as {}", task)}
	}
	return vars, nil
}

// safeState degrades the shared state one key at a time.
func safeState(state map[string]any) (map[string]any, []string) {
	if state == nil {
		return nil, nil
	}
	var warns []string
	var bad []string
	for k, v := range state {
		if !utf8.ValidString(k) {
			bad = append(bad, k)
			continue
		}
		if _, ok := safeValue(v); !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return state, nil
	}
	sort.Strings(bad)
	out := copyMap(state)
	for _, k := range bad {
		if !utf8.ValidString(k) {
			warns = append(warns, fmt.Sprintf("shared state key %q is not UTF-8; not stored", k))
			delete(out, k)
			continue
		}
		warns = append(warns, fmt.Sprintf("shared state %q cannot be stored as JSON (NaN, infinity or a mapping with non-string keys); stored as {}", k))
		out[k] = map[string]any{}
	}
	return out, warns
}

// wireMap is m as written: already sanitized, so nothing fails here; a value
// that still cannot be written degrades to {} rather than losing the file.
func wireMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		w, ok := safeValue(v)
		if !ok {
			w = map[string]any{}
		}
		out[k] = w
	}
	return out
}

// plainValue undoes safeValue after decoding with UseNumber: base64 markers
// become strings again and numbers become int64 when integral, else float64.
func plainValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return spec.PlainNumber(x)
	case []any:
		for i, e := range x {
			x[i] = plainValue(e)
		}
		return x
	case map[string]any:
		if len(x) == 1 {
			if s, ok := x[b64Key].(string); ok {
				if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
					return string(raw)
				}
			}
			if m, ok := x[mapKey].(map[string]any); ok {
				return plainMap(m)
			}
		}
		for k, e := range x {
			x[k] = plainValue(e)
		}
		return x
	}
	return v
}

func plainMap(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = plainValue(v)
	}
	return m
}

// sanitize makes every field of s JSON-safe in place and says what degraded.
func (s *Session) sanitize() []string {
	var warns []string
	var w []string
	s.Team.State, w = safeState(s.Team.State)
	warns = append(warns, w...)
	// A value the state cannot hold is left out of the initial state
	// rather than stored as {}: the resumed run then takes the spec's
	// value again, as the run that stored it did. State already warned.
	for k, v := range s.Team.InitialState {
		if _, ok := safeValue(v); !ok || !utf8.ValidString(k) {
			delete(s.Team.InitialState, k)
		}
	}
	for i := range s.Team.Tasks {
		t := &s.Team.Tasks[i]
		t.Variables, w = safeVariables(t.Name, t.Variables)
		warns = append(warns, w...)
	}
	return warns
}

// normalize fixes up a decoded session: plain values, non-nil maps, index.
func (s *Session) normalize() {
	if s.Team.State == nil {
		s.Team.State = map[string]any{}
	}
	plainMap(s.Team.State)
	plainMap(s.Team.InitialState)
	for i := range s.Team.Tasks {
		if s.Team.Tasks[i].Variables != nil {
			plainMap(s.Team.Tasks[i].Variables)
		}
		if s.Team.Tasks[i].Status == "" {
			s.Team.Tasks[i].Status = StatusPending
		}
	}
	if s.Checkpoint.Decisions == nil {
		s.Checkpoint.Decisions = map[string]string{}
	}
	if s.Checkpoint.MemorySummary == nil {
		s.Checkpoint.MemorySummary = map[string]int{}
	}
	s.index, s.indexed = nil, 0 // Task builds it again when it needs it
}
