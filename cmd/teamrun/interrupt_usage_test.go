package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A request that Ctrl-C cuts off is still recorded: as interrupted, with
// its duration and the tokens a stream had reported, or with its usage
// unknown (never as 0 tokens for $0); the summary and session show say so.
func TestInterruptedRequestUsage(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		// chunk is what a streaming server sends before it stalls.
		chunk   string
		summary []string // in the interrupted run's output
		show    string   // in session show's TOKENS column of the task
	}{
		// Its estimate (the request's size) is what a budget counts of it.
		{"no usage came", false, "", []string{"not completed (1 interrupted request of unknown usage (estimated from its size: ",
			"tokens:  this run 1 interrupted request of unknown usage (estimated from its size: ", "; session 1 interrupted request of unknown usage (estimated from its size: "},
			"1 interrupted request of unknown usage"},
		// --json --stream-json: the signal comes once the stream's piece
		// was shown, so after its chunk, usage and all, was read.
		{"a stream had reported usage", true,
			`data: {"model":"m","choices":[{"delta":{"content":"Hel"}}],"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}}` + "\n\n",
			[]string{`"event":"task_interrupted"`, `"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42,"cost_usd":0.000046`},
			"42 tokens ($0.000046)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// Read to its end, so that the server notices the client
				// going away (and the handler ends with it).
				_, _ = io.ReadAll(r.Body)
				if tc.stream {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, tc.chunk)
					w.(http.Flusher).Flush()
				}
				select {
				case arrived <- struct{}{}:
				default:
				}
				select { // the answer never comes
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
			}))
			defer srv.Close()
			dir := t.TempDir()
			p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
			stream := "false"
			if tc.stream {
				stream = "true"
			}
			spec := fmt.Sprintf(`models:
  m: {model: m, base_url: %s/v1, stream: %s, price: {input: 1, output: 3}}
agents:
  w: {role: Writer, llm: m}
tasks:
  one: {description: Write, agent: w}
`, srv.URL, stream)
			if err := os.WriteFile(p.spec, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", p.spec, "--session", "s1"}
			if tc.stream {
				args = append(args, "--json", "--stream-json")
			}
			cmd := p.command(args...)
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("the request never came:\n%s", out.String())
			}
			for i := 0; tc.stream && !strings.Contains(out.String(), `"event":"task_delta"`); i++ {
				if i > 1200 {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
					t.Fatalf("the stream's piece never came:\n%s", out.String())
				}
				time.Sleep(25 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130 (interrupted)", code)
			}
			for _, want := range tc.summary {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output lacks %q:\n%s", want, out.String())
				}
			}
			show, _ := p.teamrun(t, "session", "show", "s1")
			if !strings.Contains(show, tc.show) {
				t.Errorf("session show lacks %q:\n%s", tc.show, show)
			}
			js, _ := p.teamrun(t, "session", "show", "s1", "--json")
			compact := strings.Join(strings.Fields(js), "")
			if !strings.Contains(compact, `"outcome":"interrupted"`) || !strings.Contains(compact, `"duration_ms":`) {
				t.Errorf("the cut-off request is not recorded as interrupted:\n%s", js)
			}
			if !tc.stream && (!strings.Contains(compact, `"usage_unknown":true`) || !strings.Contains(compact, `"unknown_requests":1`)) {
				t.Errorf("the cut-off request's usage is not recorded as unknown:\n%s", js)
			}
			if tc.stream && !strings.Contains(compact, `"total_tokens":42`) {
				t.Errorf("the stream's usage is not recorded:\n%s", js)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
