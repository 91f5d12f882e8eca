package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/spec"
)

// varCollisions warns when a --var name and another shared-state name
// (another --var, a spec variable or an output_variable) differ but reach
// command agents as the same TEAMRUN_VAR_<NAME>: they would see only one
// of them. Collisions within the file are the spec's warnings already.
func varCollisions(team *spec.Team, vars map[string]string, order []string) []string {
	type name struct{ name, from string }
	var names []name
	if len(order) == 0 {
		order = slices.Sorted(maps.Keys(vars))
	}
	for _, k := range order {
		if _, ok := vars[k]; ok {
			names = append(names, name{k, "--var " + k})
		}
	}
	fromFlag := len(names)
	for _, k := range slices.Sorted(maps.Keys(team.Variables)) {
		names = append(names, name{k, "variable " + k})
	}
	for _, t := range team.Tasks {
		if t.OutputVariable != "" {
			names = append(names, name{t.OutputVariable, fmt.Sprintf("output_variable %s of task %q", t.OutputVariable, t.Name)})
		}
	}
	var warns []string
	warned := map[string]bool{}
	for i := 0; i < fromFlag; i++ {
		for j := i + 1; j < len(names); j++ {
			a, b := names[i], names[j]
			env := EnvName(a.name)
			if a.name == b.name || env != EnvName(b.name) || warned[a.name+"\x00"+b.name] {
				continue
			}
			warned[a.name+"\x00"+b.name] = true
			warns = append(warns, fmt.Sprintf("%s and %s both reach command agents as TEAMRUN_VAR_%s, so they see only one of them: rename one", a.from, b.from, env))
		}
	}
	return warns
}

// VarWarnings are the warnings about the --var values vars (given in
// order) for team: two names one TEAMRUN_VAR_ holds, and a value nothing
// reads. run and plan both say them.
func VarWarnings(team *spec.Team, vars map[string]string, order []string) []string {
	return append(varCollisions(team, vars, order), unusedVars(team, vars, order)...)
}

// unusedVars warns about a --var that no placeholder or foreach names and
// no command mentions: it changes nothing the agents read, which is most often a typo
// of a variable's name. A command may still read it from its environment
// (TEAMRUN_VAR_<NAME>, TEAMRUN_VARS_FILE) through a script, so the warning
// says so when the team runs commands (command agents, tools, MCP servers).
func unusedVars(team *spec.Team, vars map[string]string, order []string) []string {
	if len(order) == 0 {
		order = slices.Sorted(maps.Keys(vars))
	}
	used := map[string]bool{}
	for _, u := range team.Placeholders {
		root, _, _ := strings.Cut(u.Name, ".") // {user.name} uses user
		used[root] = true
	}
	for _, t := range team.Tasks {
		if t.Foreach != nil {
			used[t.Foreach.Over] = true
		}
	}
	mentioned := func(k string) bool {
		return slices.ContainsFunc(team.Agents, func(a *spec.Agent) bool { return a.MentionsVariable(k) })
	}
	var known []string
	for k := range team.Defined(nil) {
		known = append(known, k)
	}
	slices.Sort(known)
	var warns []string
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := vars[k]; !ok || seen[k] || used[k] || mentioned(k) {
			continue
		}
		seen[k] = true
		msg := fmt.Sprintf("--var %s: no placeholder {%s} uses it", k, k)
		if slices.ContainsFunc(team.Agents, func(a *spec.Agent) bool { return a.Kind == spec.CommandAgent || len(a.Tools)+len(a.MCP) > 0 }) {
			msg += fmt.Sprintf(" and no command mentions TEAMRUN_VAR_%s (a script a command runs may still read it)", EnvName(k))
		} else {
			msg += ", so it changes nothing"
		}
		if len(known) > 0 {
			msg += "; the team's variables: " + strings.Join(known, ", ")
		}
		warns = append(warns, msg)
	}
	return warns
}
