package spec

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestTextHint: where a name or a text is expected and YAML read a
// number, a boolean or null, the error says how to write it (quote it),
// under its key; where quoting would not make it fit, it says nothing more.
func TestTextHint(t *testing.T) {
	native := func(task string) string {
		return "agents:\n  w: {shell: cat}\n  \"123\": {shell: cat}\ntasks:\n  t:\n    description: d\n" + task
	}
	steps := func(step string) string {
		return "agents:\n  writer: {role: W, goal: g, instructions: i, llm: m}\nsteps:\n" + step
	}
	tests := []refusal{
		{"agent number", native("    agent: 123\n"), `agents.yaml:7:12: tasks.t.agent: expected string, got integer 123 (if that is meant as a text, quote it: agent: "123")`},
		{"agent boolean", native("    agent: true\n"), `agents.yaml:7:12: tasks.t.agent: expected string, got boolean true (if that is meant as a text, quote it: agent: "true")`},
		{"agent null", native("    agent: null\n"), `agents.yaml:7:12: tasks.t.agent: expected string, got null (if that is meant as a text, quote it: agent: "null")`},
		{"agent empty", native("    agent:\n"), `agents.yaml:7:11: tasks.t.agent: expected string, got null (nothing is written after "agent:": write it there)`},
		{"context item", native("    agent: w\n    context: [1.5]\n"), `agents.yaml:8:15: tasks.t.context[0]: expected string, got number 1.5 (if that is meant as a text, quote it: "1.5")`},
		{"foreach as", native("    agent: w\n    foreach: {over: items, as: true}\n"), `agents.yaml:8:32: tasks.t.foreach.as: expected an identifier (letters, digits and _, not starting with a digit), got boolean true (if that is meant as a text, quote it: as: "true")`},
		// "12" is no identifier, "30" no duration: quoting would not help.
		{"output_variable", native("    agent: w\n    output_variable: 12\n"), `agents.yaml:8:22: tasks.t.output_variable: expected an identifier (letters, digits and _, not starting with a digit), got integer 12`},
		{"timeout", native("    agent: w\n    timeout: 30\n"), `agents.yaml:8:14: tasks.t.timeout: expected a duration such as 30s, 5m or 1h30m, got integer 30`},
		{"team name", "name: 2024\n" + native("    agent: w\n"), `agents.yaml:1:7: name: expected string, got integer 2024 (if that is meant as a text, quote it: name: "2024")`},
		{"step agent", steps("  - agent: 123\n    action: do\n"), `agents.yaml:4:12: steps[0].agent: expected an agent's name, got integer 123 (if that is meant as a text, quote it: agent: "123")`},
		{"step action", steps("  - agent: writer\n    action: 5\n"), `agents.yaml:5:13: steps[0].action: expected string, got integer 5 (if that is meant as a text, quote it: action: "5")`},
		// A step name YAML reads as a number was dropped (the step became step_1).
		{"step name", steps("  - name: 9\n    agent: writer\n    action: do\n"), `agents.yaml:4:11: steps[0].name: expected a step name, got integer 9 (if that is meant as a text, quote it: name: "9")`},
		{"route agent", steps("  - agent: writer\n    action: do\n  - route:\n      a: [7]\n      default: [writer]\n"), `agents.yaml:7:11: steps[1].route.a[0]: expected an agent's name, got integer 7 (if that is meant as a text, quote it: "7")`},
		{"loop var_name", steps("  - agent: writer\n    action: do\n    loop: {over: items, var_name: false}\n"), `agents.yaml:6:35: steps[0].loop.var_name: expected a variable name, got boolean false (if that is meant as a text, quote it: var_name: "false")`},
		{"role tasks context", "framework: praisonai\nroles:\n  r:\n    role: R\n    goal: g\n    backstory: b\n    tasks:\n      t:\n        description: d\n        expected_output: e\n        context: [1]\n", `agents.yaml:11:19: roles.r.tasks.t.context[0]: expected a task name, got integer 1 (if that is meant as a text, quote it: "1")`},
	}
	refusedWithLine(t, tests)
}

// TestShapeHints: a foreach, repeat or condition written as a scalar is
// told the shape to write, not "expected a mapping" alone.
func TestShapeHints(t *testing.T) {
	spec := func(task string) string {
		return "agents:\n  w: {shell: cat}\nvariables:\n  items: [x]\ntasks:\n  a: {description: d, agent: w, " + task + "}\n"
	}
	tests := []refusal{
		{"foreach", spec("foreach: items"), `agents.yaml:6:42: tasks.a.foreach: expected a mapping such as {over: VAR, as: NAME}, got string "items": write foreach: {over: items, as: item} (then {item} in the texts)`},
		{"foreach list", spec("foreach: [x, y]"), `agents.yaml:6:42: tasks.a.foreach: expected a mapping such as {over: VAR, as: NAME}, got a list`},
		{"repeat", spec("repeat: 3"), `agents.yaml:6:41: tasks.a.repeat: expected a mapping such as {until: TEXT, max_iterations: N}, got integer 3`},
		{"condition", spec("condition: approve"), `agents.yaml:6:44: tasks.a.condition: expected a mapping of results to the tasks they run, such as {approve: [publish], reject: [revise]}, got string "approve"`},
	}
	refusedWithLine(t, tests)
}

// TestTextHintOfText: a text needs no quoting, whatever it holds. Since a
// text scalar keeps its value as its text (isText), not in num, a check
// of num alone took every text for a number or null.
func TestTextHintOfText(t *testing.T) {
	for _, text := range []string{"w", "", "123"} {
		n := &tree{kind: yaml.ScalarNode, text: text, isText: true, path: "tasks.t.agent"}
		if h := n.textHint(); h != "" {
			t.Errorf("textHint of the text %q = %q, want none", text, h)
		}
	}
	n := &tree{kind: yaml.ScalarNode, text: "123", path: "tasks.t.agent"}
	n.setVal(int64(123))
	if h := n.textHint(); !strings.Contains(h, `agent: "123"`) {
		t.Errorf("textHint of the integer 123 = %q, want the quoting advice", h)
	}
}

// refusal is a spec named name, whose source src Parse refuses with the
// error line want among its lines.
type refusal struct{ name, src, want string }

func refusedWithLine(t *testing.T, tests []refusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("agents.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if got := strings.Split(err.Error(), "\n"); !contains(got, tt.want) {
				t.Errorf("got\n%s\nwant the line\n%s", err, tt.want)
			}
		})
	}
}
