package llm

import (
	"bufio"
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
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
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
// it was paid for.
func readStream(ctx context.Context, cancel context.CancelCauseFunc, timeout time.Duration, hresp *http.Response, st *streaming, red redactor) (Response, time.Duration, *Error) {
	timer := time.AfterFunc(st.idle, func() { cancel(errIdle) })
	defer timer.Stop()
	body := &io.LimitedReader{R: hresp.Body, N: maxBody + 1}
	br := bufio.NewReaderSize(body, 64<<10)
	resp := Response{status: hresp.StatusCode}
	var (
		text    textJoiner // a character may be cut between two events
		refusal strings.Builder
		tools   toolCalls
		data    strings.Builder // the data lines of the event being read
		done    bool
		bad     *Error
	)
	fail := func(e *Error) (Response, time.Duration, *Error) {
		e.StatusCode = hresp.StatusCode
		e.unread = e.unread || e.Retryable // broke off
		// The usage that came is the one thing kept of a broken stream,
		// and the size of what came, for an estimate without it.
		return Response{Model: resp.Model, Usage: resp.Usage, status: resp.status, hasUsage: resp.hasUsage, badUsage: resp.badUsage,
			received: text.size() + refusal.Len() + resp.answerBytes()}, -1, e
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
			bad = &Error{Message: "a stream event is not a Chat Completions chunk: " + red.snippet(window([]byte(payload))), Err: err}
			return
		}
		if m, _ := errorField(ch.Error); m != "" {
			bad = &Error{Message: "the server reported an error in the stream: " + red.snippet(m), Retryable: true}
			return
		}
		if ch.Model != "" {
			resp.Model = red.clean(ch.Model) // recorded with the usage
		}
		if u, ok, bad := ch.Usage.usage(); ok {
			if resp.hasUsage {
				// Reported again (each chunk, or twice): a stream's counts
				// only grow, so a smaller one (a proxy's zeros after the
				// server's) lowers none of them, and a repeat adds nothing.
				u = u.atLeast(resp.Usage)
			}
			resp.Usage, resp.hasUsage = u, true
		} else if bad != "" {
			resp.badUsage = bad
		}
		if len(ch.Choices) == 0 {
			return
		}
		c := ch.Choices[0]
		if s := text.add(c.Delta.Content); s != "" && st.onDelta != nil {
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
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			dispatch()
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
