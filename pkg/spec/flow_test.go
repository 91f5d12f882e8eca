package spec

import (
	"strings"
	"testing"
)

// In a sequential team a condition skips only its routes, so a task that
// reads nothing but routes one answer does not take still runs, with no
// previous output: each such task is a warning saying which context:
// reads what ran, and a task that reads what every answer leaves is none.
func TestWarnSkippedReads(t *testing.T) {
	const head = "framework: praisonai\nroles:\n  a:\n    llm: m\n    tasks:\n      decide: {description: d, task_type: decision, condition: {\"yes\": [escalate], \"no\": [archive]}}\n"
	tests := []struct {
		name, tasks string
		want        []string // the warnings about reads, in order
	}{
		{"after the branches", "      escalate: {description: e}\n      archive: {description: a}\n      wrap: {description: w}\n",
			[]string{
				`w.yaml:8:7: roles.a.tasks.archive: it reads the task before it, escalate, which decide's condition skips when the answer is "no": then archive still runs, with no previous output; write context: [decide] to read the decision that routes to it`,
				`w.yaml:9:7: roles.a.tasks.wrap: it reads the task before it, archive, which decide's condition skips when the answer is "yes": then wrap still runs, with no previous output; write context: [escalate, archive] to read whichever branch ran`,
			}},
		{"context: given", "      escalate: {description: e}\n      archive: {description: a, context: [decide]}\n      wrap: {description: w, context: [escalate, archive]}\n",
			nil},
		{"context: one branch", "      escalate: {description: e}\n      archive: {description: a, context: [decide]}\n      wrap: {description: w, context: [escalate]}\n",
			[]string{`w.yaml:9:7: roles.a.tasks.wrap: it reads escalate, which decide's condition skips when the answer is "no": then wrap still runs, with no previous output; write context: [escalate, archive] to read whichever branch ran`}},
		{"a task between", "      escalate: {description: e}\n      log: {description: l}\n      archive: {description: a}\n",
			[]string{`w.yaml:8:7: roles.a.tasks.log: it reads the task before it, escalate, which decide's condition skips when the answer is "no": then log still runs, with no previous output; write context: [decide, escalate] to read whichever branch ran`}},
		{"no branch before", "      archive: {description: a}\n      escalate: {description: e, context: [decide]}\n",
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("w.yaml", []byte(head+tt.tasks))
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, w := range team.Warnings {
				if strings.Contains(w.Message, "condition skips") {
					said = append(said, w.String())
				}
			}
			if strings.Join(said, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// A workflow skips a task whose every read was skipped: no warning there.
func TestWarnSkippedReadsWorkflow(t *testing.T) {
	src := "agents:\n  a: {role: A, llm: m}\nsteps:\n  - {agent: a, action: c}\n  - route: {x: [a], y: [a]}\n  - {agent: a, action: z}\n"
	team, err := Parse("w.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range team.Warnings {
		if strings.Contains(w.Message, "condition skips") {
			t.Errorf("warned: %s", w)
		}
	}
}
