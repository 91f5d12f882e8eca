package llm

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/spec"
)

// realClient talks to the OpenAI-compatible server named by
// $OPENAI_BASE_URL: the local Ollama with tiny models that .ci/run starts
// (../shared/llm). Without it these tests skip.
func realClient(t *testing.T) *Client {
	t.Helper()
	testenv.LLMBaseURL(t)
	ep, err := Resolve(nil, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	// The first answer loads the model; later ones take milliseconds.
	return &Client{BaseURL: ep.BaseURL, APIKey: ep.APIKey, MaxAttempts: 2, Timeout: 2 * time.Minute}
}

// Prompts stay tiny: for these models every byte is a token.
var realAgent = &spec.Agent{Name: "a", Role: "Tester", Goal: "Answer"}

func TestRealServerModels(t *testing.T) {
	c := realClient(t)
	tests := []struct{ model, want string }{
		{"tiny", "Hello from the tiny test model."},
		{"tiny-approve", "approve"},
		{"tiny-reject", "reject"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			msgs := BuildMessages(realAgent, "Say hi", "a greeting", []ContextOutput{{Task: "prev", Output: "hi"}}, nil)
			resp, err := c.Complete(context.Background(), Request{Model: tt.model, Messages: msgs})
			if err != nil {
				t.Fatal(err)
			}
			// Routing compares the trimmed result, as the runner does.
			if got := strings.TrimSpace(resp.Content); got != tt.want {
				t.Errorf("answer = %q, want %q", got, tt.want)
			}
			if resp.Model != tt.model {
				t.Errorf("model = %q, want %q", resp.Model, tt.model)
			}
			u := resp.Usage
			if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage = %+v, want positive counts that add up", u)
			}
		})
	}
}

func TestRealServerMemoryConversation(t *testing.T) {
	c := realClient(t)
	temp := 0.0
	history := []Message{{Role: "user", Content: "First"}, {Role: "assistant", Content: "Hello from the tiny test model."}}
	msgs := BuildMessages(realAgent, "Second", "", nil, history)
	resp, err := c.Complete(context.Background(), Request{Model: "tiny", Messages: msgs, Temperature: &temp, MaxTokens: 32})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello from the tiny test model." {
		t.Errorf("answer = %q", resp.Content)
	}
}

func TestRealServerUnknownModel(t *testing.T) {
	c := realClient(t)
	_, err := c.Complete(context.Background(), Request{Model: "no-such-model", Messages: []Message{{Role: "user", Content: "hi"}}})
	if err == nil {
		t.Fatal("no error for an unknown model")
	}
	var le *Error
	if !errors.As(err, &le) || le.StatusCode != 404 || le.Attempts != 1 || !errors.Is(err, ErrPermanent) {
		t.Fatalf("err = %v (%+v), want a permanent 404 after one attempt", err, le)
	}
	for _, want := range []string{`model "no-such-model"`, c.BaseURL + "/chat/completions", "HTTP 404 Not Found", "not found"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// The real server cuts the answer at max_tokens: a failed attempt that
// says so, not "Hello from the" as a result.
func TestRealServerTruncated(t *testing.T) {
	c := realClient(t)
	req := Request{Model: "tiny", Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 3}
	_, err := c.Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "the answer was cut at max_tokens=3; raise max_tokens") || !errors.Is(err, ErrPermanent) {
		t.Fatalf("err = %v, want the cut at max_tokens=3", err)
	}
	req.AcceptTruncated = true
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.FinishReason != "length" || resp.Content == "" || strings.Contains(resp.Content, "model.") {
		t.Fatalf("accepted: %+v, %v", resp, err)
	}
}

// The real server streams with include_usage: the answer comes in deltas
// and its usage in the last chunk.
func TestRealServerStream(t *testing.T) {
	c := realClient(t)
	var deltas []string
	req := Request{Model: "tiny", Messages: []Message{{Role: "user", Content: "hi"}}, Stream: true,
		OnDelta: func(s string) { deltas = append(deltas, s) }}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello from the tiny test model." || resp.FinishReason != "stop" {
		t.Errorf("answer = %q (%s)", resp.Content, resp.FinishReason)
	}
	if len(deltas) < 2 || strings.Join(deltas, "") != resp.Content {
		t.Errorf("deltas %q do not make the answer", deltas)
	}
	u := resp.Usage
	if len(resp.Calls) != 1 || u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v, calls %+v: want the stream's usage", u, resp.Calls)
	}
	// Cut short, a stream is a failed attempt too, with its usage paid.
	req.MaxTokens, req.OnDelta = 3, nil
	_, err = c.Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "the answer was cut at max_tokens=3") || len(CallsOf(err)) != 1 {
		t.Fatalf("err = %v (calls %+v), want the cut at max_tokens=3 with its usage", err, CallsOf(err))
	}
}

// Ollama takes response_format and constrains the answer to JSON, but
// these untrained models fill it with noise: the caller's local check is
// what holds (see the runner's TestRealLLMOutputSchema); here the wire
// takes the request and the answer turns into JSON.
func TestRealServerResponseFormat(t *testing.T) {
	c := realClient(t)
	req := Request{Model: "tiny-approve", Messages: []Message{{Role: "user", Content: "hi"}},
		Schema: map[string]any{"type": "object", "properties": map[string]any{"decision": map[string]any{"type": "string"}}, "required": []any{"decision"}}, SchemaName: "review"}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimSpace(resp.Content), "{") {
		t.Errorf("answer = %q: response_format was not applied", resp.Content)
	}
}
