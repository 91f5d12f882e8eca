package spec

import (
	"strings"
	"testing"
)

const keysBase = `process: workflow
variables: {topic: Go}
llm: {model: gpt-4o, api_key_env: MY_KEY}
agents:
  writer: {role: Writer, instructions: Draft it.}
  editor: {role: Editor, instructions: Polish it.}
  counter: {shell: wc -w}
tasks:
  draft: {description: "Write about {topic}", agent: writer}
  polish: {description: Polish, agent: editor, context: [draft]}
  count: {description: Count, agent: counter, context: [polish]}
  side: {description: Aside, agent: counter}
`

func defsOf(t *testing.T, spec string, vars map[string]string) (*Team, []TaskDef) {
	t.Helper()
	team, err := Parse("k.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	return team, team.TaskDefs(team.InitialState(vars))
}

// TestTaskKeys checks that a task's key follows its own definition, its
// agent's and its context tasks', and nothing else.
func TestTaskKeys(t *testing.T) {
	_, base := defsOf(t, keysBase, nil)
	for _, d := range base {
		if len(d.Key) != 16 || len(d.AgentKey) != 16 {
			t.Fatalf("keys must be 16 hex digits: %+v", d)
		}
	}
	tests := []struct {
		name    string
		from    string
		to      string
		vars    map[string]string
		changed []string // the tasks whose Key must change; all others must not
		fpSame  bool     // the task-set fingerprint stays the same
	}{
		{"agent instructions propagate downstream", "Polish it.", "Polish it well.", nil, []string{"polish", "count"}, true},
		{"max_retries is part of the key", "agent: counter, context: [polish]}", "agent: counter, context: [polish], max_retries: 2}", nil, []string{"count"}, true},
		{"description changes key and fingerprint", "description: Aside", "description: Aside!", nil, []string{"side"}, false},
		{"variable changes the rendered description", "", "", map[string]string{"topic": "Rust"}, []string{"draft", "polish", "count"}, false},
		{"team llm model reaches every llm agent", "model: gpt-4o,", "model: gpt-4o-mini,", nil, []string{"draft", "polish", "count"}, true},
		{"command change", "shell: wc -w", "shell: wc -c", nil, []string{"count", "side"}, true},
		{"an unrelated agent changes nothing", "  counter: {shell: wc -w}\n", "  counter: {shell: wc -w}\n  spare: {shell: cat}\n", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := strings.Replace(keysBase, tt.from, tt.to, 1)
			if spec == keysBase && tt.vars == nil {
				t.Fatal("the edit did not apply")
			}
			team, defs := defsOf(t, spec, tt.vars)
			for i := range defs {
				changed := defs[i].Key != base[i].Key
				if changed != contains(tt.changed, defs[i].Name) {
					t.Errorf("task %s: key changed = %v", defs[i].Name, changed)
				}
			}
			baseTeam, _ := defsOf(t, keysBase, nil)
			same := team.Fingerprint(team.InitialState(tt.vars)) == baseTeam.Fingerprint(baseTeam.InitialState(nil))
			if same != tt.fpSame {
				t.Errorf("fingerprint unchanged = %v, want %v", same, tt.fpSame)
			}
		})
	}
}

// TestKeysNeverHoldAPIKey: the key's value lives in the environment and
// never reaches a key or a def.
func TestKeysNeverHoldAPIKey(t *testing.T) {
	t.Setenv("MY_KEY", "sk-first-secret")
	team, a := defsOf(t, keysBase, nil)
	t.Setenv("MY_KEY", "sk-second-secret")
	_, b := defsOf(t, keysBase, nil)
	for i := range a {
		if a[i].Key != b[i].Key || a[i].AgentKey != b[i].AgentKey {
			t.Errorf("task %s: key depends on the API key's value", a[i].Name)
		}
	}
	if strings.Contains(string(CanonicalTasks(a)), "secret") {
		t.Error("canonical tasks hold the API key")
	}
	if ak := team.AgentKey("writer", nil); ak != a[0].AgentKey {
		t.Errorf("AgentKey = %s, TaskDef has %s", ak, a[0].AgentKey)
	}
}

func TestHumanTaskDefs(t *testing.T) {
	_, defs := defsOf(t, `agents: {w: {shell: cat}}
tasks:
  draft: {description: D, agent: w}
  ok: {description: "Approve?", agent: human, options: [yes, no]}
`, nil)
	if defs[1].Agent != HumanAgent || defs[1].AgentKey == defs[0].AgentKey || strings.Join(defs[1].Context, ",") != "draft" {
		t.Errorf("human def = %+v", defs[1])
	}
}
