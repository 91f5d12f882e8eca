package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/bench/floors"
)

const llmTasks = 200

// instantLLM is an OpenAI-compatible server that answers every chat
// completion at once, with usage, so that what is left is teamrun's cost.
func instantLLM(b *testing.B) *httptest.Server {
	b.Helper()
	const answer = `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func writeLLMTeam(b *testing.B, dir, baseURL string) string {
	b.Helper()
	var s strings.Builder
	fmt.Fprintf(&s, "name: llmbench\nllm: {model: m, base_url: %q, api_key_env: BENCH_KEY, stream: false}\n", baseURL)
	s.WriteString("agents:\n  w:\n    role: Writer\n    goal: Answer\ntasks:\n")
	for i := range llmTasks {
		fmt.Fprintf(&s, "  t%d:\n    description: task %d\n    agent: w\n", i, i)
	}
	path := filepath.Join(dir, "llm.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// llmFloor is what any durable runner of these tasks pays: one HTTP
// request of a chat-sized body on a kept-alive connection and one
// fdatasync of a line, per task.
func llmFloor(b *testing.B, dir, baseURL string) {
	b.Helper()
	j, err := floors.Create(filepath.Join(dir, "llm-journal"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	if err := floors.LLM(context.Background(), baseURL, llmTasks, j); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLLMRatio alternates the floor with `teamrun run` of 200
// sequential LLM tasks against the same instant server and reports the
// median ratio (issue 15's "LLM ratio"). The floor runs inside the
// benchmark, its process started and its connection open; process-ratio
// is the like-for-like reading, against the same floor as a process of
// its own (bench/floor llm), which starts as teamrun does.
//
//	go test ./bench -run '^$' -bench LLMRatio -benchtime 5x
func BenchmarkLLMRatio(b *testing.B) {
	dir := b.TempDir()
	bin := build(b, dir)
	floorBin := goBuild(b, dir, "bench/floor")
	srv := instantLLM(b)
	spec := writeLLMTeam(b, dir, srv.URL+"/v1")
	home := filepath.Join(dir, "home")
	b.Setenv("BENCH_KEY", "bench-key")
	var ratios, processRatios, floorsIn, floorsOut, runs []float64
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		llmFloor(b, dir, srv.URL+"/v1")
		t1 := time.Now()
		teamrun(b, bin, home, "run", spec, "--quiet", "--session", fmt.Sprintf("llm-%d", i))
		t2 := time.Now()
		if out, err := exec.Command(floorBin, "llm", strconv.Itoa(llmTasks), srv.URL+"/v1", dir).CombinedOutput(); err != nil {
			b.Fatalf("floor llm: %v\n%s", err, out)
		}
		t3 := time.Now()
		in, ru, out := float64(t1.Sub(t0)), float64(t2.Sub(t1)), float64(t3.Sub(t2))
		floorsIn, runs, floorsOut = append(floorsIn, in), append(runs, ru), append(floorsOut, out)
		ratios, processRatios = append(ratios, ru/in), append(processRatios, ru/out)
	}
	b.ReportMetric(median(floorsIn)/llmTasks, "floor-ns/task")
	b.ReportMetric(median(floorsOut)/llmTasks, "floor-process-ns/task")
	b.ReportMetric(median(runs)/llmTasks, "run-ns/task")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(processRatios), "process-ratio")
}
