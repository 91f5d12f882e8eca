package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
)

// These tests talk to the real OpenAI-compatible server of ../shared/llm
// (Ollama with tiny deterministic models), which .ci/run starts. Without
// OPENAI_BASE_URL they skip.
func realServer(t *testing.T) string {
	t.Helper()
	return strings.TrimSuffix(testenv.LLMBaseURL(t), "/v1")
}

func TestRealLLMTiny(t *testing.T) {
	base := realServer(t)
	p := newProject(t, base, `
llm: {model: tiny, base_url: BASE}
agents:
  writer:
    role: Writer
    memory: true
tasks:
  hello:
    description: Say hello
    agent: writer
  again:
    description: Say it again
    agent: writer
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	sess := p.session(t)
	for _, name := range []string{"hello", "again"} {
		tr, _ := sess.Task(name)
		if strings.TrimSpace(tr.Result) != "Hello from the tiny test model." {
			t.Errorf("task %s: result %q", name, tr.Result)
		}
		if tr.Usage == nil || tr.Usage.TotalTokens == 0 {
			t.Errorf("task %s: no token usage recorded", name)
		}
	}
	if n := len(sess.Memory["writer"]); n != 4 {
		t.Errorf("memory holds %d messages, want 4", n)
	}
}

func TestRealLLMRouting(t *testing.T) {
	base := realServer(t)
	for _, verdict := range []string{"approve", "reject"} {
		t.Run(verdict, func(t *testing.T) {
			p := newProject(t, base, `
process: workflow
agents:
  judge:
    role: Judge
    llm: {model: tiny-`+verdict+`, base_url: BASE}
  say:
    shell: 'echo "$TEAMRUN_TASK ran"'
tasks:
  review:
    description: Approve or reject the draft. Answer with one word.
    agent: judge
    condition:
      approve: [publish]
      reject: [revise]
  publish:
    description: publish
    agent: say
    context: [review]
  revise:
    description: revise
    agent: say
    context: [review]
`)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Succeeded || sum.Ran != 2 || sum.Skipped != 1 {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			want := map[string]string{"approve": "publish", "reject": "revise"}[verdict]
			if len(sum.Outputs) != 1 || sum.Outputs[0].Task != want {
				t.Fatalf("outputs %+v, want only %s", sum.Outputs, want)
			}
			// Resumed, the restored verdict routes the same way.
			sum, out, err = p.run(t, true)
			if err != nil || sum.Restored != 2 || sum.Ran != 0 || sum.Skipped != 1 || sum.Outputs[0].Task != want {
				t.Fatalf("resumed: %v, %+v\n%s", err, sum, out)
			}
		})
	}
}

// stream: true against the real server: the whole answer is the result
// and the stream's usage is recorded.
func TestRealLLMStream(t *testing.T) {
	base := realServer(t)
	p := newProject(t, base, `
models:
  tiny: {model: tiny, base_url: BASE, stream: true, price: {input: 1, output: 2}}
llm: tiny
agents:
  writer: {role: Writer}
tasks:
  hello: {description: Say hello, agent: writer}
`)
	p.streamJSON = true
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	tr, _ := p.session(t).Task("hello")
	if tr.Result != "Hello from the tiny test model." {
		t.Errorf("result %q", tr.Result)
	}
	if u := tr.Usage; u == nil || u.PromptTokens == 0 || u.CompletionTokens == 0 || u.CostUSD <= 0 || len(u.Calls) != 1 {
		t.Errorf("usage %+v: want the stream's usage, priced", tr.Usage)
	}
	if !strings.Contains(out, `"event":"task_delta"`) {
		t.Errorf("no task_delta events:\n%s", out)
	}
}

// output_schema against the real server: under response_format
// tiny-approve's answer does not fit the schema (its JSON lacks the
// required key): the attempt fails on the local check, naming the problem.
func TestRealLLMOutputSchema(t *testing.T) {
	base := realServer(t)
	p := newProject(t, base, `
llm: {model: tiny-approve, base_url: BASE}
agents:
  reviewer: {role: Reviewer}
tasks:
  review:
    description: Review
    agent: reviewer
    output_schema: {type: object, required: [decision], additionalProperties: false}
`)
	sum, out, _ := p.run(t, false)
	if sum == nil || sum.Outcome != Failed {
		t.Fatalf("run: %+v\n%s", sum, out)
	}
	tr, _ := p.session(t).Task("review")
	if !strings.Contains(tr.Error, `the result does not fit output_schema: `) {
		t.Errorf("error %q", tr.Error)
	}
	if tr.Usage == nil || tr.Usage.TotalTokens == 0 {
		t.Errorf("the failed attempt's usage was not recorded: %+v", tr.Usage)
	}
}

// examples/llm-costs.yaml runs offline against the real server, and its
// resume says what it saved.
func TestRealLLMCostsExample(t *testing.T) {
	base := realServer(t)
	data, err := os.ReadFile("../../examples/llm-costs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t, base, string(data))
	p.env["OPENAI_BASE_URL"] = base + "/v1"
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if sum.Usage == nil || sum.Usage.TotalTokens == 0 || sum.Usage.CostUSD <= 0 || sum.Usage.UnpricedTokens != 0 {
		t.Errorf("usage %+v: want priced tokens", sum.Usage)
	}
	got, err := os.ReadFile(filepath.Join(p.dir, "out", "draft.txt"))
	if err != nil || string(got) != "Hello from the tiny test model." {
		t.Errorf("output_file: %q, %v", got, err)
	}
	cnt, _ := p.session(t).Task("count")
	if cnt.Result != `{"words": 6}` {
		t.Errorf("count: %q", cnt.Result)
	}
	sum, out, err = p.run(t, true)
	if err != nil || sum.Outcome != Succeeded || sum.Restored != 3 {
		t.Fatalf("resume: %v, %+v\n%s", err, sum, out)
	}
	var b strings.Builder
	writeUsage(&b, sum)
	// Three restored, two of them LLM tasks: the checker's command saved no tokens.
	if !strings.Contains(b.String(), "restored 2 tasks whose ") || !strings.Contains(b.String(), " were not paid again") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// tiny-tools first calls get_time({"zone":"UTC"}), then answers "The time
// is noon." once it has the tool's result.
func TestRealLLMTools(t *testing.T) {
	base := realServer(t)
	dir := t.TempDir()
	p := newProject(t, base, `
tools:
  get_time:
    description: Current time in an IANA time zone
    parameters: {type: object, properties: {zone: {type: string}}, required: [zone]}
    shell: 'echo "$TEAMRUN_ARG_ZONE" >> `+dir+`/calls; TZ="$TEAMRUN_ARG_ZONE" date +%H:%M'
    timeout: 10s
    idempotent: true
agents:
  clock: {role: Timekeeper, llm: {model: tiny-tools, base_url: BASE}, tools: [get_time], max_turns: 8}
tasks:
  now: {description: "What time is it in UTC?", agent: clock}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	calls, err := os.ReadFile(dir + "/calls")
	if err != nil || string(calls) != "UTC\n" {
		t.Fatalf("the tool ran with %q (%v), want exactly once with UTC", calls, err)
	}
	sess := p.session(t)
	tr, _ := sess.Task("now")
	if strings.TrimSpace(tr.Result) != "The time is noon." {
		t.Errorf("result %q", tr.Result)
	}
	lg := sess.ToolLogs["now"]
	if lg == nil || len(lg.Turns) != 1 || len(lg.Turns[0].Calls) != 1 {
		t.Fatalf("journal's tool log %+v", lg)
	}
	c := lg.Turns[0].Calls[0]
	if c.Tool != "get_time" || c.Starts != 1 || !c.Done || c.IsError || strings.TrimSpace(c.Result) == "" {
		t.Errorf("journaled call %+v", c)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args["zone"] != "UTC" {
		t.Errorf("journaled arguments %q", c.Arguments)
	}
}

// examples/tools.yaml runs as the README says, against the real server.
func TestRealLLMToolsExample(t *testing.T) {
	base := realServer(t)
	example, err := os.ReadFile("../../examples/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t, base, string(example))
	p.env["OPENAI_BASE_URL"] = base + "/v1"
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	sess := p.session(t)
	if tr, _ := sess.Task("now"); strings.TrimSpace(tr.Result) != "The time is noon." {
		t.Errorf("result %q", tr.Result)
	}
	if lg := sess.ToolLogs["now"]; lg == nil || lg.Turns[0].Calls[0].Tool != "get_time" || !lg.Turns[0].Calls[0].Done {
		t.Errorf("tool log %+v", lg)
	}
}
