package spec

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Agent returns the agent named name, or nil.
func (t *Team) Agent(name string) *Agent {
	for _, a := range t.Agents {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// UsedAgents is the set of agents some task names: the checks of agents'
// settings look only at these, as an agent no task uses never runs.
func (t *Team) UsedAgents() map[string]bool {
	used := make(map[string]bool, len(t.Agents))
	for _, tk := range t.Tasks {
		used[tk.Agent] = true
	}
	return used
}

// ContextOf returns the names of the tasks whose outputs task i reads: its
// explicit context; else, in a sequential team, the previous task (none for
// the first); in a workflow, none.
func (t *Team) ContextOf(i int) []string { return t.contextAs(i, nil) }

// contextAs is ContextOf, known itself (full: an append copies) when they
// are the same: a list of its own is made only for another.
func (t *Team) contextAs(i int, known []string) []string {
	if i < 0 || i >= len(t.Tasks) {
		return nil
	}
	tk := t.Tasks[i]
	if tk.HasContext {
		if len(tk.Context) > 0 && slices.Equal(tk.Context, known) {
			return known[:len(known):len(known)]
		}
		return append([]string(nil), tk.Context...)
	}
	if t.Process != Workflow && i > 0 {
		if prev := t.Tasks[i-1].Name; len(known) == 1 && known[0] == prev {
			return known[:1:1]
		}
		return []string{t.Tasks[i-1].Name}
	}
	return nil
}

// MissingDirs reports each `dir:` whose folder does not exist (or is no
// folder), for the agents the tasks use: their commands could not start.
func (t *Team) MissingDirs() []Diagnostic {
	used := t.UsedAgents()
	var out []Diagnostic
	seen := map[Pos]bool{}
	for _, a := range t.Agents {
		if a.dir == "" || a.Kind != CommandAgent || !used[a.Name] || seen[a.dirPos] {
			continue
		}
		fi, err := os.Stat(a.Dir)
		if err == nil && fi.IsDir() {
			continue
		}
		seen[a.dirPos] = true
		what := "does not exist"
		if err == nil {
			what = "is not a folder"
		}
		path := a.KeyPath() + ".dir"
		if a.dirTeam {
			path = "dir"
		}
		out = append(out, Diagnostic{File: t.File, Line: a.dirPos.Line, Column: a.dirPos.Column, Path: path,
			Message: fmt.Sprintf("%s (%s) %s: create it, or fix dir", a.dir, a.Dir, what)})
	}
	return out
}

// UnknownTask words a task name that is not one of tasks, with a
// did-you-mean when one is close (as the spec's own errors do).
func UnknownTask(name string, tasks []string) string {
	return unknownRef("task", name, tasks, "see the tasks of the file")
}

// Closest is the one of names that name is likely a typo of, or "": the rule
// every did-you-mean of teamrun follows (keys, tasks, commands, flags), so a
// far word gets no suggestion.
func Closest(name string, names []string) string { return closest(name, names) }

// TaskNames lists the tasks' names in file order.
func (t *Team) TaskNames() []string {
	names := make([]string, len(t.Tasks))
	for i, tk := range t.Tasks {
		names[i] = tk.Name
	}
	return names
}

// ReadsVariable says whether a run of tk reads the shared-state variable
// name: its texts or its agent's (rendered into what it is sent) name it,
// or its agent's command mentions it in its environment. A script the
// command runs is not looked into.
func (t *Team) ReadsVariable(tk *Task, name string) bool {
	if t.Reads(tk.Description, name) || t.Reads(tk.ExpectedOutput, name) {
		return true
	}
	a := t.Agent(tk.Agent)
	if a == nil {
		return false
	}
	return t.Reads(a.Role, name) || t.Reads(a.Goal, name) || t.Reads(a.Backstory, name) || t.Reads(a.Instructions, name) ||
		a.MentionsVariable(name)
}

// MentionsVariable says whether a command a's tasks run names variable
// name in its environment: $TEAMRUN_VAR_<NAME>, or TEAMRUN_VARS_FILE,
// which holds them all. Those commands are a command agent's own, its
// tools' and its stdio MCP servers': each gets the task's environment.
func (a *Agent) MentionsVariable(name string) bool {
	env := "TEAMRUN_VAR_" + EnvName(name)
	mentions := func(texts ...string) bool {
		return slices.ContainsFunc(texts, func(c string) bool { return mentionsEnv(c, env) || strings.Contains(c, "TEAMRUN_VARS_FILE") })
	}
	if a.Kind == CommandAgent && (mentions(a.Shell) || mentions(a.Command...)) {
		return true
	}
	for _, t := range a.Tools {
		if mentions(t.Shell) || mentions(t.Command...) {
			return true
		}
	}
	for _, m := range a.MCP {
		if mentions(m.Command...) {
			return true
		}
	}
	return false
}

// mentionsEnv says whether text names the environment variable env as a
// whole word: $TEAMRUN_VAR_REGIONS does not name TEAMRUN_VAR_REGION.
func mentionsEnv(text, env string) bool {
	for at := 0; ; {
		k := strings.Index(text[at:], env)
		if k < 0 {
			return false
		}
		end := at + k + len(env)
		if end == len(text) || !isEnvByte(text[end]) {
			return true
		}
		at = end
	}
}

func isEnvByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
