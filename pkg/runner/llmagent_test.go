package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// fakeLLM is an OpenAI-compatible server: answer decides each reply.
type fakeLLM struct {
	mu       sync.Mutex
	requests []chatRequest
	bodies   [][]byte
	auth     []string
	answer   func(n int, req chatRequest, w http.ResponseWriter) // n counts from 1
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	n := len(f.requests)
	f.mu.Unlock()
	f.answer(n, req, w)
}

func reply(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}`, content)
}

func (f *fakeLLM) request(i int) chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func (f *fakeLLM) requestBody(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

func (f *fakeLLM) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// runSpec writes spec (with BASE replaced by the server's URL) into a fresh
// project and runs it in-process.
type project struct {
	dir, home  string
	env        map[string]string
	streamJSON bool
	verbose    bool
}

func newProject(t *testing.T, server, yaml string) *project {
	t.Helper()
	p := &project{dir: t.TempDir(), env: map[string]string{}}
	p.home = filepath.Join(p.dir, "home")
	p.write(t, server, yaml)
	return p
}

func (p *project) write(t *testing.T, server, yaml string) {
	t.Helper()
	yaml = strings.ReplaceAll(yaml, "BASE", server+"/v1")
	if err := os.WriteFile(filepath.Join(p.dir, "team.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *project) run(t *testing.T, cont bool) (*Summary, string, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{
		SpecPath: filepath.Join(p.dir, "team.yaml"), Continue: cont, Session: "s1", Mode: ModeJSON, StreamJSON: p.streamJSON, Verbose: p.verbose,
		IO: iostreams.Test(nil, &out, &out), Home: p.home,
		Getenv: func(k string) string { return p.env[k] },
	})
	return sum, out.String(), err
}

// sessionFileBytes is everything the store keeps of session s1: its
// snapshot and, if any, its journal.
func (p *project) sessionFileBytes() ([]byte, error) {
	var all []byte
	for _, ext := range []string{".json", ".journal"} {
		b, err := os.ReadFile(filepath.Join(p.home, "sessions", "s1"+ext))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}

func (p *project) session(t *testing.T) *checkpoint.Session {
	t.Helper()
	st, err := stores.Open(context.Background(), p.home)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

const promptTeam = `
variables:
  topic: Go 1.26
llm: {model: team-model, base_url: BASE}
agents:
  writer:
    role: Writer
    goal: Write about {topic}
    backstory: Seasoned.
    instructions: Be brief.
  editor:
    role: Editor
    goal: Edit
    llm: {model: editor-model, base_url: BASE, temperature: 0.5}
tasks:
  draft:
    description: Draft the notes on {topic}
    expected_output: 200 words
    agent: writer
  edit:
    description: Edit the draft
    agent: editor
`

func TestLLMPromptAndContext(t *testing.T) {
	f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) { reply(w, fmt.Sprintf("answer %d", n)) }}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, promptTeam)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	draft, edit := f.request(0), f.request(1)
	if draft.Model != "team-model" || edit.Model != "editor-model" {
		t.Fatalf("models %q, %q", draft.Model, edit.Model)
	}
	if len(draft.Messages) != 2 || draft.Messages[0].Role != "system" || draft.Messages[1].Role != "user" {
		t.Fatalf("draft messages %+v", draft.Messages)
	}
	for _, want := range []string{"Writer", "Write about Go 1.26", "Seasoned.", "Be brief."} {
		if !strings.Contains(draft.Messages[0].Content, want) {
			t.Errorf("system message %q lacks %q", draft.Messages[0].Content, want)
		}
	}
	for _, want := range []string{"Draft the notes on Go 1.26", "200 words"} {
		if !strings.Contains(draft.Messages[1].Content, want) {
			t.Errorf("user message %q lacks %q", draft.Messages[1].Content, want)
		}
	}
	// Sequential: edit reads draft's output.
	if u := edit.Messages[len(edit.Messages)-1].Content; !strings.Contains(u, "Edit the draft") || !strings.Contains(u, "answer 1") {
		t.Errorf("edit's user message %q lacks its description or draft's output", u)
	}
	sess := p.session(t)
	tr, _ := sess.Task("draft")
	if tr.Result != "answer 1" || tr.Usage == nil || tr.Usage.TotalTokens != 14 || tr.Usage.PromptTokens != 11 {
		t.Fatalf("draft's record %+v, usage %+v", tr, tr.Usage)
	}
	if sum.Tokens != 28 {
		t.Errorf("summary counts %d tokens, want 28", sum.Tokens)
	}
	if !strings.Contains(out, `"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14,"unpriced_tokens":14,"calls":[{"model":"m","attempt":1,"status":200,`) {
		t.Errorf("no usage in the events:\n%s", out)
	}
}

const memoryTeam = `
llm: {model: m, base_url: BASE}
agents:
  editor:
    role: Editor
    memory: true
tasks:
  first:
    description: first task
    agent: editor
  second:
    description: second task
    agent: editor
`

func TestLLMMemorySurvivesResume(t *testing.T) {
	fail := true
	f := &fakeLLM{answer: func(n int, req chatRequest, w http.ResponseWriter) {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "second task") && fail {
			w.WriteHeader(http.StatusBadRequest) // permanent: the task fails, the run stops
			fmt.Fprint(w, `{"error":{"message":"bad"}}`)
			return
		}
		reply(w, "reply to "+strings.SplitN(last, "\n", 2)[0])
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, memoryTeam)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Failed {
		t.Fatalf("first run: %v, %+v\n%s", err, sum, out)
	}
	sess := p.session(t)
	if got := sess.Memory["editor"]; len(got) != 2 || got[1].Content != "reply to first task" || got[0].Task != "first" {
		t.Fatalf("checkpointed memory %+v", got)
	}
	fail = false
	n := f.count()
	sum, out, err = p.run(t, true)
	if err != nil || sum.Outcome != Succeeded || sum.Restored != 1 || sum.Ran != 1 {
		t.Fatalf("resumed run: %v, %+v\n%s", err, sum, out)
	}
	req := f.request(n)
	var roles []string
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" {
		t.Fatalf("resumed request roles %v: %+v", roles, req.Messages)
	}
	if req.Messages[1].Content != "first task" || req.Messages[2].Content != "reply to first task" {
		t.Fatalf("history %+v", req.Messages)
	}
	if got := p.session(t).Memory["editor"]; len(got) != 4 {
		t.Fatalf("memory after the second task: %d messages", len(got))
	}
}

const retryTeam = `
llm: {model: m, base_url: BASE, api_key_env: MY_KEY}
agents:
  writer:
    role: Writer
tasks:
  write:
    description: write
    agent: writer
`

const secret = "sk-test-SECRET-0123456789"

func TestLLMRetriesAndErrors(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(n int, w http.ResponseWriter)
		outcome Outcome
		calls   int
		errHas  string
	}{
		{"429 then success", func(n int, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":{"message":"slow down"}}`)
				return
			}
			reply(w, "done")
		}, Succeeded, 2, ""},
		{"500 exhausted", func(n int, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"message":"overloaded"}}`)
		}, Failed, 4, "HTTP 500 Internal Server Error: overloaded (gave up after 4 attempts)"},
		{"401 names no key", func(n int, w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, secret)
		}, Failed, 1, "HTTP 401 Unauthorized: Incorrect API key provided: [REDACTED] (the key came from $MY_KEY: check it, or name another variable in llm.api_key_env)"},
		// No HTTP answer at all: what is at the other end, and where the
		// URL comes from, not Go's bare "EOF".
		{"closed without an answer", func(n int, w http.ResponseWriter) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, Failed, 4, "the server closed the connection without an answer (is that an HTTP server's port?) (gave up after 4 attempts) (the URL comes from llm.base_url (team.yaml:2:27): check it)"},
		// An answer that came and broke off reached the server: no
		// hint at the URL, no Go words.
		{"an answer that broke off", func(n int, w http.ResponseWriter) {
			c, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"model\":\"m\",\"choices\":[")
			buf.Flush()
			c.Close()
		}, Failed, 4, "HTTP 200 OK: the answer broke off after 24 bytes: the server (or a proxy on the way) closed the connection before the end (gave up after 4 attempts)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) { tt.answer(n, w) }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, retryTeam)
			p.env["MY_KEY"] = secret
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != tt.outcome {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			if f.count() != tt.calls {
				t.Fatalf("%d requests, want %d", f.count(), tt.calls)
			}
			if f.auth[0] != "Bearer "+secret {
				t.Fatalf("Authorization %q", f.auth[0])
			}
			tr, _ := p.session(t).Task("write")
			// The spec's path as run was given it, less the test's folder.
			got := strings.ReplaceAll(tr.Error, p.dir+string(filepath.Separator), "")
			if !strings.Contains(got, tt.errHas) || strings.HasSuffix(tt.errHas, "attempts)") && !strings.HasSuffix(got, tt.errHas) {
				t.Fatalf("task error %q, want it to contain %q (and end with it when it ends with the attempts)", got, tt.errHas)
			}
			// The key reaches no checkpoint, log line, error or audit record.
			// Every file of the store (session, journal, lock) and the project.
			files := filesUnder(t, filepath.Join(p.home, "sessions")) // the attempts' records beside the session too
			project, _ := filepath.Glob(filepath.Join(p.dir, ".teamrun", "*"))
			files = append(files, project...)
			if !slices.Contains(files, filepath.Join(p.home, "sessions", "s1.json")) || !slices.Contains(files, filepath.Join(p.dir, ".teamrun", "audit.log")) {
				t.Fatalf("files %q: no session or audit log to check", files)
			}
			for _, path := range files {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s holds the API key", path)
				}
			}
			if strings.Contains(out, secret) {
				t.Errorf("the output holds the API key:\n%s", out)
			}
		})
	}
}

func TestLLMTaskTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(&fakeLLM{answer: func(int, chatRequest, http.ResponseWriter) { <-release }})
	defer srv.Close()
	defer close(release)
	l := &LLMs{MaxAttempts: 1, Getenv: func(string) string { return "" }}
	job := &Job{
		Task:  &spec.Task{Name: "slow", Timeout: 50 * time.Millisecond},
		Agent: &spec.Agent{Name: "writer", Kind: spec.LLMAgent, LLM: &spec.LLM{Model: "m", BaseURL: srv.URL + "/v1"}},
	}
	_, err := l.Execute(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
}

func TestLLMRequestTimeoutRetried(t *testing.T) {
	release := make(chan struct{})
	f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
		if n == 1 {
			<-release
			return
		}
		reply(w, "second time lucky")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	defer close(release)
	l := &LLMs{Getenv: func(string) string { return "" }, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
	job := &Job{
		Task:  &spec.Task{Name: "t"},
		Agent: &spec.Agent{Name: "writer", Kind: spec.LLMAgent, LLM: &spec.LLM{Model: "m", BaseURL: srv.URL + "/v1", Timeout: spec.Duration(50 * time.Millisecond)}},
	}
	res, err := l.Execute(context.Background(), job)
	if err != nil || res.Raw != "second time lucky" || f.count() != 2 {
		t.Fatalf("result %q, error %v, %d requests", res.Raw, err, f.count())
	}
}

// A memory agent used by parallel tasks of a workflow: its tasks run one
// after another in file order, each seeing the turns of the ones before,
// and the checkpoint keeps the same conversation the requests carried.
func TestLLMMemoryWorkflowTasksSeeEarlierTurns(t *testing.T) {
	f := &fakeLLM{answer: func(n int, req chatRequest, w http.ResponseWriter) {
		last := req.Messages[len(req.Messages)-1].Content
		reply(w, "reply to "+strings.SplitN(last, "\n", 2)[0])
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
process: workflow
llm: {model: m, base_url: BASE}
agents:
  editor:
    role: Editor
    memory: true
tasks:
  one: {description: task one, agent: editor}
  two: {description: task two, agent: editor}
  three: {description: task three, agent: editor}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded || sum.Ran != 3 {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	var sizes []int
	var order []string
	for i := range f.count() {
		req := f.request(i)
		sizes = append(sizes, len(req.Messages))
		order = append(order, req.Messages[len(req.Messages)-1].Content)
	}
	if !slices.Equal(sizes, []int{2, 4, 6}) {
		t.Fatalf("messages per request %v, want [2 4 6]", sizes)
	}
	if !slices.Equal(order, []string{"task one", "task two", "task three"}) {
		t.Fatalf("requests in order %q, want file order", order)
	}
	last := f.request(2).Messages
	mem := p.session(t).Memory["editor"]
	if len(mem) != 6 {
		t.Fatalf("checkpointed memory holds %d messages, want 6", len(mem))
	}
	for k, m := range mem[:4] {
		if m.Role != last[k+1].Role || m.Content != last[k+1].Content {
			t.Errorf("memory[%d] = %s %q; the last request had %s %q", k, m.Role, m.Content, last[k+1].Role, last[k+1].Content)
		}
	}
}

// 14.3: a server that echoes a long key so that it straddles the 200-character
// cut of its error message leaves no piece of it in the session, the journal, the
// audit log or the output.
func TestLLMKeyFragmentNeverRecorded(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Zq8Wm2Lp5Rt7Yx4Nb6Vc3", 8)[:151]
	for _, at := range []int{150, 172, 190} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
				w.WriteHeader(http.StatusUnauthorized)
				// A proxy's plain-text page, as a gateway in front of a server sends.
				fmt.Fprintf(w, "%sIncorrect API key provided: %s.\n", strings.Repeat("-", at-28), key)
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, retryTeam)
			p.env["MY_KEY"] = key
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Failed || f.count() != 1 {
				t.Fatalf("run: %v, %+v, %d requests\n%s", err, sum, f.count(), out)
			}
			files := filesUnder(t, filepath.Join(p.home, "sessions")) // the attempts' records beside the session too
			project, _ := filepath.Glob(filepath.Join(p.dir, ".teamrun", "*"))
			texts := map[string]string{"the output": out}
			for _, path := range append(files, project...) {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				texts[path] = string(b)
			}
			if tr, _ := p.session(t).Task("write"); !strings.Contains(tr.Error, "HTTP 401") {
				t.Fatalf("task error %q", tr.Error)
			}
			for name, text := range texts {
				for i := 0; i+12 <= len(key); i++ {
					if strings.Contains(text, key[i:i+12]) {
						t.Fatalf("%s holds a piece of the key (%q)", name, key[i:i+12])
					}
				}
			}
		})
	}
}

// An answer cut at max_tokens fails the task's attempt (so max_retries
// apply) unless the task says on_truncated: accept.
func TestLLMTruncatedAnswer(t *testing.T) {
	const team = `
llm: {model: m, base_url: BASE, max_tokens: 3}
agents:
  writer: {role: Writer}
tasks:
  write:
    description: write
    agent: writer
    max_retries: 1
    retry_delay: 1ms
`
	tests := []struct {
		name, extra string
		outcome     Outcome
		calls       int
	}{
		{"fails, retried by the task", "", Failed, 2},
		{"accepted", "    on_truncated: accept\n", Succeeded, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
				fmt.Fprint(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":"Hello from the"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, team+tt.extra)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != tt.outcome || f.count() != tt.calls {
				t.Fatalf("run: %v, %+v, %d requests\n%s", err, sum, f.count(), out)
			}
			tr, _ := p.session(t).Task("write")
			if tt.outcome == Succeeded {
				if tr.Result != "Hello from the" {
					t.Errorf("result %q", tr.Result)
				}
				return
			}
			if tr.Result != "" || !strings.Contains(tr.Error, "the answer was cut at max_tokens=3; raise max_tokens") {
				t.Errorf("record: result %q, error %q", tr.Result, tr.Error)
			}
		})
	}
}

// An empty answer (content null or blank, no tool call) is a failed
// attempt, retried by the task, with its usage kept: taken as a result it
// would be done, and restored empty on every --continue.
func TestLLMEmptyAnswerFails(t *testing.T) {
	const team = `
llm: {model: m, base_url: BASE}
agents:
  writer: {role: Writer}
tasks:
  write:
    description: write
    agent: writer
    max_retries: 1
    retry_delay: 1ms
`
	for _, content := range []string{`null`, `""`, `" \n "`} {
		t.Run(content, func(t *testing.T) {
			f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
				fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}`, content)
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, team)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Failed || f.count() != 2 {
				t.Fatalf("run: %v, %+v, %d requests\n%s", err, sum, f.count(), out)
			}
			tr, _ := p.session(t).Task("write")
			if tr.Status != checkpoint.StatusFailed || !strings.Contains(tr.Error, "model m gave an empty answer (no text, no tool call)") {
				t.Errorf("record: status %s, error %q", tr.Status, tr.Error)
			}
			if tr.Usage == nil || tr.Usage.TotalTokens != 10 || len(tr.Usage.Calls) != 2 {
				t.Errorf("usage %+v, want both attempts' 5 tokens kept", tr.Usage)
			}
		})
	}
}

// filesUnder lists every file below dir, in its subfolders too.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A command agent runs in teamrun's environment: what its result, its
// kept output and its error hold of the key an LLM agent of the team uses
// is redacted before it is recorded, and the task that reads its result
// gets it redacted too. A result kept out of line (over 1 MiB) as well.
func TestCommandResultKeyRedacted(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) { reply(w, "summary") }}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE, api_key_env: MY_KEY}
agents:
  env: {shell: 'echo "key=$MY_KEY"'}
  big: {shell: 'head -c 1100000 /dev/zero | tr "\\0" x; echo "key=$MY_KEY"'}
  oops: {shell: 'echo "key=$MY_KEY" >&2; exit 3'}
  writer: {role: Writer}
tasks:
  look: {description: look, agent: env}
  large: {description: large, agent: big}
  write: {description: write, agent: writer, context: [look]}
  fail: {description: fail, agent: oops}
`)
	p.env["MY_KEY"] = key
	p.verbose = true
	t.Setenv("MY_KEY", key) // the commands' environment is the process's
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Failed {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	// --verbose shows the lines, not the key.
	if strings.Contains(out, key[:8]) || !strings.Contains(out, `"message":"key=[REDACTED]"`) {
		t.Errorf("the verbose output shows the key, or no line:\n%s", out)
	}
	sess := p.session(t)
	if tr, _ := sess.Task("look"); tr.Result != "key=[REDACTED]\n" {
		t.Errorf("result %q", tr.Result)
	}
	if tr, _ := sess.Task("fail"); !strings.Contains(tr.Error, "key=[REDACTED]") {
		t.Errorf("error %q", tr.Error)
	}
	if tr, _ := sess.Task("large"); tr.Blob == nil {
		t.Error("the large result is not kept out of line: the test does not test that")
	}
	if got := fmt.Sprint(f.request(0).Messages); strings.Contains(got, key[:8]) || !strings.Contains(got, "key=[REDACTED]") {
		t.Errorf("the LLM task was sent %s", got)
	}
	// No file of the store holds it: session, journal, kept output, blobs.
	for _, path := range filesUnder(t, filepath.Join(p.home, "sessions")) {
		if b, err := os.ReadFile(path); err != nil || strings.Contains(string(b), key[:8]) {
			t.Errorf("%s holds the key (%v)", path, err)
		}
	}
}

// --rerun one --keep two of an agent with memory: one is sent no turn of
// two, which comes after it, and three is sent one's new turns before
// two's kept ones, as in file order.
func TestLLMMemoryRerunKeepsFileOrder(t *testing.T) {
	f := &fakeLLM{answer: func(n int, req chatRequest, w http.ResponseWriter) {
		reply(w, fmt.Sprintf("reply %d", n))
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE}
agents:
  editor: {role: Editor, memory: true}
tasks:
  one: {description: task one, agent: editor}
  two: {description: task two, agent: editor}
  three: {description: task three, agent: editor}
`)
	if sum, out, err := p.run(t, false); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{
		SpecPath: filepath.Join(p.dir, "team.yaml"), Continue: true, Session: "s1", Mode: ModeJSON,
		Rerun: []string{"one"}, Keep: []string{"two"},
		IO: iostreams.Test(nil, &out, &out), Home: p.home, Getenv: func(k string) string { return p.env[k] },
	})
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("--rerun one --keep two: %v, %+v\n%s", err, sum, out.String())
	}
	users := func(i int) []string {
		var u []string
		for _, m := range f.request(i).Messages {
			if m.Role == "user" {
				u = append(u, strings.SplitN(m.Content, "\n", 2)[0]) // its context follows
			}
		}
		return u
	}
	if got := users(3); !slices.Equal(got, []string{"task one"}) {
		t.Errorf("one, run again, was sent %q; want only its own message", got)
	}
	if got := users(4); !slices.Equal(got, []string{"task one", "task two", "task three"}) {
		t.Errorf("three was sent %q; want one's, two's and its own, in file order", got)
	}
}

// TestRequestRetriesSaid: the client's waits before it sends a request
// again are said, one line each in plain output and a request_retrying
// event in --json (which task, why, how long), nothing in --quiet.
func TestRequestRetriesSaid(t *testing.T) {
	tests := []struct {
		name string
		mode Mode
		want []string // in the output, in order
		none string   // not in it
	}{
		{"plain", ModeAuto, []string{"retrying  write: LLM request 1 of 4 failed: HTTP 429 Too Many Requests: slow down [REDACTED]; sending it again in 2ms",
			"retrying  write: LLM request 2 of 4 failed: HTTP 503 Service Unavailable: busy; sending it again in 2ms", "completed write"}, secret},
		{"json", ModeJSON, []string{`"event":"request_retrying","session":"s1","task":"write","agent":"writer","attempt":1,"error":"HTTP 429 Too Many Requests: slow down [REDACTED]","delay_ms":2,"request":1,"max_requests":4}`,
			`"event":"request_retrying","session":"s1","task":"write","agent":"writer","attempt":1,"error":"HTTP 503 Service Unavailable: busy","delay_ms":2,"request":2,"max_requests":4}`}, secret},
		{"quiet", ModeQuiet, nil, "retrying"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
				switch n {
				case 1:
					w.Header().Set("Retry-After-Ms", "2")
					w.WriteHeader(http.StatusTooManyRequests)
					fmt.Fprintf(w, `{"error":{"message":"slow down %s"}}`, secret)
				case 2:
					w.Header().Set("Retry-After-Ms", "2")
					w.WriteHeader(http.StatusServiceUnavailable)
					fmt.Fprint(w, `{"error":{"message":"busy"}}`)
				default:
					reply(w, "done")
				}
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, retryTeam)
			p.env["MY_KEY"] = secret
			var out bytes.Buffer
			sum, err := Run(context.Background(), Options{
				SpecPath: filepath.Join(p.dir, "team.yaml"), Session: "s1", Mode: tt.mode,
				IO: iostreams.Test(nil, &out, &out), Home: p.home, Getenv: func(k string) string { return p.env[k] },
			})
			if err != nil || sum.Outcome != Succeeded || f.count() != 3 {
				t.Fatalf("run: %v, %+v, %d requests\n%s", err, sum, f.count(), out.String())
			}
			rest := out.String()
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, out.String())
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(out.String(), tt.none) {
				t.Errorf("output holds %q:\n%s", tt.none, out.String())
			}
		})
	}
}

// TestNotFoundHint: a 404 at the endpoint says what is likely wrong with
// base_url; a 404 about the model does not.
func TestNotFoundHint(t *testing.T) {
	f := &fakeLLM{answer: func(_ int, req chatRequest, w http.ResponseWriter) {
		if req.Model == "gone" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"The model gone does not exist"}}`)
			return
		}
		reply(w, "ok")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	// A PraisonAI role's llm, where the key is written api_base (line 4).
	const roles = "framework: praisonai\nroles:\n  w:\n    role: W\n    llm: LLM\n    tasks:\n      t: {description: d}\n"
	tests := []struct{ name, spec, llm, want string }{
		{"no /v1", "", "{model: m, base_url: '" + srv.URL + "'}",
			"HTTP 404 Not Found: 404 page not found (the URL comes from llm.base_url (team.yaml:1:27): most OpenAI-compatible servers answer under /v1; did you mean " + srv.URL + "/v1?)"},
		{"with /chat/completions", "", "{model: m, base_url: 'BASE/chat/completions'}",
			"HTTP 404 Not Found: 404 page not found (the URL comes from llm.base_url (team.yaml:1:27), which must not end in /chat/completions: teamrun adds it; set it to " + srv.URL + "/v1)"},
		{"an unknown model", "", "{model: gone, base_url: BASE}", "HTTP 404 Not Found: The model gone does not exist"},
		// The key as the file writes it, where it does, not llm.base_url.
		{"api_base without /v1", roles, "{model: m, api_base: '" + srv.URL + "'}",
			"HTTP 404 Not Found: 404 page not found (the URL comes from roles.w.llm.api_base (team.yaml:5:31): most OpenAI-compatible servers answer under /v1; did you mean " + srv.URL + "/v1?)"},
		// LiteLLM's api_base for an ollama/ model, without /v1: sent to /v1.
		{"ollama/ api_base without /v1", roles, "{model: ollama/m, api_base: '" + srv.URL + "'}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "llm: " + tt.llm + "\nagents:\n  w: {role: W}\ntasks:\n  t: {description: d, agent: w}\n"
			if tt.spec != "" {
				src = strings.Replace(tt.spec, "LLM", tt.llm, 1)
			}
			p := newProject(t, srv.URL, src)
			sum, out, err := p.run(t, false)
			want := Failed
			if tt.want == "" {
				want = Succeeded
			}
			if err != nil || sum.Outcome != want {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			tr, _ := p.session(t).Task("t")
			// The spec's path as run was given it, less the test's folder.
			if got := strings.ReplaceAll(tr.Error, p.dir+string(filepath.Separator), ""); !strings.HasSuffix(got, tt.want) {
				t.Errorf("error %q, want it to end with %q", got, tt.want)
			}
		})
	}
}

// TestLLMErrorURLSecrets: a server's error that echoes the request's path
// shows the base URL's credential query parameter, and a 401 the key:
// both are redacted in every message (the printed failure, --json's
// task_failed, the run's error), as they are in the session.
func TestLLMErrorURLSecrets(t *testing.T) {
	const query = "QSECRET-zyxwvut9876"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. path %s"}}`,
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.URL.RequestURI())
	}))
	defer srv.Close()
	for _, mode := range []Mode{ModeAuto, ModeJSON} {
		p := newProject(t, srv.URL, strings.ReplaceAll(retryTeam, "BASE", `"BASE?api-key=`+query+`"`))
		p.env["MY_KEY"] = secret
		var out bytes.Buffer
		sum, err := Run(context.Background(), Options{
			SpecPath: filepath.Join(p.dir, "team.yaml"), Session: "s1", Mode: mode,
			IO: iostreams.Test(nil, &out, &out), Home: p.home, Getenv: func(k string) string { return p.env[k] },
		})
		if sum == nil || sum.Outcome != Failed {
			t.Fatalf("run: %v, %+v\n%s", err, sum, out.String())
		}
		shown := out.String() + fmt.Sprint(err) + fmt.Sprintf("%+v", *sum)
		if strings.Contains(shown, query) || strings.Contains(shown, secret) || !strings.Contains(out.String(), "?api-key=[REDACTED]") {
			t.Errorf("mode %v: the output shows a secret, or no redacted query:\n%s", mode, shown)
		}
	}
}

// A 401 or 403 says what was sent: the URL's credentials (Basic auth from
// its user part, or a query token) when no key was, as an MCP server's
// does; "no key was sent" only when nothing was; the key's variable when
// the key went (it replaces the user part's Basic auth).
func TestLLMRefusedSaysWhatWasSent(t *testing.T) {
	const urlCreds = "the credentials llm.base_url carries (its user name and password, a token as its user name or one in its query; not shown) were sent and refused: check them, or send a key instead: export OPENAI_API_KEY, or name the variable that holds it in llm.api_key_env"
	tests := []struct {
		name     string
		userinfo string // before the host
		query    string
		key      string
		status   int
		auth     string // the Authorization header the server got
		want     string
	}{
		{"nothing", "", "", "", http.StatusUnauthorized, "", "HTTP 401 Unauthorized: no (no key was sent: export OPENAI_API_KEY, or name the variable that holds it in llm.api_key_env)"},
		{"a token as the user name", "TOKSECRETa1@", "", "", http.StatusUnauthorized, "Basic VE9LU0VDUkVUYTE6", "HTTP 401 Unauthorized: no (" + urlCreds + ")"},
		{"user and password", "bob:PWSECRETb2@", "", "", http.StatusForbidden, "Basic Ym9iOlBXU0VDUkVUYjI=", "HTTP 403 Forbidden: no (" + urlCreds + ")"},
		{"a query token", "", "?api_key=QSECRETc3", "", http.StatusUnauthorized, "", "HTTP 401 Unauthorized: no (" + urlCreds + ")"},
		{"a key beside them", "TOKSECRETa1@", "", "sk-KSECRETd4", http.StatusUnauthorized, "Bearer sk-KSECRETd4", "HTTP 401 Unauthorized: no (the key came from $OPENAI_API_KEY: check it, or name another variable in llm.api_key_env)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, `{"error":{"message":"no"}}`)
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			base := strings.Replace(srv.URL, "://", "://"+tt.userinfo, 1) + "/v1" + tt.query
			l := &LLMs{MaxAttempts: 1, Getenv: func(v string) string {
				if v == "OPENAI_API_KEY" {
					return tt.key
				}
				return ""
			}}
			job := &Job{
				Task:  &spec.Task{Name: "t", Description: "d"},
				Agent: &spec.Agent{Name: "w", Kind: spec.LLMAgent, LLM: &spec.LLM{Model: "m", BaseURL: base}},
			}
			_, err := l.Execute(context.Background(), job)
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to end with %q", err, tt.want)
			}
			if f.count() != 1 || f.auth[0] != tt.auth {
				t.Fatalf("%d requests, Authorization %q, want %q", f.count(), f.auth, tt.auth)
			}
			for _, s := range []string{"SECRET"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error shows a secret: %v", err)
				}
			}
		})
	}
}

// An OpenAI reasoning model refuses max_tokens: the run sends its request
// again as max_completion_tokens, with the same bound, and its later
// requests so from the start; the budget admits both requests by the same
// worst case, and the answer's usage is counted once.
func TestMaxCompletionTokensFallback(t *testing.T) {
	f := &fakeLLM{}
	f.answer = func(n int, _ chatRequest, w http.ResponseWriter) {
		var body map[string]json.RawMessage
		_ = json.Unmarshal(f.requestBody(n-1), &body)
		if _, ok := body["max_tokens"]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)
			return
		}
		reply(w, "hi")
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: o4-mini, base_url: BASE, max_tokens: 1000, stream: false, price: {input: 1.1, output: 4.4}}
budget: {max_cost_usd: 1}
agents:
  w: {role: Writer, goal: write}
tasks:
  a: {description: say hi, agent: w}
  b: {description: say it again, agent: w}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded || f.count() != 3 {
		t.Fatalf("run: %v, %+v after %d requests, want succeeded after 3\n%s", err, sum, f.count(), out)
	}
	for i, want := range []string{`"max_tokens":1000`, `"max_completion_tokens":1000`, `"max_completion_tokens":1000`} {
		if b := string(f.requestBody(i)); !strings.Contains(b, want) || i > 0 && strings.Contains(b, `"max_tokens"`) {
			t.Errorf("request %d sent %s, want %s", i+1, b, want)
		}
	}
	if u := sum.SessionUsage; u == nil || u.TotalTokens != 2*14 {
		t.Errorf("session usage %+v, want the two answers' 28 tokens", u)
	}
}

// A failure no new attempt can help (the account out of credit, a refused
// key, an unknown model) ends the task's attempts at once, max_retries or
// not: each retry would send the same request to the same account. Other
// failed attempts (an answer cut at max_tokens) are retried.
func TestFinalLLMErrorsEndAttempts(t *testing.T) {
	status := func(code int, body string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name     string
		reply    func(http.ResponseWriter)
		requests int
	}{
		{"quota", status(http.StatusTooManyRequests, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`), 1},
		{"key refused", status(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`), 1},
		{"forbidden", status(http.StatusForbidden, `{"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","code":"unsupported_country_region_territory"}}`), 1},
		{"unknown model", status(http.StatusNotFound, `{"error":{"message":"The model 'm' does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`), 1},
		{"cut at max_tokens", func(w http.ResponseWriter) { usageReply(w, "cut", "length", 5, 0, 5) }, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) { tc.reply(w) }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE, stream: false}
agents:
  w: {role: Writer}
tasks:
  a: {description: say hi, agent: w, max_retries: 2, retry_delay: 1ms}
`)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Failed || f.count() != tc.requests {
				t.Fatalf("run: %v, %+v after %d requests, want failed after %d\n%s", err, sum, f.count(), tc.requests, out)
			}
			if retried := strings.Count(out, `"event":"task_retrying"`); retried != tc.requests-1 {
				t.Errorf("%d task_retrying events, want %d\n%s", retried, tc.requests-1, out)
			}
		})
	}
}
