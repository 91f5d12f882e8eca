package checkpoint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/spec"
)

// VariableChanges says, by task, how the variables it sets or reads
// changed since sess recorded them, in words: the output_variable it sets
// moved, went or came; a {name} it reads is set by another task now (or by
// one where nothing set it, or by none). Each is part of the task's key
// (spec.TaskDefs), so the task runs again though no field a diff compares
// holds the change and the request it sends may be the same (a steps:
// file's {{NAME_output}} is set by the last NAME step before its reader:
// inserting one moves it there). Who set a variable before is what the
// completed records set; a task whose record does not tell is left out.
func VariableChanges(team *spec.Team, sess *Session) map[string]string {
	if sess == nil {
		return nil
	}
	reads := team.VariableReads()
	skipped := map[string]bool{} // what a skipped task sets, its record does not tell
	for _, o := range sess.Team.Tasks {
		if o.Status == StatusSkipped {
			skipped[o.Name] = true
		}
	}
	set := map[string]string{} // the variable each completed record set
	setBefore := map[string]string{}
	var setBy map[string][]string // by variable, the completed records that set it
	// setAt are, for each record, the setters before it: by variable, the
	// last completed record before it in the session that set it.
	setAt := make([]map[string]string, len(sess.Team.Tasks))
	at := map[string]int{}
	for i, o := range sess.Team.Tasks {
		if len(setBefore) > 0 {
			setAt[i] = maps.Clone(setBefore)
		}
		if _, dup := at[o.Name]; !dup {
			at[o.Name] = i
		}
		if o.Status != StatusCompleted || len(o.Variables) > 1 {
			continue
		}
		set[o.Name] = ""
		for v := range o.Variables {
			set[o.Name], setBefore[v] = v, o.Name
			if setBy == nil {
				setBy = map[string][]string{}
			}
			setBy[v] = append(setBy[v], o.Name)
		}
	}
	// A variable moved to a task that sets it now and did not, from one
	// that set it and does not now: one that sets it still, before and
	// now, is no move.
	movedTo, movedFrom := map[string]string{}, map[string]string{}
	for _, j := range reads.Outputs() {
		if tk := team.Tasks[j]; movedTo[tk.OutputVariable] == "" && set[tk.Name] != tk.OutputVariable {
			movedTo[tk.OutputVariable] = tk.Name
		}
	}
	for v, names := range setBy {
		for _, n := range names {
			if k := team.TaskIndex(n); k < 0 || team.Tasks[k].OutputVariable != v {
				movedFrom[v] = n
				break
			}
		}
	}
	out := map[string]string{}
	for i, tk := range team.Tasks {
		was, ok := set[tk.Name]
		if !ok {
			continue
		}
		var says []string
		if s := outputChange(was, tk.OutputVariable, movedTo, movedFrom); s != "" {
			says = append(says, s)
		}
		says = append(says, readChanges(team, reads, i, setAt[at[tk.Name]], skipped)...)
		if len(says) > 0 {
			out[tk.Name] = strings.Join(says, "; ")
		}
	}
	return out
}

// outputChange says how a task's output_variable changed from was to now;
// movedTo and movedFrom are, by variable, a task that sets it now and did
// not, and one that did and does not now.
func outputChange(was, now string, movedTo, movedFrom map[string]string) string {
	switch {
	case was == now:
		return ""
	case now == "" && movedTo[was] != "":
		return fmt.Sprintf("output_variable %s moved to %s", was, movedTo[was])
	case now == "":
		return fmt.Sprintf("it no longer sets output_variable %s", was)
	case was == "" && movedFrom[now] != "":
		return fmt.Sprintf("output_variable %s moved to it from %s", now, movedFrom[now])
	case was == "":
		return fmt.Sprintf("it sets output_variable %s now", now)
	}
	return fmt.Sprintf("output_variable %s is %s now", was, now)
}

// readChanges says, for each variable task i reads, when the task whose
// record set it before i's (setBefore) is not one that sets it for i now
// (VariableReads.From).
func readChanges(team *spec.Team, reads *spec.VariableReads, i int, setBefore map[string]string, skipped map[string]bool) []string {
	from := reads.From(i)
	names := slices.Collect(maps.Keys(from))
	tk := team.Tasks[i]
	for v := range setBefore {
		if _, ok := from[v]; !ok && !tk.Expanded().Binds(v) && team.ReadsVariable(tk, v) {
			names = append(names, v)
		}
	}
	slices.Sort(names)
	var out []string
	for _, v := range names {
		now, before := from[v], setBefore[v]
		switch {
		case len(now) == 0:
			out = append(out, fmt.Sprintf("no task sets {%s} before it now (%s did)", v, before))
		case before == "" && slices.ContainsFunc(now, func(n string) bool { return skipped[n] }):
			// A route skipped it last time: what it sets is not known.
		case before == "":
			out = append(out, fmt.Sprintf("{%s} is set by %s now, where no task set it", v, strings.Join(now, ", ")))
		case !slices.Contains(now, before):
			out = append(out, fmt.Sprintf("{%s} is set by %s now, not %s", v, strings.Join(now, ", "), before))
		}
	}
	return out
}
