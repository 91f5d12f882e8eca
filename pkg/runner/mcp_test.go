package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// TestMain lets the test binary serve as a stdio MCP server, so that the
// MCP tests need nothing installed (no npx).
func TestMain(m *testing.M) {
	if os.Getenv("TEAMRUN_TEST_MCP_SERVER") == "1" {
		serveTestMCP()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

// serveTestMCP serves echo (it logs each call to $MCP_LOG and answers
// with the text and the task it ran for) and secret, over stdin/stdout.
// MCP_DIES=start makes it end before its handshake, MCP_DIES=call while
// it runs echo, each saying why on stderr first; start-late, list-late
// (when asked for its tools) and call-late close its stdout first, and
// say why only after the client has seen the connection end. banner
// writes a line that is not JSON-RPC on its stdout before its handshake,
// call-banner while it runs echo; call-hang never answers a call of echo.
func serveTestMCP() {
	switch os.Getenv("MCP_DIES") {
	case "banner":
		fmt.Println("test server 1.0 ready", os.Getenv("MCP_SAY"))
	case "start":
		fmt.Fprintln(os.Stderr, "test server: cannot open /nonexistent/db", os.Getenv("MCP_SAY"))
		os.Exit(1)
	case "start-late":
		dieLate("test server: cannot open /nonexistent/db", 1)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	if os.Getenv("MCP_DIES") == "list-late" {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					dieLate("test server: no tools today", 3)
				}
				return next(ctx, method, req)
			}
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo a text"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		f, err := os.OpenFile(os.Getenv("MCP_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, in.Text)
			f.Close()
		}
		switch os.Getenv("MCP_DIES") {
		case "call":
			fmt.Fprintln(os.Stderr, "test server: out of memory")
			os.Exit(2)
		case "call-late":
			dieLate("test server: out of memory", 2)
		case "call-banner":
			fmt.Println("echoing", in.Text)
		case "call-hang":
			select {} // never answers; the server lives on, reading its stdin
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("echo %s for %s (%s)", in.Text, os.Getenv("TEAMRUN_TASK"), os.Getenv("GREETING"))}}}, nil, nil
	})
	if os.Getenv("MCP_ODD_NAME") != "" { // a name MCP allows, Chat Completions not
		mcp.AddTool(s, &mcp.Tool{Name: "files.read", Description: "Read a file"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "read"}}}, nil, nil
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "secret", Description: "Not for agents"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the secret"}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// dieLate ends the connection (closes stdout) before the server says on
// stderr why it ends: the order a loaded machine may give to a server that
// writes its stderr and exits at once. The pause is that of a slow server,
// not a measure: the client must wait for the server's end, however long.
func dieLate(why string, code int) {
	os.Stdout.Close()
	time.Sleep(200 * time.Millisecond)
	fmt.Fprintln(os.Stderr, why)
	os.Exit(code)
}

func mcpTeam(t *testing.T, idempotent string) (string, string) {
	t.Helper()
	log := t.TempDir() + "/mcp.log"
	return fmt.Sprintf(`
mcp:
  servers:
    testsrv:
      command: [%q]
      env: {TEAMRUN_TEST_MCP_SERVER: "1", MCP_LOG: %q, GREETING: hello}
      tools: [echo]
      idempotent: [%s]
agents:
  a: {llm: {model: m, base_url: BASE}, tools: [testsrv]}
tasks:
  t: {description: d, agent: a}
`, os.Args[0], log, idempotent), log
}

// A stdio MCP server's allowed tools are offered and called; the others
// are neither offered nor callable.
func TestMCPTools(t *testing.T) {
	yaml, log := mcpTeam(t, "")
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		if n == 1 {
			return calls("c1", "echo", `{"text":"hi"}`, "c2", "secret", `{}`)
		}
		return answer("done")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, yaml)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	first := f.request(0)
	if len(first.Tools) != 1 || first.Tools[0].Function.Name != "echo" || first.Tools[0].Function.Parameters["type"] != "object" {
		t.Errorf("offered tools %+v", first.Tools)
	}
	if b, _ := os.ReadFile(log); string(b) != "hi\n" {
		t.Errorf("echo ran %q", b)
	}
	calls := p.session(t).ToolLogs["t"].Turns[0].Calls
	if calls[0].Result != "echo hi for t (hello)" || calls[0].IsError {
		t.Errorf("echo's result %+v", calls[0])
	}
	if !calls[1].IsError || !strings.Contains(calls[1].Result, `there is no tool "secret"`) {
		t.Errorf("secret's result %+v", calls[1])
	}
	// The tool list the model was offered is recorded by its digest.
	if d := p.session(t).ToolLogs["t"].MCP["testsrv"]; len(d) != 16 {
		t.Errorf("recorded digest %q", d)
	}
}

// A crash between an MCP tool's start and its result follows the rule of
// every tool: run again only when the server declared it idempotent when
// the call started (the start records it); declared since, it halts.
func TestMCPToolPendingAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		name         string
		started, now bool // declared idempotent when the call started, and today
		idempotent   bool // runs again
	}{
		{"not idempotent", false, false, false},
		{"idempotent", true, true, true},
		{"declared idempotent since", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idempotent := tc.idempotent
			names := ""
			if tc.now {
				names = "echo"
			}
			yaml, log := mcpTeam(t, names)
			f := &toolLLM{script: func(int, toolRequest) string { return answer("done") }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			team, err := spec.Parse("team.yaml", []byte(strings.ReplaceAll(yaml, "BASE", srv.URL+"/v1")))
			if err != nil {
				t.Fatal(err)
			}
			// What a run killed while echo ran leaves in the journal.
			var lg *checkpoint.ToolLog
			for _, r := range []checkpoint.Record{
				{Kind: checkpoint.ToolTurnRecorded, Task: "t", Attempt: 1, Tool: &checkpoint.ToolStep{Turn: 1, Calls: []checkpoint.ToolCall{{ID: "c1", Tool: "echo", Arguments: `{"text":"pay"}`}}}},
				{Kind: checkpoint.ToolStarted, Task: "t", Tool: &checkpoint.ToolStep{Turn: 1, Call: "c1", Name: "echo", Idempotent: tc.started}},
			} {
				lg = checkpoint.ApplyTool(lg, r)
			}
			// Recorded with another tool list: the resume says so.
			lg.MCP = map[string]string{"testsrv": "0123456789abcdef"}
			l := &LLMs{Getenv: func(string) string { return "" }}
			l.RestoreTools(map[string]*checkpoint.ToolLog{"t": lg})
			var warned []string
			job := &Job{Session: "s1", Task: team.Tasks[0], Agent: team.Agent("a"), Description: "d", Attempt: 2,
				Warn: func(m string) { warned = append(warned, m) }}
			res, err := l.Execute(context.Background(), job)
			b, _ := os.ReadFile(log)
			if !idempotent {
				var th *ToolHaltError
				if !errors.As(err, &th) || th.Tool != "echo" || th.Arguments != `{"text":"pay"}` {
					t.Fatalf("got %+v, %v; want a tool halt", res, err)
				}
				if len(b) != 0 || f.count() != 0 {
					t.Errorf("the halt ran echo (%q) or asked the model (%d)", b, f.count())
				}
				return
			}
			if err != nil || res.Raw != "done" || string(b) != "pay\n" || f.count() != 1 {
				t.Fatalf("got %+v, %v; echo ran %q; %d requests", res, err, b, f.count())
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "the tool list of MCP server testsrv changed since the recorded turns") {
				t.Errorf("warnings %q", warned)
			}
		})
	}
}

// A streamable HTTP server gets its headers from the named environment
// variables; the value never appears in the spec.
func TestMCPHTTPHeaders(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "http", Version: "1"}, nil)
	var mu sync.Mutex
	var seen []string
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + req.Extra.Header.Get("Authorization")}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		return s
	}, nil)
	mcpSrv := httptest.NewServer(h)
	defer mcpSrv.Close()
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		if n == 1 {
			return calls("c1", "whoami", `{}`)
		}
		return answer("done")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, fmt.Sprintf(`
mcp:
  servers:
    remote: {url: %q, headers: {Authorization: REMOTE_TOKEN}}
agents:
  a: {llm: {model: m, base_url: BASE}, tools: [remote]}
tasks:
  t: {description: d, agent: a}
`, mcpSrv.URL))
	p.env["REMOTE_TOKEN"] = "Bearer t0ken"
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	c := p.session(t).ToolLogs["t"].Turns[0].Calls[0]
	mu.Lock()
	defer mu.Unlock()
	// The server got the value; what it echoed of it is redacted
	// (TestMCPHeaderValueRedacted).
	if c.Result != "you are [REDACTED]" || len(seen) == 0 || seen[0] != "Bearer t0ken" {
		t.Errorf("result %q, headers seen %q", c.Result, seen)
	}
	spec, _ := os.ReadFile(p.dir + "/team.yaml")
	if strings.Contains(string(spec), "t0ken") {
		t.Error("the token is in the spec")
	}
	// Without the variable, the attempt fails naming it, not the value.
	delete(p.env, "REMOTE_TOKEN")
	p2 := newProject(t, srv.URL, string(spec))
	sum, _, err = p2.run(t, false)
	tr, _ := p2.session(t).Task("t")
	if err != nil || sum.Outcome != Failed || !strings.Contains(tr.Error, "header Authorization comes from $REMOTE_TOKEN, which is not set") {
		t.Errorf("without the variable: %v, %+v, %q", err, sum, tr.Error)
	}
}

// A header value teamrun sends to an MCP server is a secret as an API key
// is: what the server echoes of it, in a tool's result or in the error
// that refuses the handshake, is redacted before it is recorded, shown or
// sent to the model.
func TestMCPHeaderValueRedacted(t *testing.T) {
	const token = "Bearer mcp-t0ken-0123456789"
	s := mcp.NewServer(&mcp.Implementation{Name: "http", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are " + req.Extra.Header.Get("Authorization")}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	refuse := false
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse {
			// A gateway that says which token it refused.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"token %s is not valid"}}`, r.Header.Get("Authorization"))
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer mcpSrv.Close()
	yaml := fmt.Sprintf(`
mcp:
  servers:
    remote: {url: %q, headers: {Authorization: REMOTE_TOKEN}}
agents:
  a: {llm: {model: m, base_url: BASE}, tools: [remote]}
tasks:
  t: {description: d, agent: a}
`, mcpSrv.URL)
	for _, tc := range []struct {
		name    string
		refuse  bool
		outcome Outcome
	}{{"echoed in a result", false, Succeeded}, {"echoed in a refusal", true, Failed}} {
		t.Run(tc.name, func(t *testing.T) {
			refuse = tc.refuse
			f := &toolLLM{script: func(n int, _ toolRequest) string {
				if n == 1 {
					return calls("c1", "whoami", `{}`)
				}
				return answer("done")
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, yaml)
			p.env["REMOTE_TOKEN"] = token
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != tc.outcome {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			b, err := p.sessionFileBytes()
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			reqs, _ := json.Marshal(f.reqs)
			f.mu.Unlock()
			for what, text := range map[string]string{"the output": out, "the session": string(b), "the model's requests": string(reqs)} {
				if strings.Contains(text, "t0ken-0123456789") {
					t.Errorf("%s holds the header's value:\n%s", what, text)
				}
			}
			if !strings.Contains(out, "[REDACTED]") {
				t.Errorf("nothing was redacted:\n%s", out)
			}
		})
	}
}

// A stdio server that ends (or cannot start) is reported in the user's
// words, with the end of its stderr, where a server says what it lacks:
// at the handshake, the attempt fails; during a call, the model reads it
// as the call's error result.
func TestMCPServerEnds(t *testing.T) {
	for _, tc := range []struct {
		dies, command string
		want          string // in the task's error or the call's result
		later         string // in the next call's result, if set
	}{
		{"start", os.Args[0], "MCP server testsrv: it ended before its MCP handshake; its stderr ends: test server: cannot open /nonexistent/db", ""},
		{"", "/nonexistent/mcp-server", "MCP server testsrv: cannot start /nonexistent/mcp-server: no such file or directory", ""},
		{"call", os.Args[0], "error: MCP server testsrv ended or closed its connection: if it did during this call, what the call did is unknown; its stderr ends: test server: out of memory", ""},
		// Its stderr read after its connection ended: the message waits for it.
		{"start-late", os.Args[0], "MCP server testsrv: it ended before its MCP handshake; its stderr ends: test server: cannot open /nonexistent/db", ""},
		{"list-late", os.Args[0], "MCP server testsrv: listing its tools: it ended before it answered; its stderr ends: test server: no tools today", ""},
		{"call-late", os.Args[0], "error: MCP server testsrv ended or closed its connection: if it did during this call, what the call did is unknown; its stderr ends: test server: out of memory", ""},
		// A line on stdout that is not JSON-RPC is the server's mistake,
		// told as such: it did not end.
		{"banner", os.Args[0], "MCP server testsrv: it wrote a line that is not JSON-RPC on its stdout (`test server 1.0 ready `): an MCP stdio server must write only protocol messages there; log to stderr", ""},
		{"call-banner", os.Args[0], "error: MCP server testsrv: it wrote a line that is not JSON-RPC on its stdout (`echoing hi`): an MCP stdio server must write only protocol messages there; log to stderr; teamrun closed its connection during this call, so what the call did is unknown",
			"error: MCP server testsrv: it wrote a line that is not JSON-RPC on its stdout (`echoing hi`): an MCP stdio server must write only protocol messages there; log to stderr; teamrun closed its connection before this call, which never reached it"},
	} {
		t.Run(tc.dies+" "+tc.want[:40], func(t *testing.T) {
			yaml, _ := mcpTeam(t, "")
			yaml = strings.Replace(yaml, fmt.Sprintf("command: [%q]", os.Args[0]), fmt.Sprintf("command: [%q]", tc.command), 1)
			yaml = strings.Replace(yaml, "GREETING: hello", "GREETING: hello, MCP_DIES: \""+tc.dies+"\"", 1)
			f := &toolLLM{script: func(n int, _ toolRequest) string {
				if n == 1 {
					return calls("c1", "echo", `{"text":"hi"}`, "c2", "echo", `{"text":"again"}`)
				}
				return answer("done")
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, yaml)
			_, out, err := p.run(t, false)
			if err != nil {
				t.Fatal(err)
			}
			sess := p.session(t)
			tr, _ := sess.Task("t")
			got := tr.Error
			if lg := sess.ToolLogs["t"]; lg != nil {
				got = lg.Turns[0].Calls[0].Result
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q\n%s", got, tc.want, out)
			}
			if tc.later != "" {
				if later := sess.ToolLogs["t"].Turns[0].Calls[1].Result; later != tc.later {
					t.Errorf("the next call's result %q, want %q", later, tc.later)
				}
			}
			for _, internal := range []string{"client is closing", "fork/exec", "EOF", "invalid character"} {
				if strings.Contains(got, internal) {
					t.Errorf("%q says %q", got, internal)
				}
			}
		})
	}
}

// A call its server never answers ends at the server's timeout: an error
// result that says so and that what the call did is unknown, as a command
// tool's timeout says, and the loop goes on (the next call meets the same).
func TestMCPCallTimeout(t *testing.T) {
	yaml, log := mcpTeam(t, "")
	yaml = strings.Replace(yaml, "GREETING: hello}", "GREETING: hello, MCP_DIES: call-hang}\n      timeout: 300ms", 1)
	// Without the server's timeout, the task's ends the hung attempt.
	yaml = strings.Replace(yaml, "agent: a}", "agent: a, timeout: 20s}", 1)
	f := &toolLLM{script: func(n int, _ toolRequest) string {
		if n == 1 {
			return calls("c1", "echo", `{"text":"hi"}`, "c2", "echo", `{"text":"again"}`)
		}
		return answer("done")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, yaml)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	const want = "error: MCP server testsrv: timed out after 300ms (mcp.servers.testsrv.timeout) (it was stopped before it ended: what it did is unknown; check its effect before you call it again)"
	second := f.request(1)
	var results []string
	for _, m := range second.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || results[0] != want || results[1] != want {
		t.Errorf("the model read %q, want twice %q", results, want)
	}
	if b, _ := os.ReadFile(log); string(b) != "hi\nagain\n" {
		t.Errorf("the server got the calls %q", b)
	}
}

// What a run tells of a server that cannot be reached quotes what the
// server printed, its stderr or the line on its stdout that is not
// JSON-RPC: a key the server prints there (one it was given, or found in
// teamrun's environment) is redacted in the output and the session.
func TestMCPHandshakeErrorRedacted(t *testing.T) {
	const key = "sk-handshake-secret-0123456789"
	for dies, want := range map[string]string{
		"start": "its stderr ends: test server: cannot open /nonexistent/db [REDACTED]",
		// The line it wrote on stdout is quoted as its stderr is.
		"banner": "it wrote a line that is not JSON-RPC on its stdout (`test server 1.0 ready [REDACTED]`)",
	} {
		t.Run(dies, func(t *testing.T) {
			yaml, _ := mcpTeam(t, "")
			yaml = strings.Replace(yaml, "GREETING: hello", "GREETING: hello, MCP_DIES: "+dies+", MCP_SAY: "+key, 1)
			yaml = strings.Replace(yaml, "base_url: BASE", "base_url: BASE, api_key_env: TEST_KEY", 1)
			srv := httptest.NewServer(&toolLLM{script: func(int, toolRequest) string { return answer("done") }})
			defer srv.Close()
			p := newProject(t, srv.URL, yaml)
			p.env["TEST_KEY"] = key
			_, out, err := p.run(t, false)
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.sessionFileBytes()
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := p.session(t).Task("t")
			if !strings.Contains(tr.Error, want) {
				t.Errorf("the task's error %q, want %q", tr.Error, want)
			}
			for what, text := range map[string]string{"the output": out, "the session": string(b)} {
				if strings.Contains(text, "0123456789") {
					t.Errorf("%s holds the key:\n%s", what, text)
				}
			}
		})
	}
}

// A server still silent when the task's timeout ends the attempt: the
// failure names that timeout, not the handshake's own limit of 30s.
func TestMCPHandshakeStoppedByTheTaskTimeout(t *testing.T) {
	yaml, _ := mcpTeam(t, "")
	yaml = strings.Replace(yaml, fmt.Sprintf("command: [%q]", os.Args[0]), `command: [sleep, "60"]`, 1)
	yaml = strings.Replace(yaml, "t: {description: d, agent: a}", "t: {description: d, agent: a, timeout: 200ms}", 1)
	p := newProject(t, "http://127.0.0.1:9", yaml)
	if _, out, err := p.run(t, false); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tr, _ := p.session(t).Task("t")
	want := "timed out after 200ms (tasks.t.timeout): MCP server testsrv: stopped before it answered its MCP handshake; it wrote nothing on stderr"
	if tr.Error != want {
		t.Errorf("error %q, want %q", tr.Error, want)
	}
}

// Two tools under one name (two servers list it, or a server lists the
// name of the spec's tool) is a configuration error: it fails the task
// once, naming both sources, however many retries the task has, and
// nothing is asked of the model.
func TestMCPToolNameClash(t *testing.T) {
	server := func(name string) string {
		return fmt.Sprintf(`    %s: {command: [%q], env: {TEAMRUN_TEST_MCP_SERVER: "1", MCP_LOG: %q}, tools: [echo]}
`, name, os.Args[0], t.TempDir()+"/mcp.log")
	}
	tests := []struct{ name, yaml, want string }{
		{"two servers", "mcp:\n  servers:\n" + server("s1") + server("s2") + `agents:
  a: {llm: {model: m, base_url: BASE}, tools: [s1, s2]}
`, `agent "a" gets two tools named echo, from MCP server s1 and from MCP server s2`},
		{"a server and the spec's tool", "mcp:\n  servers:\n" + server("s1") + `tools:
  echo: {shell: 'echo hi'}
agents:
  a: {llm: {model: m, base_url: BASE}, tools: [echo, s1]}
`, `agent "a" gets two tools named echo, from tools.echo of the spec and from MCP server s1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &toolLLM{script: func(int, toolRequest) string { return answer("done") }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, tc.yaml+"tasks:\n  t: {description: d, agent: a, max_retries: 3, retry_delay: 1ms}\n")
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Failed {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			tr, _ := p.session(t).Task("t")
			if tr.Attempts != 1 || !strings.Contains(tr.Error, tc.want) || !strings.Contains(tr.Error, "not retried") {
				t.Errorf("%d attempts, error %q; want 1 attempt and %q", tr.Attempts, tr.Error, tc.want)
			}
			if f.count() != 0 {
				t.Errorf("%d model requests, want none", f.count())
			}
		})
	}
}

// A tool an MCP server lists under a name the model cannot be offered is
// left out with a warning naming the task, the server and the tool; an
// allow-list that names one is refused by the spec's own check (the
// schema's toolName, testdata/script/validate_mcp_allow_name.txtar), and a
// Go caller's by ConnectMCP (pkg/runner/tools).
func TestMCPToolNameNotOffered(t *testing.T) {
	const want = `task t: MCP server testsrv lists a tool named \"files.read\", which no model can be offered`
	yaml, _ := mcpTeam(t, "")
	yaml = strings.Replace(yaml, "GREETING: hello}", "GREETING: hello, MCP_ODD_NAME: \"1\"}", 1)
	yaml = strings.Replace(yaml, "tools: [echo]", "tools: []", 1)
	f := &toolLLM{script: func(int, toolRequest) string { return answer("done") }}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, yaml)
	sum, out, err := p.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != Succeeded || !strings.Contains(out, want) {
		t.Errorf("%s; want the warning %q in\n%s", sum.Outcome, want, out)
	}
	for _, tl := range f.request(0).Tools {
		if tl.Function.Name == "files.read" {
			t.Errorf("files.read was offered to the model")
		}
	}
}

// An MCP server url's credentials (its password, a credential query
// parameter) are secrets: a failure to reach it names its key, not the
// url, and what a server that refuses the handshake echoes of the url
// (and of the Basic auth the password is sent as) is redacted, neither
// in the output nor in the session.
func TestMCPURLSecrets(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there now
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		msg := fmt.Sprintf("no access to %s for %s", r.URL, r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":%q}}`, msg)
	}))
	defer echo.Close()
	const creds = "user:PWSECRET-abcdefgh1234"
	basic := base64.StdEncoding.EncodeToString([]byte(creds))
	srv := httptest.NewServer(&toolLLM{script: func(int, toolRequest) string { return answer("done") }})
	defer srv.Close()
	for _, tc := range []struct {
		name, url, want string
	}{
		{"unreachable", gone.URL, "(the URL comes from mcp.servers.remote.url: check it)"},
		{"echoed by the server", echo.URL, "api_key=[REDACTED]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := strings.Replace(tc.url, "http://", "http://"+creds+"@", 1) + "/mcp?api_key=QSECRET-zyxwvut9876"
			p := newProject(t, srv.URL, fmt.Sprintf(`
mcp:
  servers:
    remote: {url: %q}
agents:
  a: {llm: {model: m, base_url: BASE}, tools: [remote]}
tasks:
  t: {description: d, agent: a}
`, u))
			sum, out, err := p.run(t, false)
			if sum == nil || sum.Outcome != Failed {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			b, err := p.sessionFileBytes()
			if err != nil {
				t.Fatal(err)
			}
			for what, text := range map[string]string{"the output": out, "the session": string(b)} {
				if strings.Contains(text, "QSECRET") || strings.Contains(text, "PWSECRET") || strings.Contains(text, basic) {
					t.Errorf("%s holds a credential of the url:\n%s", what, text)
				}
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("the output does not say %q:\n%s", tc.want, out)
			}
		})
	}
}
