package spec

import "testing"

// TestModelAliasKeys checks that an alias is resolved before an agent's
// definition is compared: the same settings reached through an alias or
// written out give the same key, a change to the alias changes it, and a
// price (which changes no answer) does not.
func TestModelAliasKeys(t *testing.T) {
	const literal = `llm: {model: gpt-4o-mini, base_url: "http://127.0.0.1:1/v1", temperature: 0.2}
agents:
  w: {role: Writer}
tasks:
  draft: {description: Write, agent: w}
`
	alias := func(def string) string {
		return "models:\n  fast: " + def + `
llm: fast
agents:
  w: {role: Writer}
tasks:
  draft: {description: Write, agent: w}
`
	}
	_, want := defsOf(t, literal, nil)
	tests := []struct {
		name string
		spec string
		same bool
	}{
		{"alias with the same settings", alias(`{model: gpt-4o-mini, base_url: "http://127.0.0.1:1/v1", temperature: 0.2}`), true},
		{"alias with a price", alias(`{model: gpt-4o-mini, base_url: "http://127.0.0.1:1/v1", temperature: 0.2, price: {input: 1, output: 2}}`), true},
		{"mapping over an alias", "models:\n  fast: {model: gpt-4o-mini, base_url: \"http://127.0.0.1:1/v1\", temperature: 0.9}\nllm: {model: fast, temperature: 0.2}\nagents:\n  w: {role: Writer}\ntasks:\n  draft: {description: Write, agent: w}\n", true},
		{"alias to another model", alias(`{model: gpt-4o, base_url: "http://127.0.0.1:1/v1", temperature: 0.2}`), false},
		{"alias to another URL", alias(`{model: gpt-4o-mini, base_url: "http://127.0.0.1:2/v1", temperature: 0.2}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := defsOf(t, tt.spec, nil)
			if same := got[0].AgentKey == want[0].AgentKey && got[0].Key == want[0].Key; same != tt.same {
				t.Errorf("same keys = %v, want %v (got %s, literal %s)", same, tt.same, got[0].AgentKey, want[0].AgentKey)
			}
		})
	}
}

func TestModelAliasResolve(t *testing.T) {
	team, err := Parse("m.yaml", []byte(`models:
  fast:
    model: gpt-4o-mini
    api_key_env: FAST_KEY
    price: {input: 0.15, output: 0.6}
agents:
  a: {llm: fast}
  b: {llm: {model: fast, api_key_env: OTHER_KEY}}
  c: {llm: gpt-4o}
  d: {role: Bare}
tasks:
  t1: {description: x, agent: a}
  t2: {description: x, agent: b}
  t3: {description: x, agent: c}
  t4: {description: x, agent: d}
`))
	if err != nil {
		t.Fatal(err)
	}
	team.FillLLM(LLM{Model: "fast", BaseURL: "http://127.0.0.1:9/v1"})
	tests := []struct {
		agent, model, keyEnv, baseURL, alias string
		priced                               bool
		aliasLine                            int
	}{
		{"a", "gpt-4o-mini", "FAST_KEY", "", "fast", true, 2},
		{"b", "gpt-4o-mini", "OTHER_KEY", "", "fast", true, 2},
		{"c", "gpt-4o", "", "", "", false, 0},
		// config.yml's default names the alias too; its base_url wins.
		{"d", "gpt-4o-mini", "FAST_KEY", "http://127.0.0.1:9/v1", "fast", true, 2},
	}
	for _, tt := range tests {
		l := team.Agent(tt.agent).LLM
		if l == nil {
			t.Fatalf("agent %s: no llm", tt.agent)
		}
		if l.Model != tt.model || l.APIKeyEnv != tt.keyEnv || l.BaseURL != tt.baseURL || l.Alias != tt.alias || (l.Price != nil) != tt.priced || l.AliasPos.Line != tt.aliasLine {
			t.Errorf("agent %s: got %+v", tt.agent, *l)
		}
	}
	if team.Agent("a").LLM == team.Models["fast"] {
		t.Errorf("an agent shares the alias's llm: a change to one would change the other")
	}
}
