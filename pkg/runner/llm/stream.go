package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// DefaultIdleTimeout is how long a stream may be silent before its attempt
// fails: generous, since a local model on a CPU can think for a while
// between tokens, and far below the request's timeout.
const DefaultIdleTimeout = time.Minute

// ErrStalled is a stream that went silent for longer than its idle
// timeout; its attempt failed and, like a timeout, is retried.
var ErrStalled = errors.New("llm: stream stalled")

// errIdle is the cause the idle timer ends a request with.
var errIdle = errors.New("idle timeout")

// streaming is how one Complete streams.
type streaming struct {
	idle    time.Duration
	onDelta func(string)
	shown   bool // onDelta got text from the request under way
}

// orWhole is st, or for a request that asked for a whole answer (nil)
// and got a stream, how that stream is read: silent for idle at most, and
// shown to no one.
func (st *streaming) orWhole(idle time.Duration) *streaming {
	if st != nil {
		return st
	}
	return &streaming{idle: idle}
}

// droppedNote ends the error of a stream that failed after some text.
const droppedNote = "; the partial answer was dropped"

// discard tells onDiscard that the text shown of a failed request is
// dropped, and why, since the request is sent again: a stream shown as it
// comes would otherwise run on into the next one's text.
func (st *streaming) discard(onDiscard func(string), why *Error) {
	if st == nil || !st.shown || onDiscard == nil {
		return
	}
	st.shown = false
	onDiscard(strings.TrimSuffix(why.Message, droppedNote))
}

func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	// Asked of every answer, and most are JSON: ParseMediaType, which
	// allocates, only for what may be a stream.
	if !strings.Contains(strings.ToLower(ct), "event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "text/event-stream"
}

// wireChunk is one server-sent event of a streamed completion. The usage
// chunk that stream_options.include_usage asks for has no choices: []
// from OpenAI, null from vLLM.
type wireChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   wireText        `json:"content"`
			Refusal   *string         `json:"refusal"`
			ToolCalls []wireToolDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// wireToolDelta is a piece of a streamed tool call: the first of a call
// (by its index) names it, the ones after add to its arguments.
type wireToolDelta struct {
	Index *int   `json:"index"`
	ID    string `json:"id"`
	Type  string `json:"type"`
	// Arguments as text, or as the object some servers send (FunctionCall).
	Function FunctionCall `json:"function"`
}

// toolCalls puts the pieces of a stream's tool calls together, each
// call at the index its pieces give (a piece without one, as some servers
// send whole calls, is a call of its own).
type toolCalls struct {
	calls []ToolCall
	at    map[int]int // a wire index's place in calls
}

func (t *toolCalls) add(deltas []wireToolDelta) {
	for _, d := range deltas {
		i, ok := -1, false
		if d.Index != nil {
			i, ok = t.at[*d.Index]
		}
		if !ok {
			t.calls = append(t.calls, ToolCall{Type: "function"})
			i = len(t.calls) - 1
			if d.Index != nil {
				if t.at == nil {
					t.at = map[int]int{}
				}
				t.at[*d.Index] = i
			}
		}
		c := &t.calls[i]
		if d.ID != "" {
			c.ID = d.ID
		}
		if d.Type != "" {
			c.Type = d.Type
		}
		if c.Function.Name == "" {
			c.Function.Name = d.Function.Name // sent whole, in a call's first piece
		}
		c.Function.Arguments += d.Function.Arguments
	}
}

// readStream reads a streamed answer to its end. Only a stream that ended
// as the protocol says — [DONE], or at least a finish_reason before the
// connection closed (some servers send no [DONE]) — is an answer; one
// that broke off or went silent is a failed attempt, and its text, shown
// to onDelta as it came, is dropped. Usage that arrived is kept either way:
// it was paid for. An event that is no Chat Completions chunk fails the
// attempt as a whole answer that does not read fails it (not retried: the
// same request would meet it again), but the stream is read on to its end
// for the usage that comes after it, since the server bills it all.
func readStream(ctx context.Context, cancel context.CancelCauseFunc, timeout time.Duration, hresp *http.Response, st *streaming, red redactor) (Response, time.Duration, *Error) {
	timer := time.AfterFunc(st.idle, func() { cancel(errIdle) })
	defer timer.Stop()
	body := &io.LimitedReader{R: hresp.Body, N: maxBody + 1}
	lines := sseLines{br: bufio.NewReaderSize(body, 64<<10)}
	resp := Response{status: hresp.StatusCode}
	var (
		text    textJoiner // a character may be cut between two events
		refusal strings.Builder
		tools   toolCalls
		data    strings.Builder // the data lines of the event being read
		done    bool
		bad     *Error // the server said it failed: the stream ends there
		broken  *Error // an event that does not read; what follows is read for its usage
		lost    int    // the bytes of the events that did not read: part of the answer's size
	)
	fail := func(e *Error) (Response, time.Duration, *Error) {
		e.StatusCode = hresp.StatusCode
		e.unread = e.unread || e.Retryable // broke off
		// The usage that came is the one thing kept of a broken stream,
		// and the size of what came, for an estimate without it.
		return Response{Model: resp.Model, Usage: resp.Usage, status: resp.status, hasUsage: resp.hasUsage, badUsage: resp.badUsage,
			received: text.size() + refusal.Len() + resp.answerBytes() + lost}, -1, e
	}
	// unreadable ends a stream that had an event that does not read: it
	// came, so it was billed, as a whole answer that does not read is.
	unreadable := func() (Response, time.Duration, *Error) {
		out, _, e := fail(broken)
		out.answered = true
		return out, -1, e
	}
	takeUsage := func(model string, u Usage, ok bool, why string) {
		if model != "" {
			resp.Model = red.clean(model) // recorded with the usage
		}
		switch {
		case ok && resp.hasUsage:
			// Reported again (each chunk, or twice): a stream's counts
			// only grow, so a smaller one (a proxy's zeros after the
			// server's) lowers none of them, and a repeat adds nothing.
			resp.Usage = u.atLeast(resp.Usage)
		case ok:
			resp.Usage, resp.hasUsage = u, true
		case why != "":
			resp.badUsage = why
		}
	}
	dispatch := func() {
		payload := data.String()
		data.Reset()
		if payload == "" || bad != nil {
			return
		}
		if strings.TrimSpace(payload) == "[DONE]" {
			done = true
			return
		}
		var ch wireChunk
		if err := json.Unmarshal([]byte(payload), &ch); err != nil {
			if broken == nil {
				broken = &Error{Message: "a stream event is not a Chat Completions chunk" + decodeProblem(err) + ": " + red.snippet(window([]byte(payload))), Err: err}
			}
			lost += len(payload)
			model, u, ok, why := partUsage([]byte(payload))
			takeUsage(model, u, ok, why)
			return
		}
		if m, _ := errorField(ch.Error); m != "" {
			bad = &Error{Message: "the server reported an error in the stream: " + red.snippet(m), Retryable: true}
			return
		}
		u, ok, why := ch.Usage.usage()
		takeUsage(ch.Model, u, ok, why)
		if len(ch.Choices) == 0 {
			return
		}
		c := ch.Choices[0]
		// After an event that did not read, the text is no answer: it is
		// kept only for its size.
		if s := text.add(c.Delta.Content); s != "" && st.onDelta != nil && broken == nil {
			st.onDelta(s)
		}
		tools.add(c.Delta.ToolCalls)
		resp.ToolCalls = tools.calls
		if p := c.Delta.Refusal; p != nil {
			refusal.WriteString(*p)
		}
		if p := c.FinishReason; p != nil && *p != "" {
			resp.FinishReason = *p
		}
	}
	keptAlive := false // keep-alive comments came since the last data
	for !done && bad == nil {
		line, err := lines.next()
		switch {
		case line == "":
			if err == nil { // a blank line ends an event; the body's end is below
				dispatch()
			}
		case strings.HasPrefix(line, "data:"):
			// Only data is progress: a server that sends nothing but
			// keep-alive comments (a stuck upstream behind a proxy) is as
			// stalled as a silent one, not held to the request's timeout.
			timer.Reset(st.idle)
			keptAlive = false
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, ":"):
			keptAlive = true
		default:
			// event:, id: and retry: lines say nothing here
		}
		if err == nil {
			continue
		}
		if broken != nil {
			// Whatever ended it, the answer came and does not read.
			return unreadable()
		}
		if body.N <= 0 {
			return fail(tooLong(hresp.StatusCode))
		}
		// An event without its blank line: complete if it parses (a server
		// may end so), else cut short by the connection's end, and dropped.
		if p := strings.TrimSpace(data.String()); p != "" && p != "[DONE]" && !json.Valid([]byte(p)) {
			data.Reset()
		}
		dispatch()
		if done || bad != nil {
			break
		}
		switch {
		case errors.Is(context.Cause(ctx), errIdle) && resp.FinishReason != "":
			// The answer ended and the server then held the connection
			// open without [DONE]: complete, as one that closes it is.
		case errors.Is(context.Cause(ctx), errIdle):
			what := "nothing came"
			if keptAlive {
				what = "nothing but keep-alive comments came"
			}
			return fail(&Error{Message: fmt.Sprintf("the stream stalled: %s for %s (idle_timeout)%s", what, st.idle, droppedNote),
				Retryable: true, Err: ErrStalled})
		case err != io.EOF:
			e := brokeOff(ctx, timeout, hresp.StatusCode, "stream", int(maxBody+1-body.N), err)
			e.Message += droppedNote
			return fail(e)
		case resp.FinishReason == "":
			return fail(&Error{Message: "the stream ended before the answer did (no finish_reason, no [DONE])" + droppedNote, Retryable: true})
		}
		done = true
	}
	if bad != nil {
		return fail(bad)
	}
	if broken != nil {
		return unreadable()
	}
	resp.answered = true // it ended as the protocol says
	if r := strings.TrimSpace(refusal.String()); r != "" {
		out, _, e := fail(&Error{Message: "the model refused to answer: " + red.snippet(r)})
		out.answered, out.Content = true, r
		return out, -1, e
	}
	// The stream ended: a character it ended inside of is shown as it is
	// recorded.
	if s := text.end(); s != "" && st.onDelta != nil {
		st.onDelta(s)
	}
	resp.Content, resp.Mended = text.text.String(), text.mended()
	return resp, -1, nil
}

// bom is the byte order mark the SSE spec ignores at a stream's start.
const bom = "\uFEFF"

// sseLines reads a stream's lines as the SSE spec ends them: with CR, LF
// or CRLF, and one byte order mark at the very start ignored. A line is
// given as soon as its end came: a CR is not held until the byte after it
// shows whether an LF follows.
type sseLines struct {
	br      *bufio.Reader
	buf     []byte // a line that spans reads of the body
	afterCR bool   // the last line ended with a CR: an LF next ends nothing
	started bool   // a line was read: a BOM is only one at the start
}

// next is the next line without its end; with an error (the body's end, a
// broken connection) it is what came of a line that did not end.
func (l *sseLines) next() (string, error) {
	l.buf = l.buf[:0]
	for {
		if _, err := l.br.Peek(1); err != nil {
			return l.line(l.buf), err
		}
		b, _ := l.br.Peek(l.br.Buffered())
		if l.afterCR {
			l.afterCR = false
			if b[0] == '\n' {
				_, _ = l.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			l.buf = append(l.buf, b...)
			_, _ = l.br.Discard(len(b))
			continue
		}
		l.afterCR = b[i] == '\r'
		var s string
		if len(l.buf) == 0 {
			s = l.line(b[:i]) // the whole line is in the buffer: no copy
		} else {
			l.buf = append(l.buf, b[:i]...)
			s = l.line(l.buf)
		}
		_, _ = l.br.Discard(i + 1)
		return s, nil
	}
}

func (l *sseLines) line(b []byte) string {
	if !l.started {
		l.started = true
		b = bytes.TrimPrefix(b, []byte(bom))
	}
	return string(b)
}
