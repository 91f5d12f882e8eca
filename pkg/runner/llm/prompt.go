package llm

import (
	"fmt"
	"strings"

	"github.com/teamrun/teamrun/pkg/spec"
)

// DefaultBaseURL is used when neither the agent's llm nor $OPENAI_BASE_URL
// names a server.
const DefaultBaseURL = "https://api.openai.com/v1"

// ContextOutput is the output of a task that the current task reads.
type ContextOutput struct {
	Task, Output string
}

// BuildMessages is the conversation one task sends (DESIGN §2): a system
// message from the agent's role, goal, backstory and instructions (already
// rendered; empty ones left out, no system message when all are empty), then
// the agent's earlier turns when it keeps memory, then the user message: the
// description, the expected output and each context task's output under its
// task's name.
func BuildMessages(a *spec.Agent, description, expectedOutput string, context []ContextOutput, history []Message) []Message {
	msgs := make([]Message, 0, len(history)+2)
	if sys := systemPrompt(a); sys != "" {
		msgs = append(msgs, Message{Role: "system", Content: sys})
	}
	msgs = append(msgs, history...)
	return append(msgs, Message{Role: "user", Content: userPrompt(description, expectedOutput, context)})
}

func systemPrompt(a *spec.Agent) string {
	if a == nil {
		return ""
	}
	var lines []string
	if role := strings.TrimSpace(a.Role); role != "" {
		if !strings.HasSuffix(role, ".") && !strings.HasSuffix(role, "!") && !strings.HasSuffix(role, "?") {
			role += "."
		}
		lines = append(lines, "You are "+role)
	}
	for _, f := range []struct{ label, text string }{
		{"Your goal: ", a.Goal},
		{"Backstory: ", a.Backstory},
		{"Instructions: ", a.Instructions},
	} {
		if t := strings.TrimSpace(f.text); t != "" {
			lines = append(lines, f.label+t)
		}
	}
	return strings.Join(lines, "\n")
}

func userPrompt(description, expectedOutput string, context []ContextOutput) string {
	var parts []string
	if d := strings.TrimSpace(description); d != "" {
		parts = append(parts, d)
	}
	if e := strings.TrimSpace(expectedOutput); e != "" {
		parts = append(parts, "Expected output: "+e)
	}
	for _, c := range context {
		// An empty output is still shown: the model learns the task ran and said nothing.
		parts = append(parts, fmt.Sprintf("Context from task %q:\n%s", c.Task, strings.TrimRight(c.Output, " \t\r\n")))
	}
	return strings.Join(parts, "\n\n")
}
