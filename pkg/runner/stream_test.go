package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
)

func sseReply(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

func sseDelta(s string) string {
	return fmt.Sprintf(`{"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, s)
}

const streamTeam = `
llm: {model: m, base_url: BASE, stream: true, price: {input: 1, output: 1}}
agents:
  w: {role: Writer}
tasks:
  one: {description: One, agent: w, max_retries: 1, retry_delay: 1ms}
`

// TestStreamedTask checks that stream: true streams, that a stream that
// breaks off is a failed request (retried by the client) whose text is never the result nor in
// the checkpoint, and that its retry's whole answer is.
func TestStreamedTask(t *testing.T) {
	f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
		if n == 1 {
			sseReply(w, sseDelta("PARTIAL-"), sseDelta("ANSWER"))
			return
		}
		sseReply(w, sseDelta("Whole "), sseDelta("answer."),
			`{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, "[DONE]")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, streamTeam)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out)
	}
	if f.count() != 2 {
		t.Fatalf("%d requests, want 2", f.count())
	}
	one, _ := p.session(t).Task("one")
	if one.Result != "Whole answer." || one.Usage == nil || one.Usage.TotalTokens != 7 {
		t.Errorf("record %+v (usage %+v)", one, one.Usage)
	}
	// The client retried the broken stream itself: nothing of it shows.
	if strings.Contains(out, "PARTIAL") || strings.Contains(out, `"event":"task_delta"`) {
		t.Errorf("the partial text, or task_delta events without --stream-json, in the output:\n%s", out)
	}
	data, err := p.sessionFileBytes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "PARTIAL") {
		t.Errorf("the partial stream reached the checkpoint")
	}
}

func TestStreamJSONDeltas(t *testing.T) {
	f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
		sseReply(w, sseDelta("Hel"), sseDelta("lo"), `{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, streamTeam)
	p.streamJSON = true
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out)
	}
	for _, want := range []string{`"event":"task_delta","session":"s1","task":"one","agent":"w","delta":"Hel"`, `"delta":"lo"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

// TestLivePreview checks that the live block shows a streaming task's
// newest line under it, cut to the width, and forgets it when the task ends.
func TestLivePreview(t *testing.T) {
	screen := &iostreams.Screen{Width: 40}
	ios := iostreams.Test(nil, screen, screen)
	ios.SetTerminal(40, true)
	r := newLiveReporter(ios)
	defer r.Close()
	r.Observe(Event{Type: RunStarted, Tasks: 1})
	r.Observe(Event{Type: TaskStarted, Task: "draft", Attempt: 1})
	r.Observe(Event{Type: TaskDelta, Task: "draft", Delta: "first line\nsecond "})
	r.Observe(Event{Type: TaskDelta, Task: "draft", Delta: "line, which is long enough to be cut at the width"})
	r.mu.Lock()
	block := r.block(time.Now(), 40)
	r.mu.Unlock()
	if len(block) != 3 || !strings.HasSuffix(block[2], "cut at the width") || !strings.HasPrefix(block[2], "    …") || len([]rune(block[2])) >= 40 {
		t.Fatalf("block %q: want the newest text, cut at its start, under the task", block)
	}
	// A dropped request's text goes; the retry's starts afresh.
	r.Observe(Event{Type: TaskStreamDiscarded, Task: "draft", Message: "the stream broke off"})
	r.Observe(Event{Type: TaskDelta, Task: "draft", Delta: "retry"})
	r.mu.Lock()
	if got := r.preview["draft"]; got != "retry" {
		t.Errorf("preview after a discard %q, want the retry's text alone", got)
	}
	r.mu.Unlock()
	r.Observe(Event{Type: TaskCompleted, Task: "draft"})
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.preview) != 0 {
		t.Errorf("preview kept after the task ended: %v", r.preview)
	}
}

// TestStreamAuto checks stream's three settings: auto streams only when
// the run shows live progress; true and false hold either way.
func TestStreamAuto(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		stream *bool
		live   bool
		want   bool
	}{
		{nil, true, true}, {nil, false, false},
		{&yes, false, true}, {&no, true, false},
	}
	for _, tt := range tests {
		var asked []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Stream json.RawMessage `json:"stream"`
			}
			data, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(data, &body)
			asked = append(asked, string(body.Stream))
			reply(w, "ok") // a server may answer a stream request in one piece
		}))
		l := &LLMs{Live: tt.live, Getenv: func(string) string { return "" }}
		job := &Job{Task: &spec.Task{Name: "t"}, Agent: &spec.Agent{Name: "a", Kind: spec.LLMAgent,
			LLM: &spec.LLM{Model: "m", BaseURL: srv.URL + "/v1", Stream: tt.stream}}, Attempt: 1}
		res, err := l.Execute(context.Background(), job)
		srv.Close()
		if err != nil || res.Raw != "ok" {
			t.Fatalf("%+v: %q, %v", tt, res.Raw, err)
		}
		if len(asked) != 1 || (asked[0] == "true") != tt.want {
			t.Errorf("stream %v, live %v: asked stream=%v, want %v", tt.stream, tt.live, asked, tt.want)
		}
	}
}

// An answer that holds the agent's key (a proxy echoing the request, say)
// is redacted before it is recorded, shown or streamed, a key streamed in
// two pieces too.
func TestAnswerKeyRedacted(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream ", stream), func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
				if !stream {
					reply(w, "your key is "+key+" ok")
					return
				}
				sseReply(w, sseDelta("your key is "+key[:10]), sseDelta(key[10:]+" ok"),
					`{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, fmt.Sprintf(`
llm: {model: m, base_url: BASE, stream: %t, api_key_env: MY_KEY}
agents:
  w: {role: Writer}
tasks:
  one: {description: One, agent: w}
`, stream))
			p.env["MY_KEY"] = key
			p.streamJSON = true
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Succeeded {
				t.Fatalf("run: %v %+v\n%s", err, sum, out)
			}
			if one, _ := p.session(t).Task("one"); one.Result != "your key is [REDACTED] ok" {
				t.Errorf("result %q", one.Result)
			}
			if strings.Contains(out, key[:8]) || strings.Contains(out, key[10:]) {
				t.Errorf("the output shows the key:\n%s", out)
			}
			for _, path := range filesUnder(t, filepath.Join(p.home, "sessions")) {
				if b, err := os.ReadFile(path); err != nil || strings.Contains(string(b), key[:8]) {
					t.Errorf("%s holds the key (%v)", path, err)
				}
			}
		})
	}
}

// A streamed request that fails after some of its text was shown, and is
// sent again, is followed by a task_stream_discarded event (and, with -v,
// a line that says the text above was dropped): the deltas after the last
// one rebuild the recorded result, not the dropped text run into it.
func TestStreamDiscarded(t *testing.T) {
	f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
		switch n {
		case 1: // breaks off
			sseReply(w, sseDelta("FIRST line one\n"), sseDelta("FIRST"))
		case 2: // an error mid-stream
			sseReply(w, sseDelta("SECOND"), `{"error":{"message":"boom mid-stream"}}`)
		default:
			sseReply(w, sseDelta("good answer\n"), sseDelta("line two"),
				`{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`{"model":"m","choices":[],"usage":{"prompt_tokens":13,"completion_tokens":8,"total_tokens":21}}`, "[DONE]")
		}
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, streamTeam)
	p.streamJSON, p.verbose = true, true
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out)
	}
	var deltas strings.Builder
	var discards, lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch ev.Type {
		case TaskDelta:
			deltas.WriteString(ev.Delta)
		case TaskStreamDiscarded:
			deltas.Reset()
			discards = append(discards, ev.Message)
		case TaskLine:
			lines = append(lines, ev.Message)
		}
	}
	one, _ := p.session(t).Task("one")
	if deltas.String() != one.Result || one.Result != "good answer\nline two" {
		t.Errorf("the deltas after the last discard %q, the recorded result %q", deltas.String(), one.Result)
	}
	if len(discards) != 2 || !strings.Contains(discards[1], "boom mid-stream") {
		t.Errorf("discards %q, want one per dropped request with why", discards)
	}
	want := []string{"FIRST line one", "FIRST", "[teamrun: the answer above was dropped (", "SECOND", "[teamrun: the answer above was dropped (the server reported an error in the stream: boom mid-stream); the request is sent again]", "good answer", "line two"}
	if len(lines) != len(want) {
		t.Fatalf("-v lines %q, want %q", lines, want)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("-v line %d %q, want it to start %q", i, lines[i], want[i])
		}
	}
}

// A server that cuts a character between two stream events (each half
// alone is not UTF-8) streams and records it whole; one whose answer ends
// inside a character records U+FFFD in its place, and says so once.
func TestStreamSplitCharacter(t *testing.T) {
	raw := func(s string) string { // s as it is, bytes that are not UTF-8 included
		return `{"model":"m","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}`
	}
	const (
		stop  = `{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
		usage = `{"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	)
	tests := []struct {
		name   string
		events []string
		want   string
		warn   string // in the one warning; "": none
	}{
		{"é cut in two", []string{raw("caf\xc3"), raw("\xa9 au lait"), stop, usage, "[DONE]"}, "café au lait", ""},
		{"the answer ends inside a character", []string{raw("caf\xc3"), stop, usage, "[DONE]"}, "caf\uFFFD", "ended the answer inside a character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) { sseReply(w, tt.events...) }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, streamTeam)
			p.streamJSON, p.verbose = true, true
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Succeeded {
				t.Fatalf("run: %v %+v\n%s", err, sum, out)
			}
			if one, _ := p.session(t).Task("one"); one.Result != tt.want {
				t.Errorf("recorded %q, want %q", one.Result, tt.want)
			}
			var deltas strings.Builder
			var lines, warnings []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var ev Event
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				switch ev.Type {
				case TaskDelta:
					deltas.WriteString(ev.Delta)
				case TaskLine:
					lines = append(lines, ev.Message)
				case RunWarning:
					warnings = append(warnings, ev.Message)
				}
			}
			if deltas.String() != tt.want {
				t.Errorf("--stream-json deltas %q, want %q", deltas.String(), tt.want)
			}
			if strings.Join(lines, "\n") != tt.want {
				t.Errorf("-v lines %q, want %q", lines, tt.want)
			}
			switch {
			case tt.warn == "" && len(warnings) > 0:
				t.Errorf("warnings %q, want none", warnings)
			case tt.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warn) || !strings.Contains(warnings[0], "model m")):
				t.Errorf("warnings %q, want one saying %q", warnings, tt.warn)
			}
		})
	}
}
