// Package llm is teamrun's client for OpenAI-compatible Chat Completions
// servers (OpenAI, Ollama, vLLM, llama-server, LM Studio): the prompt an agent
// sends, where it goes, and a call that survives a busy or flaky server.
package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/teamrun/teamrun/internal/wireerr"
	"github.com/teamrun/teamrun/pkg/runner/backoff"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Defaults for a zero Client field.
const (
	DefaultMaxAttempts = 4
	DefaultTimeout     = 5 * time.Minute // one request; local models on a CPU are slow
	DefaultMaxBackoff  = 30 * time.Second

	baseBackoff = 500 * time.Millisecond
	// maxRetryAfter bounds a server's Retry-After so that a bogus value
	// cannot park a run for hours; the task's own timeout still applies.
	maxRetryAfter = 5 * time.Minute
	// maxBody bounds what is read of an answer: far above any completion,
	// far below what would hurt the process.
	maxBody = 32 << 20
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are an assistant turn's calls; ToolCallID answers one of
	// them in a message of role tool (tools.go).
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Usage is the token count a server reports for one completion. Cached
// tokens are part of the prompt tokens, reasoning tokens part of the
// completion tokens, as OpenAI counts them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Call is one HTTP request that was answered (whatever became of the
// answer: the result, a cut answer, a refusal), that reported usage (a
// stream that broke off after its usage chunk), or that teamrun cut off
// before it ended.
type Call struct {
	Model    string // as the server named it, else as asked
	Status   int    // HTTP status; 0 when none came
	Duration time.Duration
	Usage    Usage
	// CutOff is a request that teamrun cut off (Ctrl-C, a timeout, a
	// stalled stream) or whose answer broke off; UsageUnknown that no
	// usage came: Usage is zero, but the request may have been billed
	// (cut off) or was (answered).
	CutOff, UsageUnknown bool
	// UsageUnreadable, with UsageUnknown, says why a usage that came is
	// none, in a warning's words ("reported a negative token count, which
	// no answer can have"); "" when none came.
	UsageUnreadable string
	// RequestBytes and AnswerBytes, of a call of unknown usage, are the
	// size of its request body and of the answer's text and tool calls:
	// what an estimate of its tokens goes by; MaxTokens is the request's
	// max_tokens (0: none sent), which bounds the answer's part of it.
	RequestBytes, AnswerBytes, MaxTokens int
}

// Request is one completion to ask for. A nil Temperature and a zero
// MaxTokens leave the server's defaults.
type Request struct {
	Model       string
	Messages    []Message
	Temperature *float64
	MaxTokens   int
	// AcceptTruncated takes an answer cut at max_tokens (finish_reason
	// "length") as the result; otherwise it is a failed attempt.
	AcceptTruncated bool
	// Stream asks for the answer as server-sent events (see stream.go),
	// with usage; an attempt whose stream is silent for IdleTimeout (0:
	// DefaultIdleTimeout) fails. OnDelta, when set, gets the text as it
	// comes: a preview only, since a stream that breaks off is no result.
	Stream      bool
	IdleTimeout time.Duration
	OnDelta     func(text string)
	// OnDiscard, when set, is told that the text OnDelta got since the
	// request was sent is dropped, and why: the stream failed and the
	// request is sent again, whose text OnDelta gets anew.
	OnDiscard func(reason string)
	// Schema, a JSON Schema object, asks for an answer that fits it
	// (response_format json_schema, named SchemaName). Servers differ in
	// how well they keep to it: the caller checks the answer itself.
	Schema     map[string]any
	SchemaName string
	// Tools are offered to the model (tools.go); none: a plain
	// completion. A request with tools is never streamed.
	Tools []Tool
}

// Response is the first choice's text, the usage and the model that answered.
type Response struct {
	Content      string
	Usage        Usage // of the answer that is the result
	Model        string
	FinishReason string // as the server said: stop, length, tool_calls, …; may be empty
	// Mended says why Content holds U+FFFD that the server did not send
	// (bytes that are not UTF-8: see textJoiner); "" when it holds none.
	Mended string
	// Calls are the requests of this Complete that reported usage, the
	// answer's last; Usage is the last one's.
	Calls []Call

	status    int    // the HTTP status of the answer
	hasUsage  bool   // the answer reported usage
	badUsage  string // why the usage the answer reported is none (wireUsage)
	answered  bool   // a completion came, whatever it says: the server billed it
	ToolCalls []ToolCall
	// received is how many bytes of the answer a request cut off had
	// read, which it does not keep: what its estimate goes by.
	received int
}

// answerBytes is the size of what a completion said: its text, its
// refusal and its tool calls; of a cut-off one, what came of it.
func (r Response) answerBytes() int {
	n := len(r.Content)
	for _, tc := range r.ToolCalls {
		n += len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return max(n, r.received)
}

// Client talks to one OpenAI-compatible endpoint. The zero value of every
// field but BaseURL is usable.
type Client struct {
	BaseURL     string // such as http://127.0.0.1:11434/v1; see ResolveEndpoint
	APIKey      string // empty: no Authorization header (local servers)
	HTTP        *http.Client
	MaxAttempts int           // requests per Complete, retries included; 0 = DefaultMaxAttempts
	Timeout     time.Duration // one request, body included; 0 = DefaultTimeout
	MaxBackoff  time.Duration // cap of the computed backoff; 0 = DefaultMaxBackoff
	// Sleep waits between attempts; nil waits on a timer. Tests replace it
	// so that no test really waits. It must return ctx.Err() when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// Admit, when set, is asked before every request, retries included,
	// with the size of its body: an error refuses it and ends Complete
	// with that error (wrapped in an *Error). done gets the request's call
	// as Complete records it (nil: none) once the request is over.
	Admit func(ctx context.Context, requestBytes int) (done func(*Call), err error)
	// Paid, when set, gets each request's call as Complete records it,
	// before the answer is judged, returned or retried, and Durable is
	// called before Complete waits to retry or sends again: the caller
	// keeps what was paid (Paid) and makes it durable by then (Durable),
	// or with what it records once Complete returns. An error of either
	// ends Complete with it (wrapped in an *Error, the calls so far in
	// its Calls).
	Paid    func(Call) error
	Durable func() error
	// OnRetry, when set, is told of each wait before a request is sent
	// again, before the wait: a run that says nothing for minutes (a
	// Retry-After of five) looks stuck.
	OnRetry func(Retry)
	// Learned, when set, is shared by the clients of one run: what it
	// learnt of a model's server holds for every request of the run to
	// that model (see Learned).
	Learned *Learned
}

// Learned is what a run learnt of the servers it talks to: the models
// that refuse max_tokens and take the answer's bound only as
// max_completion_tokens (OpenAI's reasoning models: o1, o3, o4-mini,
// gpt-5), so that only their first request is refused. The zero value is
// usable; it is safe for concurrent use.
type Learned struct {
	mu               sync.Mutex
	completionTokens map[string]bool // by endpoint and model
}

func learnedKey(endpoint, model string) string { return endpoint + "\x00" + model }

// takesCompletionTokens says whether model at endpoint refused max_tokens
// earlier in the run.
func (l *Learned) takesCompletionTokens(endpoint, model string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.completionTokens[learnedKey(endpoint, model)]
}

func (l *Learned) learnCompletionTokens(endpoint, model string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.completionTokens == nil {
		l.completionTokens = map[string]bool{}
	}
	l.completionTokens[learnedKey(endpoint, model)] = true
}

// Retry is one wait of Complete before it sends its request again.
type Retry struct {
	Attempt, MaxAttempts int           // the request that failed (1, 2, …), of how many at most
	Why                  string        // its failure: the HTTP status and the server's message, redacted
	Wait                 time.Duration // how long Complete waits
}

type wireRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is the same bound under the name OpenAI's
	// reasoning models take instead (useCompletionTokens).
	MaxCompletionTokens int  `json:"max_completion_tokens,omitempty"`
	Stream              bool `json:"stream"`
	// StreamOptions asks a stream for its usage in a last chunk: without
	// it OpenAI's API counts nothing when streaming.
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Tools          []Tool          `json:"tools,omitempty"`
}

type responseFormat struct {
	Type       string         `json:"type"` // json_schema
	JSONSchema jsonSchemaSpec `json:"json_schema"`
}

type jsonSchemaSpec struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
}

// schemaName fits a name to what OpenAI accepts for a schema's name:
// 1-64 of a-z, A-Z, 0-9, _ and -.
func schemaName(s string) string {
	out := []rune{}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			out = append(out, r)
		default:
			out = append(out, '_')
		}
		if len(out) == 64 {
			break
		}
	}
	if len(out) == 0 {
		return "result"
	}
	return string(out)
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   wireText   `json:"content"`
			Refusal   *string    `json:"refusal"`
			ToolCalls []ToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// wireOf is the body Complete sends first for req.
func wireOf(req Request) wireRequest {
	wr := wireRequest{
		Model: req.Model, Messages: req.Messages,
		Temperature: req.Temperature, MaxTokens: req.MaxTokens, Tools: req.Tools,
	}
	if req.Schema != nil {
		wr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchemaSpec{Name: schemaName(req.SchemaName), Schema: req.Schema}}
	}
	if req.Stream {
		wr.Stream, wr.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	return wr
}

// RequestBytes is the size of the body Complete sends first for req, as
// Admit is told it; 0 when it cannot be encoded (Complete then fails).
func RequestBytes(req Request) int {
	b, err := json.Marshal(wireOf(req))
	if err != nil {
		return 0
	}
	return len(b)
}

// Complete sends req to {BaseURL}/chat/completions and returns the first
// choice. What is retried follows OpenAI's own clients: a server's
// x-should-retry header decides first; else HTTP 408, 409, 429, 5xx and
// transport failures (timeouts included) are retried up to MaxAttempts,
// after the server's Retry-After-Ms or Retry-After, else with capped
// exponential backoff and jitter. A 429 that says the quota is used up is
// permanent (see ErrQuota). A 400 that refuses max_tokens for
// max_completion_tokens is sent again at once under that name (see
// Learned), as one that refuses response_format is without it. An answer
// cut at max_tokens (unless
// AcceptTruncated), stopped by a content filter or refused is a permanent
// failure too: the same request would meet it again. Every failure is an
// *Error, except a cancelled ctx, which is returned at once wrapping
// ctx.Err().
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	red := redactor(c.APIKey)
	endpoint, shown, err := chatURL(c.BaseURL)
	if err != nil {
		return Response{}, &Error{Model: req.Model, URL: red.clean(shown), Message: red.clean(err.Error()), Attempts: 0}
	}
	shown = red.clean(shown)
	fail := func(e *Error) *Error {
		e.Model, e.URL = req.Model, shown
		e.Message = red.clean(e.Message)
		return e
	}
	if req.Model == "" {
		return Response{}, fail(&Error{Message: "no model given: set llm.model for the agent or the team"})
	}
	wr := wireOf(req)
	if c.Learned.takesCompletionTokens(endpoint, req.Model) {
		wr.useCompletionTokens()
	}
	idle := req.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	var st *streaming
	if req.Stream {
		st = &streaming{idle: idle}
		if req.OnDelta != nil {
			st.onDelta = func(text string) {
				st.shown = true
				req.OnDelta(text)
			}
		}
	}
	body, err := json.Marshal(wr)
	if err != nil {
		return Response{}, fail(&Error{Message: "encoding the request: " + err.Error(), Err: err})
	}

	attempts := c.MaxAttempts
	if attempts < 1 {
		attempts = DefaultMaxAttempts
	}
	var (
		last  *Error
		calls []Call
	)
	for attempt := 1; ; attempt++ {
		var done func(*Call)
		if c.Admit != nil {
			d, err := c.Admit(ctx, len(body))
			if err != nil {
				if ctx.Err() != nil {
					return Response{}, canceled(ctx, req.Model, shown, last, calls)
				}
				// Not sent: what came before it was paid for.
				return Response{}, fail(&Error{Message: err.Error(), Err: err, Attempts: attempt - 1, Calls: calls})
			}
			done = d
		}
		start := time.Now()
		if st != nil {
			st.shown = false
		}
		resp, retryAfter, e := c.attempt(ctx, endpoint, body, red, st, idle)
		if resp.Model == "" {
			resp.Model = req.Model
		}
		// Cut off by us (Ctrl-C, a timeout, a stalled stream): the server
		// may bill it all the same.
		cut := e != nil && (ctx.Err() != nil || errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, ErrStalled) || e.unread)
		var call *Call
		if resp.hasUsage || cut || resp.answered {
			// Paid for whatever becomes of it: recorded before the answer
			// is judged. An answer without usage (a server that counts
			// none) was billed all the same: its usage is unknown, not 0.
			call = &Call{Model: resp.Model, Status: resp.status, Duration: time.Since(start), Usage: resp.Usage,
				CutOff: cut, UsageUnknown: !resp.hasUsage}
			if call.UsageUnknown {
				call.UsageUnreadable = resp.badUsage
			}
			if call.UsageUnknown {
				call.RequestBytes, call.AnswerBytes, call.MaxTokens = len(body), resp.answerBytes(), req.MaxTokens
			}
			calls = append(calls, *call)
		}
		if done != nil {
			done(call)
		}
		if call != nil && c.Paid != nil {
			if err := c.Paid(*call); err != nil {
				return Response{}, fail(&Error{Message: err.Error(), Err: err, Attempts: attempt, Calls: calls})
			}
		}
		if e == nil {
			e = checkFinish(resp, req)
		}
		if e == nil {
			resp.Calls = calls
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, canceled(ctx, req.Model, shown, last, calls)
		}
		e.Attempts = attempt
		e.Calls = calls
		last = fail(e)
		again := wr.ResponseFormat != nil && refusesResponseFormat(last) || wr.MaxTokens > 0 && refusesMaxTokens(last) || last.Retryable && attempt < attempts
		if again && c.Durable != nil {
			// A kill -9 in the wait, or while the next request is under
			// way, must lose none of what this one was paid.
			if err := c.Durable(); err != nil {
				return Response{}, fail(&Error{Message: err.Error(), Err: err, Attempts: attempt, Calls: calls})
			}
		}
		if wr.ResponseFormat != nil && refusesResponseFormat(last) {
			// A server that does not take response_format: ask again
			// without it, at once; the caller checks the answer anyway.
			wr.ResponseFormat = nil
			if body, err = json.Marshal(wr); err != nil {
				return Response{}, fail(&Error{Message: "encoding the request: " + err.Error(), Err: err})
			}
			st.discard(req.OnDiscard, last)
			continue
		}
		if wr.MaxTokens > 0 && refusesMaxTokens(last) {
			// A model that takes the bound only as max_completion_tokens:
			// the same request once more under that name, the same value
			// (the budget's worst case is unchanged), and so for the rest
			// of the run.
			wr.useCompletionTokens()
			c.Learned.learnCompletionTokens(endpoint, req.Model)
			if body, err = json.Marshal(wr); err != nil {
				return Response{}, fail(&Error{Message: "encoding the request: " + err.Error(), Err: err})
			}
			st.discard(req.OnDiscard, last)
			continue
		}
		if !last.Retryable {
			return Response{}, last
		}
		if attempt >= attempts {
			return Response{}, last
		}
		st.discard(req.OnDiscard, last)
		wait := c.backoff(attempt, retryAfter)
		if c.OnRetry != nil {
			c.OnRetry(Retry{Attempt: attempt, MaxAttempts: attempts, Why: last.detail(), Wait: wait})
		}
		if err := c.sleep(ctx, wait); err != nil || ctx.Err() != nil {
			return Response{}, canceled(ctx, req.Model, shown, last, calls)
		}
	}
}

// attempt sends one request. retryAfter is the server's wish, or -1.
func (c *Client) attempt(ctx context.Context, endpoint string, body []byte, red redactor, st *streaming, idle time.Duration) (Response, time.Duration, *Error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A stream's idle timer ends the request with errIdle as the cause.
	actx, cancelCause := context.WithCancelCause(actx)
	defer cancelCause(nil)
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Response{}, -1, &Error{Message: "building the request: " + err.Error(), Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if st != nil {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	hreq.Header.Set("User-Agent", "teamrun")
	if c.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return Response{}, -1, transportError(actx, timeout, err)
	}
	defer hresp.Body.Close()
	ok := hresp.StatusCode >= 200 && hresp.StatusCode <= 299
	if ok && isEventStream(hresp.Header) {
		// A stream is read as one also when a whole answer was asked for:
		// a server or proxy that always streams answers so.
		return readStream(actx, cancelCause, timeout, hresp, st.orWhole(idle), red)
	}
	if ok && st != nil {
		// A proxy may relabel a stream (text/plain): one that starts as
		// server-sent events is read as one, as OpenAI's clients do.
		br := bufio.NewReader(hresp.Body)
		hresp.Body = peekedBody{br, hresp.Body}
		if p, _ := br.Peek(len(bom) + len("event:")); startsAsEvents(p) {
			return readStream(actx, cancelCause, timeout, hresp, st, red)
		}
	}
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxBody+1))
	if err != nil {
		e := brokeOff(actx, timeout, hresp.StatusCode, "answer", len(data), err)
		if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
			return Response{}, retryAfterOf(hresp.Header, time.Now()), e // an error: billed by no one
		}
		// A 200 whose body broke off: billed, perhaps, as a stream that
		// broke off is, and counted as one (unread).
		e.unread = true
		return Response{status: hresp.StatusCode, received: len(data)}, -1, e
	}
	if len(data) > maxBody {
		return Response{received: len(data)}, -1, tooLong(hresp.StatusCode)
	}

	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		code := hresp.StatusCode
		msg, errCode := serverMessage(data, red)
		e := &Error{StatusCode: code, Message: msg, Retryable: shouldRetry(code, hresp.Header)}
		if quotaCode(errCode) {
			// Retrying cannot help, whatever the headers say: only the
			// account's owner can, and each retry would fail the same way.
			e.Retryable, e.Err = false, ErrQuota
			e.Message += " (" + errCode + ": the account's quota or credit is used up; add credit or raise the limit, then run again — not retried)"
		}
		return Response{}, retryAfterOf(hresp.Header, time.Now()), e
	}
	var wr wireResponse
	if err := json.Unmarshal(data, &wr); err != nil {
		if startsAsEvents(data) {
			// A stream, relabelled, to a request for a whole answer: it
			// came whole, and reads as the stream it is.
			hresp.Body = io.NopCloser(bytes.NewReader(data))
			return readStream(actx, cancelCause, timeout, hresp, st.orWhole(idle), red)
		}
		return unreadAnswer(data, hresp.StatusCode, red), -1, &Error{
			StatusCode: hresp.StatusCode,
			Message:    "the answer is not a Chat Completions response" + decodeProblem(err) + ": " + red.snippet(window(data)),
			Err:        err,
		}
	}
	if len(wr.Choices) == 0 {
		msg := "the answer has no choices"
		if m, _ := errorField(wr.Error); m != "" {
			msg += ": " + red.snippet(m)
		}
		// Usage it reported was paid for all the same.
		var failed Response
		if u, ok, _ := wr.Usage.usage(); ok {
			failed = Response{Model: red.clean(wr.Model), Usage: u, status: hresp.StatusCode, hasUsage: true}
		}
		return failed, -1, &Error{StatusCode: hresp.StatusCode, Message: msg}
	}
	ch := wr.Choices[0]
	// The model's name is recorded with the usage: no key may ride in it.
	resp := Response{Model: red.clean(wr.Model), status: hresp.StatusCode, ToolCalls: ch.Message.ToolCalls, answered: true}
	resp.Usage, resp.hasUsage, resp.badUsage = wr.Usage.usage()
	var text textJoiner
	text.add(ch.Message.Content)
	text.end()
	resp.Content, resp.Mended = text.text.String(), text.mended()
	if p := ch.FinishReason; p != nil {
		resp.FinishReason = *p
	}
	if p := ch.Message.Refusal; p != nil && strings.TrimSpace(*p) != "" {
		// A refusal is paid for too: its usage stays with the failure.
		return Response{Model: resp.Model, Usage: resp.Usage, status: resp.status, hasUsage: resp.hasUsage, badUsage: resp.badUsage, answered: true, Content: *p}, -1,
			&Error{StatusCode: hresp.StatusCode, Message: "the model refused to answer: " + red.snippet(*p)}
	}
	return resp, -1, nil
}

// peekedBody is a response body read through a bufio.Reader that has
// peeked at its start.
type peekedBody struct {
	*bufio.Reader
	io.Closer
}

// startsAsEvents says whether a body that starts with p starts as a
// stream of server-sent events does: with a data, event or comment line
// (after the byte order mark the SSE spec allows).
func startsAsEvents(p []byte) bool {
	p = bytes.TrimPrefix(p, []byte(bom))
	return bytes.HasPrefix(p, []byte("data:")) || bytes.HasPrefix(p, []byte("event:")) || bytes.HasPrefix(p, []byte(":"))
}

// unreadAnswer is what is kept of a 200 that came whole but is no Chat
// Completions response (a gateway's format, a stream relabelled by a
// proxy): answered, so billed, it counts with its usage where that reads
// on its own, else as an answer without usage, estimated from its size.
func unreadAnswer(data []byte, status int, red redactor) Response {
	r := Response{status: status, answered: true, received: len(data)}
	var model string
	model, r.Usage, r.hasUsage, r.badUsage = partUsage(data)
	r.Model = red.clean(model) // recorded with the usage
	if !r.hasUsage && r.badUsage == "" {
		r.badUsage = "sent an answer that is not a Chat Completions response"
	}
	return r
}

// partUsage is the model and the usage of a JSON object that is no Chat
// Completions answer (or chunk) as a whole, where they read on their own:
// what was paid for it. usage's results are its last three.
func partUsage(data []byte) (model string, u Usage, ok bool, why string) {
	var part struct {
		Model json.RawMessage `json:"model"`
		Usage *wireUsage      `json:"usage"`
	}
	if json.Unmarshal(data, &part) != nil {
		return "", Usage{}, false, ""
	}
	if json.Unmarshal(part.Model, &model) != nil {
		model = ""
	}
	u, ok, why = part.Usage.usage()
	return model, u, ok, why
}

// decodeProblem says what of an answer does not fit, in a user's words:
// " (choices.message.content is a number, not a text)"; "" when the
// decoder says nothing more useful.
func decodeProblem(err error) string {
	var (
		te *json.UnmarshalTypeError
		se *json.SyntaxError
	)
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf(" (%s is %s, not %s)", te.Field, jsonWords(te.Value), typeWords(te.Type))
	case errors.As(err, &se):
		return " (it is not valid JSON)"
	}
	return ""
}

// jsonWords names a kind of JSON value as encoding/json reports it
// ("number", "number 1.5", "array", …).
func jsonWords(v string) string {
	switch kind, _, _ := strings.Cut(v, " "); kind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "number":
		return "a number"
	case "string":
		return "a text"
	case "bool":
		return "true or false"
	}
	return v
}

// typeWords names what a Go type takes, as JSON.
func typeWords(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "what it should be"
	}
	switch t.Kind() {
	case reflect.String:
		return "a text"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "what it should be"
}

// tooLong is an answer over maxBody: not read further, not retried (the
// same request would bring the same answer).
func tooLong(status int) *Error {
	return &Error{StatusCode: status, unread: true,
		Message: fmt.Sprintf("the answer is over %d MiB, more than teamrun reads of one: ask for a shorter one (llm.max_tokens, or the prompt)", maxBody>>20)}
}

// checkFinish fails an answer that did not finish: cut at max_tokens
// (unless the task accepts that) or stopped by the server's content filter.
func checkFinish(resp Response, req Request) *Error {
	switch resp.FinishReason {
	case "length":
		if req.AcceptTruncated {
			return nil
		}
		limit := "the server's default max_tokens (none set)"
		if req.MaxTokens > 0 {
			limit = fmt.Sprintf("max_tokens=%d", req.MaxTokens)
		}
		return &Error{StatusCode: http.StatusOK, Message: fmt.Sprintf("the answer was cut at %s; raise max_tokens, or set on_truncated: accept to keep cut answers", limit)}
	case "content_filter":
		return &Error{StatusCode: http.StatusOK, Message: "the server's content filter stopped the answer (finish_reason content_filter)"}
	}
	return nil
}

// refusesResponseFormat tells a server's refusal of response_format (a
// 400 or 422 that names it) from other bad requests.
func refusesResponseFormat(e *Error) bool {
	return (e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity) &&
		(strings.Contains(strings.ToLower(e.Message), "response_format") || strings.Contains(strings.ToLower(e.Message), "json_schema"))
}

// refusesMaxTokens tells OpenAI's refusal of max_tokens by a model that
// takes only max_completion_tokens (a 400: "Unsupported parameter:
// 'max_tokens' is not supported with this model. Use
// 'max_completion_tokens' instead.") from other bad requests.
func refusesMaxTokens(e *Error) bool {
	m := strings.ToLower(e.Message)
	return e.StatusCode == http.StatusBadRequest && strings.Contains(m, "max_tokens") && strings.Contains(m, "max_completion_tokens") &&
		(strings.Contains(m, "unsupported") || strings.Contains(m, "not supported"))
}

// useCompletionTokens sends the answer's bound as max_completion_tokens.
func (wr *wireRequest) useCompletionTokens() {
	if wr.MaxTokens > 0 {
		wr.MaxCompletionTokens, wr.MaxTokens = wr.MaxTokens, 0
	}
}

// shouldRetry is OpenAI's rule: the server's x-should-retry first, then
// the status.
func shouldRetry(code int, h http.Header) bool {
	switch strings.ToLower(strings.TrimSpace(h.Get("X-Should-Retry"))) {
	case "true":
		return true
	case "false":
		return false
	}
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// quotaCode tells the error codes (or types) that mean the account cannot
// pay, as OpenAI and compatible servers send them with a 429.
func quotaCode(code string) bool {
	switch strings.ToLower(code) {
	case "insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "quota_exceeded", "insufficient_balance", "payment_required":
		return true
	}
	return false
}

func transportError(actx context.Context, timeout time.Duration, err error) *Error {
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &Error{
			Message:   fmt.Sprintf("no complete answer within the request timeout of %s", timeout),
			Retryable: true,
			Err:       context.DeadlineExceeded,
		}
	}
	// url.Error repeats the URL, query and all, which the *Error already
	// names without credentials: keep only what it wraps.
	var ue *url.Error
	if !errors.As(err, &ue) {
		// An answer that broke off while it was read: brokeOff words it.
		return &Error{Message: err.Error(), Retryable: true, Err: err}
	}
	msg, final := wireerr.Words(ue.Err, wireerr.URL{Key: "base_url", Retried: true})
	return &Error{Message: msg, Retryable: !final, Err: ue.Err}
}

// brokeOff is an answer whose status and headers came but whose body
// (what: "answer", "stream") did not come whole, after got bytes: in a
// user's words, with the status it had (it did reach the server: no hint
// about the URL applies), retried as a transport failure is.
func brokeOff(actx context.Context, timeout time.Duration, status int, what string, got int, err error) *Error {
	e := transportError(actx, timeout, err)
	if !errors.Is(e.Err, context.DeadlineExceeded) {
		e.Message = fmt.Sprintf("the %s broke off after %s: %s", what, bytesText(got), connWords(err))
	}
	e.StatusCode = status
	return e
}

// connWords is why a connection that carried part of an answer ended, as
// a user reads it: not Go's "read tcp 127.0.0.1:54498->…: read:
// connection reset by peer".
func connWords(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "the server (or a proxy on the way) reset the connection"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the server (or a proxy on the way) closed the connection before the end"
	case errors.As(err, &ne) && ne.Timeout():
		return "the connection timed out"
	}
	return "the connection failed"
}

func bytesText(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// canceled reports a ctx that ended: the caller asked to stop, so there is
// no retry, only what happened last; calls are the requests it paid for,
// the one cut off included (CallsOf).
func canceled(ctx context.Context, model, shown string, last *Error, calls []Call) error {
	var err error = stopped{ctx.Err()}
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	if last != nil {
		err = fmt.Errorf("model %q at %s: %w (after %s; last: %s)", model, shown, err, attemptsText(last.Attempts), last.detail())
	} else {
		err = fmt.Errorf("model %q at %s: %w", model, shown, err)
	}
	if len(calls) == 0 {
		return err
	}
	return &stoppedCalls{err: err, calls: calls}
}

// stoppedCalls is a stopped Complete with the requests it paid for.
type stoppedCalls struct {
	err   error
	calls []Call
}

func (s *stoppedCalls) Error() string { return s.err.Error() }
func (s *stoppedCalls) Unwrap() error { return s.err }

// stopped is a ctx's end in words a user reads ("context deadline exceeded"
// is Go's); errors.Is still matches context.Canceled or DeadlineExceeded.
type stopped struct{ err error }

func (s stopped) Error() string {
	if errors.Is(s.err, context.DeadlineExceeded) {
		return "stopped waiting for the answer: the time allowed ran out"
	}
	return "stopped waiting for the answer: the run was stopped"
}

func (s stopped) Unwrap() error { return s.err }

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
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

// backoff is the wait after the attempt-th failure: the server's
// Retry-After when it gave one (capped at maxRetryAfter), else exponential
// from baseBackoff, capped at MaxBackoff, with the upper half jittered so
// that parallel agents do not retry in lockstep.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter >= 0 {
		return min(retryAfter, maxRetryAfter)
	}
	limit := c.MaxBackoff
	if limit <= 0 {
		limit = DefaultMaxBackoff
	}
	return backoff.Jitter(backoff.Delay(baseBackoff, limit, attempt))
}

// retryAfterOf reads retry-after-ms (OpenAI's) or Retry-After in seconds or
// as an HTTP date; -1 when absent, unreadable or asking for no wait at
// all (0, a date not after now): as in OpenAI's clients, the backoff then
// applies, since a server whose clock is behind would otherwise have every
// attempt spent back to back.
func retryAfterOf(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < float64(maxRetryAfter/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return -1
		}
		if s > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return -1
}

// chatURL is base + /chat/completions, and the same without credentials
// or query, fit to show. base is held to spec.ParseBaseURL, the rule a
// spec's llm.base_url is refused by.
func chatURL(base string) (endpoint, shown string, err error) {
	u, err := spec.ParseBaseURL(base)
	if err != nil {
		return "", spec.ShownURL(base), fmt.Errorf("base URL %w", err)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	return u.String(), spec.ShownURL(u.String()), nil
}

// URLSecrets are the credentials base carries, which spec.ShownURL leaves out
// of messages and a run redacts from what it writes (a proxy may echo the
// request's path): the userinfo's password, or its user name when it has
// no password (http://TOKEN@h: the token is the credential), with their
// Basic auth form, and the values of the query parameters whose name says
// they are one (credentialName). Others (Azure's api-version) stay: their
// dates would vanish from every answer.
func URLSecrets(base string) []string {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		name := u.User.Username()
		pw, _ := u.User.Password()
		secret := pw
		if secret == "" {
			secret = name
		}
		if secret != "" {
			// Without a key, Go sends the userinfo as Basic auth (name:,
			// with no password): a server that echoes the Authorization
			// header shows it so.
			out = append(out, secret, base64.StdEncoding.EncodeToString([]byte(name+":"+pw)))
		}
	}
	// By hand, not u.Query(): that drops a pair that does not decode
	// (api_key=Tok3n%zz), and only the decoded value would be known,
	// where a server that echoes the request's path echoes it encoded.
	for pair := range strings.SplitSeq(u.RawQuery, "&") {
		rawName, raw, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		if raw == "" || !credentialName(name) {
			continue
		}
		out = append(out, raw)
		if v, err := url.QueryUnescape(raw); err == nil && v != raw && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// credentialName says whether a URL's query parameter so named carries a
// credential: a name that holds one of the words well-known redactors
// treat so (Sentry's list, Datadog's query obfuscation: api_key, token,
// password, pwd, auth, signature, X-Amz-Credential, cookie, jwt, csrf),
// or that is one of the short ones, too short to look for inside another
// name (code, pw), case ignored. Not session or sid: a proxy's session or
// trace id is no secret, and every run of 8 characters of its value
// would be cut out of the answers (newsletter-weekly in "the
// newsletter-weekly list").
func credentialName(name string) bool {
	n := strings.ToLower(name)
	for _, word := range []string{"key", "token", "secret", "pass", "pwd", "auth", "sig", "credential", "cookie", "jwt", "csrf", "xsrf"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return n == "code" || n == "pw"
}

// serverMessage pulls the error text out of an error body: OpenAI's
// {"error":{"message","code","type"}}, or the {"error":"..."}, {"message"}
// and {"detail"} that other servers send, else the start of the body itself;
// and the error's code (else its type) when it has one. The key is removed
// before the text is cut to size, so no part of it survives the cut.
func serverMessage(data []byte, red redactor) (msg, code string) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &body) == nil {
		m, code := errorField(body.Error)
		switch {
		case m != "":
		case body.Message != "":
			m = body.Message
		case len(body.Detail) > 0 && string(body.Detail) != "null":
			if json.Unmarshal(body.Detail, &m) != nil {
				m = string(body.Detail)
			}
		}
		if m != "" {
			return red.snippet(m), code
		}
	}
	return red.snippet(window(data)), ""
}

// errorField reads an "error" member: a string, or an object with a message
// and a code (or type).
func errorField(raw json.RawMessage) (msg, code string) {
	if len(raw) == 0 {
		return "", ""
	}
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		var c string
		if json.Unmarshal(obj.Code, &c) != nil || c == "" {
			c = obj.Type
		}
		return obj.Message, c
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	return "", ""
}

// snippetLimit is how much of a server's text a message shows.
const snippetLimit = 200

// windowLimit bounds the text a message is taken from: far more than
// snippetLimit, so that whitespace snippet folds away cannot starve it,
// and small enough that redacting it costs nothing.
const windowLimit = 64 << 10

func window(data []byte) string {
	return string(data[:min(len(data), windowLimit)])
}

// snippet is the start of a text on one line, valid UTF-8, its control
// characters escaped (a server's text may hold escape sequences, and the
// message is printed), for a message. Callers redact before they call it.
func snippet(text string) string {
	s := iostreams.Printable(strings.Join(strings.Fields(strings.ToValidUTF8(text, "?")), " "))
	if len(s) > snippetLimit {
		cut := snippetLimit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
