package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCompleteUsage checks that every answer that reported usage is a
// call of the Complete, whether it became the result, was retried or
// failed, and that the details objects are read.
func TestCompleteUsage(t *testing.T) {
	const (
		detailed = `{"model":"served","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":8}}}`
		deepseek = `{"model":"ds","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_cache_hit_tokens":4}}`
		cut      = `{"model":"served","choices":[{"message":{"content":"Hello from the"},"finish_reason":"length"}],"usage":{"prompt_tokens":30,"completion_tokens":3,"total_tokens":33}}`
		refused  = `{"model":"served","choices":[{"message":{"content":null,"refusal":"I can't help with that"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18}}`
		noUsage  = `{"model":"served","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`
	)
	tests := []struct {
		name    string
		replies []func(w http.ResponseWriter) // one per request
		wantErr bool
		want    []Call // Duration not compared
	}{
		{"details", []func(http.ResponseWriter){body(200, detailed)}, false,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120, CachedTokens: 64, ReasoningTokens: 8}}}},
		{"DeepSeek cache hits; total computed", []func(http.ResponseWriter){body(200, deepseek)}, false,
			[]Call{{Model: "ds", Status: 200, Usage: Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12, CachedTokens: 4}}}},
		{"a 503 reports none, the retry does", []func(http.ResponseWriter){body(503, `{"error":"busy"}`), body(200, detailed)}, false,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120, CachedTokens: 64, ReasoningTokens: 8}}}},
		{"a cut answer is paid for", []func(http.ResponseWriter){body(200, cut)}, true,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 30, CompletionTokens: 3, TotalTokens: 33}}}},
		{"a refusal is paid for", []func(http.ResponseWriter){body(200, refused)}, true,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 12, CompletionTokens: 6, TotalTokens: 18}}}},
		// Billed all the same: a call of unknown usage, with its sizes
		// for an estimate (the request's body, the answer's text).
		{"an answer without usage", []func(http.ResponseWriter){body(200, noUsage)}, false,
			[]Call{{Model: "served", Status: 200, UsageUnknown: true, RequestBytes: tinyReqBytes, AnswerBytes: 2}}},
		{"a cut answer without usage", []func(http.ResponseWriter){body(200, strings.Replace(noUsage, `"stop"`, `"length"`, 1))}, true,
			[]Call{{Model: "served", Status: 200, UsageUnknown: true, RequestBytes: tinyReqBytes, AnswerBytes: 2}}},
		// A count no answer can have would give a budget back what other
		// requests spent: the answer counts as one without usage.
		{"a negative count is no usage", []func(http.ResponseWriter){body(200, strings.Replace(detailed, `"prompt_tokens":100`, `"prompt_tokens":-100000`, 1))}, false,
			[]Call{{Model: "served", Status: 200, UsageUnknown: true, UsageUnreadable: negCount, RequestBytes: tinyReqBytes, AnswerBytes: 2}}},
		{"a total under its parts is their sum", []func(http.ResponseWriter){body(200, strings.Replace(detailed, `"total_tokens":120`, `"total_tokens":1`, 1))}, false,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120, CachedTokens: 64, ReasoningTokens: 8}}}},
		{"a negative detail is no usage", []func(http.ResponseWriter){body(200, strings.Replace(detailed, `"cached_tokens":64`, `"cached_tokens":-64`, 1))}, false,
			[]Call{{Model: "served", Status: 200, UsageUnknown: true, UsageUnreadable: negCount, RequestBytes: tinyReqBytes, AnswerBytes: 2}}},
		{"a server error is no answer", []func(http.ResponseWriter){body(400, `{"error":"bad"}`)}, true, nil},
		// Counts some servers send as floats or texts are read where
		// they mean a whole number; the answer is kept either way.
		{"whole numbers as floats", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":100.0,"completion_tokens":3.0,"total_tokens":1.03e2}`))}, false,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 100, CompletionTokens: 3, TotalTokens: 103}}}},
		{"whole numbers as texts", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":"100","completion_tokens":" 3 ","total_tokens":"103.0","prompt_tokens_details":{"cached_tokens":"64"}}`))}, false,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 100, CompletionTokens: 3, TotalTokens: 103, CachedTokens: 64}}}},
		{"null counts and details", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":10,"completion_tokens":null,"prompt_tokens_details":null,"completion_tokens_details":"n/a"}`))}, false,
			[]Call{{Model: "served", Status: 200, Usage: Usage{PromptTokens: 10, TotalTokens: 10}}}},
		// Else the answer is kept, its usage unknown: estimated from
		// its size, which a budget counts, and said why.
		{"a fraction", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":100.5,"completion_tokens":3,"total_tokens":103}`))}, false,
			unreadableCall("reported a token count that is no whole number (prompt_tokens: 100.5)")},
		{"a text that is no number", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":"lots","completion_tokens":3}`))}, false,
			unreadableCall("reported a token count that is no whole number (prompt_tokens: a text)")},
		{"an overflow", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":1,"completion_tokens":99999999999999999999999,"total_tokens":3}`))}, false,
			unreadableCall("reported more tokens than any answer can have (completion_tokens: 99999999999999999999999)")},
		{"more than any answer", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":1e300,"completion_tokens":3}`))}, false,
			unreadableCall("reported more tokens than any answer can have (prompt_tokens: 1e300)")},
		{"a boolean", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":true,"completion_tokens":3}`))}, false,
			unreadableCall("reported a token count that is no whole number (prompt_tokens: a value that is no number)")},
		{"a usage that is no object", []func(http.ResponseWriter){body(200, withUsage(`"n/a"`))}, false,
			unreadableCall("reported a usage that is not a JSON object")},
		{"a bad detail", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":10,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":0.5}}`))}, false,
			unreadableCall("reported a token count that is no whole number (reasoning_tokens: 0.5)")},
		// What a server or proxy that counts nothing sends: no answer is
		// free, so it is an answer without usage, not one of 0 tokens.
		{"zero counts", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`))}, false,
			unreadableCall(zeroUsage)},
		{"an empty usage", []func(http.ResponseWriter){body(200, withUsage(`{}`))}, false,
			unreadableCall(zeroUsage)},
		{"zero counts with details", []func(http.ResponseWriter){body(200, withUsage(`{"prompt_tokens":"0","completion_tokens":null,"prompt_tokens_details":{"cached_tokens":0}}`))}, false,
			unreadableCall(zeroUsage)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) { tt.replies[min(i, len(tt.replies)-1)](w) })
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), tinyReq)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
			got := resp.Calls
			if err != nil {
				got = CallsOf(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("calls = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i].Duration <= 0 {
					t.Errorf("call %d has no duration", i)
				}
				got[i].Duration = 0
				if got[i] != tt.want[i] {
					t.Errorf("call %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			if err == nil && len(tt.want) > 0 && resp.Usage != tt.want[len(tt.want)-1].Usage {
				t.Errorf("Usage = %+v, want the last call's", resp.Usage)
			}
		})
	}
}

const negCount = "reported a negative token count, which no answer can have"

// withUsage is an answer "ok" with usage as given.
func withUsage(usage string) string {
	return `{"model":"served","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":` + usage + `}`
}

// unreadableCall is the call of an answer "ok" whose usage is none, why.
func unreadableCall(why string) []Call {
	return []Call{{Model: "served", Status: 200, UsageUnknown: true, UsageUnreadable: why, RequestBytes: tinyReqBytes, AnswerBytes: 2}}
}

// tinyReqBytes is the size of tinyReq's body.
var tinyReqBytes = func() int {
	b, _ := json.Marshal(wireRequest{Model: tinyReq.Model, Messages: tinyReq.Messages})
	return len(b)
}()

func body(code int, s string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, s)
	}
}

func TestCompleteSendsSchema(t *testing.T) {
	fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, `{"a":1}`) })
	req := tinyReq
	req.Schema = map[string]any{"type": "object"}
	req.SchemaName = "triage step/1"
	if _, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := string(fs.requests()[0].Body["response_format"])
	if want := `{"type":"json_schema","json_schema":{"name":"triage_step_1","schema":{"type":"object"}}}`; got != want {
		t.Errorf("response_format = %s, want %s", got, want)
	}
	fs2 := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, "x") })
	if _, err := testClient(fs2, &fakeSleep{}).Complete(context.Background(), tinyReq); err != nil {
		t.Fatal(err)
	}
	if rf, ok := fs2.requests()[0].Body["response_format"]; ok {
		t.Errorf("response_format %s sent without a schema", rf)
	}
}

// TestCallModelRedacted checks that a server echoing the key as the
// model's name does not put it into the recorded calls.
func TestCallModelRedacted(t *testing.T) {
	for _, stream := range []bool{false, true} {
		fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			const chunk = `{"model":"sk-test-key-123","choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: "+chunk+"\n\ndata: [DONE]\n\n")
				return
			}
			body(200, `{"model":"sk-test-key-123","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)(w)
		})
		req := tinyReq
		req.Stream = stream
		resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Calls) != 1 || strings.Contains(resp.Calls[0].Model, "sk-test-key-123") || strings.Contains(resp.Model, "sk-test-key-123") {
			t.Errorf("stream %v: the key is in the model's name: %+v", stream, resp.Calls)
		}
	}
}

// TestResponseFormatRefused checks that a server refusing response_format
// is asked again without it, once, and that other bad requests are not.
func TestResponseFormatRefused(t *testing.T) {
	tests := []struct {
		name     string
		refusal  string
		wantReqs int
		wantErr  bool
	}{
		{"names response_format", `{"error":{"message":"Unrecognized request argument supplied: response_format"}}`, 2, false},
		{"names json_schema", `{"error":{"message":"json_schema is not supported by this model"}}`, 2, false},
		{"another bad request", `{"error":{"message":"messages: too long"}}`, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fs *fakeServer
			fs = newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) {
				if _, ok := fs.requests()[i].Body["response_format"]; ok {
					body(400, tt.refusal)(w)
					return
				}
				okReply(w, `{"a":1}`)
			})
			req := tinyReq
			req.Schema = map[string]any{"type": "object"}
			_, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if n := len(fs.requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
		})
	}
}

// TestCompleteAdmit: Admit is asked before every request, retries
// included, and hears each one's usage; a refusal ends Complete before the
// request is sent, with the calls paid before it and the refusal's error.
func TestCompleteAdmit(t *testing.T) {
	cut := `{"model":"served","choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":3,"total_tokens":33}}`
	refusal := errors.New("no more")
	tests := []struct {
		name     string
		replies  []func(http.ResponseWriter)
		refuseAt int // the admission refused (1-based); 0: none
		sent     int
		heard    []*Usage // what done got, in order
		wantErr  error
		calls    int
	}{
		{"each retry is admitted", []func(http.ResponseWriter){body(503, `{"error":"busy"}`), body(200, cut)}, 0, 2,
			[]*Usage{nil, {PromptTokens: 30, CompletionTokens: 3, TotalTokens: 33}}, nil, 1},
		{"a refused retry is not sent", []func(http.ResponseWriter){body(503, `{"error":"busy"}`), body(200, cut)}, 2, 1,
			[]*Usage{nil}, refusal, 0},
		{"refused at once", []func(http.ResponseWriter){body(200, cut)}, 1, 0, nil, refusal, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) { tt.replies[min(i, len(tt.replies)-1)](w) })
			c := testClient(fs, &fakeSleep{})
			var heard []*Usage
			asked := 0
			c.Admit = func(_ context.Context, n int) (func(*Call), error) {
				asked++
				if n <= 0 {
					t.Errorf("request size %d", n)
				}
				if asked == tt.refuseAt {
					return nil, refusal
				}
				return func(c *Call) {
					if c == nil {
						heard = append(heard, nil)
						return
					}
					heard = append(heard, &c.Usage)
				}, nil
			}
			_, err := c.Complete(context.Background(), tinyReq)
			if len(fs.requests()) != tt.sent {
				t.Errorf("%d requests sent, want %d", len(fs.requests()), tt.sent)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && len(CallsOf(err)) != tt.calls {
				t.Errorf("calls of the error: %+v, want %d", CallsOf(err), tt.calls)
			}
			if len(heard) != len(tt.heard) {
				t.Fatalf("done heard %v, want %v", heard, tt.heard)
			}
			for i := range heard {
				if (heard[i] == nil) != (tt.heard[i] == nil) || heard[i] != nil && *heard[i] != *tt.heard[i] {
					t.Errorf("done %d: %+v, want %+v", i, heard[i], tt.heard[i])
				}
			}
		})
	}
}

// TestCompleteCutOffCall: a request that a cancelled ctx or a request
// timeout cuts off is a call too, marked so, its usage unknown unless a
// stream had reported it; the calls before it stay with the error.
func TestCompleteCutOffCall(t *testing.T) {
	usageChunk := `data: {"model":"m","choices":[{"delta":{"content":"Hel"}}],"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}}` + "\n\n"
	tests := []struct {
		name    string
		stream  bool
		timeout bool // the request's timeout, not the caller, cuts it off
		want    Usage
		unknown bool
	}{
		{"cancelled, no usage", false, false, Usage{}, true},
		{"cancelled, a stream had reported usage", true, false, Usage{PromptTokens: 40, CompletionTokens: 2, TotalTokens: 42}, false},
		{"the request's timeout", false, true, Usage{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				if tt.stream {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, usageChunk)
					w.(http.Flusher).Flush()
				}
				if !tt.timeout && !tt.stream {
					cancel()
				}
				<-r.Context().Done()
			})
			c := testClient(fs, &fakeSleep{})
			c.MaxAttempts = 1
			if tt.timeout {
				c.Timeout = 20 * time.Millisecond
			}
			req := tinyReq
			if tt.stream {
				// Cut off once the chunk, usage and all, was read.
				req.Stream, req.OnDelta = true, func(string) { cancel() }
			}
			_, err := c.Complete(ctx, req)
			if err == nil {
				t.Fatal("no error")
			}
			calls := CallsOf(err)
			if len(calls) != 1 {
				t.Fatalf("calls %+v, want the cut-off one (err %v)", calls, err)
			}
			if c := calls[0]; !c.CutOff || c.UsageUnknown != tt.unknown || c.Usage != tt.want || c.Duration <= 0 {
				t.Errorf("call %+v, want cut off, usage %+v (unknown %v)", c, tt.want, tt.unknown)
			}
			if !tt.timeout && !errors.Is(err, context.Canceled) {
				t.Errorf("err %v does not match context.Canceled", err)
			}
		})
	}
}
