package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// ToolHaltError stops a task at a tool call whose outcome a crash or a
// timeout hid: its start is recorded, its result is not, and its tool was
// not idempotent when the call started. The engine turns it into a halt
// that `teamrun session decide` settles. Arguments are as shown (checkpoint.ShortArguments);
// Ended says what stopped the call ("" an earlier run).
type ToolHaltError struct {
	Task, Tool, Arguments, Call, Ended string
}

func (e *ToolHaltError) Error() string {
	return fmt.Sprintf("task %q: tool %s was started with %s, and %s before its result was recorded; %s was not idempotent when the call started, so the call is not run again without a decision (rerun, fail or unknown)",
		e.Task, e.Tool, e.Arguments, e.ended(), e.Tool)
}

// ended is what stopped the call, in words.
func (e *ToolHaltError) ended() string {
	if e.Ended != "" {
		return e.Ended
	}
	// It ended, or (PostgreSQL) lost the session at the end of its lease
	// while it may still live.
	return "the run that started it stopped or lost the session"
}

// UnsettledError is a call of a tool that was not idempotent which the
// attempt's end stopped while it ran: the next --continue halts on it
// (Halt), and the run's summary says so, for whoever reads a cron job's
// mail. Its text is the stop's.
type UnsettledError struct {
	Halt ToolHaltError
	Err  error
}

func (e *UnsettledError) Error() string { return e.Err.Error() }
func (e *UnsettledError) Unwrap() error { return e.Err }

// LoopHaltError stops a task whose tool loop a limit ended, that limit
// not raised since, after calls of tools that were not idempotent:
// started afresh, the model could make them again (checkpoint.LoopHalts).
// Limit is the key ("agents.w.max_turns"), Max its value, Turns the
// recorded turns, Tools those calls' tools (toolNames).
type LoopHaltError struct {
	Task, Limit, Tools string
	Max, Turns         int
}

func (e *LoopHaltError) Error() string {
	return fmt.Sprintf("task %q: %s", e.Task, e.what())
}

// what is the halt in words, the task aside.
func (e *LoopHaltError) what() string {
	return fmt.Sprintf("its tool loop ended on %s (%d) after calls of tools that were not idempotent (%s): started afresh, the model could make them again; raise %s above %d and the loop goes on after turn %d, or decide rerun to start it afresh",
		e.Limit, e.Max, e.Tools, e.Limit, e.Max, e.Turns)
}

// loopHalt is the halt of job, whose loop log lg a limit ended.
func loopHalt(job *Job, lg *checkpoint.ToolLog) *LoopHaltError {
	return &LoopHaltError{Task: job.Task.Name, Limit: "agents." + job.Agent.Name + "." + lg.Limit, Max: lg.Max, Turns: len(lg.Turns),
		Tools: checkpoint.ToolNames(lg.Unrepeatable())}
}

// DecidedFailError is the attempt that `decide ... fail` ended: it is not
// retried in this run (a retry would start the loop afresh and could run
// the call again); a later --continue runs the task anew.
type DecidedFailError struct{ Tool, Arguments string }

func (e *DecidedFailError) Error() string {
	return fmt.Sprintf("tool %s (%s) was stopped before its result was recorded; decided: fail", e.Tool, e.Arguments)
}

// ToolClashError is an agent offered two tools under one name (two MCP
// servers list it, or one lists a name the spec's tools or a built-in
// has): the model could not tell them apart. A configuration error, not
// the task's: every retry would list the same, so it fails once.
type ToolClashError struct{ Agent, Tool, First, Second string }

func (e *ToolClashError) Error() string {
	return fmt.Sprintf("agent %q gets two tools named %s, from %s and from %s: the model could not tell them apart; leave one out (an MCP server's tools: allow-list, or the agent's tools:) — not retried",
		e.Agent, e.Tool, e.First, e.Second)
}

// toolSource says where an agent's tool comes from, for messages.
func toolSource(t *spec.Tool) string {
	switch {
	case t.MCP != "":
		return "MCP server " + t.MCP
	case t.Builtin != "":
		return "the built-in " + t.Builtin
	}
	return "tools." + t.Name + " of the spec"
}

// toolRunner starts a tool's process as a command agent's: RunCommand, in
// its own process group, known to groups for interrupts, marked as the
// task's by owner, with the run's environment as read once (inherited),
// its stdout spooled in spool.
func toolRunner(groups *Groups, owner, inherited []string, spool string) tools.Runner {
	return func(ctx context.Context, p tools.Proc) ([]byte, error) {
		out, err := RunCommand(ctx, groups, CommandSpec{Shell: p.Shell, Argv: p.Argv, Stdin: p.Stdin, Env: p.Env, Inherited: inherited,
			Dir: p.Dir, Timeout: p.Timeout, StdoutLimit: p.StdoutLimit, Owner: owner, Spool: spool})
		if ce := (*CommandError)(nil); errors.As(err, &ce) && ce.TimedOut {
			err = tools.Unfinished(err)
		}
		return []byte(out), err
	}
}

// RestoreTools gives the agents back the tool loops a checkpoint kept, so
// that a task resumes its loop where the last run left it.
func (l *LLMs) RestoreTools(logs map[string]*checkpoint.ToolLog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for task, lg := range logs {
		if l.toolLogs == nil {
			l.toolLogs = map[string]*checkpoint.ToolLog{}
		}
		l.toolLogs[task] = lg.Clone()
	}
}

// noteStopped keeps why this run stopped a task's call before its
// result: a later attempt that halts on it says so (stoppedBy), not that
// an earlier run ended.
func (l *LLMs) noteStopped(task, call, why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped == nil {
		l.stopped = map[string]string{}
	}
	l.stopped[task+"\x00"+call] = why
}

// stoppedBy is why this run stopped a task's call; "" when it did not.
func (l *LLMs) stoppedBy(task, call string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped[task+"\x00"+call]
}

func (l *LLMs) toolLog(task string) *checkpoint.ToolLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.toolLogs[task].Clone()
}

func (l *LLMs) setToolLog(task string, lg *checkpoint.ToolLog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.toolLogs == nil {
		l.toolLogs = map[string]*checkpoint.ToolLog{}
	}
	l.toolLogs[task] = lg
}

// toolSet is the tools of one attempt: the agent's, with the task's
// TEAMRUN_* environment. release frees the attempt's context folder.
// keys are the team's keys its commands' output is redacted of.
func (l *LLMs) keys() []string {
	if l.Commands == nil {
		return nil
	}
	return l.Commands.Keys
}

func (l *LLMs) toolSet(ctx context.Context, job *Job) (*tools.Set, func(), error) {
	set := &tools.Set{Tools: job.Agent.Tools, Dir: l.Dir, CommandDir: job.Agent.Dir, Guarded: l.Guarded}
	for _, t := range job.Agent.Tools {
		if t.Builtin == spec.ExecuteCommand {
			set.Allow = append(set.Allow, spec.ExecuteCommand) // the spec's loader checked allow:
		}
	}
	cmds := l.Commands
	if cmds == nil {
		cmds = &Commands{}
	}
	env, owner, release, err := cmds.jobEnv(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	set.Env = env
	set.FitArgs = cmds.fitArgs(env)
	inherited, _ := cmds.inherited()
	set.Run = toolRunner(cmds.Groups, owner, inherited, cmds.TempDir)
	return set, release, nil
}

// connectMCP starts or reaches the agent's MCP servers for one attempt
// and adds their allowed tools to set. A stdio server runs in its own
// process group, as a command agent does, and dies with the attempt.
func (l *LLMs) connectMCP(ctx context.Context, job *Job, set *tools.Set) (*tools.MCP, error) {
	var groups *Groups
	if l.Commands != nil {
		groups = l.Commands.Groups
	}
	getenv := l.Getenv
	// A stdio server is forked inside Connect and registered only after
	// its handshake: until then no sweep may take it for an adopted
	// process (and kill it, or wait for it in its transport's place).
	var prepared atomic.Int32
	defer func() { groups.hold(-int(prepared.Load())) }()
	m, listed, err := tools.ConnectMCP(ctx, job.Agent.MCP, tools.MCPOptions{
		Prepare: func(cmd *exec.Cmd) {
			cmd.SysProcAttr = procAttr()
			groups.hold(1)
			prepared.Add(1)
		},
		Started: groups.addIfSet,
		Ended: func(pid int) {
			killLeftovers(pid)
			groups.removeIfSet(pid)
		},
		Getenv: getenv, Env: set.Env, HTTP: l.HTTP,
	})
	if err != nil {
		return nil, err
	}
	if job.Warn != nil {
		for _, w := range m.Warnings {
			job.Warn(fmt.Sprintf("task %s: %s", job.Task.Name, w))
		}
	}
	all := append([]*spec.Tool(nil), set.Tools...)
	for _, t := range listed {
		if prev := set.Tool(t.Name); prev != nil {
			m.Close()
			return nil, &ToolClashError{Agent: job.Agent.Name, Tool: t.Name, First: toolSource(prev), Second: toolSource(t)}
		}
		all = append(all, t)
		set.Tools = all
	}
	set.Tools, set.MCP = all, m
	return m, nil
}

// loop is one attempt of an LLM agent with tools: the model's turns and
// its tool calls, in the order given, until it answers without calling a
// tool or max_turns is reached. Every step is journaled before the next:
// the turn before its calls run, each call's start before it runs, its
// result once it has one. A log a crashed or interrupted attempt left is
// replayed first: recorded results go back to the model as they were and
// are never run again.
type loop struct {
	l      *LLMs
	job    *Job
	set    *tools.Set
	client *llm.Client
	req    llm.Request
	log    *checkpoint.ToolLog
	calls  []llm.Call        // the requests that reported usage, every turn's
	mcp    map[string]string // MCP servers' tool list digests
	resume bool              // log is replayed, then goes on
	// keys are the agent's key and the team's: what the model or a tool
	// writes of them is redacted before it is recorded, shown or run.
	keys []string
}

// runTools runs the loop; calls are every request that reported usage, a
// failed one's included. keys are redacted from what the loop records.
func (l *LLMs) runTools(ctx context.Context, job *Job, client *llm.Client, req llm.Request, keys []string) (string, []llm.Call, error) {
	set, release, err := l.toolSet(ctx, job)
	if err != nil {
		return "", nil, err
	}
	// The loop reads whole answers (a request with tools is never
	// streamed): a turn is recorded whole, not shown as it comes.
	req.Stream, req.OnDelta = false, nil
	defer release()
	if len(job.Agent.MCP) > 0 {
		m, err := l.connectMCP(ctx, job, set)
		if err != nil {
			return "", nil, err
		}
		defer m.Close()
	}
	for _, t := range set.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		req.Tools = append(req.Tools, llm.Tool{Type: "function", Function: llm.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	lp := &loop{l: l, job: job, set: set, client: client, req: req, keys: keys}
	if set.MCP != nil {
		lp.mcp = set.MCP.Digests
	}
	lg := l.toolLog(job.Task.Name)
	switch lg.NextFor(job.Agent, job.Decision) { // the rule plan says it by
	case checkpoint.LoopResumes:
		lp.log, lp.resume = lg, true
	case checkpoint.LoopHalts:
		return "", nil, loopHalt(job, lg)
	default:
		if lg != nil && (lg.Limit != "" || lg.Resumable()) && job.Decision == checkpoint.DecideRerun {
			// Spent here: the loop a limit ended, or one an edit kept,
			// starts afresh, as decided.
			lp.log = lg
			if err := lp.record(checkpoint.ToolLoopEnded, checkpoint.ToolStep{Reason: "decided: rerun: the loop starts afresh", Decision: checkpoint.DecideRerun}); err != nil {
				return "", nil, err
			}
			lp.log = nil
		}
	}
	content, err := lp.run(ctx)
	return content, lp.calls, err
}

func (lp *loop) record(kind checkpoint.RecordKind, step checkpoint.ToolStep) error {
	r := checkpoint.Record{Kind: kind, Task: lp.job.Task.Name, Attempt: lp.job.Attempt, Tool: &step}
	if lp.job.Record != nil {
		if err := lp.job.Record(r); err != nil {
			return err
		}
	}
	lp.log = checkpoint.ApplyTool(lp.log, r)
	lp.l.setToolLog(lp.job.Task.Name, lp.log)
	return nil
}

func (lp *loop) run(ctx context.Context) (string, error) {
	a := lp.job.Agent
	maxTurns, maxCalls := a.ToolLimits()
	msgs := append([]llm.Message(nil), lp.req.Messages...)
	turn := 0
	if lp.resume {
		if changed := mcpChanges(lp.log.MCP, lp.mcp); changed != "" && lp.job.Warn != nil {
			lp.job.Warn(fmt.Sprintf("task %s: the tool list of MCP server %s changed since the recorded turns; they are replayed as recorded", lp.job.Task.Name, changed))
		}
		if err := lp.record(checkpoint.ToolLoopResumed, checkpoint.ToolStep{Turn: len(lp.log.Turns), MCP: lp.mcp}); err != nil {
			return "", err
		}
		for ti := range lp.log.Turns {
			t := lp.log.Turns[ti]
			turn = t.Turn
			if slices.ContainsFunc(t.Calls, unstarted) {
				// Recorded and not run: a limit ended the loop on it (or
				// the run stopped before its calls): today's limits decide.
				if err := lp.overLimit(t.Turn, t.Calls, maxTurns, maxCalls); err != nil {
					return "", err
				}
			}
			msgs = append(msgs, assistantTurn(t.Content, t.Calls))
			for _, c := range t.Calls {
				res, err := lp.settle(ctx, t.Turn, c)
				if err != nil {
					return "", err
				}
				msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: c.ID, Content: res.Content})
			}
		}
	}
	for {
		if turn >= maxTurns {
			return "", lp.limit(checkpoint.LimitTurns, maxTurns, fmt.Errorf("max_turns (%d) reached: the model kept calling tools without answering; raise max_turns of agent %q, or make the task simpler", maxTurns, a.Name))
		}
		req := lp.req
		req.Messages = msgs
		resp, err := lp.client.Complete(ctx, req)
		if err != nil {
			lp.calls = append(lp.calls, llm.CallsOf(err)...)
			return "", err // the log stays open: the next attempt resumes it
		}
		lp.calls = append(lp.calls, resp.Calls...)
		turn++
		if len(resp.ToolCalls) == 0 {
			warnMended(lp.job, lp.req.Model, resp)
			return resp.Content, nil
		}
		// A turn holding a key (a proxy that echoes the request) is
		// redacted as an answer is, and its calls run as recorded: a key
		// never reaches a tool from the model, and a resumed loop replays
		// exactly what the first run sent and ran.
		content := lp.redact(resp.Content)
		calls := callsOf(turn, resp.ToolCalls, lp.redact)
		step := checkpoint.ToolStep{Turn: turn, Content: content, Calls: calls}
		if turn == 1 {
			step.MCP = lp.mcp
		}
		// Journaled before a limit is looked at: the answer is paid for,
		// and a loop resumed once the limit is raised goes on with its
		// calls instead of asking (and paying) for the turn again.
		if err := lp.record(checkpoint.ToolTurnRecorded, step); err != nil {
			return "", err
		}
		if err := lp.overLimit(turn, calls, maxTurns, maxCalls); err != nil {
			return "", err
		}
		msgs = append(msgs, assistantTurn(content, calls))
		for _, c := range calls {
			res, err := lp.settle(ctx, turn, c)
			if err != nil {
				return "", err
			}
			msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: c.ID, Content: res.Content})
		}
	}
}

// overLimit ends the loop when the journaled turn, none of whose calls
// has run yet, passes a limit: max_turns when it is the last turn allowed
// (the results of its calls would never be read), else max_tool_calls
// when the log's calls pass it (a model answering with 10,000 calls must
// not run them all). nil: its calls may run.
func (lp *loop) overLimit(turn int, calls []checkpoint.ToolCall, maxTurns, maxCalls int) error {
	a := lp.job.Agent
	if turn >= maxTurns {
		return lp.limit(checkpoint.LimitTurns, maxTurns, fmt.Errorf("max_turns (%d) reached: turn %d still called %s instead of answering; raise max_turns of agent %q", maxTurns, turn, checkpoint.ToolNames(calls), a.Name))
	}
	if all := lp.log.CallCount(); all > maxCalls {
		ran := all - len(calls)
		return lp.limit(checkpoint.LimitCalls, maxCalls, fmt.Errorf("task %q: turn %d asked for %d tool calls, more than the %d that max_tool_calls (%d) leaves this attempt: none of them ran; raise agents.%s.max_tool_calls, or make the task simpler",
			lp.job.Task.Name, turn, len(calls), max(maxCalls-ran, 0), maxCalls, a.Name))
	}
	return nil
}

// unstarted reports a recorded call that never started.
func unstarted(c checkpoint.ToolCall) bool { return c.Starts == 0 && !c.Done }

// limit ends the loop on the agent's limit key, whose value is max, and
// fails the attempt. The log is kept: the next attempt goes on with it
// once the limit is raised, and otherwise does not start afresh unasked
// after calls that were not idempotent (checkpoint.ToolLog.Next).
func (lp *loop) limit(key string, max int, cause error) error {
	if err := lp.record(checkpoint.ToolLoopEnded, checkpoint.ToolStep{Reason: cause.Error(), Limit: key, Max: max}); err != nil {
		return err
	}
	return cause
}

// settle gives one call its result: the recorded one, else by running it,
// unless it was started before without a recorded result; then the
// idempotency its tool had when it started (ToolCall.RunsAgain) or the
// user's decision rules, before today's tools are looked at: a tool
// renamed or given other parameters since would tell the model that a
// call which may have taken effect never ran.
func (lp *loop) settle(ctx context.Context, turn int, c checkpoint.ToolCall) (tools.Result, error) {
	if rc := lp.log.Find(turn, c.ID); rc != nil {
		c = *rc
	}
	if c.Done {
		return tools.Result{Content: c.Result, IsError: c.IsError}, nil
	}
	// A decision recorded for the call is applied, and so spent, also when
	// its tool was idempotent: left in the checkpoint, it would settle a
	// later call that no one decided on.
	decision := ""
	if c.Pending() && (!c.RunsAgain() || lp.job.Decision != "") {
		switch lp.job.Decision {
		case checkpoint.DecideRerun:
			decision = checkpoint.DecideRerun
		case checkpoint.DecideUnknown:
			res := tools.Result{IsError: true, Content: "error: the outcome of this call is unknown: teamrun stopped while it ran, and it was not run again. Check its effect before you call it again."}
			return res, lp.record(checkpoint.ToolFinished, checkpoint.ToolStep{Turn: turn, Call: c.ID, Name: c.Tool, Result: res.Content, IsError: true, Decision: checkpoint.DecideUnknown})
		case checkpoint.DecideFail:
			cause := &DecidedFailError{Tool: c.Tool, Arguments: checkpoint.ShortArguments(c.Arguments)}
			if err := lp.record(checkpoint.ToolLoopEnded, checkpoint.ToolStep{Reason: cause.Error(), Decision: checkpoint.DecideFail}); err != nil {
				return tools.Result{}, err
			}
			return tools.Result{}, cause
		default:
			return tools.Result{}, &ToolHaltError{Task: lp.job.Task.Name, Tool: c.Tool, Arguments: checkpoint.ShortArguments(c.Arguments), Call: c.ID,
				Ended: lp.l.stoppedBy(lp.job.Task.Name, c.ID)}
		}
	}
	tool, args, bad := lp.set.Check(tools.Call{ID: c.ID, Name: c.Tool, Arguments: c.Arguments})
	if bad != nil {
		// A rerun decision is spent all the same.
		return *bad, lp.record(checkpoint.ToolFinished, checkpoint.ToolStep{Turn: turn, Call: c.ID, Name: c.Tool, Result: bad.Content, IsError: true, Decision: decision})
	}
	if err := lp.record(checkpoint.ToolStarted, checkpoint.ToolStep{Turn: turn, Call: c.ID, Name: c.Tool, Decision: decision, Idempotent: tool.Idempotent}); err != nil {
		return tools.Result{}, err
	}
	start := time.Now()
	res, err := lp.set.Execute(ctx, tool, args)
	if err != nil {
		// Stopped: the start stands without a result. A timeout lets this
		// run go on (a retry), whose halt on the call says so.
		if errors.Is(err, context.DeadlineExceeded) {
			t, key := attemptTimeout(lp.job)
			lp.l.noteStopped(lp.job.Task.Name, c.ID, fmt.Sprintf("the timeout of %s (%s) stopped it in attempt %d of this run", t, key, lp.job.Attempt))
		}
		if !tool.Idempotent {
			err = &UnsettledError{Halt: ToolHaltError{Task: lp.job.Task.Name, Tool: c.Tool, Arguments: checkpoint.ShortArguments(c.Arguments), Call: c.ID,
				Ended: "this run stopped it"}, Err: err}
		}
		return tools.Result{}, err
	}
	// A tool runs in teamrun's environment, as a command does: what it
	// prints of the team's keys reaches neither the session nor the model
	// (DESIGN §2).
	res.Content = lp.redact(res.Content)
	if res.NotUTF8 > 0 && lp.job.Warn != nil {
		// Said when it ran: a replay gives the recorded text, mended once.
		lp.job.Warn(fmt.Sprintf("task %s: tool %s printed %d byte(s) that are not UTF-8: its result has U+FFFD (\uFFFD) in their place", lp.job.Task.Name, c.Tool, res.NotUTF8))
	}
	return res, lp.record(checkpoint.ToolFinished, checkpoint.ToolStep{Turn: turn, Call: c.ID, Name: c.Tool,
		Result: res.Content, IsError: res.IsError, Millis: time.Since(start).Milliseconds()})
}

// redact is text with the loop's keys redacted (llm.RedactKeys).
func (lp *loop) redact(text string) string { return llm.RedactKeys(text, lp.keys...) }

// callsOf is a turn's calls as journaled, each part redacted; a call
// without an id (some servers send none) or with one the turn already
// used (redaction may make two alike) gets its own, so that every result
// answers exactly one call.
func callsOf(turn int, tcs []llm.ToolCall, redact func(string) string) []checkpoint.ToolCall {
	out := make([]checkpoint.ToolCall, len(tcs))
	seen := map[string]bool{}
	for i, tc := range tcs {
		id := redact(tc.ID)
		// The id made for a repeated one may be the model's own for
		// another call of the turn: a suffix then tells them apart, or
		// one call would be answered with the other's result.
		for n := 1; id == "" || seen[id]; n++ {
			id = fmt.Sprintf("call_%d_%d", turn, i+1)
			if n > 1 {
				id += fmt.Sprintf("_%d", n)
			}
		}
		seen[id] = true
		out[i] = checkpoint.ToolCall{ID: id, Tool: redact(tc.Function.Name), Arguments: redactArguments(tc.Function.Arguments, redact)}
	}
	return out
}

// redactArguments is a call's arguments redacted as the tool would read
// them: JSON may write a key in \u escapes, which the text's redaction
// does not see and the tool decodes. Arguments whose decoded strings
// (keys included) hold nothing to redact are kept as the model wrote them.
func redactArguments(args string, redact func(string) string) string {
	args = redact(args)
	if !strings.Contains(args, `\`) {
		return args // no escape: the text's redaction saw every string
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return args // not JSON: the call fails its check, and runs nothing
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if r := redact(x); r != x {
				changed = true
				return r
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[walk(k).(string)] = walk(e)
			}
			return out
		}
		return v
	}
	v = walk(v)
	if !changed {
		return args
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return args
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// assistantTurn is a recorded turn as the model sent it.
func assistantTurn(content string, calls []checkpoint.ToolCall) llm.Message {
	m := llm.Message{Role: "assistant", Content: content}
	for _, c := range calls {
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: c.ID, Type: "function", Function: llm.FunctionCall{Name: c.Tool, Arguments: c.Arguments}})
	}
	return m
}

// stepEvent is a step of task i's attempt as the event that records it:
// a tool loop's, or a request's usage (RequestPaid).
func (e *Engine) stepEvent(i int, r checkpoint.Record) Event {
	t := e.Team.Tasks[i]
	ev := Event{Type: EventType(r.Kind), Index: i, Task: t.Name, Agent: t.Agent, Attempt: r.Attempt, Tool: r.Tool}
	if r.Kind == checkpoint.RequestPaid {
		ev.Paid = r.Usage
	}
	return ev
}

// toolHalt is the halt for an attempt stopped at a tool call, or a tool
// loop, that needs a decision; or nil.
func (e *Engine) toolHalt(err error) *Halt {
	var lh *LoopHaltError
	if errors.As(err, &lh) {
		h := &Halt{Session: e.Session, Task: lh.Task, Loop: fmt.Sprintf("%s (%d)", lh.Limit, lh.Max), Options: []string{checkpoint.DecideRerun},
			Description: fmt.Sprintf("its tool loop ended on %s (%d) after calls of tools that were not idempotent (%s); started afresh, the model could make them again. Raise %s above %d (the loop then goes on after turn %d), or decide rerun to start it afresh?",
				lh.Limit, lh.Max, lh.Tools, lh.Limit, lh.Max, lh.Turns)}
		if e.DecideCommand != nil {
			h.Command = e.DecideCommand(lh.Task, "")
			h.Commands = []string{e.DecideCommand(lh.Task, checkpoint.DecideRerun)}
		}
		return h
	}
	var th *ToolHaltError
	if !errors.As(err, &th) {
		return nil
	}
	h := &Halt{Session: e.Session, Task: th.Task, Tool: th.Tool, Arguments: th.Arguments, Options: checkpoint.ToolDecisions(),
		Description: fmt.Sprintf("tool %s was started with %s, but %s before its result was recorded, and %s was not idempotent when the call started: did it take effect?", th.Tool, th.Arguments, th.ended(), th.Tool)}
	if e.DecideCommand != nil {
		h.Command = e.DecideCommand(th.Task, "")
		for _, o := range h.Options {
			h.Commands = append(h.Commands, e.DecideCommand(th.Task, o))
		}
	}
	return h
}

// unsettledHalt is the halt the next --continue stops at for an attempt
// stopped in the middle of a call of a tool that was not idempotent
// (UnsettledError); nil for any other.
func (e *Engine) unsettledHalt(err error) *Halt {
	if err == nil {
		return nil // before ue, which errors.As moves to the heap: every attempt asks
	}
	var ue *UnsettledError
	if !errors.As(err, &ue) {
		return nil
	}
	return e.toolHalt(&ue.Halt)
}

// mcpChanges names the servers whose recorded tool list digest differs
// from today's; "" when none does (or nothing was recorded).
func mcpChanges(recorded, now map[string]string) string {
	var out []string
	for name, d := range recorded {
		if cur, ok := now[name]; ok && cur != d {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
