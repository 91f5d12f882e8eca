package runner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestForeachOverLLMOutput: an LLM task's answer, a JSON array, is the list
// a foreach runs over; the instances are made when it finishes. The
// summary counts what both passes ran and cost, once.
func TestForeachOverLLMOutput(t *testing.T) {
	f := &fakeLLM{answer: func(n int, req chatRequest, w http.ResponseWriter) {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "List two topics") {
			reply(w, `["go", "zig"]`)
			return
		}
		reply(w, "notes on "+strings.SplitN(last, "\n", 2)[0])
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE}
agents:
  writer: {role: Writer}
tasks:
  list:
    description: List two topics as a JSON array
    agent: writer
    output_variable: topics
  notes:
    description: '{topic}'
    agent: writer
    foreach: {over: topics, as: topic}
    context: []
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if sum.Ran != 4 || sum.Restored != 0 || sum.Total != 4 {
		t.Errorf("summary %+v, want 4 ran (list, notes[0], notes[1], the join) and none restored", sum)
	}
	if f.count() != 3 || sum.Tokens != 3*14 || sum.SessionUsage == nil || sum.SessionUsage.TotalTokens != 3*14 {
		t.Errorf("%d requests, %d tokens this run, session usage %+v; want 3 requests of 14 tokens, counted once", f.count(), sum.Tokens, sum.SessionUsage)
	}
	for i, topic := range []string{"go", "zig"} {
		if got := f.request(1 + i).Messages[len(f.request(1+i).Messages)-1].Content; got != topic {
			t.Errorf("instance %d asked %q, want %q", i, got, topic)
		}
	}
	if strings.Contains(out, `"event":"task_restored"`) {
		t.Errorf("the second pass shows the first pass's tasks as restored:\n%s", out)
	}
	tr, _ := p.session(t).Task("notes")
	if tr.Result != `["notes on go","notes on zig"]` {
		t.Errorf("join result %q", tr.Result)
	}
}
