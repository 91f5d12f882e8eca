package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teamrun/teamrun/internal/wireerr"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// LLMs runs LLM agents through an OpenAI-compatible server (DESIGN §2). It
// keeps the conversation of every agent with memory: true; the engine feeds
// it the turns once they are checkpointed (Remember).
type LLMs struct {
	Getenv func(string) string
	Render func(text string, state map[string]any) string
	HTTP   *http.Client
	// Live is a run that shows live progress: stream: auto streams there.
	Live bool
	// MaxAttempts, Sleep and MaxBackoff tune the client's retries (tests).
	MaxAttempts int
	MaxBackoff  time.Duration
	Sleep       func(ctx context.Context, d time.Duration) error
	// Retried, when set, is told of each wait of the client's retries of
	// an LLM request of a job (the attempt's), before the wait.
	Retried func(job *Job, r llm.Retry)
	// Commands gives tools their processes' environment and process
	// groups, as command agents get them; Dir is the folder the built-in
	// file tools are confined to (the spec's).
	Commands *Commands
	Dir      string
	// Guarded are the files and folders the file tools never write
	// (tools.Set.Guarded).
	Guarded []tools.Guard

	mu       sync.Mutex
	memory   map[string][]Turn
	toolLogs map[string]*checkpoint.ToolLog // each task's tool loop (toolloop.go)
	stopped  map[string]string              // why this run stopped a call, by task and call (noteStopped)
	learned  llm.Learned                    // what the run's clients learnt of their servers
}

// Restore gives the agents back the conversations a checkpoint kept.
func (l *LLMs) Restore(memory map[string][]Turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for a, msgs := range memory {
		if l.memory == nil {
			l.memory = map[string][]Turn{}
		}
		l.memory[a] = append([]Turn(nil), msgs...)
	}
}

// Remember appends a completed task's turns to its agent's conversation.
func (l *LLMs) Remember(agent string, turns []Turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.memory == nil {
		l.memory = map[string][]Turn{}
	}
	l.memory[agent] = append(l.memory[agent], turns...)
}

// keyRefused adds to a 401 or 403 which variable held the key the server
// refused (its value is never shown), or that the base URL's credentials
// were sent in its place, or that nothing was; to a request
// that got no HTTP answer at all, or a 404 that is not about the model,
// where its URL comes from.
func keyRefused(err error, ep llm.Endpoint) error {
	var le *llm.Error
	if !errors.As(err, &le) {
		return err
	}
	if le.StatusCode == 0 && le.Retryable && !errors.Is(le.Err, context.DeadlineExceeded) && ep.BaseFrom != "" {
		return fmt.Errorf("%w (%s)", err, wireerr.From(ep.BaseFrom))
	}
	if le.StatusCode == http.StatusNotFound && ep.BaseFrom != "" && !strings.Contains(strings.ToLower(le.Message), "model") {
		return fmt.Errorf("%w (%s)", err, notFoundHint(ep))
	}
	if le.StatusCode != http.StatusUnauthorized && le.StatusCode != http.StatusForbidden {
		return err
	}
	if !spec.ShowsVarName(cmp.Or(ep.KeyVar, "OPENAI_API_KEY")) {
		return fmt.Errorf("%w (the key came from %s: check it, or name another variable in llm.api_key_env)", err, llm.KeyVarText(ep.KeyVar))
	}
	if ep.APIKey == "" && len(llm.URLSecrets(ep.BaseURL)) > 0 {
		// Go sends the URL's user part as Basic auth when no key is sent.
		return fmt.Errorf("%w (%s: check them, or send a key instead: export %s, or name the variable that holds it in llm.api_key_env)", err, wireerr.CredentialsRefused(ep.BaseFrom), cmp.Or(ep.KeyVar, "OPENAI_API_KEY"))
	}
	if ep.APIKey == "" {
		return fmt.Errorf("%w (no key was sent: export %s, or name the variable that holds it in llm.api_key_env)", err, cmp.Or(ep.KeyVar, "OPENAI_API_KEY"))
	}
	return fmt.Errorf("%w (the key came from $%s: check it, or name another variable in llm.api_key_env)", err, ep.KeyVar)
}

// notFoundHint is what a 404 at the endpoint suggests: the usual mistakes
// of a base URL are a missing /v1 and a /chat/completions that teamrun
// adds itself. A 404 that names the model (an unknown one) gets none.
func notFoundHint(ep llm.Endpoint) string {
	base := strings.TrimRight(spec.ShownURL(ep.BaseURL), "/")
	path := base
	if u, err := url.Parse(base); err == nil {
		path = u.Path
	}
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return fmt.Sprintf("the URL comes from %s, which must not end in /chat/completions: teamrun adds it; set it to %s", ep.BaseFrom, strings.TrimSuffix(base, "/chat/completions"))
	case !slices.ContainsFunc(strings.Split(path, "/"), func(seg string) bool { return strings.HasPrefix(seg, "v1") }):
		return fmt.Sprintf("the URL comes from %s: most OpenAI-compatible servers answer under /v1; did you mean %s/v1?", ep.BaseFrom, base)
	}
	return wireerr.From(ep.BaseFrom)
}

// history is the turns agent's memory sends a task: those of the tasks
// it remembers, in their order (a task's own turns as they came). A task
// run again by --rerun appends its turns after those of later tasks, and
// they must not reach it, nor come first for the tasks after it.
func (l *LLMs) history(agent string, remembers []string) []llm.Message {
	at := make(map[string]int, len(remembers))
	for k, n := range remembers {
		at[n] = k
	}
	l.mu.Lock()
	var turns []Turn
	for _, m := range l.memory[agent] {
		if _, ok := at[m.Task]; ok || m.Task == "" { // "": a checkpoint's turn that names no task
			turns = append(turns, m)
		}
	}
	l.mu.Unlock()
	pos := func(t Turn) int {
		if k, ok := at[t.Task]; ok {
			return k
		}
		return -1
	}
	slices.SortStableFunc(turns, func(a, b Turn) int { return cmp.Compare(pos(a), pos(b)) })
	out := make([]llm.Message, len(turns))
	for i, m := range turns {
		out[i] = llm.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

func (l *LLMs) Execute(ctx context.Context, job *Job) (_ Result, err error) {
	a := job.Agent
	if a.LLM == nil || a.LLM.Model == "" {
		return Result{}, fmt.Errorf("agent %q has no model: set llm for the agent or the team", a.Name)
	}
	ep, err := llm.Resolve(a.LLM, l.Getenv)
	if err != nil {
		return Result{}, fmt.Errorf("agent %q: %w", a.Name, err)
	}
	// The task's timeout bounds the whole attempt, retries of the client
	// included; llm.timeout bounds each request.
	if timeout, key := attemptTimeout(job); timeout > 0 {
		parent := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		defer func() {
			if err != nil && ctx.Err() != nil && parent.Err() == nil {
				err = fmt.Errorf("timed out after %s (%s): %w", timeout, key, err)
			}
		}()
	}
	req, err := l.request(ctx, job, ep)
	if err != nil {
		return Result{}, err
	}
	msgs := req.Messages
	// An answer that holds a key (a proxy that echoes the request, a
	// model told it by a tool) is redacted as a command's output is,
	// before it is recorded, shown or streamed.
	keys := append([]string{ep.APIKey}, l.keys()...)
	client := &llm.Client{BaseURL: ep.BaseURL, APIKey: ep.APIKey, HTTP: l.HTTP, Timeout: time.Duration(a.LLM.Timeout),
		MaxAttempts: l.MaxAttempts, MaxBackoff: l.MaxBackoff, Sleep: l.Sleep, Learned: &l.learned}
	if job.Admit != nil {
		// The budget sees every request, each retry and tool turn too.
		client.Admit = func(ctx context.Context, requestBytes int) (func(*llm.Call), error) {
			done, err := job.Admit(ctx, reserveFor(requestBytes, a.LLM.MaxTokens, a.LLM.Price))
			if err != nil {
				return nil, err
			}
			return func(c *llm.Call) {
				if c == nil {
					done(nil)
					return
				}
				// Counted as it will be recorded, an answer's estimate too.
				done(totals(usageOf([]llm.Call{*c}, a.LLM.Price, 0)))
			}, nil
		}
	}
	if l.Retried != nil {
		client.OnRetry = func(r llm.Retry) {
			r.Why = llm.RedactKeys(r.Why, keys...) // a base URL's secret too
			l.Retried(job, r)
		}
	}
	if job.Stage != nil {
		// Each request's usage is kept as it is paid, and durable before
		// a retry's wait or the next request; an answer's rides with the
		// record that follows it (the turn, the attempt's end): a kill -9
		// anywhere in between loses none of what was paid.
		client.Paid = func(c llm.Call) error {
			return job.Stage(checkpoint.Record{Kind: checkpoint.RequestPaid, Task: job.Task.Name, Attempt: job.Attempt,
				Usage: usageOf([]llm.Call{c}, a.LLM.Price, job.Attempt)})
		}
		client.Durable = job.Flush
	}
	onDelta, onDiscard, flushDeltas := redactedDeltas(job.OnDelta, job.OnDiscard, keys)
	defer flushDeltas()
	req.OnDelta, req.OnDiscard = onDelta, onDiscard
	// Whether the answer's text reached OnDelta as it came (since the
	// request was last sent): one that came whole is given to it once it
	// is in, so that -v shows every answer, and a streamed one only once.
	var streamed atomic.Bool
	if onDelta != nil {
		req.OnDelta = func(text string) {
			streamed.Store(true)
			onDelta(text)
		}
		req.OnDiscard = func(reason string) {
			streamed.Store(false)
			onDiscard(reason)
		}
	}
	var content string
	var calls []llm.Call // every request that reported usage, the tool loop's turns included
	if hasTools(a) {
		content, calls, err = l.runTools(ctx, job, client, req, keys)
	} else {
		var resp llm.Response
		resp, err = client.Complete(ctx, req)
		content, calls = resp.Content, resp.Calls
		warnMended(job, ep.Model, resp)
		if err != nil {
			calls = llm.CallsOf(err)
		} else if len(resp.ToolCalls) > 0 && strings.TrimSpace(resp.Content) == "" {
			// A reply of only tool calls is no answer, least of all an empty one.
			err = fmt.Errorf("the model answered only with a call of tool %s, but agent %q has no tools: give it tools (see `teamrun schema`), or use a model that answers in text", resp.ToolCalls[0].Function.Name, a.Name)
		}
	}
	if err != nil {
		// The client redacts only its own key: a server's error may echo
		// the base URL's credentials (the request's path) or another of
		// the team's secrets, an MCP server's the header it was sent.
		err = redactedErr(err, keys)
	}
	l.warnUnreported(job, ep.Model, calls)
	content = llm.RedactKeys(content, keys...)
	if err == nil && strings.TrimSpace(content) == "" {
		// An empty answer is no result: taken as one, the task would be
		// done, and every --continue would restore the empty text.
		err = fmt.Errorf("model %s gave an empty answer (no text, no tool call): the attempt failed; check the model (a reasoning model may need a larger max_tokens) or the prompt", ep.Model)
	}
	if err == nil && job.OnDelta != nil && !streamed.Load() {
		// A whole answer (stream: false, a server that answered whole,
		// a tool loop's last turn) is one piece; it is redacted already.
		job.OnDelta(content)
	}
	if err != nil {
		return Result{}, paid(keyRefused(err, ep), usageOf(calls, a.LLM.Price, job.Attempt))
	}
	res := Result{Raw: content, Usage: usageOf(calls, a.LLM.Price, job.Attempt)}
	if a.Memory {
		res.Memory = []Turn{
			{Role: "user", Content: msgs[len(msgs)-1].Content, Task: job.Task.Name},
			{Role: "assistant", Content: content, Task: job.Task.Name},
		}
	}
	return res, nil
}

// request is the first request an attempt of job sends to ep (without
// its callbacks, nor a tool loop's tools: runTools adds them): its
// agent's texts rendered, its context read, its memory.
func (l *LLMs) request(ctx context.Context, job *Job, ep llm.Endpoint) (llm.Request, error) {
	a := job.Agent
	render := l.Render
	if render == nil {
		render = spec.Render
	}
	ra := *a
	ra.Role = render(a.Role, job.State)
	ra.Goal = render(a.Goal, job.State)
	ra.Backstory = render(a.Backstory, job.State)
	ra.Instructions = render(a.Instructions, job.State)
	cos := make([]llm.ContextOutput, len(job.Context))
	for i, c := range job.Context {
		// A prompt holds its context whole: a result stored out of line
		// is read into memory here (README: Limits).
		text, err := c.Output.Text(ctx)
		if err != nil {
			return llm.Request{}, fmt.Errorf("the output of context task %s: %w", c.Task, err)
		}
		cos[i] = llm.ContextOutput{Task: c.Task, Output: text}
	}
	var hist []llm.Message
	if a.Memory {
		hist = l.history(a.Name, job.Remembers)
	}
	desc := job.Description
	if job.Feedback != "" {
		// The retry says what was wrong: the same prompt would likely get
		// the same misfit again.
		desc += "\n\nYour previous answer was refused: " + job.Feedback + ". Answer again with only JSON that fits the schema."
	}
	return llm.Request{Model: ep.Model, Messages: llm.BuildMessages(&ra, desc, job.ExpectedOutput, cos, hist),
		Temperature: a.LLM.Temperature, MaxTokens: a.LLM.MaxTokens, AcceptTruncated: job.Task.AcceptTruncated,
		// A tool loop reads whole answers (runTools).
		Stream:      !hasTools(a) && ((a.LLM.Stream == nil && l.Live) || (a.LLM.Stream != nil && *a.LLM.Stream)),
		IdleTimeout: time.Duration(a.LLM.IdleTimeout),
		Schema:      schemaObject(job.Task.OutputSchema()), SchemaName: job.Task.Name}, nil
}

func hasTools(a *spec.Agent) bool { return a.RunsToolLoop() }

// firstRequestBytes is the size of the first request an attempt of job
// would send, for the budget's check before the attempt starts
// (Engine.admitFirst); exact is false when it is only a lower
// bound: a tool loop's first request adds its tools' definitions.
func (l *LLMs) firstRequestBytes(ctx context.Context, job *Job) (n int, exact bool, err error) {
	req, err := l.firstRequest(ctx, job)
	if err != nil {
		return 0, false, err
	}
	return llm.RequestBytes(req), !hasTools(job.Agent), nil
}

// unendedUsage is what an attempt of job counts should its run die before
// the attempt ends (a kill -9, a crash): one request cut off, its usage
// unknown, estimated from the size of its first request (answered with
// nothing, as far as anyone knows), as Ctrl-C's is; nil when the attempt
// cannot build one, and so sends none.
func (l *LLMs) unendedUsage(ctx context.Context, job *Job) *Usage {
	req, err := l.firstRequest(ctx, job)
	if err != nil {
		return nil
	}
	u := usageOf([]llm.Call{{Model: req.Model, CutOff: true, UsageUnknown: true, RequestBytes: llm.RequestBytes(req), MaxTokens: req.MaxTokens}}, job.Agent.LLM.Price, job.Attempt)
	u.Calls[0].NoEnd = true
	return u
}

// firstRequest is the first request an attempt of job would send.
func (l *LLMs) firstRequest(ctx context.Context, job *Job) (llm.Request, error) {
	if job.Agent.LLM == nil {
		return llm.Request{}, errors.New("no model")
	}
	ep, err := llm.Resolve(job.Agent.LLM, l.Getenv)
	if err != nil {
		return llm.Request{}, err
	}
	return l.request(ctx, job, ep)
}

// attemptTimeout is what bounds an attempt, of a command or an LLM
// agent: the task's timeout, else its agent's (0: none), and the key that
// sets it, for messages.
func attemptTimeout(job *Job) (time.Duration, string) {
	if t := job.Task.Timeout; t > 0 {
		return t, spec.QuotePath(job.Task.KeyPath() + ".timeout")
	}
	return job.Agent.Timeout, spec.QuotePath(job.Agent.KeyPath() + ".timeout")
}

// warnMended says that the answer holds U+FFFD in place of bytes its
// server sent that are not UTF-8 (llm.Response.Mended): recorded as it is,
// but not as the model meant it.
func warnMended(job *Job, model string, resp llm.Response) {
	if resp.Mended != "" && job.Warn != nil {
		job.Warn(fmt.Sprintf("model %s: %s", model, resp.Mended))
	}
}

// warnUnreported says, once per model in a run, that its server answers
// without usage: the totals and the budget count estimates for it.
func (l *LLMs) warnUnreported(job *Job, model string, calls []llm.Call) {
	i := slices.IndexFunc(calls, func(c llm.Call) bool { return c.UsageUnknown && !c.CutOff })
	if i < 0 {
		return
	}
	// The key is the model's: one warning per model, whichever way it
	// came without a count.
	what := "answered without usage (its server reported no token counts)"
	if r := calls[i].UsageUnreadable; r != "" {
		what = r
	}
	msg := fmt.Sprintf("model %s %s: each such answer counts as an estimate from its size (request and answer bytes / 3 as tokens, the answer's at most its max_tokens, priced when the model has a price) in the totals and the budget", model, what)
	switch {
	case l.Commands != nil:
		l.Commands.warnOnce("\x00unreported "+model, msg)
	case job.Warn != nil:
		job.Warn(msg)
	}
}

// redactedDeltas is onDelta with keys redacted, a key streamed in pieces
// caught whole (redacting), and onDiscard, which drops what it held back
// of the text discarded; flush gives what it held back.
func redactedDeltas(onDelta func(string), onDiscard func(string), keys []string) (redacted, discard func(string), flush func()) {
	if onDelta == nil {
		return nil, nil, func() {}
	}
	w := redacting(deltaWriter(onDelta), keys)
	discard = func(reason string) {
		if r, ok := w.(*redactingWriter); ok {
			r.keys.Drop()
		}
		if onDiscard != nil {
			onDiscard(llm.RedactKeys(reason, keys...))
		}
	}
	return func(s string) { io.WriteString(w, s) }, discard, func() { w.Close() }
}

// deltaWriter is a stream's text handler as a writer.
type deltaWriter func(string)

func (d deltaWriter) Write(p []byte) (int, error) { d(string(p)); return len(p), nil }
func (d deltaWriter) Close() error                { return nil }
