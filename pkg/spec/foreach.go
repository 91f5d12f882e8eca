package spec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Foreach is a task's foreach: one instance per item of the list in the
// shared-state variable Over, each rendered with {As} bound to its item.
type Foreach struct {
	Over string
	As   string
	Pos  Pos
}

// foreachAs is the item's name when foreach gives no as: PraisonAI's.
const foreachAs = "item"

func (b *builder) foreach(v *tree) *Foreach {
	if !v.isMap() {
		return nil // the schema reported it
	}
	f := &Foreach{As: foreachAs, Pos: v.kpos}
	f.Over, _ = v.get("over").str()
	if s, ok := v.get("as").str(); ok && s != "" {
		f.As = s
	}
	return f
}

// checkForeach refuses what a foreach task cannot combine with, and says
// when its list can only come from --var.
func (b *builder) checkForeach() {
	t := b.team
	outputs := map[string]string{}
	for _, tk := range t.Tasks {
		if tk.OutputVariable != "" {
			outputs[tk.OutputVariable] = tk.Name
		}
	}
	for i, tk := range t.Tasks {
		f := tk.Foreach
		if f == nil {
			continue
		}
		fv := b.tasks[i].get("foreach")
		if fv == nil {
			fv = b.tasks[i].get("loop") // a PraisonAI step's
		}
		switch {
		case tk.Agent == HumanAgent:
			b.errorf(fv, fv.kpos, "a human task cannot run once per item: give the decision one task")
		case len(tk.Condition) > 0:
			b.errorf(fv, fv.kpos, "a foreach task cannot route (condition): route on a task after it, which reads the JSON array of results")
		case outputs[f.Over] != "":
			b.errorf(fv.get("over"), fv.get("over").pos, "%s is task %q's output_variable: foreach runs over a list known when the run starts (a variable, or --var %s='[...]'); a list made during the run is not supported yet", f.Over, outputs[f.Over], f.Over)
		}
		if _, ok := t.Variables[f.Over]; !ok && outputs[f.Over] == "" {
			b.warnf(fv.get("over"), fv.get("over").pos, "no variable %s: the run needs --var %s='[\"a\", \"b\"]' (a JSON array)", f.Over, f.Over)
		}
	}
}

// ForeachItems is the list a foreach runs over, from the state the run
// starts from: a list, or a string holding a JSON array (as --var gives).
func ForeachItems(f *Foreach, state map[string]any) ([]any, error) {
	v, ok := state[f.Over]
	if !ok {
		return nil, fmt.Errorf("foreach over %s: no variable %s; set it under variables: or with --var %s='[\"a\", \"b\"]'", f.Over, f.Over, f.Over)
	}
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		var items []any
		if err := json.Unmarshal([]byte(strings.TrimSpace(x)), &items); err == nil && items != nil {
			return items, nil
		}
	}
	return nil, fmt.Errorf("foreach over %s: expected a list (or a JSON array such as '[\"a\", \"b\"]'), got %s", f.Over, quoteShort(FormatValue(v)))
}

// InstanceName is the name of item i's instance of task name.
func InstanceName(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) }

// Expand returns the team with each foreach task replaced by its
// instances, in item order, then a join task under the task's own name
// whose result is the JSON array of theirs (a repeat task: by its
// iterations, then a join whose result is the last one's, expandRepeat): later tasks, context and
// output_variable see the task as before. Each instance is a task of its
// own, so it is checkpointed, restored and (under --reuse unchanged)
// reused on its own, its item part of its rendered definition. A team
// without foreach is returned as it is.
func (t *Team) Expand(state map[string]any) (*Team, error) {
	has := false
	for _, tk := range t.Tasks {
		has = has || tk.Foreach != nil || tk.Repeat != nil
	}
	if !has {
		return t, nil
	}
	out := *t
	out.Tasks = nil
	out.Agents = append([]*Agent(nil), t.Agents...)
	taken := map[string]bool{}
	for _, tk := range t.Tasks {
		taken[tk.Name] = true
	}
	for i, tk := range t.Tasks {
		if tk.Repeat != nil {
			if err := t.expandRepeat(&out, i, taken); err != nil {
				return nil, err
			}
			continue
		}
		if tk.Foreach == nil {
			out.Tasks = append(out.Tasks, tk)
			continue
		}
		items, err := ForeachItems(tk.Foreach, state)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: tasks.%s.foreach: %w", t.File, tk.Foreach.Pos.Line, tk.Foreach.Pos.Column, tk.Name, err)
		}
		ctx := t.ContextOf(i)
		join := &Task{Name: tk.Name, Agent: "foreach:" + tk.Name, HasContext: true, Pos: tk.Pos,
			Description:    fmt.Sprintf("the results of %s[0..%d] as a JSON array", tk.Name, len(items)-1),
			OutputVariable: tk.OutputVariable, OutputFile: tk.OutputFile, ForeachOf: tk.Name}
		for k, item := range items {
			name := InstanceName(tk.Name, k)
			if taken[name] {
				return nil, fmt.Errorf("%s:%d:%d: tasks.%s: instance %s has the name of another task: rename one", t.File, tk.Pos.Line, tk.Pos.Column, tk.Name, name)
			}
			bind := map[string]any{tk.Foreach.As: item}
			inst := *tk
			inst.Name, inst.Foreach, inst.ForeachOf = name, nil, tk.Name
			inst.Description = Render(tk.Description, bind)
			inst.ExpectedOutput = Render(tk.ExpectedOutput, bind)
			inst.Context, inst.HasContext = ctx, true
			inst.OutputVariable, inst.OutputFile = "", ""
			out.Tasks = append(out.Tasks, &inst)
			join.Context = append(join.Context, name)
		}
		out.Tasks = append(out.Tasks, join)
		out.Agents = append(out.Agents, &Agent{Name: join.Agent, Kind: JoinAgent, Pos: tk.Pos})
	}
	return &out, nil
}
