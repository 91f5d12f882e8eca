package spec

import (
	"slices"
	"strings"
	"testing"
)

// TestTaskNamedTwice: a task named twice in one list of task names (a
// context, a condition's route) is a slip. A native file is refused, as a
// duplicate key or task name is; a PraisonAI file, which PraisonAI runs
// reading the task once (agents.py de-duplicates the context texts), is
// a warning, and the task is read once. Either line names the place of
// the second mention and of the first.
func TestTaskNamedTwice(t *testing.T) {
	const native = "agents:\n  e: {shell: cat}\n"
	const roles = "framework: praisonai\ntopic: x\nroles:\n  r:\n    role: R\n    goal: G\n    backstory: B\n    llm: m\n    tasks:\n"
	const steps = "agents:\n  a: {role: A, llm: m}\nsteps:\n"
	tests := []struct {
		name, src    string
		err, warning string
		task         string   // whose context is checked
		context      []string // what it reads
	}{
		{"native context", native + "tasks:\n  a: {description: A, agent: e}\n  b: {description: B, agent: e, context: [a, a]}\n",
			`s.yaml:5:46: tasks.b.context[1]: duplicate task "a" in context (first at line 5, column 43): name it once`, "", "", nil},
		{"native context, block list", native + "process: workflow\ntasks:\n  a: {description: A, agent: e}\n  c: {description: C, agent: e}\n  b:\n    description: B\n    agent: e\n    context:\n      - a\n      - c\n      - a\n",
			`s.yaml:13:9: tasks.b.context[2]: duplicate task "a" in context (first at line 11, column 9): name it once`, "", "", nil},
		{"native route", native + "tasks:\n  a: {description: A, agent: e, condition: {yes: [b, b], no: [c]}}\n  b: {description: B, agent: e}\n  c: {description: C, agent: e}\n",
			`s.yaml:4:54: tasks.a.condition.yes[1]: duplicate task "b" in this route (first at line 4, column 51): name it once`, "", "", nil},
		{"native, two routes to one task", native + "tasks:\n  a: {description: A, agent: e, condition: {yes: [b], no: [b]}}\n  b: {description: B, agent: e}\n",
			"", "", "b", nil},
		{"native, once each", native + "tasks:\n  a: {description: A, agent: e}\n  c: {description: C, agent: e}\n  b: {description: B, agent: e, context: [a, c]}\n",
			"", "", "b", []string{"a", "c"}},
		{"PraisonAI role task", roles + "      t1: {description: D, expected_output: E}\n      t2: {description: D, expected_output: E, context: [t1, t1]}\n",
			"", `s.yaml:11:62: roles.r.tasks.t2.context[1]: duplicate task "t1" in context (first at line 11, column 58): it is read once, as PraisonAI reads it; name it once`, "t2", []string{"t1"}},
		{"PraisonAI route", roles + "      t1: {description: D, expected_output: E, condition: {yes: [t2, t2], no: []}}\n      t2: {description: D, expected_output: E}\n",
			"", `s.yaml:10:70: roles.r.tasks.t1.condition.yes[1]: duplicate task "t2" in this route (first at line 10, column 66): it runs once; name it once`, "", nil},
		{"PraisonAI step", steps + "  - {name: one, agent: a, action: A}\n  - {name: two, agent: a, action: B}\n  - {name: three, agent: a, action: C, context: [one, one]}\n",
			"", `s.yaml:6:55: steps[2].context[1]: duplicate task "one" in context (first at line 6, column 50): it is read once, as PraisonAI reads it; name it once`, "three", []string{"two", "one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("s.yaml", []byte(tt.src))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			for _, w := range team.Warnings {
				warnings = append(warnings, w.String())
			}
			if got := strings.Join(warnings, "\n"); got != tt.warning {
				t.Errorf("warnings %q\nwant %q", got, tt.warning)
			}
			if tt.context != nil {
				if got := team.Tasks[slices.Index(team.TaskNames(), tt.task)].Context; !slices.Equal(got, tt.context) {
					t.Errorf("%s reads %q, want %q", tt.task, got, tt.context)
				}
			}
		})
	}
}
