package llm

import (
	"bytes"
	"encoding/json"
)

// Tool is a function the model may call, as Chat Completions declares it.
type Tool struct {
	Type     string       `json:"type"` // "function"
	Function ToolFunction `json:"function"`
}

// ToolFunction is a tool's name, description and JSON Schema parameters.
type ToolFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// ToolCall is one call a model asked for in its turn.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall is the called tool and its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// UnmarshalJSON takes the arguments as the JSON text OpenAI sends, or as
// the object some compatible servers send instead.
func (f *FunctionCall) UnmarshalJSON(b []byte) error {
	var w struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	f.Name = w.Name
	raw := bytes.TrimSpace(w.Arguments)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		f.Arguments = ""
	case raw[0] == '"':
		return json.Unmarshal(raw, &f.Arguments)
	default:
		f.Arguments = string(raw)
	}
	return nil
}
