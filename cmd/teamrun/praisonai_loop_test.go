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

// TestPraisonAILoopWorkflowRuns runs the corpus's loop workflow (a loop:
// step over a list variable, then a summarizer) against an OpenAI-
// compatible test server: one request per item in list order, then the
// summary, which reads every item's answer.
func TestPraisonAILoopWorkflowRuns(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "corpus", "praisonai", "examples__yaml__workflows__loop_workflow.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		last := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		asked = append(asked, last)
		mu.Unlock()
		answer := "summary"
		if _, topic, ok := strings.Cut(last, "Analyze this topic: "); ok {
			topic, _, _ = strings.Cut(topic, "\n")
			answer = "analysis of " + topic
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, answer)
	}))
	defer srv.Close()
	dir := t.TempDir()
	spec := filepath.Join(dir, "loop.yaml")
	if err := os.WriteFile(spec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TEAMRUN_HOME", filepath.Join(dir, "home"))
	t.Setenv("NO_COLOR", "1")
	t.Chdir(dir)
	var out, errb bytes.Buffer
	if code := run([]string{"teamrun", "run", "loop.yaml", "--session", "s"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	topics := []string{"Artificial Intelligence", "Machine Learning", "Neural Networks", "Natural Language Processing"}
	if len(asked) != len(topics)+1 {
		t.Fatalf("%d requests, want %d:\n%s", len(asked), len(topics)+1, strings.Join(asked, "\n---\n"))
	}
	for i, topic := range topics {
		if !strings.Contains(asked[i], "Analyze this topic: "+topic) {
			t.Errorf("request %d is not about %s:\n%s", i+1, topic, asked[i])
		}
		if !strings.Contains(out.String(), fmt.Sprintf("completed step_1[%d]", i)) {
			t.Errorf("no instance step_1[%d] in the progress:\n%s", i, out.String())
		}
	}
	summary := asked[len(topics)]
	want, _ := json.Marshal([]string{"analysis of " + topics[0], "analysis of " + topics[1], "analysis of " + topics[2], "analysis of " + topics[3]})
	if !strings.Contains(summary, "Create a comprehensive summary") || !strings.Contains(summary, string(want)) {
		t.Errorf("the summary does not read every item's answer (%s):\n%s", want, summary)
	}
}
