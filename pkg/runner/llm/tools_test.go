package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
)

// The wire of a tool loop: tools offered, tool calls read (arguments as
// OpenAI's JSON text or as an object), the calls and results sent back.
func TestToolCallsWire(t *testing.T) {
	bodies := []string{
		`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_time","arguments":"{\"zone\":\"UTC\"}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c2","type":"function","function":{"name":"get_time","arguments":{"zone":"UTC"}}}]},"finish_reason":"tool_calls"}]}`,
	}
	for i, body := range bodies {
		fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })
		req := Request{Model: "m", Tools: []Tool{{Type: "function", Function: ToolFunction{Name: "get_time", Parameters: map[string]any{"type": "object"}}}},
			Messages: []Message{{Role: "user", Content: "time?"},
				{Role: "assistant", ToolCalls: []ToolCall{{ID: "c0", Type: "function", Function: FunctionCall{Name: "get_time", Arguments: `{}`}}}},
				{Role: "tool", ToolCallID: "c0", Content: "12:00"}}}
		resp, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := []ToolCall{{ID: []string{"c1", "c2"}[i], Type: "function", Function: FunctionCall{Name: "get_time", Arguments: `{"zone":"UTC"}`}}}
		if !reflect.DeepEqual(resp.ToolCalls, want) || resp.Content != "" {
			t.Errorf("body %d: tool calls %+v, content %q", i, resp.ToolCalls, resp.Content)
		}
		sent, _ := json.Marshal(fs.requests()[0].Body)
		var got struct {
			Tools    []Tool    `json:"tools"`
			Messages []Message `json:"messages"`
		}
		if err := json.Unmarshal(sent, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Tools, req.Tools) || !reflect.DeepEqual(got.Messages, req.Messages) {
			t.Errorf("sent tools %+v, messages %+v", got.Tools, got.Messages)
		}
	}
}
