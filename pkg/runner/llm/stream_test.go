package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// sse writes a streamed answer: each event as a data: line, flushed.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		if f != nil {
			f.Flush()
		}
	}
}

// rawSSE writes a stream as it is, each part flushed on its own.
func rawSSE(w http.ResponseWriter, parts ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	for _, p := range parts {
		io.WriteString(w, p)
		if f != nil {
			f.Flush()
		}
	}
}

func delta(s string) string {
	return fmt.Sprintf(`{"model":"served","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, s)
}

// rawDelta is a delta whose content is s as it is, bytes that are not
// UTF-8 included (%q would escape them, which JSON cannot): what a server
// that cuts a character between two events sends. s holds no quote.
func rawDelta(s string) string {
	return `{"model":"served","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}`
}

const (
	finishStop   = `{"model":"served","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	usageChunk   = `{"model":"served","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`
	usageVLLM    = `{"model":"served","choices":null,"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`
	finishLength = `{"model":"served","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`
)

func TestStream(t *testing.T) {
	tests := []struct {
		name      string
		reply     func(i int, w http.ResponseWriter, r *http.Request)
		want      string // the result; "" with wantErr
		wantErr   string
		wantReqs  int
		wantUsage int // total tokens over the calls
		// wantUnknown counts the calls recorded as of unknown usage: a
		// stream that broke off may be billed.
		wantUnknown int
		// wantDiscards counts the OnDiscard calls: one per request whose
		// text was shown and that is sent again (not the last that fails).
		wantDiscards int
		// wantMended is in Response.Mended; "": it is empty.
		wantMended string
	}{
		{name: "deltas, usage chunk, [DONE]", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hel"), delta("lo"), finishStop, usageChunk, "[DONE]")
		}, want: "Hello", wantReqs: 1, wantUsage: 9},
		{name: "vLLM: choices null in the usage chunk", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hi"), finishStop, usageVLLM, "[DONE]")
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "no [DONE] after a finish_reason is complete", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hi"), finishStop, usageChunk)
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "a stream that breaks off is retried, its text dropped", reply: func(i int, w http.ResponseWriter, _ *http.Request) {
			if i == 0 {
				sse(w, delta("Partial ans"))
				return
			}
			sse(w, delta("Whole"), finishStop, usageChunk, "[DONE]")
		}, want: "Whole", wantReqs: 2, wantUsage: 9, wantUnknown: 1, wantDiscards: 1},
		{name: "an event cut inside its data line is dropped, the stream retried", reply: func(i int, w http.ResponseWriter, _ *http.Request) {
			if i == 0 {
				sse(w, delta("Part"))
				fmt.Fprint(w, `data: {"id":"c1","choi`)
				return
			}
			sse(w, delta("Whole"), finishStop, usageChunk, "[DONE]")
		}, want: "Whole", wantReqs: 2, wantUsage: 9, wantUnknown: 1, wantDiscards: 1},
		{name: "a last event without its blank line is read", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hi"), finishStop)
			fmt.Fprint(w, "data: "+usageChunk)
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "usage sent twice counts once", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hi"), finishStop, usageChunk, usageChunk, "[DONE]")
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "usage growing in every chunk counts its last", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, strings.Replace(delta("H"), `"finish_reason":null}]`, `"finish_reason":null}],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}`, 1),
				finishStop, usageChunk, "[DONE]")
		}, want: "H", wantReqs: 1, wantUsage: 9},
		// A proxy that adds a zero usage after the server's must not
		// make a paid answer free: counts only grow within a stream.
		{name: "a smaller usage after the real one does not lower it", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hi"), finishStop, usageChunk, `{"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, "[DONE]")
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "cut at max_tokens", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("Hello from the"), finishLength, usageChunk, "[DONE]")
		}, wantErr: "the answer was cut at", wantReqs: 1, wantUsage: 9},
		{name: "an error event", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("x"), `{"error":{"message":"model overloaded"}}`)
		}, wantErr: "the server reported an error in the stream: model overloaded", wantReqs: 3, wantUnknown: 3, wantDiscards: 2},
		{name: "a failure before any text discards nothing", reply: func(i int, w http.ResponseWriter, _ *http.Request) {
			if i == 0 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			sse(w, delta("Whole"), finishStop, usageChunk, "[DONE]")
		}, want: "Whole", wantReqs: 2, wantUsage: 9},
		// An event that does not read fails the attempt, not retried, as
		// a whole answer that does not read does; the 200 was billed, so
		// it counts: with the usage that came after it, else estimated.
		{name: "an event that is not JSON", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, "<html>")
		}, wantErr: "a stream event is not a Chat Completions chunk (it is not valid JSON): <html>", wantReqs: 1, wantUnknown: 1},
		{name: "an event that is not JSON, then the usage", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("x"), "{not json}", delta("y"), finishStop, usageChunk, "[DONE]")
		}, wantErr: "a stream event is not a Chat Completions chunk (it is not valid JSON): {not json}", wantReqs: 1, wantUsage: 9},
		{name: "a member of another type, then the usage", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, `{"choices":[{"index":0,"delta":{"content":42}}]}`, finishStop, usageChunk, "[DONE]")
		}, wantErr: "(choices.delta.content is a number, not a text)", wantReqs: 1, wantUsage: 9},
		{name: "a member of another type beside the usage", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, `{"choices":[{"index":0,"delta":{"content":42}}],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`)
		}, wantErr: "(choices.delta.content is a number, not a text)", wantReqs: 1, wantUsage: 9},
		{name: "an event that is not JSON in a stream that then breaks off", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, delta("x"), "{not json}", delta("y"))
		}, wantErr: "a stream event is not a Chat Completions chunk", wantReqs: 1, wantUnknown: 1},
		// The SSE spec ends lines with CR, LF or CRLF, and ignores one
		// byte order mark at the start.
		{name: "CR line ends", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			rawSSE(w, "data: "+delta("Hi")+"\r\r", "data: "+finishStop+"\r\rdata: "+usageChunk+"\r\r", "data: [DONE]\r\r")
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "CRLF cut between its CR and its LF", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			rawSSE(w, "data: "+delta("Hi")+"\r", "\n\r", "\ndata: "+finishStop+"\r\n\r\ndata: "+usageChunk+"\n\r\n", "data: [DONE]\r\n\r\n")
		}, want: "Hi", wantReqs: 1, wantUsage: 9},
		{name: "a byte order mark before the first event", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			rawSSE(w, "\uFEFFdata: "+delta("bom")+"\n\n", "data: "+finishStop+"\n\ndata: [DONE]\n\n")
		}, want: "bom", wantReqs: 1, wantUnknown: 1},
		{name: "a byte order mark cut inside", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			rawSSE(w, "\xef", "\xbb\xbfdata: "+delta("bom")+"\n\n", "data: "+finishStop+"\n\ndata: [DONE]\n\n")
		}, want: "bom", wantReqs: 1, wantUnknown: 1},
		{name: "deltas of a character cut between two events are joined", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta("caf\xc3"), rawDelta("\xa9 ok"), finishStop, usageChunk, "[DONE]")
		}, want: "café ok", wantReqs: 1, wantUsage: 9},
		{name: "deltas of a character cut in three and escaped pairs", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta("\xf0\x9f"), rawDelta("\x98"), rawDelta("\x80 \\ud83d\\ude00\\u00e9\\n"), finishStop, "[DONE]")
		}, want: "😀 😀é\n", wantReqs: 1, wantUnknown: 1},
		// A proxy that cuts text by UTF-16 units sends a pair's halves
		// as escapes in two events.
		{name: "deltas of a surrogate pair cut between two events are joined", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta(`smile \ud83d`), rawDelta(`\ude00 ok`), finishStop, usageChunk, "[DONE]")
		}, want: "smile 😀 ok", wantReqs: 1, wantUsage: 9},
		{name: "deltas with a lone surrogate: U+FFFD, said", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta(`a \ud83d`), rawDelta(`b \ude00\ud83d\u0041`), finishStop, usageChunk, "[DONE]")
		}, want: "a \uFFFDb \uFFFD\uFFFDA", wantReqs: 1, wantUsage: 9, wantMended: "its server sent 3 UTF-16 surrogate(s) without their pair"},
		{name: "deltas ending with a pair's first half: U+FFFD, said", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta(`ok \ud83d`), finishStop, usageChunk, "[DONE]")
		}, want: "ok \uFFFD", wantReqs: 1, wantUsage: 9, wantMended: "its server sent 1 UTF-16 surrogate(s) without their pair"},
		{name: "deltas ending inside a character: U+FFFD, said", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta("ok \xe2\x82"), finishStop, "[DONE]")
		}, want: "ok \uFFFD", wantReqs: 1, wantUnknown: 1, wantMended: "its server ended the answer inside a character"},
		{name: "deltas with a byte no character starts with: U+FFFD, said", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			sse(w, rawDelta("a\xffb\xef\xbf\xbd"), finishStop, "[DONE]")
		}, want: "a\uFFFDb\uFFFD", wantReqs: 1, wantUnknown: 1, wantMended: "its server sent 1 byte(s) that are not UTF-8"},
		{name: "a server that does not stream, with a byte that is not UTF-8", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"model":"served","choices":[{"index":0,"message":{"role":"assistant","content":"`+"caf\xc3\xa9 \xc3"+`"},"finish_reason":"stop"}]}`)
		}, want: "café \uFFFD", wantReqs: 1, wantUnknown: 1, wantMended: "inside a character"},
		{name: "a server that does not stream is read as usual", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			okReply(w, "plain")
		}, want: "plain", wantReqs: 1, wantUsage: 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, tt.reply)
			var mu sync.Mutex
			var deltas []string
			discards := 0
			req := tinyReq
			req.Stream = true
			req.OnDelta = func(s string) { mu.Lock(); deltas = append(deltas, s); mu.Unlock() }
			req.OnDiscard = func(why string) {
				mu.Lock()
				defer mu.Unlock()
				if why == "" || strings.Contains(why, "partial answer was dropped") {
					t.Errorf("discarded for %q", why)
				}
				deltas, discards = nil, discards+1
			}
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
			reqs := fs.requests()
			if len(reqs) != tt.wantReqs {
				t.Errorf("%d requests, want %d", len(reqs), tt.wantReqs)
			}
			for _, r := range reqs {
				if string(r.Body["stream"]) != "true" || strings.ReplaceAll(string(r.Body["stream_options"]), " ", "") != `{"include_usage":true}` {
					t.Errorf("request asks stream=%s stream_options=%s, want true and include_usage", r.Body["stream"], r.Body["stream_options"])
				}
			}
			calls := resp.Calls
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				calls = CallsOf(err)
			} else if err != nil || resp.Content != tt.want {
				t.Fatalf("got %q, %v; want %q", resp.Content, err, tt.want)
			}
			if tt.wantMended == "" && resp.Mended != "" || !strings.Contains(resp.Mended, tt.wantMended) {
				t.Errorf("Mended %q, want %q in it", resp.Mended, tt.wantMended)
			}
			for _, d := range deltas {
				if !utf8.ValidString(d) {
					t.Errorf("OnDelta got %q, which is not UTF-8", d)
				}
			}
			total, unknown := 0, 0
			for _, c := range calls {
				total += c.Usage.TotalTokens
				if c.UsageUnknown {
					unknown++
				}
			}
			if unknown != tt.wantUnknown {
				t.Errorf("%d calls of unknown usage, want %d (%+v)", unknown, tt.wantUnknown, calls)
			}
			if total != tt.wantUsage {
				t.Errorf("usage over the calls %d, want %d (%+v)", total, tt.wantUsage, calls)
			}
			if tt.wantErr == "" && len(deltas) == 0 && strings.Contains(tt.name, "delta") {
				t.Errorf("OnDelta never called")
			}
			if discards != tt.wantDiscards {
				t.Errorf("%d discards, want %d", discards, tt.wantDiscards)
			}
			// What was shown since the last discard is the answer.
			if tt.wantErr == "" && len(deltas) > 0 && strings.Join(deltas, "") != tt.want {
				t.Errorf("the text shown since the last discard %q, want the answer %q", strings.Join(deltas, ""), tt.want)
			}
		})
	}
}

// TestStreamStalled checks that a stream that goes silent fails its attempt
// after the idle timeout (retried, as a timeout is) and that what it had
// sent is no result.
func TestStreamStalled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	fs := newFakeServer(t, func(i int, w http.ResponseWriter, r *http.Request) {
		if i == 0 {
			sse(w, delta("The start of"))
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		sse(w, delta("fresh"), finishStop, usageChunk, "[DONE]")
	})
	req := tinyReq
	req.Stream, req.IdleTimeout = true, 20*time.Millisecond
	c := testClient(fs, &fakeSleep{})
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.Content != "fresh" {
		t.Fatalf("got %q, %v; want the second attempt's answer", resp.Content, err)
	}

	c.MaxAttempts = 1
	fs2 := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		sse(w, delta("The start of"))
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c.BaseURL = fs2.URL + "/v1"
	_, err = c.Complete(context.Background(), req)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "the stream stalled: nothing came for 20ms (idle_timeout); the partial answer was dropped") {
		t.Fatalf("err = %v, want a stalled stream", err)
	}
	if !errors.Is(err, ErrExhausted) {
		t.Errorf("a stall is transient: %v", err)
	}
}

// A stream whose answer ended (finish_reason and usage came) but whose
// server holds the connection open without [DONE] is complete after
// idle_timeout: one request, not a stall sent again.
func TestStreamEndedButHeldOpen(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	fs := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		sse(w, delta("complete answer"), finishStop, usageChunk)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := testClient(fs, &fakeSleep{})
	req := tinyReq
	req.Stream, req.IdleTimeout = true, 20*time.Millisecond
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.Content != "complete answer" || resp.FinishReason != "stop" {
		t.Fatalf("got %q (%s), %v; want the answer that came", resp.Content, resp.FinishReason, err)
	}
	if n := len(fs.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// A server that, after the first piece of the answer, sends nothing but
// keep-alive comments (a stuck upstream behind a proxy that keeps the
// connection warm) stalls like a silent one: after idle_timeout, saying
// so, not after the request's timeout. Comments between pieces that keep
// coming hold nothing up.
func TestStreamKeepAliveOnly(t *testing.T) {
	keepAlive := func(w http.ResponseWriter, r *http.Request, n int) {
		for i := 0; (n < 0 || i < n) && r.Context().Err() == nil; i++ {
			if _, err := io.WriteString(w, ": keep-alive\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush() // the first with what came before it
			time.Sleep(5 * time.Millisecond)
		}
	}
	fs := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// The first comment comes with the piece: the stall is said to be
		// one of keep-alives however late the next ones come.
		io.WriteString(w, "data: "+delta("The start of")+"\n\n")
		keepAlive(w, r, -1)
	})
	c := testClient(fs, &fakeSleep{})
	c.MaxAttempts, c.Timeout = 1, time.Minute
	req := tinyReq
	req.Stream, req.IdleTimeout = true, 60*time.Millisecond
	_, err := c.Complete(context.Background(), req)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "the stream stalled: nothing but keep-alive comments came for 60ms (idle_timeout); the partial answer was dropped") {
		t.Fatalf("err = %v, want a stalled stream", err)
	}

	// Keep-alives between pieces, each piece within idle_timeout.
	fs2 := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"one ", "two ", "three"} {
			io.WriteString(w, "data: "+delta(piece)+"\n\n")
			keepAlive(w, r, 2)
		}
		sse(w, finishStop, usageChunk, "[DONE]")
	})
	c.BaseURL = fs2.URL + "/v1"
	req.IdleTimeout = time.Minute
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.Content != "one two three" {
		t.Fatalf("got %q, %v; want the answer", resp.Content, err)
	}
}

// A stream that never ends — pieces of text forever, never silent, or
// keep-alive comments — is bounded: by what teamrun reads of an answer
// (32 MiB; the call is recorded as cut off, its usage unknown) and by the
// request's timeout; neither is held in memory beyond that.
func TestStreamNeverEnding(t *testing.T) {
	forever := func(event string) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := []byte(strings.Repeat(event, 512))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	}
	t.Run("text forever", func(t *testing.T) {
		fs := newFakeServer(t, forever("data: "+delta(strings.Repeat("x", 100))+"\n\n"))
		c := testClient(fs, &fakeSleep{})
		c.MaxAttempts = 1
		req := tinyReq
		req.Stream = true
		_, err := c.Complete(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "the answer is over 32 MiB") {
			t.Fatalf("err = %v, want the answer over 32 MiB", err)
		}
		calls := CallsOf(err)
		if len(calls) != 1 || !calls[0].CutOff || !calls[0].UsageUnknown || calls[0].AnswerBytes < 16<<20 {
			t.Errorf("calls %+v, want one cut off, of unknown usage, its size what came", calls)
		}
	})
	t.Run("comments forever", func(t *testing.T) {
		// Keep-alives, then nothing until the request ends: only its
		// timeout can end it. Comments sent without a pause reached the
		// 32 MiB cap within the 200ms on a quiet machine, so which
		// ended the request was a race.
		fs := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(strings.Repeat(": keep-alive\n", 1<<16)))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		c := testClient(fs, &fakeSleep{})
		c.MaxAttempts, c.Timeout = 1, 200*time.Millisecond
		req := tinyReq
		req.Stream, req.IdleTimeout = true, time.Hour
		_, err := c.Complete(context.Background(), req)
		if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "no complete answer within the request timeout of 200ms") {
			t.Fatalf("err = %v, want the request's timeout", err)
		}
	})
}

// TestStreamToolCalls: a streamed answer's tool calls are put together
// from their pieces, as a whole answer gives them: a caller tells an
// answer of only tool calls from an empty one either way.
func TestStreamToolCalls(t *testing.T) {
	const finishTools = `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
	tool := func(calls string) string {
		return `{"model":"served","choices":[{"index":0,"delta":{"tool_calls":` + calls + `},"finish_reason":null}]}`
	}
	tests := []struct {
		name   string
		events []string
		want   []ToolCall
	}{
		{"OpenAI's pieces", []string{
			tool(`[{"index":0,"id":"call_1","type":"function","function":{"name":"rm_rf","arguments":""}}]`),
			tool(`[{"index":0,"function":{"arguments":"{\"path\":"}}]`),
			tool(`[{"index":0,"function":{"arguments":"\"/\"}"}}]`),
			finishTools, usageChunk, "[DONE]",
		}, []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "rm_rf", Arguments: `{"path":"/"}`}}}},
		{"two calls, pieces interleaved", []string{
			tool(`[{"index":0,"id":"a","type":"function","function":{"name":"one","arguments":"{\"x\""}}]`),
			tool(`[{"index":1,"id":"b","type":"function","function":{"name":"two","arguments":"{}"}}]`),
			tool(`[{"index":0,"function":{"arguments":":1}"}}]`),
			finishTools, "[DONE]",
		}, []ToolCall{
			{ID: "a", Type: "function", Function: FunctionCall{Name: "one", Arguments: `{"x":1}`}},
			{ID: "b", Type: "function", Function: FunctionCall{Name: "two", Arguments: `{}`}},
		}},
		{"whole calls without an index, arguments an object", []string{
			tool(`[{"id":"a","type":"function","function":{"name":"one","arguments":{"x":1}}},{"id":"b","function":{"name":"two"}}]`),
			finishTools, "[DONE]",
		}, []ToolCall{
			{ID: "a", Type: "function", Function: FunctionCall{Name: "one", Arguments: `{"x":1}`}},
			{ID: "b", Type: "function", Function: FunctionCall{Name: "two"}},
		}},
		{"an index far from the last", []string{
			tool(`[{"index":3,"id":"a","type":"function","function":{"name":"one","arguments":"{"}}]`),
			tool(`[{"index":3,"function":{"arguments":"}"}}]`),
			finishTools, "[DONE]",
		}, []ToolCall{{ID: "a", Type: "function", Function: FunctionCall{Name: "one", Arguments: `{}`}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { sse(w, tt.events...) })
			req := tinyReq
			req.Stream = true
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(resp.ToolCalls) != fmt.Sprint(tt.want) || resp.FinishReason != "tool_calls" || resp.Content != "" {
				t.Fatalf("got %+v (finish %q, content %q), want %+v", resp.ToolCalls, resp.FinishReason, resp.Content, tt.want)
			}
		})
	}
}

// TestWholeAnswerStreamed checks that a server that streams whatever the
// request says is read as the stream it is when a whole answer was asked
// for (stream: false, an agent with tools), its usage counted.
func TestWholeAnswerStreamed(t *testing.T) {
	events := []string{delta("Hel"), delta("lo"), finishStop, usageChunk, "[DONE]"}
	tests := []struct {
		name  string
		reply func(i int, w http.ResponseWriter, r *http.Request)
	}{
		{name: "labelled text/event-stream", reply: func(_ int, w http.ResponseWriter, _ *http.Request) { sse(w, events...) }},
		{name: "relabelled", reply: func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for _, e := range events {
				fmt.Fprintf(w, "data: %s\n\n", e)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, tt.reply)
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), tinyReq)
			if err != nil || resp.Content != "Hello" || resp.FinishReason != "stop" {
				t.Fatalf("got %q (%q), %v; want Hello", resp.Content, resp.FinishReason, err)
			}
			if len(resp.Calls) != 1 || resp.Calls[0].Usage.TotalTokens != 9 || resp.Calls[0].UsageUnknown {
				t.Errorf("calls %+v, want one of 9 tokens", resp.Calls)
			}
			if n := len(fs.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}
