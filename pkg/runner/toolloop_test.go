package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
)

// toolRequest is what the fake server reads of a request with tools.
type toolRequest struct {
	Tools []struct {
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// toolLLM is an OpenAI-compatible server whose answer n (from 1) is
// script(n, request): a JSON message.
type toolLLM struct {
	mu     sync.Mutex
	reqs   []toolRequest
	script func(n int, req toolRequest) string
	// fail, when set, makes answer n an HTTP 400 (permanent: no retry by
	// the client) instead.
	fail func(n int) bool
	// prompt is the prompt tokens every answer reports; 0: 10.
	prompt int
}

func (f *toolLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req toolRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if f.fail != nil && f.fail(n) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"bad request"}}`)
		return
	}
	prompt := f.prompt
	if prompt == 0 {
		prompt = 10
	}
	fmt.Fprintf(w, `{"model":"m","choices":[{"message":%s,"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":2,"total_tokens":%d}}`, f.script(n, req), prompt, prompt+2)
}

func (f *toolLLM) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *toolLLM) request(i int) toolRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs[i]
}

// calls is an assistant message of only tool calls (content null), each
// given as id, name, arguments.
func calls(c ...string) string {
	var parts []string
	for i := 0; i+2 < len(c); i += 3 {
		args, _ := json.Marshal(c[i+2])
		parts = append(parts, fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, c[i], c[i+1], args))
	}
	return `{"role":"assistant","content":null,"tool_calls":[` + strings.Join(parts, ",") + `]}`
}

func answer(s string) string { return fmt.Sprintf(`{"role":"assistant","content":%q}`, s) }

// toolTeam: tools that append to LOG (a file), so tests see what ran and
// in which order.
const toolTeam = `
tools:
  note:
    description: Append a note
    parameters: {type: object, properties: {text: {type: string}}, required: [text]}
    shell: 'printf "%s\n" "$TEAMRUN_ARG_TEXT" >> LOG; echo "noted $TEAMRUN_ARG_TEXT for $TEAMRUN_TASK"'
    idempotent: true
  broken:
    shell: 'echo "it broke" >&2; exit 4'
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: BASE}, tools: [note, broken], max_turns: 3}
tasks:
  work: {description: Take notes, agent: clerk}
`

func toolProject(t *testing.T, f *toolLLM, yaml string) (*project, string) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log")
	return newProject(t, srv.URL, strings.ReplaceAll(yaml, "LOG", logPath)), logPath
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolLoop(t *testing.T) {
	tests := []struct {
		name    string
		script  func(n int, req toolRequest) string
		outcome Outcome
		result  string
		log     string
		// toolMsgs are the tool messages of the last request, in order.
		toolMsgs []string
		requests int
		errHas   string
	}{
		{"several calls in one turn, in order", func(n int, _ toolRequest) string {
			if n == 1 {
				return calls("c1", "note", `{"text":"first"}`, "c2", "note", `{"text":"second"}`)
			}
			return answer("two notes taken")
		}, Succeeded, "two notes taken", "first\nsecond\n",
			[]string{"c1:noted first for work\n", "c2:noted second for work\n"}, 2, ""},
		{"arguments that fail the schema go back as an error", func(n int, _ toolRequest) string {
			if n == 1 {
				return calls("c1", "note", `{"txt":"x"}`)
			}
			return answer("sorry")
		}, Succeeded, "sorry", "", []string{"c1:error: the arguments of note do not match its parameters"}, 2, ""},
		{"a tool that exits non-zero is an error result", func(n int, _ toolRequest) string {
			if n == 1 {
				return calls("c1", "broken", `{}`)
			}
			return answer("it failed")
		}, Succeeded, "it failed", "", []string{"c1:error: exit status 4: it broke"}, 2, ""},
		{"an unknown tool from the model", func(n int, _ toolRequest) string {
			if n == 1 {
				return calls("c1", "erase_disk", `{}`)
			}
			return answer("ok")
		}, Succeeded, "ok", "", []string{`c1:error: there is no tool "erase_disk"; the tools are: note, broken`}, 2, ""},
		{"max_turns reached", func(n int, _ toolRequest) string {
			return calls(fmt.Sprintf("c%d", n), "note", fmt.Sprintf(`{"text":"n%d"}`, n))
		}, Failed, "", "n1\nn2\n", nil, 3, "max_turns (3) reached: turn 3 still called note instead of answering"},
		{"calls without ids get their own", func(n int, _ toolRequest) string {
			if n == 1 {
				return calls("", "note", `{"text":"a"}`, "", "note", `{"text":"b"}`)
			}
			return answer("done")
		}, Succeeded, "done", "a\nb\n", []string{"call_1_1:noted a for work\n", "call_1_2:noted b for work\n"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &toolLLM{script: tc.script}
			p, logPath := toolProject(t, f, toolTeam)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != tc.outcome {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			if f.count() != tc.requests {
				t.Errorf("%d model requests, want %d", f.count(), tc.requests)
			}
			if got := readLog(t, logPath); got != tc.log {
				t.Errorf("tools ran %q, want %q", got, tc.log)
			}
			first := f.request(0)
			if len(first.Tools) != 2 || first.Tools[0].Function.Name != "note" || first.Tools[0].Function.Parameters["required"] == nil {
				t.Errorf("tools offered: %+v", first.Tools)
			}
			tr, _ := p.session(t).Task("work")
			if tr.Result != tc.result {
				t.Errorf("result %q, want %q", tr.Result, tc.result)
			}
			// The turns record their requests as they go, the attempt's
			// end all of them: each counts once.
			if tr.Usage == nil || tr.Usage.TotalTokens != 12*tc.requests || len(tr.Usage.Calls) != tc.requests {
				t.Errorf("the task's usage %+v, want %d tokens in %d calls", tr.Usage, 12*tc.requests, tc.requests)
			}
			if tc.errHas != "" && !strings.Contains(tr.Error, tc.errHas) {
				t.Errorf("error %q lacks %q", tr.Error, tc.errHas)
			}
			if tc.toolMsgs == nil {
				return
			}
			last := f.request(f.count() - 1)
			var got []string
			for i, m := range last.Messages {
				if m.Role == "tool" {
					got = append(got, m.ToolCallID+":"+m.Content)
				}
				if m.Role == "assistant" && len(m.ToolCalls) == 0 {
					t.Errorf("message %d: an assistant turn without its tool calls", i)
				}
			}
			if len(got) != len(tc.toolMsgs) {
				t.Fatalf("tool messages %q, want %q", got, tc.toolMsgs)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.toolMsgs[i]) {
					t.Errorf("tool message %d: %q, want it to start %q", i, got[i], tc.toolMsgs[i])
				}
			}
			if sum.Tokens != 12*tc.requests {
				t.Errorf("tokens %d, want every turn's: %d", sum.Tokens, 12*tc.requests)
			}
		})
	}
}

// The journal holds the turn, each start and each result, in order.
func TestToolLoopJournal(t *testing.T) {
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		if n == 1 {
			return calls("c1", "note", `{"text":"x"}`)
		}
		return answer("noted")
	}}
	p, _ := toolProject(t, f, toolTeam)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	// --json shows each step, in the journal's order.
	var kinds []string
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Event string `json:"event"`
			Tool  *struct {
				Name string `json:"name"`
			} `json:"tool"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && strings.HasPrefix(ev.Event, "tool_") && ev.Tool != nil {
			kinds = append(kinds, ev.Event+":"+ev.Tool.Name)
		}
	}
	if got := strings.Join(kinds, " "); got != "tool_turn: tool_start:note tool_result:note" {
		t.Errorf("tool events %q", got)
	}
	lg := p.session(t).ToolLogs["work"]
	if lg == nil || len(lg.Turns) != 1 || lg.Ended != "completed" {
		t.Fatalf("tool log %+v", lg)
	}
	c := lg.Turns[0].Calls[0]
	if c.ID != "c1" || c.Tool != "note" || c.Arguments != `{"text":"x"}` || c.Starts != 1 || !c.Done || c.Result != "noted x for work\n" {
		t.Errorf("call %+v", c)
	}
}

// A reply of only tool calls to an agent without tools is a failed
// attempt, never an empty result: streamed or not, it says so.
func TestToolCallsWithoutTools(t *testing.T) {
	streamed := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"code_interpret","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
	}
	tests := []struct {
		name, stream string
		answer       func(w http.ResponseWriter)
	}{
		{"whole", "false", func(w http.ResponseWriter) {
			fmt.Fprintf(w, `{"choices":[{"message":%s,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, calls("c1", "code_interpret", `{}`))
		}},
		{"streamed", "true", streamed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) { tt.answer(w) }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, `
agents:
  a: {llm: {model: m, base_url: BASE, stream: `+tt.stream+`}}
tasks:
  t: {description: d, agent: a}
`)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Failed {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			tr, _ := p.session(t).Task("t")
			if tr.Status != checkpoint.StatusFailed || !strings.Contains(tr.Error, `the model answered only with a call of tool code_interpret, but agent "a" has no tools`) {
				t.Errorf("record %+v", tr)
			}
		})
	}
}

// The built-in file tools work in the workdir (in the spec's folder) and
// refuse paths that leave it.
func TestToolLoopBuiltins(t *testing.T) {
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		switch n {
		case 1:
			return calls("w", "write_file", `{"path":"out/notes.txt","content":"hi"}`, "r", "read_file", `{"path":"../../etc/passwd"}`)
		}
		return answer("written")
	}}
	p, _ := toolProject(t, f, `
workdir: work
agents:
  a: {llm: {model: m, base_url: BASE}, tools: [write_file, read_file]}
tasks:
  t: {description: d, agent: a}
`)
	if sum, out, err := p.run(t, false); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "work", "out", "notes.txt")); err != nil || string(b) != "hi" {
		t.Errorf("written file: %q, %v", b, err)
	}
	c := p.session(t).ToolLogs["t"].Turns[0].Calls[1]
	if !c.IsError || !strings.Contains(c.Result, "is outside the folder the file tools may use") {
		t.Errorf("read outside: %+v", c)
	}
}

// An attempt that failed on the model's server is retried by resuming its
// loop: the recorded result is replayed, the tool is not run again.
func TestToolLoopRetryResumes(t *testing.T) {
	f := &toolLLM{fail: func(n int) bool { return n == 2 }, script: func(n int, _ toolRequest) string {
		if n == 1 {
			return calls("c1", "note", `{"text":"once"}`)
		}
		return answer("noted once")
	}}
	p, logPath := toolProject(t, f, strings.Replace(toolTeam, "agent: clerk}", "agent: clerk, max_retries: 1, retry_delay: 1ms}", 1))
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if got := readLog(t, logPath); got != "once\n" {
		t.Errorf("the tool ran %q, want once", got)
	}
	last := f.request(2)
	if n := len(last.Messages); n < 2 || last.Messages[n-1].Role != "tool" || last.Messages[n-1].ToolCallID != "c1" {
		t.Errorf("the retry's request does not carry the recorded result: %+v", last.Messages)
	}
	if tr, _ := p.session(t).Task("work"); tr.Result != "noted once" || tr.Attempts != 2 {
		t.Errorf("record %+v", tr)
	}
}

// A tool's output that holds the agent's API key reaches neither the model
// nor the session: tools run in teamrun's environment, key included.
func TestToolResultKeyRedacted(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		if n == 1 {
			return calls("c1", "env", `{}`)
		}
		return answer("done")
	}}
	p, _ := toolProject(t, f, `
tools:
  env:
    shell: 'echo "OPENAI_API_KEY=`+key+`"; echo "half: `+key[:12]+`"'
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: BASE}, tools: [env]}
tasks:
  work: {description: Look around, agent: clerk}
`)
	p.env["OPENAI_API_KEY"] = key
	if sum, out, err := p.run(t, false); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	var sent string
	for _, m := range f.request(1).Messages {
		if m.Role == "tool" {
			sent = m.Content
		}
	}
	if sent != "OPENAI_API_KEY=[REDACTED]\nhalf: [REDACTED]\n" {
		t.Errorf("the model was sent %q", sent)
	}
	b, err := p.sessionFileBytes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key[:8]) {
		t.Error("the session holds the key")
	}
}

// A turn that calls tools and holds the agent's key (a proxy or model
// that echoes the request's Authorization header) is redacted before it
// is recorded, shown or sent back, in each of its parts; the call runs
// with the arguments as recorded, so the tool never gets the key and a
// resumed loop replays exactly what ran.
func TestToolTurnKeyRedacted(t *testing.T) {
	const key = "sk-test-SECRETKEY-0123456789abcdef"
	tests := []struct {
		name string
		turn string // the first answer; the second is "done"
		ran  string // what the note tool appended to LOG
	}{
		{"in the turn's text", `{"role":"assistant","content":"thinking Bearer ` + key + `","tool_calls":[{"id":"c1","type":"function","function":{"name":"note","arguments":"{\"text\":\"x\"}"}}]}`, "x\n"},
		{"in a call's arguments", calls("c1", "note", `{"text":"Bearer `+key+`"}`), "Bearer [REDACTED]\n"},
		{"a piece of it in a call's arguments", calls("c1", "note", `{"text":"`+key[3:20]+`"}`), "[REDACTED]\n"},
		{"in a tool's name", calls("c1", "Bearer "+key, `{}`), ""},
		{"in a call's id", calls("id-"+key, "note", `{"text":"y"}`), "y\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &toolLLM{script: func(n int, _ toolRequest) string {
				if n == 1 {
					return tc.turn
				}
				return answer("done")
			}}
			p, logPath := toolProject(t, f, toolTeam)
			p.env["OPENAI_API_KEY"] = key
			p.verbose = true
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Succeeded {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			if got := readLog(t, logPath); got != tc.ran {
				t.Errorf("the tool ran with %q, want %q", got, tc.ran)
			}
			b, err := p.sessionFileBytes()
			if err != nil {
				t.Fatal(err)
			}
			sent, _ := json.Marshal(f.request(1).Messages)
			for what, text := range map[string]string{"the session": string(b), "the --json events": out, "the turn sent back": string(sent)} {
				if strings.Contains(text, key[3:11]) {
					t.Errorf("%s holds the key", what)
				}
			}
			if !strings.Contains(string(b), "[REDACTED]") {
				t.Error("the session does not say where the key was")
			}
			// What was recorded is what went back to the model: a resumed
			// loop would send the same.
			lg := p.session(t).ToolLogs["work"]
			back := f.request(1).Messages
			var turn *struct {
				Content string
				IDs     []string
			}
			for _, m := range back {
				if m.Role == "assistant" && len(m.ToolCalls) > 0 {
					turn = &struct {
						Content string
						IDs     []string
					}{Content: m.Content}
					for _, c := range m.ToolCalls {
						turn.IDs = append(turn.IDs, c.ID+" "+c.Function.Name+" "+c.Function.Arguments)
					}
				}
			}
			if lg == nil || turn == nil || len(lg.Turns) != 1 || lg.Turns[0].Content != turn.Content {
				t.Fatalf("recorded turn %+v, sent back %+v", lg, turn)
			}
			for i, c := range lg.Turns[0].Calls {
				if got := c.ID + " " + c.Tool + " " + c.Arguments; got != turn.IDs[i] {
					t.Errorf("call %d recorded as %q, sent back as %q", i, got, turn.IDs[i])
				}
			}
		})
	}
}

// An argument that no environment can carry (over 128 KiB, or holding a
// NUL byte), or that does not fit beside the others, is left out of
// TEAMRUN_ARG_* with a warning, and the tool still starts: it reads the
// arguments on stdin.
func TestToolArgumentsLeftOutOfTheEnvironment(t *testing.T) {
	big := strings.Repeat("y", 200_000)
	many := map[string]string{}
	for i := range 12 {
		many[fmt.Sprintf("a%02d", i)] = strings.Repeat("z", 100_000)
	}
	manyArgs, _ := json.Marshal(many)
	tests := []struct {
		name, args string
		env        string // what the tool saw: TEAMRUN_ARG_A00's length, TEAMRUN_ARG_NOTE
		warning    string
	}{
		{"an ordinary argument", `{"note":"hi"}`, "a00=0 note=hi", ""},
		{"an argument over 128 KiB", `{"note":"` + big + `"}`, "a00=0 note=unset", "tool save: TEAMRUN_ARG_NOTE is left out of its environment: with its name it is 200017 bytes, over the 128 KiB"},
		{"an argument with a NUL byte", `{"note":"a\u0000b"}`, "a00=0 note=unset", "tool save: TEAMRUN_ARG_NOTE is left out of its environment: its value contains a NUL byte"},
		{"arguments that together do not fit", string(manyArgs), "a00=100000 note=unset", "are left out of its environment: with the rest of it they would pass the 1024 KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &toolLLM{script: func(n int, _ toolRequest) string {
				if n == 1 {
					return calls("c1", "save", tc.args)
				}
				return answer("saved")
			}}
			p, logPath := toolProject(t, f, `
tools:
  save:
    shell: 'printf "a00=%s note=%s" "${#TEAMRUN_ARG_A00}" "${TEAMRUN_ARG_NOTE-unset}" >> LOG; wc -c | tr -d " "'
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: BASE}, tools: [save]}
tasks:
  work: {description: Save, agent: clerk}
`)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Succeeded {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			c := p.session(t).ToolLogs["work"].Turns[0].Calls[0]
			if c.IsError || strings.TrimSpace(c.Result) != fmt.Sprint(len(mustCompact(t, tc.args))) {
				t.Errorf("the tool's result %q: want it started, its stdin the %d bytes of the arguments", c.Result, len(mustCompact(t, tc.args)))
			}
			if got := readLog(t, logPath); got != tc.env {
				t.Errorf("the tool saw %q, want %q", got, tc.env)
			}
			if tc.warning == "" && strings.Contains(out, `"event":"warning"`) || tc.warning != "" && strings.Count(out, tc.warning) != 1 {
				t.Errorf("want the warning %q once:\n%.2000s", tc.warning, out)
			}
		})
	}
}

// mustCompact is JSON text as a tool reads it on stdin (keys sorted, no
// spaces).
func mustCompact(t *testing.T, s string) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}

// A call the task's own timeout stopped is said so: the attempt fails
// naming the timeout and its key (not Go's "context deadline exceeded"),
// and the retry that halts on the call says this run's timeout stopped
// it, not that an earlier run ended. The halt shows the call's arguments
// cut (the whole is in `session show`).
func TestToolStoppedByTheTaskTimeout(t *testing.T) {
	long := strings.Repeat("L", 100_000)
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		return calls("c1", "slow", `{"line":"`+long+`"}`)
	}}
	p, _ := toolProject(t, f, `
tools:
  slow:
    parameters: {type: object, properties: {line: {type: string}}}
    shell: 'sleep 30'
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: BASE}, tools: [slow]}
tasks:
  work: {description: Work, agent: clerk, timeout: 300ms, max_retries: 1, retry_delay: 1ms}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Halted || len(sum.Halts) != 1 {
		t.Fatalf("run: %v, %+v\n%.3000s", err, sum, out)
	}
	if !strings.Contains(out, `"event":"task_retrying"`) || !strings.Contains(out, "timed out after 300ms (tasks.work.timeout): tool slow was still running") || strings.Contains(out, "context deadline exceeded") {
		t.Errorf("the timed-out attempt is not said in words:\n%.3000s", out)
	}
	h := sum.Halts[0]
	for what, text := range map[string]string{"arguments": h.Arguments, "description": h.Description} {
		if len(text) > 600 || !strings.Contains(text, "… (100011 bytes)") {
			t.Errorf("the halt's %s %.300q… (%d bytes): want the arguments cut, with their size", what, text, len(text))
		}
	}
	if !strings.Contains(h.Description, "but the timeout of 300ms (tasks.work.timeout) stopped it in attempt 1 of this run before its result was recorded") {
		t.Errorf("halt %q: want it to say this run's timeout stopped the call", h.Description)
	}
	// The tool_turn event is the journal's step, the whole turn for a
	// program to read; every line that says what happened cuts it.
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 5_000 && !strings.Contains(line, `"event":"tool_turn"`) {
			t.Errorf("a %d-byte line for a 100 KB argument: %.200s…", len(line), line)
		}
	}
	if c := p.session(t).ToolLogs["work"].Turns[0].Calls[0]; c.Arguments != `{"line":"`+long+`"}` {
		t.Errorf("the recorded arguments are %d bytes: want them whole", len(c.Arguments))
	}
}

// Every call of a turn gets an id of its own, also when the model repeats
// one that is the id teamrun would give a repeated or missing one.
func TestCallsOfIDsUnique(t *testing.T) {
	call := func(id string) llm.ToolCall { return llm.ToolCall{ID: id, Function: llm.FunctionCall{Name: "append"}} }
	for _, tc := range []struct {
		name string
		ids  []string
	}{
		{"repeated", []string{"a", "a"}},
		{"repeated as teamrun names one", []string{"call_1_2", "call_1_2"}},
		{"missing beside teamrun's name", []string{"call_1_2", "", ""}},
		{"missing, then teamrun's name", []string{"", "call_1_1", "call_1_1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tcs []llm.ToolCall
			for _, id := range tc.ids {
				tcs = append(tcs, call(id))
			}
			seen := map[string]bool{}
			for _, c := range callsOf(1, tcs, func(s string) string { return s }) {
				if c.ID == "" || seen[c.ID] {
					t.Fatalf("ids %q: call id %q given twice (or empty)", tc.ids, c.ID)
				}
				seen[c.ID] = true
			}
		})
	}
}

// max_tool_calls bounds the calls of an attempt's loop: the turn that
// would pass it fails the attempt before any of its calls runs, however
// many it asks for, and the error names the task and the key to raise.
func TestToolCallsBounded(t *testing.T) {
	many := func(turn, n int) string {
		var c []string
		for i := range n {
			c = append(c, fmt.Sprintf("t%dc%d", turn, i), "note", fmt.Sprintf(`{"text":"t%d.%d"}`, turn, i))
		}
		return calls(c...)
	}
	tests := []struct {
		name     string
		key      string // added to the agent's mapping
		script   func(n int, req toolRequest) string
		log      string
		requests int
		errHas   string
	}{
		{"one turn over the limit runs none of its calls", ", max_tool_calls: 4", func(n int, _ toolRequest) string { return many(n, 5) },
			"", 1, `task "work": turn 1 asked for 5 tool calls, more than the 4 that max_tool_calls (4) leaves this attempt: none of them ran; raise agents.clerk.max_tool_calls`},
		{"the calls of earlier turns count", ", max_tool_calls: 4", func(n int, _ toolRequest) string { return many(n, 3) },
			"t1.0\nt1.1\nt1.2\n", 2, "turn 2 asked for 3 tool calls, more than the 1 that max_tool_calls (4) leaves"},
		{"up to the limit is fine", ", max_tool_calls: 4", func(n int, _ toolRequest) string {
			if n == 1 {
				return many(n, 4)
			}
			return answer("done")
		}, "t1.0\nt1.1\nt1.2\nt1.3\n", 2, ""},
		{"the default bounds 10,000 calls in one turn", "", func(n int, _ toolRequest) string { return many(n, 10000) },
			"", 1, "turn 1 asked for 10000 tool calls, more than the 100 that max_tool_calls (100) leaves"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &toolLLM{script: tc.script}
			p, logPath := toolProject(t, f, strings.Replace(toolTeam, "max_turns: 3", "max_turns: 3"+tc.key, 1))
			sum, out, err := p.run(t, false)
			want := Failed
			if tc.errHas == "" {
				want = Succeeded
			}
			if err != nil || sum.Outcome != want {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			if got := readLog(t, logPath); got != tc.log {
				t.Errorf("tools ran %q, want %q", got, tc.log)
			}
			if f.count() != tc.requests {
				t.Errorf("%d model requests, want %d", f.count(), tc.requests)
			}
			tr, _ := p.session(t).Task("work")
			if !strings.Contains(tr.Error, tc.errHas) {
				t.Errorf("error %q lacks %q", tr.Error, tc.errHas)
			}
			// The refused turn was paid for all the same.
			if tr.Usage == nil || len(tr.Usage.Calls) != tc.requests {
				t.Errorf("usage %+v, want %d calls", tr.Usage, tc.requests)
			}
			if lg := p.session(t).ToolLogs["work"]; tc.errHas != "" && lg.Resumable() {
				t.Errorf("the loop would resume: %+v", lg)
			}
		})
	}
}
