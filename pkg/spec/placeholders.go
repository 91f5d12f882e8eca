package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// collectPlaceholders records every {name} of the texts Render fills in
// (task descriptions and expected outputs, agents' role, goal, backstory,
// instructions; a PraisonAI step's output_file) at the line and column it
// is written: the first source
// line at or after the text's start that holds it, in a spelling the
// team's syntax reads.
func (b *builder) collectPlaceholders(data []byte) {
	var lines []string // split on the first placeholder: most specs have few or none
	// at holds, for each line looked at, the column of the first of each
	// name its placeholders have, read as the texts' are (eachPlaceholder):
	// each line is read once, however many placeholders it holds.
	at := map[int]map[string]int{}
	syn := b.team.syntax()
	// A text spans a few source lines more than it has newlines (folding,
	// an agent's other keys): the search stops there, so a big spec costs
	// no more per placeholder than a small one; not found, the text's
	// start is near enough.
	find := func(name string, from Pos, span int) Pos {
		if lines == nil {
			lines = strings.Split(string(data), "\n")
		}
		for l := max(from.Line, 1); l <= len(lines) && l <= from.Line+span; l++ {
			cols, ok := at[l]
			if !ok {
				cols = map[string]int{}
				line := lines[l-1]
				read, col := 0, 1 // the characters before line[read], counted once
				eachPlaceholder(line, syn, func(n string, start, _ int) {
					col += utf8.RuneCountInString(line[read:start])
					read = start
					if _, seen := cols[n]; !seen {
						cols[n] = col
					}
				})
				at[l] = cols
			}
			if c, ok := cols[name]; ok {
				return Pos{Line: l, Column: c}
			}
		}
		return from
	}
	// like is the use of a placeholder in text but for its name and place.
	add := func(text string, from Pos, like PlaceholderUse, each *Foreach, bound ...string) {
		for _, w := range placeholdersIn(text, syn) {
			over := ""
			if root, _, dotted := strings.Cut(w.name, "."); slices.Contains(bound, root) {
				if !dotted || each == nil || root != each.As {
					continue // a foreach item or a repeat's previous output, bound in each
				}
				over = each.Over // a field of each item: checked on the items
			}
			u := like
			u.Name, u.Written, u.Over = w.name, w.as, over
			u.Pos = find(w.name, from, 2*strings.Count(text, "\n")+64)
			b.team.Placeholders = append(b.team.Placeholders, u)
		}
	}
	for _, a := range b.team.Agents {
		p := a.KeyPath()
		bound := agentBound(b.team, a.Name)
		for _, f := range []struct{ key, text string }{{"role", a.Role}, {"goal", a.Goal}, {"backstory", a.Backstory}, {"instructions", a.Instructions}} {
			// From the field's own value: the agent's first line would
			// find the first of a name in any of its texts.
			from := a.Pos
			if v := b.agentSrc[a].get(f.key); v != nil {
				from = v.pos()
			}
			add(f.text, from, PlaceholderUse{Path: p + "." + f.key, Agent: true}, nil, bound...)
		}
	}
	type field struct {
		keys [2]string // the second "" when there is one
		text string
	}
	for i, tk := range b.team.Tasks {
		// On the stack: most tasks have no placeholder, and a 10,000-task
		// spec made 0.6 MB of these (and of src) for nothing.
		fields := [...]field{{[2]string{"description", "action"}, tk.Description}, {[2]string{"expected_output"}, tk.ExpectedOutput}, {[2]string{"output_file"}, tk.OutputFile()}}
		n := 2
		if syn == praisonSteps {
			n = 3 // filled when the file is written (Team.OutputPath)
		}
		for _, f := range fields[:n] {
			if strings.IndexByte(f.text, '{') < 0 {
				continue // no placeholder: its place is not looked up
			}
			src := &tree{at: placeOf(tk.Pos), path: tk.KeyPath()}
			if i < len(b.tasks) && b.tasks[i] != nil {
				src = b.tasks[i]
			}
			// A text the file does not write (a step's action it left
			// out) is said where the step is.
			at, path, unwritten := src.pos(), src.path, f.keys[0] == "description"
			for _, k := range f.keys {
				if v := src.get(k); k != "" && v != nil {
					at, path, unwritten = v.pos(), v.path, false
					break
				}
			}
			var bound []string
			each := tk.Foreach
			if each != nil && f.keys[0] != "output_file" {
				bound = append(bound, each.As, each.Index)
			} else if each != nil {
				// The join writes it, item-less: said as that, not as a
				// name nothing defines (the loop defines it).
				v := src.get("output_file")
				if v == nil {
					v = src
				}
				for _, w := range placeholdersIn(f.text, syn) {
					if root, _, _ := strings.Cut(w.name, "."); root == each.As || (root == each.Index && root != "") {
						b.warnf(v, at,
							"%s: a loop step's output_file is written once, when its items are done, with the JSON array of their answers, so %s has no value there and the file's name keeps it as written: name one file for the whole loop", w.as, w.as)
						bound = append(bound, root)
					}
				}
			}
			runs := ""
			if each != nil && each.Chain {
				runs = "item"
			}
			if tk.Repeat != nil && b.team.PraisonTemplates && len(b.team.contextAs(i, nil)) == 0 {
				runs = "iteration" // its first keeps it as written (Team.FillsNoPrevious)
			} else if _, isIf := b.conditions[tk]; isIf || tk.Repeat != nil {
				bound = append(bound, PreviousOutput)
			}
			if f.keys[0] == "output_file" {
				each = nil // no item's field is read there
			}
			like := PlaceholderUse{Path: path, Unwritten: unwritten && syn == praisonSteps, Runs: runs}
			if f.keys[0] == "description" && tk.more != nil {
				like.Else = tk.more.noInput
			}
			add(f.text, at, like, each, bound...)
		}
	}
	slices.SortStableFunc(b.team.Placeholders, func(x, y PlaceholderUse) int {
		if x.Pos.Line != y.Pos.Line {
			return x.Pos.Line - y.Pos.Line
		}
		return x.Pos.Column - y.Pos.Column
	})
}

// Defined is every name the shared state holds when tasks render: the
// variables, the run's start state (--var included), the tasks'
// output_variables and the counts of their repeats.
func (t *Team) Defined(state map[string]any) map[string]bool {
	d := make(map[string]bool, len(t.Variables)+len(state))
	for k := range state {
		d[k] = true
	}
	t.eachDefined(func(k string) bool {
		d[k] = true
		return true
	})
	return d
}

// defines says whether name is among Defined(state), without the map.
func (t *Team) defines(state map[string]any, name string) bool {
	if _, ok := state[name]; ok {
		return true
	}
	found := false
	t.eachDefined(func(k string) bool {
		found = k == name
		return !found
	})
	return found
}

// eachDefined calls yield with each name the team itself defines (its
// variables, its tasks' output_variables and the counts of their
// repeats) until yield returns false.
func (t *Team) eachDefined(yield func(string) bool) {
	for k := range t.Variables {
		if !yield(k) {
			return
		}
	}
	for _, tk := range t.Tasks {
		if tk.OutputVariable != "" && !yield(tk.OutputVariable) {
			return
		}
		if tk.Repeat != nil && tk.Repeat.Count != "" && !yield(tk.Repeat.Count) {
			return
		}
	}
}

// UndefinedPlaceholders warns about each {name} nothing defines, and each
// foreach list nothing sets (UnsetLists), given the
// state the run starts from (nil: the file's variables only): Render leaves it as written, so the agent reads "{name}",
// which is almost always a typo or a forgotten --var.
func (t *Team) UndefinedPlaceholders(state map[string]any) []Diagnostic {
	defined := t.Defined(state)
	known := slices.Collect(maps.Keys(defined))
	for i, k := range known {
		if w, ok := t.madeNames[k]; ok {
			known[i] = w // the name a text writes, not teamrun's
		}
	}
	if t.PraisonTemplates {
		known = append(known, praisonBuiltinNames()...) // filled when the run starts
	}
	slices.Sort(known)
	known = slices.Compact(known)
	values := state // what is known before the run; an output_variable is not
	if values == nil {
		values = t.Variables
	}
	var out []Diagnostic
	if in, ok := values["input"].(string); ok {
		for _, u := range t.InputPlaceholders {
			if strings.Contains(in, u.Written) { // else --var input= replaced it
				out = append(out, Diagnostic{File: t.File, Line: u.Pos.Line, Column: u.Pos.Column, Path: u.Path,
					Message: fmt.Sprintf("%s: PraisonAI fills only its built-in variables ({{today}} and the like) in the input, not variables:, so the steps that read the input get %s as written; write the text itself here, or pass --var input=TEXT", u.Written, u.Written)})
			}
		}
	}
	for _, u := range t.UnsetLists {
		if _, ok := values[u.Name]; !ok {
			out = append(out, Diagnostic{File: t.File, Line: u.Pos.Line, Column: u.Pos.Column, Path: u.Path,
				Message: fmt.Sprintf("no variable %s: the run needs --var %s='[\"a\", \"b\"]' (a JSON array)", u.Name, u.Name)})
		}
	}
	for _, u := range t.Placeholders {
		root, _, dotted := strings.Cut(u.Name, ".")
		if _, builtin := praisonBuiltin(u.Name, time.Time{}); builtin && t.PraisonTemplates {
			continue // filled when the run starts
		}
		if u.Over != "" || defined[root] {
			if miss := fieldMiss(u, values); miss != "" {
				out = append(out, Diagnostic{File: t.File, Line: u.Pos.Line, Column: u.Pos.Column, Path: u.Path,
					Message: fmt.Sprintf("%s: %s, so the text keeps it as written", u.written(), miss)})
			}
			continue
		}
		keeps := "so the text keeps it as written"
		if u.Else != "" {
			keeps = fmt.Sprintf("so the step, which has no action:, is sent %q instead", u.Else)
		}
		msg := fmt.Sprintf("%s: nothing defines %s (variables:, an output_variable or --var %s=VALUE), %s", u.written(), root, root, keeps)
		if dotted {
			msg = fmt.Sprintf("%s: nothing defines %s, the mapping it reads a field of (variables:, an output_variable), so the text keeps it as written", u.written(), root)
		}
		shared := t.sharedNames[root]
		if m := closest(root, known); m != "" && shared == nil {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		if h := t.praisonSetsWhere(root, u); h != "" && t.PraisonTemplates {
			msg += "; " + h
		}
		if shared != nil {
			msg += fmt.Sprintf("; no step is named so, and %s and %s come out as it once _ replaces what a variable name cannot hold, so it reads none of them: write the one meant, with its step's name as written",
				strings.Join(shared[:len(shared)-1], ", "), shared[len(shared)-1])
		}
		if len(known) > 0 {
			msg += "; known: " + strings.Join(known, ", ")
		}
		out = append(out, Diagnostic{File: t.File, Line: u.Pos.Line, Column: u.Pos.Column, Path: u.Path, Message: msg})
	}
	return append(out, t.readsBeforeSet(values)...)
}

// readsBeforeSet warns of each task whose texts (or its agent's) read a
// variable that only output_variables define, none of which can have set
// it when the task starts (VariableReads.Sources: in a sequential team
// they all come after it, or it sets the variable itself): Defined counts
// the variable, so no "nothing defines" warning is said, yet the task is
// sent the placeholder as written. values is what the run starts from.
func (t *Team) readsBeforeSet(values map[string]any) []Diagnostic {
	reads := t.VariableReads()
	setters := map[string][]int{} // by variable, its tasks' places in Outputs
	for p, j := range reads.Outputs() {
		v := t.Tasks[j].OutputVariable
		if _, ok := values[v]; !ok {
			setters[v] = append(setters[v], p)
		}
	}
	if len(setters) == 0 {
		return nil
	}
	for _, tk := range t.Tasks {
		if tk.Repeat != nil && tk.Repeat.Count != "" {
			delete(setters, tk.Repeat.Count) // set when the repeat starts
		}
	}
	syn := t.syntax()
	var out []Diagnostic
	agentSaid := map[[2]string]bool{} // an agent's text: said for its first such task
	type place struct {
		at Pos
		v  string
	}
	placed := map[place]bool{} // what was said where: the iterations and instances of a task share a text
	for i, tk := range t.Tasks {
		x := tk.Expanded()
		said := map[string]bool{}
		a := t.Agent(tk.Agent)
		for k, text := range []string{tk.Description, tk.ExpectedOutput, "", "", "", ""} {
			path, whose := tk.KeyPath(), "it"
			if k >= 2 {
				if a == nil {
					break
				}
				text = [...]string{a.Role, a.Goal, a.Backstory, a.Instructions}[k-2]
				path, whose = a.KeyPath(), "task "+tk.Name+", one of this agent's,"
			}
			for _, w := range placeholdersIn(text, syn) {
				v, _, _ := strings.Cut(w.name, ".")
				ps, ok := setters[v]
				if !ok || said[v] || k >= 2 && agentSaid[[2]string{a.Name, v}] || x.Binds(v) || tk.Foreach != nil && (tk.Foreach.As == v || tk.Foreach.Index == v) {
					continue
				}
				if slices.ContainsFunc(ps, func(p int) bool { return reads.canSet(p, i) }) {
					continue
				}
				said[v] = true
				if k >= 2 {
					agentSaid[[2]string{a.Name, v}] = true
				}
				var by []string
				for _, p := range ps {
					by = append(by, t.Tasks[reads.Outputs()[p]].Name)
				}
				shown := v
				if m, ok := t.madeNames[v]; ok {
					shown = m
				}
				at := tk.Pos
				if k >= 2 {
					at = a.Pos
				}
				for _, u := range t.Placeholders { // said once in a while: no index
					if u.Name == w.name && strings.HasPrefix(u.Path, path+".") {
						at, path = u.Pos, u.Path
						break
					}
				}
				if placed[place{at, v}] {
					continue
				}
				placed[place{at, v}] = true
				msg := fmt.Sprintf("reads %s, which only %s (output_variable) after %s starts: when it runs nothing defines %s (variables:, --var %s=VALUE), so its text keeps %s as written; read it in a task that runs later, or give it a first value in variables:",
					w.as, settersText(by), whose, shown, shown, w.as)
				out = append(out, Diagnostic{File: t.File, Line: at.Line, Column: at.Column, Path: path, Message: msg})
			}
		}
	}
	return out
}

// settersText names the tasks that set a variable: "task a sets", "tasks a, b set".
func settersText(names []string) string {
	if len(names) == 1 {
		return "task " + names[0] + " sets"
	}
	return "tasks " + strings.Join(names, ", ") + " set"
}

// written is the placeholder as its text writes it.
func (u PlaceholderUse) written() string {
	if u.Written != "" {
		return u.Written
	}
	return "{" + u.Name + "}"
}

// fieldMiss says why the dotted placeholder u reads no field of the value
// values gives it (each item of its foreach list, for an item's field), or
// "" when it does or the value is only known when the run makes it.
func fieldMiss(u PlaceholderUse, values map[string]any) string {
	root, path, dotted := strings.Cut(u.Name, ".")
	if !dotted {
		return ""
	}
	if u.Over != "" {
		items, err := ForeachItems(&Foreach{Over: u.Over}, values)
		if err != nil {
			return "" // an output_variable's list, or a foreach error said elsewhere
		}
		for k, it := range items {
			if miss := missAt(fmt.Sprintf("item %d of %s", k, u.Over), it, path); miss != "" {
				return miss
			}
		}
		return ""
	}
	if v, known := values[root]; known {
		return missAt(root, v, path)
	}
	return ""
}

// missAt says where the fields path stop in v, named name; "" when v has them.
func missAt(name string, v any, path string) string {
	for _, f := range strings.Split(path, ".") {
		m, isMap := asMapping(v)
		if !isMap {
			return fmt.Sprintf("%s is not a mapping, so it has no field %s (it is %s)", name, f, quoteShort(FormatValue(v)))
		}
		next, ok := m[f]
		if !ok {
			return fmt.Sprintf("%s has no field %s (its fields: %s)", name, f, strings.Join(slices.Sorted(maps.Keys(m)), ", "))
		}
		v, name = next, name+"."+f
	}
	return ""
}

// agentBound are the names every task of agent name binds as a foreach
// item (as, index): its texts are rendered with the item of the instance
// they serve, so such a name is defined there. "" is always one.
func agentBound(t *Team, name string) []string {
	bound := []string{""}
	first := true
	for _, tk := range t.Tasks {
		if tk.Agent != name {
			continue
		}
		var here []string
		if tk.Foreach != nil {
			here = []string{tk.Foreach.As, tk.Foreach.Index}
		}
		if first {
			bound, first = append(bound, here...), false
			continue
		}
		bound = slices.DeleteFunc(bound, func(n string) bool { return n != "" && !slices.Contains(here, n) })
	}
	return bound
}
