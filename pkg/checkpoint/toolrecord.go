package checkpoint

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/teamrun/teamrun/pkg/spec"
)

// The records of an LLM agent's tool loop (issue 10). The model turn that
// asks for tools is durable before any of them runs, then each tool's
// start, then its result: a resumed run replays what is recorded and never
// runs a call again whose start is recorded without its result, unless the
// tool is idempotent or a decision says so.
const (
	ToolTurnRecorded RecordKind = "tool_turn"   // Task, Attempt, Tool{Turn, Content, Calls}
	ToolStarted      RecordKind = "tool_start"  // Task, Tool{Turn, Call, Decision}
	ToolFinished     RecordKind = "tool_result" // Task, Tool{Turn, Call, Result, IsError, Millis, Decision}
	ToolLoopEnded    RecordKind = "tool_end"    // Task, Tool{Reason, Decision}: the next attempt starts afresh
	ToolLoopResumed  RecordKind = "tool_resume" // Task, Tool{Turn}: a run replayed the log up to Turn
)

// Tool decisions: `teamrun session decide ID TASK VALUE` on a task halted
// at a call whose outcome a crash hid.
const (
	DecideRerun   = "rerun"   // run the call again
	DecideFail    = "fail"    // fail the task's attempt
	DecideUnknown = "unknown" // tell the model the outcome is unknown; do not repeat the call
)

// ToolDecisions are the values decide takes for a tool call, in the order
// they are offered.
func ToolDecisions() []string { return []string{DecideRerun, DecideFail, DecideUnknown} }

// ToolStep is the payload of a tool record.
type ToolStep struct {
	Turn     int        `json:"turn,omitempty"`
	Content  string     `json:"content,omitempty"` // the model's text beside its calls
	Calls    []ToolCall `json:"calls,omitempty"`   // a turn's calls, exactly as the model made them
	Call     string     `json:"call,omitempty"`    // the id of the call a start or result is about
	Result   string     `json:"result,omitempty"`
	IsError  bool       `json:"is_error,omitempty"`
	Millis   int64      `json:"ms,omitempty"`
	Decision string     `json:"decision,omitempty"` // the decision this step settles, consumed with it
	Reason   string     `json:"reason,omitempty"`
	Name     string     `json:"name,omitempty"` // a start's or result's tool, for readers of the journal
	// Limit and Max are, on an end, the agent's limit that stopped the
	// loop (LimitTurns or LimitCalls) and its value then.
	Limit string `json:"limit,omitempty"`
	Max   int    `json:"max,omitempty"`
	// Idempotent is, on a start, whether its tool was `idempotent` then:
	// what a crash during the call allows (ToolCall.RunsAgain).
	Idempotent bool `json:"idempotent,omitempty"`
	// MCP holds, on a loop's first turn and on a resume, the digest of each
	// MCP server's tool list as the model was offered it.
	MCP map[string]string `json:"mcp,omitempty"`
	// Usage is, on a turn of a session written before RequestPaid
	// records, what its requests cost; read, no longer written: each
	// request's usage is its own record now.
	Usage *Usage `json:"usage,omitempty"`
}

// ToolCall is one call of a model turn and what became of it.
type ToolCall struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Starts    int    `json:"starts,omitempty"` // recorded starts: more than one after an idempotent rerun
	Done      bool   `json:"done,omitempty"`
	Result    string `json:"result,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	Millis    int64  `json:"ms,omitempty"`
	Decision  string `json:"decision,omitempty"`
	// Idempotent: its tool was idempotent when it last started.
	Idempotent bool `json:"idempotent,omitempty"`
	// Replays counts the resumed runs that gave the model the recorded
	// result instead of running the call.
	Replays int `json:"replays,omitempty"`
}

// Pending reports a call that was started but whose result is not known.
func (c *ToolCall) Pending() bool { return c.Starts > 0 && !c.Done }

// RunsAgain reports a pending call that a run makes again without a
// decision: its tool was idempotent when it started, as journaled. The
// spec's tool today does not count: renamed, given other parameters or
// made idempotent since, it is an edit, and an edit is no decision (the
// call may have taken effect under the definition it started with). A
// journal written before starts recorded it says not idempotent: halt.
func (c *ToolCall) RunsAgain() bool { return c.Pending() && c.Idempotent }

// shownArguments is how much of a call's arguments a message shows.
const shownArguments = 200

// ShortArguments is a call's arguments as a message shows them (a halt,
// plan, a refused decision): the first 200 bytes and the size of the
// whole, "{"line": "LLLL…"… (100016 bytes)", so that a 100 KB argument is
// not printed whole in a cron mail; `session show` has all of it.
func ShortArguments(args string) string {
	if len(args) <= shownArguments {
		return args
	}
	cut := shownArguments
	for cut > 0 && !utf8.RuneStart(args[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", args[:cut], len(args))
}

// ToolTurn is one model turn that asked for tools.
type ToolTurn struct {
	Turn    int        `json:"turn"`
	Content string     `json:"content,omitempty"`
	Calls   []ToolCall `json:"calls"`
}

// ToolLog is a task's tool loop: the turns of its latest attempt.
type ToolLog struct {
	Attempt int        `json:"attempt"`
	Turns   []ToolTurn `json:"turns"`
	// Ended says why the loop ended (completed, max_turns, decided fail);
	// an ended log is shown, never resumed.
	Ended string `json:"ended,omitempty"`
	// EndedBy is the decision that ended the loop (`decide ... fail`),
	// until the task completes: its next attempt starts afresh, and its
	// model may make the calls again (FailedLoopText).
	EndedBy string `json:"ended_by,omitempty"`
	// Limit and Max: the agent's limit that ended the loop, and its value
	// then; such a loop goes on once it is raised (Next).
	Limit   string `json:"limit,omitempty"`
	Max     int    `json:"max,omitempty"`
	Resumes int    `json:"resumes,omitempty"`
	// MCP is the digest of each MCP server's tool list when the loop last
	// started or resumed.
	MCP map[string]string `json:"mcp,omitempty"`
	// Key is the task key the loop was recorded under, kept only while
	// its task is removed from the file (the session then has no record
	// of the task to hold it): put back, the task finds its loop
	// (CarriedLog).
	Key string `json:"key,omitempty"`
}

// Resumable reports whether a run should continue this log: it did not
// end. One a limit ended may go on too (Next).
func (l *ToolLog) Resumable() bool { return l != nil && l.Ended == "" && len(l.Turns) > 0 }

// The agent limits that end a tool loop, as the spec names them.
const (
	LimitTurns = "max_turns"
	LimitCalls = "max_tool_calls"
)

// LoopNext is what an attempt does with its task's tool loop log.
type LoopNext int

const (
	LoopAfresh  LoopNext = iota // the model starts anew (no log, or one that ended)
	LoopResumes                 // recorded turns and results are replayed; the loop goes on
	// LoopHalts: a limit ended the loop, it is not raised since, and
	// tools that were not idempotent ran in it. Started afresh, the model
	// could make those calls again, so the run halts until the limit is
	// raised or `decide ... rerun` says to start afresh.
	LoopHalts
	// LoopUnread: the agent that runs the task today runs no tool loop (a
	// command agent, an LLM agent without tools): the task runs without
	// the log, which stays recorded (NextFor).
	LoopUnread
)

// NextFor is Next for the task's agent a today (nil: the task is not in
// the file): LoopUnread when a runs no tool loop and the log holds one to
// go on with. The rule run and plan both say what a loop does by.
func (l *ToolLog) NextFor(a *spec.Agent, decision string) LoopNext {
	if !a.RunsToolLoop() {
		if l.Resumable() || l.Limit != "" {
			return LoopUnread
		}
		return LoopAfresh
	}
	turns, calls := a.ToolLimits()
	return l.Next(turns, calls, decision)
}

// UnreadText says, for plan and run, what becomes of a loop NextFor calls
// LoopUnread: agent is the task's agent today.
func UnreadText(l *ToolLog, agent string) string {
	what := "its tool loop"
	if calls := l.Unrepeatable(); len(calls) > 0 {
		what = fmt.Sprintf("its tool loop, in which calls of tools that were not idempotent ran (%s, %d in all),", ToolNames(calls), len(calls))
	}
	return fmt.Sprintf("%s is not resumed: agent %s runs no tools now, so the task runs without it (those calls are not made again, and the model is not told of them); the loop stays recorded, and goes on if the agent gets its tools back", what, agent)
}

// Next says what an attempt does with l, given the agent's limits today
// (max_turns and max_tool_calls, defaults filled in) and the decision
// recorded for its task. A loop a limit ended goes on once that limit is
// raised: its recorded calls are replayed, never made again. `decide ...
// rerun` starts afresh a loop that waits for it (LoopWaits): no call in
// it waits for a decision (WaitingCall).
func (l *ToolLog) Next(maxTurns, maxCalls int, decision string) LoopNext {
	switch {
	case l.Resumable() && decision == DecideRerun && l.WaitingCall() == nil && len(l.Unrepeatable()) > 0:
		return LoopAfresh // decided: the run spends it
	case l.Resumable():
		return LoopResumes
	case l == nil || l.Limit == "" || len(l.Turns) == 0:
		return LoopAfresh
	case decision == DecideRerun:
		return LoopAfresh // the run spends it
	case l.Limit == LimitTurns && maxTurns > l.Max, l.Limit == LimitCalls && maxCalls > l.Max:
		return LoopResumes
	case len(l.Unrepeatable()) > 0:
		return LoopHalts
	}
	return LoopAfresh
}

// Unrepeatable are the calls of the log that started under a tool that
// was not idempotent: a loop started afresh could make them again.
func (l *ToolLog) Unrepeatable() []ToolCall {
	var out []ToolCall
	if l != nil {
		for _, t := range l.Turns {
			for _, c := range t.Calls {
				if c.Starts > 0 && !c.Idempotent {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// ToolNames names the tools calls call, each once, the first five: a
// turn of 10,000 calls is no 10,000-name message.
func ToolNames(calls []ToolCall) string {
	var names []string
	for _, c := range calls {
		if slices.Contains(names, c.Tool) {
			continue
		}
		if len(names) == 5 {
			return strings.Join(names, ", ") + ", …"
		}
		names = append(names, c.Tool)
	}
	return strings.Join(names, ", ")
}

// LoopWaits reports a task whose tool loop `decide ... rerun` may start
// afresh: calls of tools that were not idempotent ran in it, and either a
// limit ended it or it is unfinished with no call waiting for a decision
// (an edit keeps such a loop: EditKept).
func LoopWaits(sess *Session, task string) bool {
	l := sess.ToolLogs[task]
	if l == nil || len(l.Unrepeatable()) == 0 {
		return false
	}
	return !l.Resumable() && l.Limit != "" || l.Resumable() && l.WaitingCall() == nil
}

// CallCount is how many calls the log's turns asked for.
func (l *ToolLog) CallCount() int {
	n := 0
	if l != nil {
		for _, t := range l.Turns {
			n += len(t.Calls)
		}
	}
	return n
}

// Find returns the call with that id in turn, or nil.
func (l *ToolLog) Find(turn int, id string) *ToolCall {
	if l == nil || turn < 1 || turn > len(l.Turns) {
		return nil
	}
	for i := range l.Turns[turn-1].Calls {
		if c := &l.Turns[turn-1].Calls[i]; c.ID == id {
			return c
		}
	}
	return nil
}

// PendingCall is the first call started without a result, or nil.
func (l *ToolLog) PendingCall() *ToolCall { return l.firstCall((*ToolCall).Pending) }

// WaitingCall is the first call that waits for a decision: started
// without a result under a tool that was not idempotent then; or nil. A
// pending call of an idempotent tool waits for none: it runs again
// (RunsAgain). The one rule decide, plan and run tell a waiting call by.
func (l *ToolLog) WaitingCall() *ToolCall {
	return l.firstCall(func(c *ToolCall) bool { return c.Pending() && !c.RunsAgain() })
}

// firstCall is the first call of a resumable log that is, or nil.
func (l *ToolLog) firstCall(is func(*ToolCall) bool) *ToolCall {
	if !l.Resumable() {
		return nil
	}
	for ti := range l.Turns {
		for ci := range l.Turns[ti].Calls {
			if c := &l.Turns[ti].Calls[ci]; is(c) {
				return c
			}
		}
	}
	return nil
}

func (l *ToolLog) clone() *ToolLog {
	c := *l
	if l.MCP != nil {
		c.MCP = make(map[string]string, len(l.MCP))
		for k, v := range l.MCP {
			c.MCP[k] = v
		}
	}
	c.Turns = make([]ToolTurn, len(l.Turns))
	for i, t := range l.Turns {
		t.Calls = append([]ToolCall(nil), t.Calls...)
		c.Turns[i] = t
	}
	return &c
}

// Clone is a copy the caller may change.
func (l *ToolLog) Clone() *ToolLog {
	if l == nil {
		return nil
	}
	return l.clone()
}

func (r *Record) validateTool() error {
	if r.Task == "" {
		return fmt.Errorf("%s record without a task", r.Kind)
	}
	if r.Tool == nil {
		return fmt.Errorf("%s record of task %q without its tool step", r.Kind, r.Task)
	}
	switch r.Kind {
	case ToolTurnRecorded:
		if r.Tool.Turn < 1 || len(r.Tool.Calls) == 0 {
			return fmt.Errorf("tool_turn record of task %q without a turn number or calls", r.Task)
		}
	case ToolStarted, ToolFinished:
		if r.Tool.Turn < 1 || r.Tool.Call == "" {
			return fmt.Errorf("%s record of task %q without its turn and call", r.Kind, r.Task)
		}
	}
	return nil
}

// applyTool folds a tool record into s; a decision it settles is consumed.
func (s *Session) applyTool(r Record) {
	if r.Tool.Decision != "" {
		delete(s.Checkpoint.Decisions, r.Task)
	}
	if l := ApplyTool(s.ToolLogs[r.Task], r); l != nil {
		if s.ToolLogs == nil {
			s.ToolLogs = map[string]*ToolLog{}
		}
		s.ToolLogs[r.Task] = l
	}
}

// ApplyTool folds a validated tool record into log and returns the log: a
// new one when the record is a loop's first turn. A record about a turn or
// a call the log does not have is ignored: it can only follow a log that a
// newer first turn replaced. The runner keeps its own view of a running
// loop with it, so both read the records the same way.
func ApplyTool(log *ToolLog, r Record) *ToolLog {
	st := r.Tool
	if st == nil {
		return log
	}
	switch r.Kind {
	case ToolTurnRecorded:
		if st.Turn == 1 || log == nil {
			log = &ToolLog{Attempt: r.Attempt}
		}
		if st.Turn != len(log.Turns)+1 {
			return log
		}
		log.Turns = append(log.Turns, ToolTurn{Turn: st.Turn, Content: st.Content, Calls: append([]ToolCall(nil), st.Calls...)})
		if st.MCP != nil {
			log.MCP = st.MCP
		}
	case ToolStarted:
		if c := log.Find(st.Turn, st.Call); c != nil {
			c.Starts++
			c.Done = false
			c.Idempotent = st.Idempotent
			if st.Decision != "" {
				c.Decision = st.Decision
			}
		}
	case ToolFinished:
		if c := log.Find(st.Turn, st.Call); c != nil {
			c.Done, c.Result, c.IsError, c.Millis = true, st.Result, st.IsError, st.Millis
			if st.Decision != "" {
				c.Decision = st.Decision
			}
		}
	case ToolLoopEnded:
		if log != nil {
			log.Ended, log.EndedBy = st.Reason, st.Decision
			if log.Ended == "" {
				log.Ended = "ended"
			}
			log.Limit, log.Max = st.Limit, st.Max
		}
	case ToolLoopResumed:
		if log != nil {
			// A loop a limit ended goes on once it is raised.
			log.Ended, log.Limit, log.Max = "", "", 0
			log.Resumes++
			if st.MCP != nil {
				log.MCP = st.MCP
			}
			for ti := 0; ti < min(st.Turn, len(log.Turns)); ti++ {
				for ci := range log.Turns[ti].Calls {
					if c := &log.Turns[ti].Calls[ci]; c.Done {
						c.Replays++
					}
				}
			}
		}
	}
	return log
}

// endToolLog marks a task's log as ended: a completed task's loop is over.
func (s *Session) endToolLog(task, reason string) {
	if l := s.ToolLogs[task]; l != nil {
		if l.Ended == "" {
			l.Ended = reason
		}
		l.EndedBy = "" // completed since: nothing is left to warn of
	}
}

// carryToolLogs keeps, for a continued session, the logs of the tasks
// whose definition (their agent's and tools' included) is unchanged: a
// resumed loop replays only what the same definition produced. next
// holds today's definitions (their keys). A task removed from the file
// is an edit too: its log is kept, with the key it was recorded under,
// when ToolLogCarries keeps one across any edit (calls of tools that were
// not idempotent ran in it, or a limit ended it), so that the
// task put back resumes it rather than make those calls again.
func carryToolLogs(old, next *Session) map[string]*ToolLog {
	var out map[string]*ToolLog
	for task, l := range old.ToolLogs {
		keep := l
		if n, now := next.Task(task); now {
			if keep, _ = old.CarriedLog(task, n.Key); keep == nil {
				continue
			}
			keep = keep.clone()
			keep.Key = ""
		} else {
			if old.RemovedLog(task) == nil {
				continue
			}
			keep = l.clone()
			keep.Key = old.logKey(task)
		}
		if out == nil {
			out = map[string]*ToolLog{}
		}
		out[task] = keep
	}
	return out
}

// CarriedLog is the tool loop log of task that a continuation of s whose
// task has key newKey keeps (ToolLogCarries), and the key it was recorded
// under: s's record's, or, for a task removed from the file and put back
// since, the log's own. nil when it keeps none.
func (s *Session) CarriedLog(task, newKey string) (*ToolLog, string) {
	l, oldKey := s.ToolLogs[task], s.logKey(task)
	if !ToolLogCarries(l, oldKey, newKey) {
		return nil, ""
	}
	return l, oldKey
}

// logKey is the task key task's tool loop log was recorded under.
func (s *Session) logKey(task string) string {
	if t, ok := s.Task(task); ok {
		return t.Key
	}
	if l := s.ToolLogs[task]; l != nil {
		return l.Key
	}
	return ""
}

// RemovedLogText says, for plan and run, what becomes of the tool loop
// log l of a task removed from the file (RemovedLog).
func RemovedLogText(l *ToolLog) string {
	if calls := l.Unrepeatable(); len(calls) > 0 {
		return fmt.Sprintf("calls of tools that were not idempotent ran in its unfinished tool loop (%s, %d in all): the session keeps the loop, and the task put back goes on with it (those calls are not made again)", ToolNames(calls), len(calls))
	}
	return "the session keeps its unfinished tool loop: the task put back goes on with it"
}

// RemovedLog says, of a task s has but the file no longer does, the calls
// that ran in the unfinished tool loop the continuation keeps for it
// (carryToolLogs): nil when it keeps none.
func (s *Session) RemovedLog(task string) *ToolLog {
	// "": no key of today's, so only what ToolLogCarries keeps across
	// any edit.
	if l := s.ToolLogs[task]; ToolLogCarries(l, s.logKey(task), "") {
		return l
	}
	return nil
}

// ToolLogCarries says whether a task's tool loop log l, recorded under
// the task key oldKey, is kept by a run whose task has key newKey: when
// the key is the same, and also when it changed while the unfinished loop
// holds a call that ran under a tool that was not idempotent (finished,
// or waiting for a decision), or after a limit ended the loop. An edit
// (the task's text, its agent, a tool, even one the fingerprint does not
// see) is no decision: without the log the task would start afresh and
// its model could make those calls again, unasked; with it the recorded
// results are replayed, a waiting call halts, and `decide ... rerun`
// (EditKept) or `fail` starts the task afresh. A loop in which only
// idempotent tools ran, one of them perhaps still pending, starts afresh
// under the edit: nothing in it needs keeping. Raising the limit is an
// edit too: the loop goes on (ToolLog.Next says when).
func ToolLogCarries(l *ToolLog, oldKey, newKey string) bool {
	if l == nil || oldKey == "" {
		return false
	}
	return newKey == oldKey || l.Limit != "" || l.Resumable() && len(l.Unrepeatable()) > 0
}

// EditKept reports a log that ToolLogCarries keeps across an edit only
// for the calls of tools that were not idempotent that finished in it,
// none waiting for a decision (a pending call of an idempotent tool runs
// again): the run resumes it under today's definition, replaying their
// results, unless `decide ... rerun` starts it afresh (the model may then
// make them again). Plan and run say so.
func EditKept(l *ToolLog, oldKey, newKey string) bool {
	return oldKey != "" && newKey != oldKey && l.Resumable() && l.WaitingCall() == nil && len(l.Unrepeatable()) > 0
}

// FailedLoopText says, for plan, what the next attempt of a task whose
// tool loop l `decide ... fail` ended does: it starts the loop afresh,
// and the model may make again the calls of tools that were not
// idempotent that ran in it (the failed call included). "" for any other
// loop, or one in which only idempotent tools ran. show is the command
// that lists those calls.
func FailedLoopText(l *ToolLog, show string) string {
	if l == nil || l.EndedBy != DecideFail {
		return ""
	}
	calls := l.Unrepeatable()
	if len(calls) == 0 {
		return ""
	}
	return fmt.Sprintf("its tool loop, which `decide ... fail` ended, starts afresh: the model may make again the calls of tools that were not idempotent that ran in it (%s, %d in all: `%s` lists them)", ToolNames(calls), len(calls), show)
}

// EditKeptText says, for plan and run, what an edit that EditKept does:
// decide is the command that starts the loop afresh instead.
func EditKeptText(l *ToolLog, decide string) string {
	calls := l.Unrepeatable()
	return fmt.Sprintf("its definition changed, but calls of tools that were not idempotent ran in its loop (%[2]s, %[1]d in all): started afresh, the model could make them again, so the loop goes on under the new definition with their recorded results; `%[3]s` starts it afresh instead (the model may then make those calls again)",
		len(calls), ToolNames(calls), decide)
}

func cloneToolLogs(m map[string]*ToolLog) map[string]*ToolLog {
	if m == nil {
		return nil
	}
	out := make(map[string]*ToolLog, len(m))
	for k, l := range m {
		if l != nil {
			out[k] = l.clone()
		}
	}
	return out
}

// ErrNoToolCall is decide on a task without a call waiting for a decision.
var ErrNoToolCall = errors.New("no tool call waits for a decision")

// WaitingToolCall is the call of task that a decision would settle: started
// in a crashed run under a tool that was not idempotent, its result
// unknown (ToolLog.WaitingCall).
func WaitingToolCall(sess *Session, task string) (*ToolCall, error) {
	c := sess.ToolLogs[task].WaitingCall()
	if c == nil {
		return nil, fmt.Errorf("task %q of session %s: %w", task, sess.ID, ErrNoToolCall)
	}
	return c, nil
}
