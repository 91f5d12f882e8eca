package runner

import (
	"fmt"
	"maps"
	"slices"

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
