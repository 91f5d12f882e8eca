package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teamrun/teamrun/internal/testenv"
)

// crashLLM is the model of the crash tests: its first answer calls
// charge({"amount":5}); any later one answers with the tool's result.
// It counts the requests; with blockSecond it holds the second request
// open until the client goes away, so that the test can kill teamrun
// after the tool's result is on disk and before the answer.
type crashLLM struct {
	mu          sync.Mutex
	bodies      []string
	blockSecond bool
	second      chan struct{}
}

func (f *crashLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	n := len(f.bodies)
	block := f.blockSecond && n == 2
	f.mu.Unlock()
	if block {
		close(f.second)
		<-r.Context().Done()
		return
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "tool" {
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"charge","arguments":"{\"amount\":5}"}}]},"finish_reason":"tool_calls"}],`+crashUsage+`}`)
		return
	}
	answer, _ := json.Marshal("charged: " + strings.TrimSpace(last.Content))
	fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],%s}`, answer, crashUsage)
}

// crashUsage is what every answer of crashLLM reports: 12 tokens.
const crashUsage = `"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}`

func (f *crashLLM) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies...)
}

type crashProject struct {
	dir  string
	spec string
}

// newCrashProject writes a team whose charge tool logs each run to runs
// and, the first time, blocks (after touching ready) until it is killed.
func newCrashProject(t *testing.T, base string, idempotent bool) *crashProject {
	t.Helper()
	dir := t.TempDir()
	spec := fmt.Sprintf(`
tools:
  charge:
    description: Charge the customer
    parameters: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    shell: 'echo "$TEAMRUN_ARG_AMOUNT" >> %[1]s/runs; if [ ! -e %[1]s/ready ]; then touch %[1]s/ready; exec sleep 120; fi; echo "charged $TEAMRUN_ARG_AMOUNT"'
    idempotent: %[3]v
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: %[2]s/v1}, tools: [charge]}
tasks:
  # Retries: a decided fail must still not start the loop afresh.
  work: {description: Charge the customer 5, agent: clerk, max_retries: 2, retry_delay: 10ms}
`, dir, base, idempotent)
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	if err := os.WriteFile(p.spec, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *crashProject) command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(p.dir, "home"), "NO_COLOR=1")
	cmd.Dir = p.dir
	return cmd
}

// teamrun runs the binary to its end: its output and exit code.
func (p *crashProject) teamrun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := p.command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// crash starts a run and kills its whole process group with SIGKILL once
// ready says so; a run that ends before that fails the test.
func (p *crashProject) crash(t *testing.T, ready func() bool) {
	t.Helper()
	if out, killed := p.killWhen(t, ready, "run", p.spec, "--session", "s1"); !killed {
		t.Fatalf("the run ended before the point of the crash:\n%s", out)
	}
}

// killWhen starts teamrun with args in a process group of its own and
// kills the group with SIGKILL once ready says so: its output, and
// whether the kill ended it (false: it ended by itself first). ready is
// asked every millisecond, not every 25: a point that lasts a few
// milliseconds (a file being written) was passed unseen on a loaded
// machine, and the test then waited for a point already gone. The
// deadline is only a safety net for a run stuck short of the point.
func (p *crashProject) killWhen(t *testing.T, ready func() bool, args ...string) (string, bool) {
	t.Helper()
	cmd := p.command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(5 * time.Minute)
	defer deadline.Stop()
	for !ready() {
		select {
		case <-done:
			return out.String(), false
		case <-deadline.C:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("the run never got to the point of the crash:\n%s", out.String())
		case <-tick.C:
		}
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return out.String(), true
	}
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatal(err)
	}
	return out.String(), false // it ended by itself as ready came to hold
}

func (p *crashProject) runs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func (p *crashProject) exists(name string) func() bool {
	return func() bool {
		_, err := os.Stat(filepath.Join(p.dir, name))
		return err == nil
	}
}

// kill -9 while a tool that is not idempotent runs: --continue halts with
// exit 3 and the decide commands, without running it or asking the model;
// each decision then settles the call.
func TestToolCrashNotIdempotent(t *testing.T) {
	tests := []struct {
		decision string
		code     int
		runs     int    // of the tool, in all
		has      string // in the last run's output
		toolMsg  string // in the model's last request
	}{
		{"unknown", 0, 1, "charged: error: the outcome of this call is unknown", "the outcome of this call is unknown"},
		{"rerun", 0, 2, "charged: charged 5", "charged 5"},
		{"fail", 1, 1, "decided: fail", ""},
	}
	for _, tc := range tests {
		t.Run(tc.decision, func(t *testing.T) {
			f := &crashLLM{}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newCrashProject(t, srv.URL, false)
			p.crash(t, p.exists("ready"))
			if n := len(f.requests()); n != 1 {
				t.Fatalf("%d model requests before the crash, want 1", n)
			}

			out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
			if code != 3 {
				t.Fatalf("--continue exited %d, want 3 (halted):\n%s", code, out)
			}
			for _, want := range []string{
				`halted: task "work": a call of tool charge needs a decision`,
				`tool charge was started with {"amount":5}`,
				"teamrun session decide s1 work rerun", "teamrun session decide s1 work fail", "teamrun session decide s1 work unknown",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the halt lacks %q:\n%s", want, out)
				}
			}
			if p.runs(t) != 1 || len(f.requests()) != 1 {
				t.Fatalf("the halted run ran the tool (%d runs) or asked the model (%d requests)", p.runs(t), len(f.requests()))
			}
			// The summary names the call and the decide line, not a
			// "human decision"; the checkpoint has the task waiting, not
			// running (which `session list` would call interrupted).
			if !strings.Contains(out, `summary halted for a decision on task work's call of tool charge with {"amount":5} (teamrun session decide s1 work rerun|fail|unknown)`) ||
				strings.Contains(out, "human decision") {
				t.Errorf("the summary does not name the tool call:\n%s", out)

			}
			if out, _ := p.teamrun(t, "session", "show", "s1"); !regexp.MustCompile(`(?m)^work +\S+ +halted +2 `).MatchString(out) ||
				!strings.Contains(out, "halted for a decision: tool charge") {
				t.Errorf("session show does not show work halted:\n%s", out)
			}
			if out, _ := p.teamrun(t, "session", "list", "--status", "halted"); !strings.Contains(out, "s1") {
				t.Errorf("session list does not list s1 as halted:\n%s", out)
			}
			if out, _ := p.teamrun(t, "session", "show", "s1", "--json"); strings.Contains(out, `"status": "running"`) || strings.Contains(out, `"status":"running"`) {
				t.Errorf("the halted task is recorded as running:\n%s", out)
			}

			if out, _ := p.teamrun(t, "session", "show", "s1", "--task", "work"); !strings.Contains(out, "unknown: started, no result recorded") ||
				!regexp.MustCompile(`(?m)^status +halted \(attempts: 2\)`).MatchString(out) {
				t.Errorf("session show --task does not show the unsettled call:\n%s", out)
			}
			if out, code := p.teamrun(t, "session", "decide", "s1", "work", "maybe"); code != 2 || !strings.Contains(out, "decide rerun, fail, unknown") {
				t.Errorf("a bad decision: exit %d\n%s", code, out)
			}
			if out, code := p.teamrun(t, "session", "decide", "s1", "work", tc.decision); code != 0 {
				t.Fatalf("decide: exit %d\n%s", code, out)
			}
			out, code = p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
			if code != tc.code || !strings.Contains(out, tc.has) {
				t.Fatalf("after deciding %s: exit %d, want %d and %q:\n%s", tc.decision, code, tc.code, tc.has, out)
			}
			if p.runs(t) != tc.runs {
				t.Errorf("the tool ran %d times, want %d", p.runs(t), tc.runs)
			}
			if tc.decision == "fail" && len(f.requests()) != 1 {
				t.Errorf("a decided fail asked the model again (%d requests): it was retried", len(f.requests()))
			}
			reqs := f.requests()
			if tc.toolMsg != "" && (len(reqs) != 2 || !strings.Contains(reqs[1], `"tool_call_id":"c1"`) || !strings.Contains(reqs[1], tc.toolMsg)) {
				t.Errorf("%d requests; the last: %s", len(reqs), reqs[len(reqs)-1])
			}
			if tc.decision != "fail" {
				// Settled: another --continue runs nothing.
				if out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1"); code != 0 || !strings.Contains(out, "1 restored, 0 ran") {
					t.Errorf("a second --continue: exit %d\n%s", code, out)
				}
			}
		})
	}
}

// kill -9 while an idempotent tool runs: --continue runs it again and
// finishes.
func TestToolCrashIdempotent(t *testing.T) {
	f := &crashLLM{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newCrashProject(t, srv.URL, true)
	p.crash(t, p.exists("ready"))
	out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	if code != 0 || !strings.Contains(out, "summary done") {
		t.Fatalf("--continue: exit %d\n%s", code, out)
	}
	if p.runs(t) != 2 || len(f.requests()) != 2 {
		t.Errorf("%d tool runs and %d model requests, want 2 and 2", p.runs(t), len(f.requests()))
	}
	if !strings.Contains(out, "charged: charged 5") {
		t.Errorf("output:\n%s", out)
	}
}

// kill -9 once the tool's result is on disk, while the model is asked
// again: --continue does not run the tool again and makes exactly one more
// model request, which carries the recorded result under its call's id.
func TestToolCrashAfterResult(t *testing.T) {
	f := &crashLLM{blockSecond: true, second: make(chan struct{})}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newCrashProject(t, srv.URL, false)
	// The tool must not block this time: it finds ready already there.
	if err := os.WriteFile(filepath.Join(p.dir, "ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.crash(t, func() bool {
		select {
		case <-f.second:
			return true
		default:
			return false
		}
	})
	if p.runs(t) != 1 || len(f.requests()) != 2 {
		t.Fatalf("before the crash: %d tool runs, %d requests", p.runs(t), len(f.requests()))
	}
	out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	if code != 0 || !strings.Contains(out, "charged: charged 5") {
		t.Fatalf("--continue: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "tool loop resumed after turn 1; recorded results replayed, not run again") {
		t.Errorf("the resume is not said:\n%s", out)
	}
	// What the cut attempt paid is told as the loop resumes: replayed, so
	// not paid again (a task that starts over says it is); and the
	// request under way at the kill, counted as an interrupted one.
	if !strings.Contains(out, "task work was cut off in attempt 1 after paying for 12 tokens (cost unknown) and with a request that may have been under way, counted as 1 interrupted request of unknown usage (estimated from its size: ") ||
		!strings.Contains(out, "), which the session's totals count: its tool loop resumes after turn 1: the recorded turns are replayed, not paid again") ||
		strings.Contains(out, "is paid again") {
		t.Errorf("the warning on what the cut attempt paid is not the resumed loop's:\n%s", out)
	}
	// The turn the killed run recorded was paid for: the session counts
	// it (it would otherwise be lost with the attempt), and the request
	// under way; this run the new request alone.
	if !strings.Contains(out, "tokens:  this run 12 tokens (cost unknown); session 24 tokens (cost unknown) + 1 interrupted request of unknown usage (estimated from its size: ") {
		t.Errorf("the tokens of the recorded turn are lost:\n%s", out)
	}
	reqs := f.requests()
	if p.runs(t) != 1 || len(reqs) != 3 {
		t.Fatalf("%d tool runs and %d model requests, want 1 and 3", p.runs(t), len(reqs))
	}
	if !strings.Contains(reqs[2], `"tool_call_id":"c1"`) || !strings.Contains(reqs[2], `charged 5`) {
		t.Errorf("the resumed request lacks the recorded result: %s", reqs[2])
	}
	// session show --task: the call, its size, and that it was replayed.
	out, code = p.teamrun(t, "session", "show", "s1", "--task", "work")
	row := regexp.MustCompile(`(?m)^1\s+charge\s+\{"amount":5\}\s+\S+\s+10 bytes\s+yes \(1\)$`)
	if code != 0 || !row.MatchString(out) || !strings.Contains(out, "1 turns with 1 calls (attempt 1), ended: completed; resumed 1 times") {
		t.Errorf("session show --task: exit %d\n%s", code, out)
	}
	if out, code := p.teamrun(t, "session", "show", "s1", "--task", "wrok"); code != 2 || !strings.Contains(out, `has no task "wrok"; its tasks: work`) {
		t.Errorf("an unknown task: exit %d\n%s", code, out)
	}
	// Restored, its result is worth both turns, the one the killed
	// attempt paid included: running it again would pay both, and the
	// request the kill cut off, estimated, as --json's restored_usage says.
	out, code = p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	if code != 0 || !regexp.MustCompile(`whose 24 tokens \(cost unknown\) \+ 1 interrupted request of unknown usage \(estimated from its size: [0-9]+ tokens\) were not paid again`).MatchString(out) {
		t.Errorf("a full restore: exit %d\n%s", code, out)
	}
}

type chargeArgs struct {
	Amount int `json:"amount"`
}

// serveCrashMCP serves charge over stdio: like the shell tool of these
// tests, it logs each call to $CRASH_DIR/runs and, the first time, blocks
// after touching ready. It logs each start to $CRASH_DIR/starts.
func serveCrashMCP() {
	dir := os.Getenv("CRASH_DIR")
	if f, err := os.OpenFile(filepath.Join(dir, "starts"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "crash", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "charge", Description: "Charge the customer"}, func(_ context.Context, _ *mcp.CallToolRequest, in chargeArgs) (*mcp.CallToolResult, any, error) {
		if f, err := os.OpenFile(filepath.Join(dir, "runs"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, in.Amount)
			f.Close()
		}
		if _, err := os.Stat(filepath.Join(dir, "ready")); err != nil {
			_ = os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
			time.Sleep(2 * time.Minute)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("charged %d", in.Amount)}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// kill -9 while an MCP tool runs follows the rule of command tools: a
// tool the server's entry does not declare idempotent halts the resumed
// run; a declared one runs again.
func TestToolCrashMCP(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotent=%v", idempotent), func(t *testing.T) {
			f := &crashLLM{}
			srv := httptest.NewServer(f)
			defer srv.Close()
			dir := t.TempDir()
			idem := ""
			if idempotent {
				idem = "charge"
			}
			p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
			spec := fmt.Sprintf(`
mcp:
  servers:
    billing:
      command: [%q]
      env: {TEAMRUN_TEST_MCP_SERVER: "1", CRASH_DIR: %q}
      idempotent: [%s]
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: %s/v1}, tools: [billing]}
tasks:
  work: {description: Charge the customer 5, agent: clerk}
`, os.Args[0], dir, idem, srv.URL)
			if err := os.WriteFile(p.spec, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			p.crash(t, p.exists("ready"))
			out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
			if !idempotent {
				if code != 3 || !strings.Contains(out, `halted: task "work": a call of tool charge needs a decision`) || p.runs(t) != 1 {
					t.Fatalf("exit %d, %d runs:\n%s", code, p.runs(t), out)
				}
				// plan says the run halts, and starts no server: it is read
				// only (the run says if the server's tool list changed).
				starts, _ := os.ReadFile(filepath.Join(dir, "starts"))
				out, code = p.teamrun(t, "plan", p.spec, "--session", "s1")
				if code != 0 || !strings.Contains(out, "its tool loop resumes after turn 1") || !strings.Contains(out, "the run halts here (exit 3)") || p.runs(t) != 1 {
					t.Errorf("plan: exit %d, %d runs:\n%s", code, p.runs(t), out)
				}
				if now, _ := os.ReadFile(filepath.Join(dir, "starts")); len(starts) == 0 || !bytes.Equal(now, starts) {
					t.Errorf("plan started the MCP server: its starts were %q, now %q", starts, now)
				}
				return
			}
			if code != 0 || !strings.Contains(out, "charged: charged 5") || p.runs(t) != 2 {
				t.Fatalf("exit %d, %d runs:\n%s", code, p.runs(t), out)
			}
		})
	}
}

// turnLLM's first answer calls charge three times in one turn (amounts
// 1, 2, 3); any later one answers with the tool results it was given.
type turnLLM struct{ crashLLM }

func (f *turnLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	f.mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	var results []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			results = append(results, strings.TrimSpace(m.Content))
		}
	}
	if len(results) == 0 {
		call := func(n int) string {
			return fmt.Sprintf(`{"id":"c%d","type":"function","function":{"name":"charge","arguments":"{\"amount\":%d}"}}`, n, n)
		}
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[%s,%s,%s]},"finish_reason":"tool_calls"}],%s}`, call(1), call(2), call(3), crashUsage)
		return
	}
	answer, _ := json.Marshal("results: " + strings.Join(results, " / "))
	fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],%s}`, answer, crashUsage)
}

// kill -9 while the second of three calls of one turn runs: --continue
// replays the first (never run again), settles the second by the tool's
// idempotency or the decision, then runs the third, which had not
// started, once; the session counts each model request once.
func TestToolCrashMidTurn(t *testing.T) {
	for _, tc := range []struct {
		name       string
		idempotent bool
		decision   string
		runs       string // the tool's runs, in order, of all the runs
		answer     string
	}{
		{"not idempotent, rerun", false, "rerun", "1 2 2 3", "results: charged 1 / charged 2 / charged 3"},
		{"not idempotent, unknown", false, "unknown", "1 2 3", "results: charged 1 / error: the outcome of this call is unknown"},
		{"idempotent", true, "", "1 2 2 3", "results: charged 1 / charged 2 / charged 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &turnLLM{}
			srv := httptest.NewServer(f)
			defer srv.Close()
			dir := t.TempDir()
			p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
			spec := fmt.Sprintf(`
tools:
  charge:
    description: Charge the customer
    parameters: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    shell: 'echo "$TEAMRUN_ARG_AMOUNT" >> %[1]s/runs; if [ "$TEAMRUN_ARG_AMOUNT" = 2 ] && [ ! -e %[1]s/ready ]; then touch %[1]s/ready; exec sleep 120; fi; echo "charged $TEAMRUN_ARG_AMOUNT"'
    idempotent: %[3]v
agents:
  clerk: {role: Clerk, llm: {model: m, base_url: %[2]s/v1}, tools: [charge]}
tasks:
  work: {description: Charge the customer thrice, agent: clerk}
`, dir, srv.URL, tc.idempotent)
			if err := os.WriteFile(p.spec, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			runs := func() string {
				b, _ := os.ReadFile(filepath.Join(dir, "runs"))
				return strings.Join(strings.Fields(string(b)), " ")
			}
			p.crash(t, p.exists("ready"))
			if runs() != "1 2" || len(f.requests()) != 1 {
				t.Fatalf("before the crash: runs %q, %d requests", runs(), len(f.requests()))
			}
			if tc.decision != "" {
				out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
				if code != 3 || !strings.Contains(out, `tool charge was started with {"amount":2}`) || runs() != "1 2" || len(f.requests()) != 1 {
					t.Fatalf("--continue: exit %d, runs %q, %d requests:\n%s", code, runs(), len(f.requests()), out)
				}
				if out, code := p.teamrun(t, "session", "decide", "s1", "work", tc.decision); code != 0 {
					t.Fatalf("decide: exit %d\n%s", code, out)
				}
			}
			out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
			if code != 0 || !strings.Contains(out, tc.answer) {
				t.Fatalf("--continue: exit %d, want the answer %q:\n%s", code, tc.answer, out)
			}
			if runs() != tc.runs || len(f.requests()) != 2 {
				t.Errorf("runs %q, want %q; %d model requests, want 2", runs(), tc.runs, len(f.requests()))
			}
			if !strings.Contains(out, "tokens:  this run 12 tokens (cost unknown); session 24 tokens (cost unknown)") {
				t.Errorf("the session does not count each request once:\n%s", out)
			}
			// Settled and done: nothing runs again.
			if out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1"); code != 0 || !strings.Contains(out, "1 restored, 0 ran") || runs() != tc.runs {
				t.Errorf("a second --continue: exit %d, runs %q\n%s", code, runs(), out)
			}
		})
	}
}

// The crash rule against a real server (Ollama's tiny-tools, which calls
// get_time({"zone":"UTC"}) and then answers "The time is noon."): kill -9
// while the tool, not idempotent, runs; --continue halts (exit 3) without
// running it or asking the model; each decision lets the run go on, and
// the tool ran as often as the decision says.
func TestRealLLMToolCrash(t *testing.T) {
	base := testenv.LLMBaseURL(t)
	for _, tc := range []struct {
		decision string
		runs     int
	}{{"rerun", 2}, {"unknown", 1}} {
		t.Run(tc.decision, func(t *testing.T) {
			dir := t.TempDir()
			p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
			spec := fmt.Sprintf(`
tools:
  get_time:
    description: Current time in an IANA time zone
    parameters: {type: object, properties: {zone: {type: string}}, required: [zone]}
    shell: 'echo "$TEAMRUN_ARG_ZONE" >> %[1]s/runs; if [ ! -e %[1]s/ready ]; then touch %[1]s/ready; exec sleep 120; fi; echo 12:00'
agents:
  clock: {role: Timekeeper, llm: {model: tiny-tools, base_url: %[2]s}, tools: [get_time], max_turns: 4}
tasks:
  now: {description: "What time is it in UTC?", agent: clock}
`, dir, base)
			if err := os.WriteFile(p.spec, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			p.crash(t, p.exists("ready"))
			out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
			if code != 3 || !strings.Contains(out, `tool get_time was started with {"zone":"UTC"}`) || p.runs(t) != 1 ||
				!strings.Contains(out, "tokens:  this run 0 tokens; session ") {
				t.Fatalf("--continue: exit %d, %d runs:\n%s", code, p.runs(t), out)
			}
			if out, code := p.teamrun(t, "session", "decide", "s1", "now", tc.decision); code != 0 {
				t.Fatalf("decide: exit %d\n%s", code, out)
			}
			out, code = p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
			if code != 0 || !strings.Contains(out, "The time is noon.") || p.runs(t) != tc.runs {
				t.Fatalf("after deciding %s: exit %d, %d runs (want %d):\n%s", tc.decision, code, p.runs(t), tc.runs, out)
			}
			// Two requests answered in all (the turn that called get_time,
			// recorded before the crash, and the answer): the session counts
			// each once. The kill also leaves the attempt's estimate of a
			// request that may have been under way (README: a kill outside
			// any request adds one too), at most one.
			js, _ := p.teamrun(t, "session", "show", "s1", "--json")
			calls := strings.Count(js, `"model": "tiny-tools"`) + strings.Count(js, `"model":"tiny-tools"`)
			estimated := strings.Count(js, `"no_end": true`) + strings.Count(js, `"no_end":true`)
			if calls-estimated != 2 || estimated > 1 {
				t.Errorf("the session records %d requests answered and %d estimated, want 2 and at most 1:\n%s", calls-estimated, estimated, js)
			}
		})
	}
}
