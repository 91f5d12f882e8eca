package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The task keys and the canonical task list are written directly; these
// are the generic forms they replaced (maps through canonicalJSON), which
// they must match byte for byte.

func refCanonicalTasks(defs []TaskDef) []byte {
	list := make([]any, len(defs))
	for i, d := range defs {
		list[i] = map[string]any{
			"agent":           d.Agent,
			"description":     d.Description,
			"expected_output": d.ExpectedOutput,
			"id":              d.ID,
			"name":            d.Name,
		}
	}
	return canonicalJSON(list)
}

// refTaskKeyJSON is the key's JSON; older: as teamruns before keys left
// max_retries and timeout out wrote it.
func refTaskKeyJSON(team *Team, i int, d *TaskDef, ctxKeys []string, older bool) []byte {
	tk := team.Tasks[i]
	var ctx []any
	for i, name := range d.Context {
		ctx = append(ctx, map[string]any{"name": name, "key": ctxKeys[i]})
	}
	var cond []any
	for _, r := range tk.Condition() {
		cond = append(cond, map[string]any{"value": r.Value, "next": anyStrings(r.Next)})
	}
	m := map[string]any{
		"name":            d.Name,
		"agent":           d.Agent,
		"agent_key":       d.AgentKey,
		"description":     d.Description,
		"expected_output": d.ExpectedOutput,
		"output_variable": tk.OutputVariable,
		"options":         anyStrings(tk.Options()),
		"condition":       cond,
		"max_retries":     0,
		"timeout":         "",
		"context":         ctx,
	}
	if older {
		m["max_retries"], m["timeout"] = tk.MaxRetries, durationText(tk.Timeout)
	}
	if tk.OutputSchema() != nil {
		m["output_schema"] = tk.OutputSchema()
	}
	if tk.RouteOn() != "" {
		m["route_on"] = tk.RouteOn()
	}
	if x := tk.Expansion; x != nil && x.BindInKey {
		m["item"] = x.Bind()
	}
	if until := tk.Expanded().Until; until != "" {
		m["until"] = until
	}
	from := map[string]any{}
	team.VariableReads().Each(i, func(j int) {
		v := team.Tasks[j].OutputVariable
		l, _ := from[v].([]any)
		from[v] = append(l, team.Tasks[j].Name)
	})
	if len(from) > 0 {
		m["variables_from"] = from
	}
	return canonicalJSON(m)
}

func checkDirectJSON(t *testing.T, name string, team *Team) {
	t.Helper()
	defs := team.TaskDefs(team.InitialState(nil))
	if got, want := string(CanonicalTasks(defs)), string(refCanonicalTasks(defs)); got != want {
		t.Errorf("%s: CanonicalTasks\n got %s\nwant %s", name, got, want)
	}
	index := map[string]int{}
	for i, d := range defs {
		if _, dup := index[d.Name]; !dup {
			index[d.Name] = i
		}
	}
	for i := range defs {
		keys := make([]string, len(defs[i].Context))
		for c, n := range defs[i].Context {
			if j, ok := index[n]; ok {
				keys[c] = defs[j].Key
			}
		}
		for _, older := range []bool{false, true} {
			var set keySettings
			if older {
				set = keySettings{team.Tasks[i].MaxRetries, team.Tasks[i].Timeout}
			}
			got := string(appendTaskKeyJSON(nil, team.Tasks[i], &defs[i], keys, team.variablesFrom()[i], set))
			if want := string(refTaskKeyJSON(team, i, &defs[i], keys, older)); got != want {
				t.Errorf("%s: task %q key JSON (older %v)\n got %s\nwant %s", name, defs[i].Name, older, got, want)
			}
			if !older && defs[i].Key != hash16([]byte(got)) {
				t.Errorf("%s: task %q key is not the hash of its JSON", name, defs[i].Name)
			}
		}
	}
}

func TestDirectJSONMatchesCanonicalJSON(t *testing.T) {
	n := 0
	for name, data := range fastCorpus(t) {
		team, err := Parse(name, data)
		if err != nil {
			continue
		}
		n++
		checkDirectJSON(t, name, team)
	}
	if n < 5 {
		t.Fatalf("only %d valid specs", n)
	}
	// Every field set, with text that needs escaping.
	odd := "q\"uote \\ back\nnew\ttab \x01 é 😀 <html> &amp; \u2028"
	team := &Team{Process: Workflow, Agents: []*Agent{{Name: "a", Kind: CommandAgent, Shell: "cat"}}}
	for i := range 4 {
		tk := &Task{Name: fmt.Sprintf("t%d %s", i, odd), Agent: "a", Description: odd + " {vxx} {v}", ExpectedOutput: odd,
			MaxRetries: i * 7, Timeout: time.Duration(i) * 1500 * time.Millisecond, OutputVariable: "v" + strings.Repeat("x", i)}
		if i > 0 {
			tk.HasContext = true
			tk.Context = []string{team.Tasks[i-1].Name, "missing"}
			tk.SetOptions([]string{"yes", odd})
			tk.SetCondition([]Route{{Value: "yes", Next: []string{"t0", odd}}, {Value: odd}})
		}
		team.Tasks = append(team.Tasks, tk)
	}
	// A second task setting v: its readers name both.
	team.Tasks = append(team.Tasks, &Task{Name: "again " + odd, Agent: "a", Description: odd, OutputVariable: "v"})
	checkDirectJSON(t, "odd", team)
	team.Process = Sequential
	for _, tk := range team.Tasks {
		tk.HasContext = false
	}
	checkDirectJSON(t, "odd sequential", team)
}
