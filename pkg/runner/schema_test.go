package runner

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestLLMOutputSchema checks that an LLM task's output_schema goes out as
// response_format, that an answer that does not fit is a failed attempt
// naming the problem (retried), and that one that fits is the result.
func TestLLMOutputSchema(t *testing.T) {
	var (
		mu      sync.Mutex
		formats []string
		prompts []string // the last user message of each request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ResponseFormat json.RawMessage `json:"response_format"`
			Messages       []struct{ Content string }
		}
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		mu.Lock()
		formats = append(formats, string(body.ResponseFormat))
		prompts = append(prompts, body.Messages[len(body.Messages)-1].Content)
		n := len(formats)
		mu.Unlock()
		if n == 1 {
			reply(w, `{"severity": "medium"}`)
			return
		}
		reply(w, `{"severity": "high"}`)
	}))
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE}
agents:
  w: {role: Triage}
tasks:
  triage:
    description: Triage
    agent: w
    max_retries: 1
    retry_delay: 1ms
    output_schema: {type: object, properties: {severity: {enum: [low, high]}}, required: [severity]}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out)
	}
	if len(formats) != 2 {
		t.Fatalf("%d requests, want 2", len(formats))
	}
	want := `{"type":"json_schema","json_schema":{"name":"triage","schema":{"properties":{"severity":{"enum":["low","high"]}},"required":["severity"],"type":"object"}}}`
	if formats[0] != want {
		t.Errorf("response_format = %s, want %s", formats[0], want)
	}
	if !strings.Contains(out, `"event":"task_retrying"`) || !strings.Contains(out, `the result does not fit output_schema: at /severity: value must be one of \"low\", \"high\"`) {
		t.Errorf("the first answer's failure is not said:\n%s", out)
	}
	if strings.Contains(prompts[0], "refused") {
		t.Errorf("the first prompt speaks of a refusal: %q", prompts[0])
	}
	if want := `Your previous answer was refused: the result does not fit output_schema: at /severity: value must be one of "low", "high". Answer again with only JSON that fits the schema.`; !strings.Contains(prompts[1], want) {
		t.Errorf("the retry's prompt %q lacks %q", prompts[1], want)
	}
	tr, _ := p.session(t).Task("triage")
	if tr.Result != `{"severity": "high"}` || tr.Usage == nil || len(tr.Usage.Calls) != 2 {
		t.Errorf("record %+v (usage %+v)", tr, tr.Usage)
	}
}

// TestOutputVariableParsed checks that with an output_schema the shared
// state holds the parsed result, in the run and after a restore, and that
// placeholders see it as JSON.
func TestOutputVariableParsed(t *testing.T) {
	p := newProject(t, "", `
agents:
  c: {shell: cat}
  echo: {shell: cat}
tasks:
  triage:
    description: '{"severity": "high", "count": 2}'
    agent: c
    output_schema: {type: object}
    output_variable: triage
  n:
    description: '7'
    agent: c
    output_schema: {type: integer}
    output_variable: n
  use:
    description: 'got {triage} and {n}'
    agent: echo
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out)
	}
	check := func(when string) {
		sess := p.session(t)
		tri, ok := sess.Team.State["triage"].(map[string]any)
		if !ok || tri["severity"] != "high" || tri["count"] != int64(2) {
			t.Errorf("%s: state triage = %#v, want the parsed object", when, sess.Team.State["triage"])
		}
		if n := sess.Team.State["n"]; n != int64(7) {
			t.Errorf("%s: state n = %#v, want 7", when, n)
		}
		use, _ := sess.Task("use")
		if use.Result != `got {"count":2,"severity":"high"} and 7` {
			t.Errorf("%s: use = %q", when, use.Result)
		}
	}
	check("after the run")
	if sum, out, err := p.run(t, true); err != nil || sum.Restored != 3 {
		t.Fatalf("resume: %v %+v\n%s", err, sum, out)
	}
	check("after the resume")
}
