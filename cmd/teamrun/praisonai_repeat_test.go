package main

import (
	"bytes"
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
)

// TestPraisonAIEvaluatorOptimizerRuns runs the corpus's evaluator-optimizer
// workflow (a generator step, then an evaluator step with repeat: {until:
// "approved", max_iterations: 3}) against an OpenAI-compatible test server:
// the evaluator runs again, fed its previous answer, until an answer says
// APPROVED; the third iteration is skipped and the step's result is the
// second iteration's.
func TestPraisonAIEvaluatorOptimizerRuns(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "corpus", "praisonai", "examples__yaml__workflows__evaluator_optimizer_workflow.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	var mu sync.Mutex
	var asked []string
	evaluations := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		last := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, last)
		answer := "a first draft"
		if strings.Contains(last, "Evaluate this content") {
			evaluations++
			answer = fmt.Sprintf("NEEDS IMPROVEMENT: more detail (evaluation %d)", evaluations)
			if evaluations == 2 {
				answer = "Approved: clear and accurate"
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, answer)
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "eo.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TEAMRUN_HOME", filepath.Join(dir, "home"))
	t.Setenv("NO_COLOR", "1")
	t.Chdir(dir)
	var out, errb bytes.Buffer
	if code := run([]string{"teamrun", "run", "eo.yaml", "--session", "s", "--var", "input=a haiku"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if len(asked) != 3 {
		t.Fatalf("%d requests, want 3 (generator, evaluator twice):\n%s", len(asked), strings.Join(asked, "\n---\n"))
	}
	if !strings.Contains(asked[0], "Generate content for: a haiku") {
		t.Errorf("request 1 is not the generator's:\n%s", asked[0])
	}
	if !strings.Contains(asked[1], "Evaluate this content") || !strings.Contains(asked[1], "a first draft") {
		t.Errorf("evaluation 1 does not read the draft:\n%s", asked[1])
	}
	if !strings.Contains(asked[2], "Evaluate this content") || !strings.Contains(asked[2], "NEEDS IMPROVEMENT: more detail (evaluation 1)") {
		t.Errorf("evaluation 2 is not fed the previous iteration's output:\n%s", asked[2])
	}
	for _, want := range []string{"completed step_2#1", "completed step_2#2", `skipped   step_2#3: step_2#2's result contains "approved": the repeat is done`, "Approved: clear and accurate"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the progress:\n%s", want, out.String())
		}
	}
}

// TestPraisonAICompleteWorkflowRuns runs the corpus's complete workflow
// (classify, route, parallel, loop, aggregate, then an evaluator that
// repeats until "approved", at most twice) against an OpenAI-compatible
// test server: every agent is asked, the loop once per topic, and the
// evaluator twice, its second request fed its first answer.
func TestPraisonAICompleteWorkflowRuns(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "corpus", "praisonai", "examples__yaml__workflows__complete_workflow.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	var mu sync.Mutex
	asked := map[string][]string{} // by the role in the system message
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		role := "?"
		for _, known := range []string{"Request Classifier", "Research Analyst", "Technical Expert", "Creative Writer", "Market Analyst", "Competitor Analyst", "Synthesizer", "Quality Evaluator"} {
			if strings.Contains(req.Messages[0].Content, known) {
				role = known
			}
		}
		last := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		asked[role] = append(asked[role], last)
		n := len(asked[role])
		mu.Unlock()
		answer := "findings of " + role
		switch {
		case role == "Request Classifier":
			answer = "research"
		case role == "Quality Evaluator" && n == 1:
			answer = "Needs more depth on costs"
		case role == "Quality Evaluator":
			answer = "APPROVED"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, answer)
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "complete.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TEAMRUN_HOME", filepath.Join(dir, "home"))
	t.Setenv("NO_COLOR", "1")
	t.Chdir(dir)
	var out, errb bytes.Buffer
	if code := run([]string{"teamrun", "run", "complete.yaml", "--session", "s", "--var", "input=trends in AI"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for role, n := range map[string]int{"Request Classifier": 1, "Market Analyst": 1, "Competitor Analyst": 1, "Synthesizer": 1, "Quality Evaluator": 2,
		"Research Analyst": 4, // routed to (default), then once per topic
		"Technical Expert": 0, "Creative Writer": 0} {
		if len(asked[role]) != n {
			t.Errorf("%s asked %d times, want %d: %q", role, len(asked[role]), n, asked[role])
		}
	}
	topics := strings.Join(asked["Research Analyst"], "\n")
	for _, topic := range []string{"Research Machine Learning", "Research Neural Networks", "Research Natural Language Processing"} {
		if !strings.Contains(topics, topic) {
			t.Errorf("no loop request %q among the researcher's:\n%s", topic, topics)
		}
	}
	if ev := asked["Quality Evaluator"]; len(ev) == 2 && !strings.Contains(ev[1], "Needs more depth on costs") {
		t.Errorf("the evaluator's second iteration is not fed its first answer:\n%s", ev[1])
	}
	if !strings.Contains(out.String(), "APPROVED") {
		t.Errorf("the run's output is not the last iteration's:\n%s", out.String())
	}
}
