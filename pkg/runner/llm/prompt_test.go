package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

func TestBuildMessages(t *testing.T) {
	writer := &spec.Agent{
		Name: "writer", Role: "Writer", Goal: "Write clear release notes about Go 1.26",
		Backstory: "You have shipped many releases.", Instructions: "Draft the section.",
	}
	tests := []struct {
		name        string
		agent       *spec.Agent
		description string
		expected    string
		context     []ContextOutput
		history     []Message
		want        []Message
	}{
		{
			name: "full agent, no context", agent: writer,
			description: "Write the intro about Go 1.26", expected: "200 words",
			want: []Message{
				{Role: "system", Content: "You are Writer.\nYour goal: Write clear release notes about Go 1.26\nBackstory: You have shipped many releases.\nInstructions: Draft the section."},
				{Role: "user", Content: "Write the intro about Go 1.26\n\nExpected output: 200 words"},
			},
		},
		{
			name: "context outputs labelled with their task, in order", agent: writer,
			description: "Count the words", expected: "",
			context: []ContextOutput{{Task: "draft", Output: "Go 1.26 is out.\nIt is fast.\n"}, {Task: "empty", Output: ""}},
			want: []Message{
				{Role: "system", Content: "You are Writer.\nYour goal: Write clear release notes about Go 1.26\nBackstory: You have shipped many releases.\nInstructions: Draft the section."},
				{Role: "user", Content: "Count the words\n\nContext from task \"draft\":\nGo 1.26 is out.\nIt is fast.\n\nContext from task \"empty\":\n"},
			},
		},
		{
			name:        "empty fields skipped; role with its own full stop",
			agent:       &spec.Agent{Role: "  a careful reviewer.  ", Instructions: "Answer approve or reject."},
			description: "Review it", expected: "approve or reject",
			want: []Message{
				{Role: "system", Content: "You are a careful reviewer.\nInstructions: Answer approve or reject."},
				{Role: "user", Content: "Review it\n\nExpected output: approve or reject"},
			},
		},
		{
			name: "no system message when the agent says nothing", agent: &spec.Agent{Name: "bare"},
			description: "Say hi",
			want:        []Message{{Role: "user", Content: "Say hi"}},
		},
		{
			name: "memory: history between system and the new user message", agent: &spec.Agent{Goal: "Help"},
			description: "Second task",
			history:     []Message{{Role: "user", Content: "First task"}, {Role: "assistant", Content: "First answer"}},
			want: []Message{
				{Role: "system", Content: "Your goal: Help"},
				{Role: "user", Content: "First task"},
				{Role: "assistant", Content: "First answer"},
				{Role: "user", Content: "Second task"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BuildMessages(tt.agent, tt.description, tt.expected, tt.context, tt.history)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BuildMessages =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

// TestPromptAndMemoryOverTheWire runs an agent with memory through two
// tasks, checkpoints its conversation as JSON between them (as a resumed
// run would read it back) and checks the exact messages the server received.
func TestPromptAndMemoryOverTheWire(t *testing.T) {
	answers := []string{"Go 1.26 is out.", "4"}
	fs := newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) { okReply(w, answers[i]) })
	agent := &spec.Agent{Name: "writer", Role: "Writer", Goal: "Write notes", Memory: true}
	c := &Client{BaseURL: fs.URL + "/v1", Sleep: (&fakeSleep{}).sleep}

	var history []Message
	// Task 1: no context.
	msgs := BuildMessages(agent, "Write the intro", "one line", nil, history)
	r1, err := c.Complete(context.Background(), Request{Model: "m", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	history = append(history, msgs[len(msgs)-1], Message{Role: "assistant", Content: r1.Content})

	// The checkpoint holds the conversation; the resumed run reads it back.
	saved, err := json.Marshal(history)
	if err != nil {
		t.Fatal(err)
	}
	var restored []Message
	if err := json.Unmarshal(saved, &restored); err != nil {
		t.Fatal(err)
	}

	// Task 2 reads task 1's output as context and remembers the first turn.
	msgs = BuildMessages(agent, "Count the words", "a number", []ContextOutput{{Task: "draft", Output: r1.Content}}, restored)
	if _, err := c.Complete(context.Background(), Request{Model: "m", Messages: msgs}); err != nil {
		t.Fatal(err)
	}

	reqs := fs.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	system := Message{Role: "system", Content: "You are Writer.\nYour goal: Write notes"}
	want1 := []Message{system, {Role: "user", Content: "Write the intro\n\nExpected output: one line"}}
	want2 := []Message{
		system,
		{Role: "user", Content: "Write the intro\n\nExpected output: one line"},
		{Role: "assistant", Content: "Go 1.26 is out."},
		{Role: "user", Content: "Count the words\n\nExpected output: a number\n\nContext from task \"draft\":\nGo 1.26 is out."},
	}
	if !reflect.DeepEqual(reqs[0].Messages, want1) {
		t.Errorf("task 1 sent\n%#v\nwant\n%#v", reqs[0].Messages, want1)
	}
	if !reflect.DeepEqual(reqs[1].Messages, want2) {
		t.Errorf("task 2 sent\n%#v\nwant\n%#v", reqs[1].Messages, want2)
	}
}

func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name     string
		llm      *spec.LLM
		getenv   func(string) string
		wantBase string
		wantKey  string
		wantErr  string
		model    string // the name sent; empty: llm.Model unchanged
		wantFrom string // where the base URL comes from; empty: not checked
	}{
		{name: "nothing set: OpenAI without a key is refused", llm: &spec.LLM{Model: "gpt"}, getenv: env(), wantErr: `model "gpt": no key for OpenAI (https://api.openai.com/v1): export OPENAI_API_KEY`},
		{name: "openai/ without a key is refused", llm: &spec.LLM{Model: "openai/gpt"}, getenv: env(), wantErr: `model "openai/gpt": no key for OpenAI`},
		{name: "OPENAI_BASE_URL at OpenAI itself needs the key too", llm: &spec.LLM{Model: "gpt"}, getenv: env("OPENAI_BASE_URL", "https://api.openai.com/v1/"), wantErr: "no key for OpenAI"},
		{name: "a local server needs no key", llm: &spec.LLM{Model: "gpt"}, getenv: env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"), wantBase: "http://127.0.0.1:11434/v1"},
		{name: "nil llm", getenv: env("OPENAI_API_KEY", "k0"), wantBase: DefaultBaseURL, wantKey: "k0"},
		{name: "env base and key", llm: &spec.LLM{}, getenv: env("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/", "OPENAI_API_KEY", " k1\n"), wantBase: "http://127.0.0.1:11434/v1", wantKey: "k1"},
		{name: "agent base beats env", llm: &spec.LLM{BaseURL: "http://llm.local:8000/v1"}, getenv: env("OPENAI_BASE_URL", "http://other/v1"), wantBase: "http://llm.local:8000/v1"},
		{name: "api_key_env beats OPENAI_API_KEY", llm: &spec.LLM{APIKeyEnv: "MY_KEY"}, getenv: env("MY_KEY", "mine", "OPENAI_API_KEY", "global"), wantBase: DefaultBaseURL, wantKey: "mine"},
		{name: "api_key_env unset is an error naming it", llm: &spec.LLM{APIKeyEnv: "MY_KEY"}, getenv: env("OPENAI_API_KEY", "global"), wantErr: "llm.api_key_env: the environment variable MY_KEY is not set or empty"},
		{name: "bad base_url", llm: &spec.LLM{BaseURL: "localhost:11434"}, getenv: env(), wantErr: `llm.base_url: base URL "localhost:11434" has no scheme: write http://localhost:11434 (or https://)`},
		{name: "bad env base", getenv: env("OPENAI_BASE_URL", "ftp://u:secret@x/v1"), wantErr: `$OPENAI_BASE_URL: base URL "ftp://x/v1" is not`},
		{name: "a slash that is no provider is sent as is", llm: &spec.LLM{Model: "Qwen/Qwen2.5-7B"}, getenv: env("OPENAI_BASE_URL", "http://vllm:8000/v1"), wantBase: "http://vllm:8000/v1"},
		{name: "groq/ beats $OPENAI_BASE_URL", llm: &spec.LLM{Model: "groq/llama3-70b-8192"}, getenv: env("OPENAI_BASE_URL", "http://other/v1", "GROQ_API_KEY", "g", "OPENAI_API_KEY", "global"), wantBase: "https://api.groq.com/openai/v1", wantKey: "g", model: "llama3-70b-8192"},
		{name: "openrouter/ strips only its own prefix", llm: &spec.LLM{Model: "openrouter/anthropic/claude-3.5-sonnet"}, getenv: env("OPENROUTER_API_KEY", "o"), wantBase: "https://openrouter.ai/api/v1", wantKey: "o", model: "anthropic/claude-3.5-sonnet"},
		{name: "provider's second key variable", llm: &spec.LLM{Model: "gemini/gemini-2.0-flash"}, getenv: env("GOOGLE_API_KEY", "gk"), wantBase: "https://generativelanguage.googleapis.com/v1beta/openai", wantKey: "gk", model: "gemini-2.0-flash"},
		{name: "provider without its key", llm: &spec.LLM{Model: "groq/llama3"}, getenv: env("OPENAI_API_KEY", "global"), wantErr: `model "groq/llama3": no key for groq: export GROQ_API_KEY, or name another variable in llm.api_key_env`},
		{name: "base_url and api_key_env override a provider", llm: &spec.LLM{Model: "groq/llama3", BaseURL: "http://gw.local/v1", APIKeyEnv: "GW"}, getenv: env("GW", "w", "GROQ_API_KEY", "g"), wantBase: "http://gw.local/v1", wantKey: "w", model: "llama3"},
		{name: "ollama/ needs no key", llm: &spec.LLM{Model: "ollama/llama3.2"}, getenv: env("OPENAI_API_KEY", "global"), wantBase: "http://127.0.0.1:11434/v1", model: "llama3.2"},
		{name: "openai/ keeps $OPENAI_BASE_URL", llm: &spec.LLM{Model: "openai/gpt-4o"}, getenv: env("OPENAI_BASE_URL", "http://proxy/v1", "OPENAI_API_KEY", "k"), wantBase: "http://proxy/v1", wantKey: "k", model: "gpt-4o"},
		{name: "bedrock/ is refused", llm: &spec.LLM{Model: "bedrock/anthropic.claude-v2"}, getenv: env(), wantErr: `model "bedrock/anthropic.claude-v2": AWS Bedrock signs requests`},
		{name: "bedrock/ behind a proxy's base_url is sent as is", llm: &spec.LLM{Model: "bedrock/anthropic.claude-v2", BaseURL: "http://litellm:4000"}, getenv: env(), wantBase: "http://litellm:4000"},
		{name: "azure/ without base_url is refused", llm: &spec.LLM{Model: "azure/my-gpt4o"}, getenv: env("AZURE_API_KEY", "a"), wantErr: "set llm.base_url to your resource's OpenAI-compatible URL"},
		// LiteLLM's api_base for Ollama has no /v1 (LiteLLM adds it):
		// an ollama/ model's base URL without a path gets it.
		{name: "ollama/ with a base URL without a path gets /v1", llm: &spec.LLM{Model: "ollama/tiny", BaseURL: "http://127.0.0.1:24040", BaseURLAt: "roles.w.llm.api_base (a.yaml:10:17)"}, getenv: env(), wantBase: "http://127.0.0.1:24040/v1", model: "tiny",
			wantFrom: "roles.w.llm.api_base (a.yaml:10:17), with the /v1 an ollama/ model's server answers under"},
		{name: "ollama/ with a base URL of path / gets /v1", llm: &spec.LLM{Model: "ollama/tiny", BaseURL: "http://h:11434/?x=1"}, getenv: env(), wantBase: "http://h:11434/v1?x=1", model: "tiny"},
		{name: "ollama/ with /v1 keeps it", llm: &spec.LLM{Model: "ollama/tiny", BaseURL: "http://h:11434/v1"}, getenv: env(), wantBase: "http://h:11434/v1", model: "tiny", wantFrom: "llm.base_url"},
		{name: "ollama/ with a path of its own keeps it", llm: &spec.LLM{Model: "ollama/tiny", BaseURL: "http://h/ollama"}, getenv: env(), wantBase: "http://h/ollama", model: "tiny"},
		{name: "another model's base URL without a path is sent as written", llm: &spec.LLM{Model: "m", BaseURL: "http://h:8000", BaseURLAt: "agents.w.llm.base_url (t.yaml:3:9)"}, getenv: env(), wantBase: "http://h:8000", wantFrom: "agents.w.llm.base_url (t.yaml:3:9)"},
		{name: "azure/ with base_url", llm: &spec.LLM{Model: "azure/my-gpt4o", BaseURL: "https://r.openai.azure.com/openai/v1"}, getenv: env("AZURE_API_KEY", "a"), wantBase: "https://r.openai.azure.com/openai/v1", wantKey: "a", model: "my-gpt4o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := Resolve(tt.llm, tt.getenv)
			base, key := ep.BaseURL, ep.APIKey
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "global") || strings.Contains(err.Error(), "secret") {
					t.Errorf("a secret leaked: %v", err)
				}
				return
			}
			if err != nil || base != tt.wantBase || key != tt.wantKey {
				t.Errorf("got %q, %q, %v; want %q, %q", base, key, err, tt.wantBase, tt.wantKey)
			}
			want := tt.model
			if want == "" && tt.llm != nil {
				want = tt.llm.Model
			}
			if ep.Model != want {
				t.Errorf("model sent %q, want %q", ep.Model, want)
			}
			if tt.wantFrom != "" && ep.BaseFrom != tt.wantFrom {
				t.Errorf("base URL from %q, want %q", ep.BaseFrom, tt.wantFrom)
			}
		})
	}
}

// Every provider prefix: its documented base URL and key variable.
func TestProviders(t *testing.T) {
	tests := []struct{ prefix, base, keyVar string }{
		{"openai/", "https://api.openai.com/v1", "OPENAI_API_KEY"},
		{"ollama/", "http://127.0.0.1:11434/v1", ""},
		{"groq/", "https://api.groq.com/openai/v1", "GROQ_API_KEY"},
		{"openrouter/", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
		{"together/", "https://api.together.xyz/v1", "TOGETHER_API_KEY"},
		{"together_ai/", "https://api.together.xyz/v1", "TOGETHER_API_KEY"},
		{"deepseek/", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"},
		{"mistral/", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"},
		{"fireworks_ai/", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"},
		{"xai/", "https://api.x.ai/v1", "XAI_API_KEY"},
		{"gemini/", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"},
		{"anthropic/", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"},
		{"perplexity/", "https://api.perplexity.ai", "PERPLEXITY_API_KEY"},
	}
	if len(tests) != len(providers)-1 { // azure/ has no fixed endpoint: TestResolve
		t.Errorf("%d providers, %d tested", len(providers), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			getenv := func(k string) string {
				if k == tt.keyVar {
					return "key-" + k
				}
				if k == "OPENAI_BASE_URL" && tt.prefix != "openai/" {
					return "http://must-not-be-used/v1"
				}
				return ""
			}
			ep, err := Resolve(&spec.LLM{Model: tt.prefix + "some-model"}, getenv)
			if err != nil {
				t.Fatal(err)
			}
			wantKey := ""
			if tt.keyVar != "" {
				wantKey = "key-" + tt.keyVar
			}
			if ep.BaseURL != tt.base || ep.APIKey != wantKey || ep.Model != "some-model" {
				t.Errorf("got %+v; want %s, %q, some-model", ep, tt.base, wantKey)
			}
		})
	}
}
