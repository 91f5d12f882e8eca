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

// What can be a variable's name is one, however it looks; what cannot, or
// starts as a provider's keys do, is refused, each in words that fit the
// slip and never with the value.
func TestKeyNameProblem(t *testing.T) {
	const (
		ok      = ""
		key     = "looks like a key itself"
		noName  = "is no environment variable name"
		dollar  = "is written with a $"
		spaces  = "has spaces around"
		hexKey  = "e3b0c44298fc1c149afbf4c8996fb924"
		azureRg = "AZURE_OPENAI_API_KEY_eastus2"
	)
	for name, want := range map[string]string{
		"OPENAI_API_KEY": ok, "MY_KEY": ok, "my_key": ok, "OpenRouterKey2": ok, azureRg: ok,
		"OpenAI_Api_Key_Production2": ok, "GITHUB_TOKEN_ForOrg2Readonly": ok, "hf_token": ok, "sk_test_var": ok,
		hexKey:        ok, // could be a name: accepted, and never shown (ShowsVarName)
		"sk-proj-abc": key, "gsk_LiveSecret9876543210abcdXYZ": key, "AIzaSyA-1234": key, "xai-abc": key,
		"sk_live_51H8abcdefghijklmnop": key,
		"$OPENAI_API_KEY":              dollar, "${OPENAI_API_KEY}": dollar, "$" + hexKey: dollar,
		"OPENAI_API_KEY ": spaces, " MY_KEY": spaces,
		"openai-key": noName, "OPENAI KEY": noName, "9KEY": noName, "": noName, "$": noName, "$sk-abc": noName,
		"aB3dE6gH9jK2mN5pQ8sT1vW4yZ-x": noName,
	} {
		got := KeyNameProblem(name)
		if want == ok && got != "" || want != ok && !strings.Contains(got, want) {
			t.Errorf("KeyNameProblem(%q) = %q, want %q", name, got, want)
		}
		if name != "" && strings.Contains(got, name) {
			t.Errorf("KeyNameProblem(%q) shows it: %q", name, got)
		}
	}
	if got := KeyNameProblem("$" + hexKey); strings.Contains(got, hexKey) {
		t.Errorf("a $ before a key-like name shows it: %q", got)
	}
	if got := KeyNameProblem("$OPENAI_API_KEY"); !strings.Contains(got, "write the variable's name alone, OPENAI_API_KEY ") {
		t.Errorf("$OPENAI_API_KEY: %q, want it to say write OPENAI_API_KEY", got)
	}
}

// A name is shown in messages when it reads as one; a key pasted there as
// a name (32 hex digits, Azure's) is not.
func TestShowsVarName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "AZURE_OPENAI_API_KEY_eastus2": true, "my_key": true, "OpenRouterKey2": true,
		"e3b0c44298fc1c149afbf4c8996fb924": false, "ABCDEF0123456789ABCDEF0123456789": false,
		"sk-abc": false, "$X": false,
	} {
		if got := ShowsVarName(name); got != want {
			t.Errorf("ShowsVarName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A name typed where a variable's name goes, an identifier or not
// (--var api-key=…), is shown when it reads as words; a key pasted there
// is not.
func TestReadsAsName(t *testing.T) {
	for name, want := range map[string]bool{
		"api-key": true, "bad name": true, "café": true, "OPENAI_API_KEY": true,
		"e3b0c44298fc1c149afbf4c8996fb924-x": false, "token: sk-proj-Abcdefghijklmnop0123": false,
		"sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA": false,
	} {
		if got := ReadsAsName(name); got != want {
			t.Errorf("ReadsAsName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A flag's bad value is quoted in its message, unless it looks like a key.
func TestShownValue(t *testing.T) {
	const key = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789"
	for s, want := range map[string]string{
		"maybe":         `"maybe"`,
		"":              `""`,
		"a\tb":          `"a\tb"`,
		key:             "what looks like an API key (the value is not shown)",
		"a/" + key:      "what looks like an API key (the value is not shown)",
		"openai/gpt-4o": `"openai/gpt-4o"`,
	} {
		if got := ShownValue(s); got != want {
			t.Errorf("ShownValue(%q) = %s, want %s", s, got, want)
		}
	}
}

// A key is seen at the start of a value and after a provider's prefix or
// a scheme (openai/sk-…, Bearer sk-…); within a value only when it reads
// as random, so that model names that happen to start like a key pass.
func TestLooksLikeKey(t *testing.T) {
	for s, want := range map[string]bool{
		"sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA":           true,
		"openai/sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t":    true,
		"Bearer sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3L": true,
		"groq/gsk_8fK2mQ9xLp4rT7vW1yZ3bN6c":          true,
		"key=hf_AbCdEfGhIjKlMnOp1234":                true,
		"openai/gpt-4o-mini":                         false,
		"openai/sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA":    false, // no digit: reads as words
		"org/hf_model-name-2024-instruct-v1":         false,
		"huggingface/hf_transformers-classifier-v2":  false,
		"gpt-4o":                               false,
		"sk-short":                             false,
		"anthropic/claude-3-5-sonnet-20241022": false,
	} {
		if got := LooksLikeKey(s); got != want {
			t.Errorf("LooksLikeKey(%q) = %v, want %v", s, got, want)
		}
	}
}
