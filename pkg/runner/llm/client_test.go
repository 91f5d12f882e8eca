package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is one request as the fake server received it.
type seen struct {
	Method, Path, Auth, ContentType string
	Body                            map[string]json.RawMessage
	Messages                        []Message
}

// fakeServer answers the i-th request (0-based) with reply(i, w, r) and
// records every request.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newFakeServer(t testing.TB, reply func(i int, w http.ResponseWriter, r *http.Request)) *fakeServer {
	t.Helper()
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		s := seen{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
		if err := json.Unmarshal(data, &s.Body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, data)
		}
		if raw, ok := s.Body["messages"]; ok {
			if err := json.Unmarshal(raw, &s.Messages); err != nil {
				t.Errorf("messages: %v", err)
			}
		}
		fs.mu.Lock()
		i := len(fs.reqs)
		fs.reqs = append(fs.reqs, s)
		fs.mu.Unlock()
		reply(i, w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) requests() []seen {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]seen(nil), fs.reqs...)
}

// okReply writes a Chat Completions answer.
func okReply(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","model":"served-model","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}`, content)
}

func errReply(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"api_error","param":null,"code":null}}`, msg)
}

// fakeSleep records the waits and never really waits.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func testClient(fs *fakeServer, sl *fakeSleep) *Client {
	return &Client{BaseURL: fs.URL + "/v1", APIKey: "sk-test-key-123", MaxAttempts: 3, Sleep: sl.sleep}
}

var tinyReq = Request{Model: "m1", Messages: []Message{{Role: "user", Content: "hi"}}}

func TestCompleteSendsRequestAndParsesAnswer(t *testing.T) {
	temp := 0.25
	tests := []struct {
		name     string
		key      string
		req      Request
		wantAuth string
		wantKeys []string // top-level JSON keys of the body
	}{
		{
			name: "key, temperature and max_tokens", key: "sk-abc",
			req:      Request{Model: "gpt-x", Messages: []Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}, Temperature: &temp, MaxTokens: 64},
			wantAuth: "Bearer sk-abc",
			wantKeys: []string{"max_tokens", "messages", "model", "stream", "temperature"},
		},
		{
			name: "no key sends no Authorization; defaults omitted", key: "",
			req:      Request{Model: "local", Messages: []Message{{Role: "user", Content: "U"}}},
			wantAuth: "",
			wantKeys: []string{"messages", "model", "stream"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, "the answer") })
			c := &Client{BaseURL: fs.URL + "/v1/", APIKey: tt.key, Sleep: (&fakeSleep{}).sleep}
			resp, err := c.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			want := Response{Content: "the answer", Model: "served-model", FinishReason: "stop", Usage: Usage{PromptTokens: 11, CompletionTokens: 3, TotalTokens: 14}}
			if !reflect.DeepEqual(bare(resp), want) {
				t.Errorf("response = %+v, want %+v", resp, want)
			}
			reqs := fs.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" || r.ContentType != "application/json" {
				t.Errorf("request = %s %s (%s), want POST /v1/chat/completions (application/json)", r.Method, r.Path, r.ContentType)
			}
			if r.Auth != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", r.Auth, tt.wantAuth)
			}
			var keys []string
			for k := range r.Body {
				keys = append(keys, k)
			}
			if got, want := sortedJoin(keys), strings.Join(tt.wantKeys, ","); got != want {
				t.Errorf("body keys = %s, want %s", got, want)
			}
			if string(r.Body["model"]) != fmt.Sprintf("%q", tt.req.Model) || string(r.Body["stream"]) != "false" {
				t.Errorf("model = %s, stream = %s", r.Body["model"], r.Body["stream"])
			}
			if tt.req.Temperature != nil && string(r.Body["temperature"]) != "0.25" {
				t.Errorf("temperature = %s", r.Body["temperature"])
			}
			if tt.req.MaxTokens != 0 && string(r.Body["max_tokens"]) != "64" {
				t.Errorf("max_tokens = %s", r.Body["max_tokens"])
			}
			if fmt.Sprint(r.Messages) != fmt.Sprint(tt.req.Messages) {
				t.Errorf("messages = %v, want %v", r.Messages, tt.req.Messages)
			}
		})
	}
}

// bare is r without its calls, which TestCompleteUsage checks.
func bare(r Response) Response {
	return Response{Content: r.Content, Usage: r.Usage, Model: r.Model, FinishReason: r.FinishReason}
}

func sortedJoin(s []string) string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return strings.Join(s, ",")
}

func TestCompleteAnswerShapes(t *testing.T) {
	tests := []struct {
		name, body  string
		want        Response
		wantErr     string // substring; empty: success
		wantPermErr bool
		wantTokens  int // of the failed request, when it reported usage
		wantUnknown bool
	}{
		{name: "null content (tool call) is empty text", body: `{"model":"m","choices":[{"message":{"role":"assistant","content":null}}]}`, want: Response{Model: "m"}},
		{name: "no usage, no model", body: `{"choices":[{"message":{"content":"x"}}]}`, want: Response{Content: "x", Model: "m1"}},
		{name: "empty choices", body: `{"model":"m","choices":[]}`, wantErr: "HTTP 200 OK: the answer has no choices"},
		{name: "error inside a 200", body: `{"error":{"message":"overloaded"}}`, wantErr: "the answer has no choices: overloaded"},
		// A 200 that came whole was billed, whatever it holds: counted with
		// the usage it has, else estimated from its size.
		{name: "not JSON", body: "<html>\n<b>proxy</b> page</html>", wantErr: "not a Chat Completions response (it is not valid JSON): <html> <b>proxy</b> page</html>",
			wantUnknown: true},
		{name: "content of another type: paid for, and named", body: `{"model":"m","choices":[{"message":{"content":42}}],"usage":{"prompt_tokens":6,"completion_tokens":2,"total_tokens":8}}`,
			wantErr: "not a Chat Completions response (choices.message.content is a number, not a text): ", wantTokens: 8},
		{name: "a list that is no content parts", body: `{"model":"m","choices":[{"message":{"content":[1,2]}}],"usage":{"prompt_tokens":6,"completion_tokens":2,"total_tokens":8}}`,
			wantErr: "(choices.message.content is a list, not a text)", wantTokens: 8},
		{name: "a model that is no text, no usage", body: `{"model":7,"choices":[{"message":{"content":"x"}}]}`,
			wantErr: "(model is a number, not a text)", wantUnknown: true},
		// OpenAI's format allows content as a list of parts: the text
		// parts are the answer.
		{name: "content parts", body: `{"model":"m","choices":[{"message":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]},{"type":"text","text":"part one "},{"type":"text","text":"and \u00e9"}]}}]}`,
			want: Response{Model: "m", Content: "part one and é"}},
		{name: "no choices, but usage: paid for", body: `{"model":"m","choices":[],"usage":{"prompt_tokens":6,"completion_tokens":2,"total_tokens":8}}`,
			wantErr: "the answer has no choices", wantTokens: 8},
		{name: "over 32 MiB", body: `{"model":"m","choices":[{"message":{"content":"` + strings.Repeat("x", maxBody) + `"}}]}`,
			wantErr: "HTTP 200 OK: the answer is over 32 MiB, more than teamrun reads of one: ask for a shorter one", wantUnknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, tt.body) })
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), tinyReq)
			if tt.wantErr == "" {
				if err != nil || !reflect.DeepEqual(bare(resp), tt.want) {
					t.Fatalf("got %+v, %v; want %+v", resp, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if !errors.Is(err, ErrPermanent) || errors.Is(err, ErrExhausted) {
				t.Errorf("a malformed answer must be permanent: %v", err)
			}
			if n := len(fs.requests()); n != 1 {
				t.Errorf("%d requests, want 1 (not retried)", n)
			}
			calls := CallsOf(err)
			tokens, unknown := 0, false
			for _, c := range calls {
				tokens += c.Usage.TotalTokens
				unknown = unknown || c.UsageUnknown
			}
			if tokens != tt.wantTokens || unknown != tt.wantUnknown {
				t.Errorf("calls %+v: tokens %d, unknown %v; want %d, %v", calls, tokens, unknown, tt.wantTokens, tt.wantUnknown)
			}
		})
	}
}

func TestCompleteRetries(t *testing.T) {
	now := time.Now()
	type step struct {
		code   int               // 0: success
		header map[string]string // response headers
	}
	tests := []struct {
		name        string
		steps       []step // one per request; the last repeats
		maxAttempts int
		wantReqs    int
		wantErr     string // empty: success
		wantKind    error  // ErrExhausted or ErrPermanent
		checkWaits  func(t *testing.T, waits []time.Duration)
	}{
		{
			name:  "429 with Retry-After seconds, then success",
			steps: []step{{code: 429, header: map[string]string{"Retry-After": "7"}}, {}}, maxAttempts: 3, wantReqs: 2,
			checkWaits: exactWaits(7 * time.Second),
		},
		{
			name:  "429 with retry-after-ms, then success",
			steps: []step{{code: 429, header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}}, {}}, maxAttempts: 3, wantReqs: 2,
			checkWaits: exactWaits(1500 * time.Millisecond),
		},
		{
			// The date parsing itself is TestRetryAfterOf's; here the wait is capped.
			name:  "503 with Retry-After date an hour ahead, then success",
			steps: []step{{code: 503, header: map[string]string{"Retry-After": now.Add(time.Hour).UTC().Format(http.TimeFormat)}}, {}}, maxAttempts: 3, wantReqs: 2,
			checkWaits: exactWaits(maxRetryAfter),
		},
		{
			// A server whose clock is behind sends a date already past: not
			// a wish for back-to-back retries, which would spend every
			// attempt at once; the backoff applies, as in OpenAI's clients.
			name: "503 with a Retry-After date already past, then Retry-After 0",
			steps: []step{{code: 503, header: map[string]string{"Retry-After": now.Add(-time.Minute).UTC().Format(http.TimeFormat)}},
				{code: 503, header: map[string]string{"Retry-After": "0"}}, {}}, maxAttempts: 3, wantReqs: 3,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 2 {
					t.Fatalf("waits = %v, want 2", waits)
				}
				inRange(t, waits[0], 250*time.Millisecond, 500*time.Millisecond)
				inRange(t, waits[1], 500*time.Millisecond, time.Second)
			},
		},
		{
			name:  "502 twice without Retry-After: jittered exponential backoff",
			steps: []step{{code: 502}, {code: 502}, {}}, maxAttempts: 3, wantReqs: 3,
			checkWaits: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 2 {
					t.Fatalf("waits = %v, want 2", waits)
				}
				inRange(t, waits[0], 250*time.Millisecond, 500*time.Millisecond)
				inRange(t, waits[1], 500*time.Millisecond, time.Second)
			},
		},
		{
			name:  "500 until the attempts are exhausted",
			steps: []step{{code: 500}}, maxAttempts: 3, wantReqs: 3,
			wantErr:  `model "m1" at URL/v1/chat/completions: HTTP 500 Internal Server Error: failure 3 (gave up after 3 attempts)`,
			wantKind: ErrExhausted,
		},
		{
			name:  "429 exhausted with one attempt",
			steps: []step{{code: 429}}, maxAttempts: 1, wantReqs: 1,
			wantErr:  `HTTP 429 Too Many Requests: failure 1 (gave up after 1 attempt)`,
			wantKind: ErrExhausted,
		},
		{
			name:  "400 is not retried",
			steps: []step{{code: 400}, {}}, maxAttempts: 3, wantReqs: 1,
			wantErr:  `model "m1" at URL/v1/chat/completions: HTTP 400 Bad Request: failure 1`,
			wantKind: ErrPermanent,
		},
		{
			name:  "401 is not retried",
			steps: []step{{code: 401}, {}}, maxAttempts: 3, wantReqs: 1,
			wantErr: `HTTP 401 Unauthorized: failure 1`, wantKind: ErrPermanent,
		},
		{
			name:  "408 and 409 are retried",
			steps: []step{{code: 408}, {code: 409}, {}}, maxAttempts: 3, wantReqs: 3,
		},
		{
			name:  "x-should-retry: false beats a 503",
			steps: []step{{code: 503, header: map[string]string{"X-Should-Retry": "false"}}, {}}, maxAttempts: 3, wantReqs: 1,
			wantErr: `HTTP 503 Service Unavailable: failure 1`, wantKind: ErrPermanent,
		},
		{
			name:  "x-should-retry: true beats a 400",
			steps: []step{{code: 400, header: map[string]string{"x-should-retry": "true", "Retry-After-Ms": "20"}}, {}}, maxAttempts: 3, wantReqs: 2,
			checkWaits: exactWaits(20 * time.Millisecond),
		},
		{
			name:  "x-should-retry: true exhausted",
			steps: []step{{code: 404, header: map[string]string{"X-Should-Retry": "true"}}}, maxAttempts: 2, wantReqs: 2,
			wantErr: `HTTP 404 Not Found: failure 2 (gave up after 2 attempts)`, wantKind: ErrExhausted,
		},
		{
			name:  "404 after a 500 is not retried further",
			steps: []step{{code: 500}, {code: 404}, {}}, maxAttempts: 5, wantReqs: 2,
			wantErr: `HTTP 404 Not Found: failure 2`, wantKind: ErrPermanent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) {
				s := tt.steps[min(i, len(tt.steps)-1)]
				for k, v := range s.header {
					w.Header().Set(k, v)
				}
				if s.code == 0 {
					okReply(w, "done")
					return
				}
				errReply(w, s.code, fmt.Sprintf("failure %d", i+1))
			})
			sl := &fakeSleep{}
			c := testClient(fs, sl)
			c.MaxAttempts = tt.maxAttempts
			resp, err := c.Complete(context.Background(), tinyReq)
			if n := len(fs.requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			if len(sl.waits) != tt.wantReqs-1 {
				t.Errorf("waits = %v, want %d", sl.waits, tt.wantReqs-1)
			}
			if tt.wantErr == "" {
				if err != nil || resp.Content != "done" {
					t.Fatalf("got %+v, %v; want success", resp, err)
				}
				if tt.checkWaits != nil {
					tt.checkWaits(t, sl.waits)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want %q", tt.wantErr)
			}
			if got := strings.ReplaceAll(err.Error(), fs.URL, "URL"); !strings.Contains(got, tt.wantErr) {
				t.Errorf("error = %s\nwant it to contain %s", got, tt.wantErr)
			}
			if !errors.Is(err, tt.wantKind) {
				t.Errorf("errors.Is(err, %v) = false", tt.wantKind)
			}
			var le *Error
			if !errors.As(err, &le) || le.Attempts != tt.wantReqs || le.Model != "m1" || le.StatusCode == 0 {
				t.Errorf("errors.As: %+v", le)
			}
		})
	}
}

// A 429 that says the quota is used up is sent once, whatever the headers
// invite, and says so plainly.
func TestCompleteQuotaNotRetried(t *testing.T) {
	tests := []struct{ name, body string }{
		{"openai code", `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
		{"type only", `{"error":{"message":"quota","type":"insufficient_quota","code":null}}`},
		{"billing limit", `{"error":{"message":"Billing hard limit has been reached","code":"billing_hard_limit_reached"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "1")
				w.Header().Set("X-Should-Retry", "true")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, tt.body)
			})
			sl := &fakeSleep{}
			c := testClient(fs, sl)
			c.MaxAttempts = 5
			_, err := c.Complete(context.Background(), tinyReq)
			if n := len(fs.requests()); n != 1 || len(sl.waits) != 0 {
				t.Fatalf("%d requests, waits %v; want exactly one request", n, sl.waits)
			}
			if !errors.Is(err, ErrQuota) || !errors.Is(err, ErrPermanent) || errors.Is(err, ErrExhausted) {
				t.Fatalf("err = %v; want ErrQuota and ErrPermanent", err)
			}
			for _, want := range []string{"HTTP 429 Too Many Requests", "quota or credit is used up", "not retried"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "gave up after") {
				t.Errorf("a quota error is no exhausted retry: %v", err)
			}
		})
	}
	// A plain rate limit (code rate_limit_exceeded) is still retried.
	fs := newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) {
		if i == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		okReply(w, "ok")
	})
	if _, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), tinyReq); err != nil || len(fs.requests()) != 2 {
		t.Fatalf("rate limit: %v after %d requests", err, len(fs.requests()))
	}
}

// An answer that did not finish is a failed attempt, named, and not
// retried by the client (the same request would end the same way).
func TestCompleteUnfinishedAnswers(t *testing.T) {
	answer := func(finish, extra string) string {
		return `{"model":"m","choices":[{"message":{"role":"assistant","content":"Hello from the"` + extra + `},"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`
	}
	tests := []struct {
		name, body string
		req        Request
		wantErr    string // empty: success
	}{
		{"length with max_tokens", answer("length", ""), Request{MaxTokens: 3}, "the answer was cut at max_tokens=3; raise max_tokens"},
		{"length at the server's limit", answer("length", ""), Request{}, "the answer was cut at the server's default max_tokens (none set); raise max_tokens"},
		{"length accepted", answer("length", ""), Request{MaxTokens: 3, AcceptTruncated: true}, ""},
		{"stop", answer("stop", ""), Request{MaxTokens: 3}, ""},
		{"content filter", answer("content_filter", ""), Request{}, "content filter stopped the answer"},
		{"refusal", answer("stop", `,"refusal":"I can't help with that."`), Request{}, "the model refused to answer: I can't help with that."},
		{"empty refusal is none", answer("stop", `,"refusal":null`), Request{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, tt.body) })
			req := tt.req
			req.Model, req.Messages = "m1", tinyReq.Messages
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
			if n := len(fs.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			if tt.wantErr == "" {
				if err != nil || resp.Content != "Hello from the" {
					t.Fatalf("got %+v, %v; want success", resp, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrPermanent) {
				t.Fatalf("err = %v; want a permanent error containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "Hello from the") {
				t.Errorf("the cut answer is no part of the error: %v", err)
			}
		})
	}
}

func exactWaits(want ...time.Duration) func(t *testing.T, waits []time.Duration) {
	return func(t *testing.T, waits []time.Duration) {
		if fmt.Sprint(waits) != fmt.Sprint(want) {
			t.Errorf("waits = %v, want %v", waits, want)
		}
	}
}

func inRange(t *testing.T, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Errorf("wait %v not in [%v, %v]", d, lo, hi)
	}
}

func TestBackoff(t *testing.T) {
	c := &Client{MaxBackoff: 3 * time.Second}
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, -1, 250 * time.Millisecond, 500 * time.Millisecond},
		{2, -1, 500 * time.Millisecond, time.Second},
		{3, -1, time.Second, 2 * time.Second},
		{4, -1, 1500 * time.Millisecond, 3 * time.Second}, // capped at MaxBackoff
		{60, -1, 1500 * time.Millisecond, 3 * time.Second},
		{1, 0, 0, 0},
		{2, 42 * time.Second, 42 * time.Second, 42 * time.Second}, // Retry-After beats MaxBackoff
		{2, time.Hour, maxRetryAfter, maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt %d retry-after %v", tt.attempt, tt.retryAfter), func(t *testing.T) {
			// Jitter is random: every draw must stay in range.
			for range 200 {
				inRange(t, c.backoff(tt.attempt, tt.retryAfter), tt.lo, tt.hi)
			}
		})
	}
	if d := (&Client{}).backoff(100, -1); d > DefaultMaxBackoff || d < DefaultMaxBackoff/2 {
		t.Errorf("default cap: %v", d)
	}
	// Jitter: 50 draws over a 250ms range are never all alike.
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[c.backoff(1, -1)] = true
	}
	if len(seen) < 2 {
		t.Errorf("backoff has no jitter: %v", seen)
	}
}

func TestRetryAfterOf(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"absent", nil, -1},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"zero", map[string]string{"Retry-After": "0"}, -1},
		{"zero milliseconds", map[string]string{"Retry-After-Ms": "0"}, -1},
		{"negative", map[string]string{"Retry-After": "-3"}, -1},
		{"huge", map[string]string{"Retry-After": "99999999999"}, maxRetryAfter},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, -1},
		{"date now", map[string]string{"Retry-After": now.Format(http.TimeFormat)}, -1},
		{"garbage", map[string]string{"Retry-After": "soon"}, -1},
		{"milliseconds", map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"Retry-After-Ms": "x", "Retry-After": "4"}, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfterOf(h, now); got != tt.want {
				t.Errorf("retryAfterOf = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompleteRequestTimeout(t *testing.T) {
	// The server never answers; each request ends at the client's timeout.
	fs := newFakeServer(t, func(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	sl := &fakeSleep{}
	c := testClient(fs, sl)
	c.Timeout = 50 * time.Millisecond
	c.MaxAttempts = 2
	_, err := c.Complete(context.Background(), tinyReq)
	if err == nil {
		t.Fatal("no error")
	}
	want := fmt.Sprintf(`model "m1" at %s/v1/chat/completions: no complete answer within the request timeout of 50ms (gave up after 2 attempts)`, fs.URL)
	if err.Error() != want {
		t.Errorf("error = %s\nwant    %s", err, want)
	}
	if !errors.Is(err, ErrExhausted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("want ErrExhausted and DeadlineExceeded: %v", err)
	}
	// The message says 2 attempts; on a loaded machine the server may not
	// even have read one before the client gave up, so only the top is checked.
	if n := len(fs.requests()); n > 2 {
		t.Errorf("%d requests, want at most 2", n)
	}
}

func TestCompleteTransportError(t *testing.T) {
	fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, "x") })
	base := fs.URL
	fs.Close() // nothing listens any more
	sl := &fakeSleep{}
	c := &Client{BaseURL: base + "/v1", MaxAttempts: 3, Sleep: sl.sleep}
	_, err := c.Complete(context.Background(), tinyReq)
	if err == nil {
		t.Fatal("no error")
	}
	var le *Error
	if !errors.As(err, &le) || !le.Retryable || le.Attempts != 3 || le.StatusCode != 0 {
		t.Fatalf("err = %#v", err)
	}
	if !errors.Is(err, ErrExhausted) || len(sl.waits) != 2 {
		t.Errorf("want 3 attempts with 2 waits: %v, %v", err, sl.waits)
	}
	if strings.Count(err.Error(), base) != 1 || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error should name the URL once and say why: %s", err)
	}
}

func TestCompleteCancel(t *testing.T) {
	t.Run("during the wait between attempts", func(t *testing.T) {
		fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "3600")
			errReply(w, 429, "slow down")
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := testClient(fs, nil)
		// This Sleep returns only when ctx ends: a client that ignored ctx would hang.
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}
		_, err := c.Complete(ctx, tinyReq)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if errors.Is(err, ErrExhausted) || errors.Is(err, ErrPermanent) {
			t.Errorf("a cancel is neither exhausted nor permanent: %v", err)
		}
		if !strings.Contains(err.Error(), "after 1 attempt; last: HTTP 429 Too Many Requests: slow down") {
			t.Errorf("err = %v", err)
		}
		if n := len(fs.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("during a request", func(t *testing.T) {
		arrived := make(chan struct{})
		fs := newFakeServer(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
			close(arrived)
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() { <-arrived; cancel(errors.New("user pressed Ctrl-C")) }()
		_, err := testClient(fs, &fakeSleep{}).Complete(ctx, tinyReq)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "user pressed Ctrl-C") {
			t.Fatalf("err = %v, want context.Canceled with its cause", err)
		}
		if n := len(fs.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, "x") })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := testClient(fs, &fakeSleep{}).Complete(ctx, tinyReq)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the default sleep ends with ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := (&Client{}).sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
			t.Fatalf("sleep = %v", err)
		}
	})
}

func TestCompleteNeverLeaksKey(t *testing.T) {
	// The key's tail is checked alone, to catch a partial leak; it is no
	// hex number, so a pointer that %#v prints cannot contain it.
	const key, tail = "sk-very-secret-qzxw", "qzxw"
	// The server echoes the Authorization header into every message it sends.
	echo := func(code int) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, r *http.Request) {
			if code == 200 {
				fmt.Fprintf(w, "not json, your header was %s", r.Header.Get("Authorization"))
				return
			}
			errReply(w, code, "Incorrect API key provided: "+r.Header.Get("Authorization"))
		}
	}
	tests := []struct {
		name string
		code int
	}{{"401 permanent", 401}, {"500 exhausted", 500}, {"429 exhausted", 429}, {"bad 200 body", 200}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, echo(tt.code))
			c := &Client{BaseURL: strings.Replace(fs.URL, "://", "://user:"+key+"@", 1) + "/v1?api-key=" + key, APIKey: key, MaxAttempts: 2, Sleep: (&fakeSleep{}).sleep}
			_, err := c.Complete(context.Background(), tinyReq)
			if err == nil {
				t.Fatal("no error")
			}
			if r := fs.requests(); len(r) == 0 || r[0].Auth != "Bearer "+key {
				t.Fatalf("the key was not sent: %+v", r)
			}
			var le *Error
			errors.As(err, &le)
			for _, s := range []string{err.Error(), fmt.Sprintf("%+v", le), fmt.Sprintf("%#v", le)} {
				if strings.Contains(s, key) || strings.Contains(s, tail) {
					t.Errorf("the key leaked: %s", s)
				}
			}
			if !strings.Contains(err.Error(), "[REDACTED]") && tt.code != 0 {
				t.Errorf("the echoed key should show as [REDACTED]: %s", err)
			}
		})
	}
	t.Run("transport error with the key in the URL", func(t *testing.T) {
		fs := newFakeServer(t, echo(200))
		base := strings.Replace(fs.URL, "://", "://user:"+key+"@", 1) + "/v1?api-key=" + key
		fs.Close()
		c := &Client{BaseURL: base, APIKey: key, MaxAttempts: 1}
		_, err := c.Complete(context.Background(), tinyReq)
		if err == nil {
			t.Fatal("no error")
		}
		// Not even the wrapped causes may carry it.
		for e := error(err); e != nil; {
			if strings.Contains(e.Error(), key) {
				t.Errorf("the key leaked: %s", e)
			}
			switch u := e.(type) {
			case interface{ Unwrap() []error }:
				e = u.Unwrap()[len(u.Unwrap())-1]
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			default:
				e = nil
			}
		}
	})
	t.Run("cancelled after a failure", func(t *testing.T) {
		fs := newFakeServer(t, echo(500))
		ctx, cancel := context.WithCancel(context.Background())
		c := &Client{BaseURL: fs.URL, APIKey: key, Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }}
		_, err := c.Complete(ctx, tinyReq)
		if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("err = %v", err)
		}
	})
}

// A key the server echoes is removed before its message is cut to size:
// a 159-character key that straddles the cut leaves no fragment behind, and
// a key echoed partly loses every long enough piece of it.
func TestCompleteRedactsBeforeCutting(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Ab3dE5gH7jK9mN1pQ3sT5vX7zB9", 6)[:151]
	if len(key) != 159 {
		t.Fatalf("key of %d characters", len(key))
	}
	type test struct {
		name, body string
		marked     bool // the [REDACTED] mark falls before the cut
	}
	var tests []test
	for _, at := range []int{0, 41, 100, 150, 190, 199, 200, 201} {
		pad := strings.Repeat("x", at)
		tests = append(tests,
			test{fmt.Sprintf("json message, key at %d", at), fmt.Sprintf(`{"error":{"message":"%sIncorrect API key provided: %s. See the docs."}}`, pad, key), at+28+10 <= 200},
			test{fmt.Sprintf("plain body, key at %d", at), pad + key + " tail", at+10 <= 200},
		)
	}
	tests = append(tests,
		test{"partly echoed, masked in the middle", `{"error":{"message":"Incorrect API key provided: ` + key[:20] + `**********` + key[140:] + `"}}`, true},
		test{"cut by the server itself", `{"error":{"message":"key ` + key[:120] + `"}}`, true},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, tt.body)
			})
			c := testClient(fs, &fakeSleep{})
			c.APIKey = key
			_, err := c.Complete(context.Background(), tinyReq)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for i := 0; i+minFragment <= len(key); i++ {
				if strings.Contains(msg, key[i:i+minFragment]) {
					t.Fatalf("a fragment of the key (%q at %d) leaked: %s", key[i:i+minFragment], i, msg)
				}
			}
			if tt.marked && !strings.Contains(msg, "[REDACTED]") {
				t.Errorf("no [REDACTED] where the key was: %s", msg)
			}
		})
	}
}

func TestRedactorCleanAll(t *testing.T) {
	tests := []struct{ key, in, want string }{
		{"sk-abcdefghijklmnop", "key sk-abcdefghijklmnop here", "key [REDACTED] here"},
		{"sk-abcdefghijklmnop", "key sk-abcdefg…", "key [REDACTED]…"},
		{"sk-abcdefghijklmnop", "key sk-proj-****mnop here", "key sk-proj-****mnop here"}, // short pieces stay
		{"sk-abcdefghijklmnop", "ijklmnop and hijklmno", "[REDACTED] and [REDACTED]"},
		{"sk-abcdefghijklmnop", "no secret at all", "no secret at all"},
		{"short", "short and shor", "[REDACTED] and shor"},
		{"", "anything", "anything"},
	}
	for _, tt := range tests {
		if got := redactor(tt.key).cleanAll(tt.in); got != tt.want {
			t.Errorf("cleanAll(%q) with key %q = %q, want %q", tt.in, tt.key, got, tt.want)
		}
	}
}

func TestCompleteBadInput(t *testing.T) {
	tests := []struct {
		name, base, model, want string
	}{
		{"no base URL", "", "m", `model "m" at : base URL "" is no URL: write one such as http://127.0.0.1:11434/v1`},
		{"not http", "ftp://host/v1", "m", `base URL "ftp://host/v1" is not an http or https URL`},
		{"no host", "http://", "m", `base URL "http://" names no host: write one such as http://127.0.0.1:11434/v1`},
		{"three slashes", "http:///v1", "m", `base URL "http:///v1" names no host: it has three slashes after http:, where a URL has two before its host`},
		{"three slashes and a user part", "http:///u:pw@host/v1", "m", `base URL "http:///host/v1" names no host: it has three slashes after http:`},
		{"credentials hidden", "gopher://u:pw@host/x", "m", `base URL "gopher://host/x"`},
		{"no model", "http://127.0.0.1:1/v1", "", `model "" at http://127.0.0.1:1/v1/chat/completions: no model given`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{BaseURL: tt.base, Sleep: (&fakeSleep{}).sleep}
			_, err := c.Complete(context.Background(), Request{Model: tt.model})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("credentials leaked: %v", err)
			}
			if !errors.Is(err, ErrPermanent) {
				t.Errorf("want ErrPermanent: %v", err)
			}
		})
	}
}

func TestServerMessage(t *testing.T) {
	long := strings.Repeat("é", 150)
	tests := []struct{ body, want string }{
		{`{"error":{"message":"model \"x\" not found","type":"api_error"}}`, `model "x" not found`},
		{`{"error":"plain string"}`, "plain string"},
		{`{"message":"top-level message"}`, "top-level message"},
		{`{"detail":"fastapi detail"}`, "fastapi detail"},
		{`{"detail":[{"loc":["body"],"msg":"bad"}]}`, `[{"loc":["body"],"msg":"bad"}]`},
		{"<html>\n  Bad   Gateway\n</html>", "<html> Bad Gateway </html>"},
		{"", "(empty body)"},
		{"\xff\xfe oops", "? oops"},
		{long, strings.Repeat("é", 100) + "…"},
		// A server's escape sequences are shown, not obeyed: the message
		// is printed on terminals.
		{`{"error":{"message":"bad \u001b]0;PWNED\u0007\u001b[2J request \u009b31m"}}`, `bad \x1b]0;PWNED\x07\x1b[2J request \u009b31m`},
		{"raw \x1b]52;c;cGF5bG9hZA==\x07 body", `raw \x1b]52;c;cGF5bG9hZA==\x07 body`},
	}
	for _, tt := range tests {
		if got, _ := serverMessage([]byte(tt.body), ""); got != tt.want {
			t.Errorf("serverMessage(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// A ctx that ends reads as words, not as Go's "context deadline exceeded",
// and still matches the context sentinel.
func TestCanceledWording(t *testing.T) {
	tests := []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		target error
		want   string
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}, context.DeadlineExceeded, `model "m" at http://x/v1/chat/completions: stopped waiting for the answer: the time allowed ran out`},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled, `model "m" at http://x/v1/chat/completions: stopped waiting for the answer: the run was stopped`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			err := canceled(ctx, "m", "http://x/v1/chat/completions", nil, nil)
			if err.Error() != tt.want || !errors.Is(err, tt.target) {
				t.Errorf("got %q (is %v: %v), want %q", err, tt.target, errors.Is(err, tt.target), tt.want)
			}
			if strings.Contains(err.Error(), "context") {
				t.Errorf("Go's wording leaked: %v", err)
			}
		})
	}
}

// brokenBody answers 200 with a Content-Length of the whole answer, sends
// its first sent bytes and ends the connection: reset (an RST, as a
// crashing server or proxy does) or closed.
func brokenBody(t testing.TB, w http.ResponseWriter, answer string, sent int, reset bool) {
	c, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer[:sent])
	buf.Flush()
	if tc, ok := c.(*net.TCPConn); ok && reset {
		tc.SetLinger(0) // close sends an RST
	}
	c.Close()
}

// TestCompleteBodyBrokeOff: a 200 whose body breaks off was perhaps
// billed, as a stream that breaks off is: each is recorded as cut off,
// with what came of it for an estimate, retried, and said in teamrun's
// words with the status that came.
func TestCompleteBodyBrokeOff(t *testing.T) {
	answer := `{"model":"served","choices":[{"message":{"content":"` + strings.Repeat("x", 400) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":300,"total_tokens":311}}`
	tests := []struct {
		name  string
		reset bool
		want  string
	}{
		{"reset", true, "HTTP 200 OK: the answer broke off after 200 bytes: the server (or a proxy on the way) reset the connection (gave up after 3 attempts)"},
		{"closed", false, "HTTP 200 OK: the answer broke off after 200 bytes: the server (or a proxy on the way) closed the connection before the end (gave up after 3 attempts)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { brokenBody(t, w, answer, 200, tt.reset) })
			sl := &fakeSleep{}
			_, err := testClient(fs, sl).Complete(context.Background(), tinyReq)
			var le *Error
			if !errors.As(err, &le) || le.StatusCode != 200 || !le.Retryable || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "read tcp") || strings.Contains(err.Error(), "by peer") || strings.Contains(err.Error(), "unexpected EOF") {
				t.Errorf("Go's transport text in %q", err)
			}
			calls := CallsOf(err)
			want := Call{Model: "m1", Status: 200, CutOff: true, UsageUnknown: true, RequestBytes: tinyReqBytes, AnswerBytes: 200}
			if len(calls) != 3 {
				t.Fatalf("calls %+v, want 3 cut off", calls)
			}
			for _, c := range calls {
				c.Duration = 0
				if c != want {
					t.Errorf("call %+v, want %+v", c, want)
				}
			}
		})
	}
}

// TestCompleteOnRetry: each wait before a request is sent again is told,
// with the failure that caused it and how long it is, before it is
// waited; a failure that is not retried tells of none.
func TestCompleteOnRetry(t *testing.T) {
	tests := []struct {
		name  string
		reply func(i int, w http.ResponseWriter)
		want  []Retry
	}{
		{"429 with Retry-After, then an answer", func(i int, w http.ResponseWriter) {
			if i < 2 {
				w.Header().Set("Retry-After", "3")
				errReply(w, 429, "slow down")
				return
			}
			okReply(w, "ok")
		}, []Retry{
			{Attempt: 1, MaxAttempts: 3, Why: "HTTP 429 Too Many Requests: slow down", Wait: 3 * time.Second},
			{Attempt: 2, MaxAttempts: 3, Why: "HTTP 429 Too Many Requests: slow down", Wait: 3 * time.Second},
		}},
		{"retries run out: the last failure waits for nothing", func(_ int, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			errReply(w, 503, "busy")
		}, []Retry{
			{Attempt: 1, MaxAttempts: 3, Why: "HTTP 503 Service Unavailable: busy", Wait: time.Second},
			{Attempt: 2, MaxAttempts: 3, Why: "HTTP 503 Service Unavailable: busy", Wait: time.Second},
		}},
		{"not retried", func(_ int, w http.ResponseWriter) { errReply(w, 400, "bad request") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) { tt.reply(i, w) })
			sl := &fakeSleep{}
			c := testClient(fs, sl)
			var got []Retry
			c.OnRetry = func(r Retry) {
				if len(sl.waits) != len(got) {
					t.Errorf("told of retry %d after its wait", r.Attempt)
				}
				got = append(got, r)
			}
			c.Complete(context.Background(), tinyReq)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("told %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCompleteUnmendableTransport checks that failures sending again cannot
// mend (a host that does not exist, a certificate not trusted, TLS to a
// plain server) are said in a user's words, with what to check, and not
// retried.
func TestCompleteUnmendableTransport(t *testing.T) {
	plain := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, "x") })
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { okReply(w, "x") }))
	t.Cleanup(tlsSrv.Close)
	noHost := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nonexistent.invalid", IsNotFound: true}}
	}}}
	tests := []struct {
		name, base string
		client     *http.Client
		want       string
	}{
		{name: "no such host", base: "http://nonexistent.invalid/v1", client: noHost,
			want: `there is no host "nonexistent.invalid" (DNS: no such host): check the host name in base_url`},
		{name: "a certificate of an unknown authority", base: tlsSrv.URL + "/v1",
			want: "the server's TLS certificate is not accepted: it is signed by an authority this machine does not trust (self-signed, or a private CA): check that base_url names the host the certificate is for; a gateway with a private CA needs SSL_CERT_FILE"},
		{name: "a certificate for another host", base: strings.Replace(tlsSrv.URL, "127.0.0.1", "localhost", 1) + "/v1", client: tlsSrv.Client(),
			want: `the server's TLS certificate is not accepted: it is not for the host "localhost"`},
		{name: "https to a plain server", base: strings.Replace(plain.URL, "http://", "https://", 1) + "/v1",
			want: "the server does not speak TLS: is the URL https:// for a plain http:// server? (check base_url; not retried)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sl := &fakeSleep{}
			c := &Client{BaseURL: tt.base, APIKey: "sk-secretkey123456", HTTP: tt.client, MaxAttempts: 3, Sleep: sl.sleep}
			_, err := c.Complete(context.Background(), tinyReq)
			var le *Error
			if !errors.As(err, &le) || le.Retryable || le.Attempts != 1 || len(sl.waits) != 0 || !errors.Is(err, ErrPermanent) {
				t.Fatalf("err = %v (%#v), waits %v; want one attempt, permanent", err, le, sl.waits)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "x509") || strings.Contains(msg, "lookup") || strings.Contains(msg, "sk-secret") {
				t.Errorf("error %q, want it to say %q, in no Go words and without the key", msg, tt.want)
			}
		})
	}
}
