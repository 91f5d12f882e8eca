package llm

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// TestStreamAnswers checks streamed answers that are paid for but easy to
// lose: one a proxy relabelled (text/plain), read as the stream it is,
// and one whose usage counts no tokens, which is an answer without usage
// (estimated), not a free one.
func TestStreamAnswers(t *testing.T) {
	zeros := `{"model":"served","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`
	tests := []struct {
		name        string
		contentType string
		events      []string
		wantCall    Call // Duration and RequestBytes not compared
	}{
		{"relabelled text/plain", "text/plain; charset=utf-8", []string{delta("Hel"), delta("lo"), finishStop, usageChunk, "[DONE]"},
			Call{Model: "served", Status: 200, Usage: Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}}},
		{"relabelled, no Content-Type", "", []string{delta("Hel"), delta("lo"), finishStop, usageChunk, "[DONE]"},
			Call{Model: "served", Status: 200, Usage: Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}}},
		{"usage of zeros", "text/event-stream", []string{delta("Hel"), delta("lo"), finishStop, zeros, "[DONE]"},
			Call{Model: "served", Status: 200, UsageUnknown: true, UsageUnreadable: zeroUsage, AnswerBytes: len("Hello")}},
		{"usage of {}", "text/event-stream", []string{delta("Hel"), delta("lo"), finishStop, `{"choices":[],"usage":{}}`, "[DONE]"},
			Call{Model: "served", Status: 200, UsageUnknown: true, UsageUnreadable: zeroUsage, AnswerBytes: len("Hello")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header()["Content-Type"] = []string{tt.contentType}
				for _, e := range tt.events {
					fmt.Fprintf(w, "data: %s\n\n", e)
				}
			})
			req := tinyReq
			req.Stream = true
			resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
			if err != nil || resp.Content != "Hello" {
				t.Fatalf("got %q, %v; want Hello", resp.Content, err)
			}
			if len(resp.Calls) != 1 {
				t.Fatalf("calls %+v, want one", resp.Calls)
			}
			got := resp.Calls[0]
			got.Duration, got.RequestBytes = 0, 0
			if got != tt.wantCall {
				t.Errorf("call %+v, want %+v", got, tt.wantCall)
			}
		})
	}
}
