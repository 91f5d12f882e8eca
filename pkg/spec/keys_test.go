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
		{"max_retries changes no result: not in the key", "agent: counter, context: [polish]}", "agent: counter, context: [polish], max_retries: 2}", nil, nil, true},
		{"timeout changes no result: not in the key", "agent: counter, context: [polish]}", "agent: counter, context: [polish], timeout: 1m}", nil, nil, true},
		{"retry_delay changes no result: not in the key", "agent: counter, context: [polish]}", "agent: counter, context: [polish], retry_delay: 3s}", nil, nil, true},
		{"output_file changes no result: not in the key", "agent: counter, context: [polish]}", "agent: counter, context: [polish], output_file: out.txt}", nil, nil, true},
		{"condition is part of the key", "agent: counter, context: [polish]}", "agent: counter, context: [polish], condition: {x: [side]}}", nil, []string{"count"}, true},
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

// olderDefs are the keys a teamrun from before keys left out max_retries
// and timeout recorded for team's tasks (context before reader, as in
// keysBase), as a session's Known.
func olderDefs(t *testing.T, spec string) func(int, string) Known {
	t.Helper()
	team, defs := defsOf(t, spec, nil)
	keys := map[string]string{}
	known := make([]Known, len(defs))
	for i := range defs {
		ctx := make([]string, len(defs[i].Context))
		for c, n := range defs[i].Context {
			ctx[c] = keys[n]
		}
		from := team.variablesFrom()[i]
		set := keySettings{team.Tasks[i].MaxRetries, team.Tasks[i].Timeout}
		known[i].OwnKey = hash16(appendTaskKeyJSON(nil, team.Tasks[i], &defs[i], make([]string, len(ctx)), from, set))
		known[i].Key = hash16(appendTaskKeyJSON(nil, team.Tasks[i], &defs[i], ctx, from, set))
		keys[defs[i].Name] = known[i].Key
	}
	return func(i int, name string) Known {
		if i < len(defs) && defs[i].Name == name {
			return known[i]
		}
		return Known{}
	}
}

// TestOlderKeys: a key a session recorded before keys left out max_retries
// and timeout is still the task's while they are as they were, or were
// added since (the key then hashed their defaults), and so are the keys of
// the tasks that read it; it is not once they changed from a value set
// then (that session cannot tell), nor when anything else changed.
func TestOlderKeys(t *testing.T) {
	const set = "context: [draft], max_retries: 2, timeout: 1m}"
	withSettings := strings.Replace(keysBase, "context: [draft]}", set, 1)
	timeoutOnly := strings.Replace(keysBase, "context: [draft]}", "context: [draft], timeout: 1m}", 1)
	tests := []struct {
		name    string
		then    string
		now     string
		changed []string // the tasks whose key is not the recorded one
		own     []string // the tasks whose own key is not
	}{
		{"no settings: the keys are as they were", keysBase, keysBase, nil, nil},
		{"settings as they were", withSettings, withSettings, nil, nil},
		{"settings added since", keysBase, withSettings, nil, nil},
		{"max_retries added beside a timeout", timeoutOnly, withSettings, nil, nil},
		{"a timeout added beside max_retries", strings.Replace(withSettings, ", timeout: 1m", "", 1), withSettings, nil, nil},
		{"settings changed since", withSettings, strings.Replace(withSettings, "max_retries: 2", "max_retries: 3", 1), []string{"polish", "count"}, []string{"polish"}},
		{"settings removed since", withSettings, keysBase, []string{"polish", "count"}, []string{"polish"}},
		{"the description changed too", keysBase, strings.Replace(withSettings, "description: Polish,", "description: Polish!,", 1), []string{"polish", "count"}, []string{"polish"}},
		{"what it reads changed", withSettings, strings.Replace(withSettings, "Write about", "Write on", 1), []string{"draft", "polish", "count"}, []string{"draft"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			known := olderDefs(t, tt.then)
			team, err := Parse("k.yaml", []byte(tt.now))
			if err != nil {
				t.Fatal(err)
			}
			defs := team.TaskDefsKnown(team.InitialState(nil), known)
			for i, d := range defs {
				k := known(i, d.Name)
				if changed := d.Key != k.Key; changed != contains(tt.changed, d.Name) {
					t.Errorf("task %s: key %s, recorded %s: changed = %v", d.Name, d.Key, k.Key, changed)
				}
				if ownChanged := d.OwnKey != k.OwnKey; ownChanged != contains(tt.own, d.Name) {
					t.Errorf("task %s: own key %s, recorded %s: changed = %v", d.Name, d.OwnKey, k.OwnKey, ownChanged)
				}
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

// TestCommandReadsVariables: the variables a command agent reads through
// its environment are part of its agent's definition, as the placeholders
// of an LLM agent's prompts are: another value gives another key to the
// agent and its tasks (and never another fingerprint); a value it does not
// read, or the same text written another way, gives the same key.
func TestCommandReadsVariables(t *testing.T) {
	const base = `variables: {topic: A, other: x, n: 3}
llm: {model: gpt-4o, api_key_env: MY_KEY}
agents:
  a: {AGENT}
tasks:
  t: {description: Do it, agent: a}
`
	tests := []struct {
		name        string
		agent       string
		before      map[string]string
		after       map[string]string
		wantChanged bool
	}{
		{"shell reads the variable", `shell: 'echo "$TEAMRUN_VAR_TOPIC"'`, nil, map[string]string{"topic": "B"}, true},
		{"shell reads another variable", `shell: 'echo "$TEAMRUN_VAR_TOPIC"'`, nil, map[string]string{"other": "y"}, false},
		{"argv reads the variable", `command: [printenv, TEAMRUN_VAR_TOPIC]`, nil, map[string]string{"topic": "B"}, true},
		{"the vars file holds them all", `shell: 'cat "$TEAMRUN_VARS_FILE"'`, nil, map[string]string{"other": "y"}, true},
		{"a variable that was not set", `shell: 'echo "$TEAMRUN_VAR_LATER"'`, nil, map[string]string{"later": "1"}, true},
		{"the same text in the environment", `shell: 'echo "$TEAMRUN_VAR_N"'`, nil, map[string]string{"n": "3"}, false},
		{"the same --var again", `shell: 'echo "$TEAMRUN_VAR_TOPIC"'`, map[string]string{"topic": "B"}, map[string]string{"topic": "B"}, false},
		{"a command that reads none", `shell: 'echo hi'`, nil, map[string]string{"topic": "B", "other": "y"}, false},
		{"an LLM agent's prompt, alike", `goal: "Write about {topic}"`, nil, map[string]string{"topic": "B"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := strings.Replace(base, "AGENT", tt.agent, 1)
			team, before := defsOf(t, spec, tt.before)
			_, after := defsOf(t, spec, tt.after)
			if got := after[0].AgentKey != before[0].AgentKey; got != tt.wantChanged {
				t.Errorf("agent key changed = %v, want %v", got, tt.wantChanged)
			}
			if got := after[0].Key != before[0].Key; got != tt.wantChanged {
				t.Errorf("task key changed = %v, want %v", got, tt.wantChanged)
			}
			if got := team.AgentKey("a", team.InitialState(tt.after)); got != after[0].AgentKey {
				t.Errorf("AgentKey = %s, the task's def has %s", got, after[0].AgentKey)
			}
			if a, b := team.Fingerprint(team.InitialState(tt.before)), team.Fingerprint(team.InitialState(tt.after)); a != b {
				t.Errorf("fingerprint changed: %s, %s", a, b)
			}
		})
	}
}

// TestSettingAdded: a diff names the setting of its own key a task did not
// have when its own key was recorded; one it had and changed, the key
// cannot tell.
func TestSettingAdded(t *testing.T) {
	const base = `agents: {a: {shell: cat}}
tasks:
  t: {description: Do it, agent: a, TASK}
  u: {description: Then, agent: human, options: [yes, no]}
`
	tests := []struct {
		name, then, now, want string
	}{
		{"condition added", "max_retries: 1", "condition: {x: [u]}", "condition"},
		{"output_schema added", "timeout: 1m", "output_schema: {type: object}", "output_schema"},
		{"output_variable added", "timeout: 1m", "output_variable: v", "output_variable"},
		{"route_on added with its condition", "condition: {x: [u]}", "condition: {x: [u]}, route_on: /a", "route_on"},
		{"condition changed", "condition: {x: [u]}", "condition: {y: [u]}", ""},
		{"condition removed", "condition: {x: [u]}", "timeout: 1m", ""},
		{"two added", "timeout: 1m", "condition: {x: [u]}, output_variable: v", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, then := defsOf(t, strings.Replace(base, "TASK", tt.then, 1), nil)
			team, now := defsOf(t, strings.Replace(base, "TASK", tt.now, 1), nil)
			if then[0].OwnKey == now[0].OwnKey {
				t.Fatal("the own key did not change")
			}
			if got := team.SettingAdded(now)(0, then[0].OwnKey); got != tt.want {
				t.Errorf("SettingAdded = %q, want %q", got, tt.want)
			}
		})
	}
	// options, on a human task.
	_, then := defsOf(t, strings.Replace(strings.Replace(base, ", options: [yes, no]", "", 1), "TASK", "timeout: 1m", 1), nil)
	team, now := defsOf(t, strings.Replace(base, "TASK", "timeout: 1m", 1), nil)
	if got := team.SettingAdded(now)(1, then[1].OwnKey); got != "options" {
		t.Errorf("options added: SettingAdded = %q", got)
	}
}
