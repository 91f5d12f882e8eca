package spec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// collectPlaceholders records every {name} of the texts Render fills in
// (task descriptions and expected outputs, agents' role, goal, backstory,
// instructions) at the line and column it is written: the first source
// line at or after the text's start that holds it, in either spelling.
func (b *builder) collectPlaceholders(data []byte) {
	var lines []string // split on the first placeholder: most specs have few or none
	res := map[string]*regexp.Regexp{}
	// A text spans a few source lines more than it has newlines (folding,
	// an agent's other keys): the search stops there, so a big spec costs
	// no more per placeholder than a small one; not found, the text's
	// start is near enough.
	find := func(name string, from Pos, span int) Pos {
		if lines == nil {
			lines = strings.Split(string(data), "\n")
		}
		re := res[name]
		if re == nil {
			re = regexp.MustCompile(`\{\{\s*` + name + `\s*\}\}|\{` + name + `\}`)
			res[name] = re
		}
		for l := max(from.Line, 1); l <= len(lines) && l <= from.Line+span; l++ {
			if loc := re.FindStringIndex(lines[l-1]); loc != nil {
				return Pos{Line: l, Column: loc[0] + 1}
			}
		}
		return from
	}
	add := func(text string, from Pos, path string, bound ...string) {
		for _, n := range placeholderNames(text) {
			if slices.Contains(bound, n) {
				continue // a foreach item or a repeat's previous output, bound in each
			}
			b.team.Placeholders = append(b.team.Placeholders, PlaceholderUse{Name: n, Pos: find(n, from, 2*strings.Count(text, "\n")+64), Path: path})
		}
	}
	for _, a := range b.team.Agents {
		p := a.KeyPath()
		for _, f := range []struct{ key, text string }{{"role", a.Role}, {"goal", a.Goal}, {"backstory", a.Backstory}, {"instructions", a.Instructions}} {
			add(f.text, a.Pos, p+"."+f.key, "")
		}
	}
	for i, tk := range b.team.Tasks {
		src := &tree{pos: tk.Pos, path: "tasks." + tk.Name}
		if i < len(b.tasks) && b.tasks[i] != nil {
			src = b.tasks[i]
		}
		for _, f := range []struct {
			keys []string
			text string
		}{{[]string{"description", "action"}, tk.Description}, {[]string{"expected_output"}, tk.ExpectedOutput}} {
			if strings.IndexByte(f.text, '{') < 0 {
				continue // no placeholder: its place is not looked up
			}
			at, path := src.pos, src.path+"."+f.keys[0]
			for _, k := range f.keys {
				if v := src.get(k); v != nil {
					at, path = v.pos, v.path
					break
				}
			}
			var bound []string
			if tk.Foreach != nil {
				bound = append(bound, tk.Foreach.As)
			}
			if tk.Repeat != nil {
				bound = append(bound, PreviousOutput)
			}
			add(f.text, at, path, bound...)
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
// variables, the run's start state (--var included) and the tasks'
// output_variables.
func (t *Team) Defined(state map[string]any) map[string]bool {
	d := make(map[string]bool, len(t.Variables)+len(state))
	for k := range t.Variables {
		d[k] = true
	}
	for k := range state {
		d[k] = true
	}
	for _, tk := range t.Tasks {
		if tk.OutputVariable != "" {
			d[tk.OutputVariable] = true
		}
	}
	return d
}

// UndefinedPlaceholders warns about each {name} nothing defines, given the
// state the run starts from (nil: the file's variables only): Render leaves it as written, so the agent reads "{name}",
// which is almost always a typo or a forgotten --var.
func (t *Team) UndefinedPlaceholders(state map[string]any) []Diagnostic {
	defined := t.Defined(state)
	known := slices.Sorted(maps.Keys(defined))
	var out []Diagnostic
	for _, u := range t.Placeholders {
		if defined[u.Name] {
			continue
		}
		msg := fmt.Sprintf("{%s}: nothing defines %s (variables:, an output_variable or --var %s=VALUE), so the text keeps it as written", u.Name, u.Name, u.Name)
		if m := closest(u.Name, known); m != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		if len(known) > 0 {
			msg += "; known: " + strings.Join(known, ", ")
		}
		out = append(out, Diagnostic{File: t.File, Line: u.Pos.Line, Column: u.Pos.Column, Path: u.Path, Message: msg})
	}
	return out
}
