package spec

import (
	"strings"
	"testing"
)

// A key pasted where the name of its variable goes is refused, and never
// shown: identifier-shaped (Groq's gsk_…) or not, in the native format, a
// PraisonAI file and an MCP server's headers.
func TestKeyPastedAsName(t *testing.T) {
	const key, gsk = "sk-LIVESECRET-9876543210abcd", "gsk_LiveSecret9876543210abcdXYZ"
	for _, tc := range []struct{ name, spec, path string }{
		{"native, not an identifier", "agents:\n  b: {role: B, llm: {model: m, api_key_env: " + key + "}}\ntasks:\n  t: {description: d, agent: b}\n", "agents.b.llm.api_key_env"},
		{"native, an identifier", "agents:\n  b: {role: B, llm: {model: m, api_key_env: " + gsk + "}}\ntasks:\n  t: {description: d, agent: b}\n", "agents.b.llm.api_key_env"},
		{"team llm", "llm: {model: m, api_key_env: " + gsk + "}\nagents:\n  b: {role: B}\ntasks:\n  t: {description: d, agent: b}\n", "llm.api_key_env"},
		{"mcp header", "mcp: {servers: {s: {url: \"http://h/mcp\", headers: {Authorization: " + key + "}}}}\nagents:\n  b: {role: B, llm: m, tools: [s]}\ntasks:\n  t: {description: d, agent: b}\n", "mcp.servers.s.headers.Authorization"},
		{"praisonai", "framework: praisonai\nroles:\n  r:\n    role: R\n    goal: G\n    backstory: B\n    llm: {model: m, api_key_env: " + key + "}\n    tasks:\n      t: {description: d, expected_output: e}\n", "roles.r.llm.api_key_env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("agents.yaml", []byte(tc.spec))
			if err == nil || !strings.Contains(err.Error(), tc.path+": ") || !strings.Contains(err.Error(), "looks like a key itself") {
				t.Errorf("error %v, want one at %s saying it looks like a key", err, tc.path)
			}
			if err != nil && (strings.Contains(err.Error(), "LIVESECRET") || strings.Contains(err.Error(), "LiveSecret")) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestLooksLikeKey(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": false, "MY_KEY": false, "GROQ_API_KEY": false, "AZURE_OPENAI_API_KEY_2024": false,
		"my_key": false, "SEARCH_TOKEN": false, "OpenRouterKey2": false,
		"sk-proj-abc": true, "gsk_abc": true, "AIzaSyA-1234": true, "xai-abc": true,
		"aB3dE6gH9jK2mN5pQ8sT1vW4yZ": true,
	} {
		if got := LooksLikeKey(name); got != want {
			t.Errorf("LooksLikeKey(%q) = %v, want %v", name, got, want)
		}
	}
}
