package spec

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestUndefinedPlaceholders(t *testing.T) {
	native := `variables:
  topic: AI
agents:
  w:
    llm: m
    goal: Write for {audience}
tasks:
  research:
    agent: w
    description: Research {topic}
    output_variable: notes
  write:
    agent: w
    description: |
      Use {notes}.
      Write about {topik} for {audience}.
    expected_output: "{json} {\"a\": 1} {1x}"
`
	praison := `framework: praisonai
input: AI
agents:
  r:
    role: R
steps:
  - agent: r
    action: "Research {{ input }} and {{inputs}}, then {{previous_output}}"
`
	roles := `topic: AI
roles:
  w:
    role: W
    goal: Write for {audience}
    tasks:
      t:
        description: About {topic}
`
	// One name in two texts of an agent: each warning at its own text.
	fields := `roles:
  writer:
    role: Writer
    backstory: |
      You write about {topic}.
    goal: Produce an article about {topic}.
    tasks:
      post: {description: Write a post}
`
	// An agent's texts are rendered with the item of the instance they
	// serve: a name every task of the agent binds is defined there.
	items := `variables:
  items: [x, y]
agents:
  itemer: {llm: m, role: Specialist, goal: "Handle {it}"}
  mixed: {llm: m, goal: "Handle {item}"}
tasks:
  loop: {description: Process it, agent: itemer, foreach: {over: items, as: it}}
  loop2: {description: Process it, agent: mixed, foreach: {over: items}}
  plain: {description: Then, agent: mixed}
`
	tests := []struct {
		name, file, src string
		vars            map[string]any
		want            []string
	}{
		{"a foreach item in an agent's texts", "i.yaml", items, nil, []string{
			`i.yaml:5:33: agents.mixed.goal: {item}: nothing defines item (variables:, an output_variable or --var item=VALUE), so the text keeps it as written (did you mean "items"?); known: items`,
		}},
		{"each field at its own place", "f.yaml", fields, nil, []string{
			`f.yaml:5:23: roles.writer.backstory: {topic}: nothing defines topic (variables:, an output_variable or --var topic=VALUE), so the text keeps it as written; known: date, month, now, timestamp, today, uuid, year`,
			`f.yaml:6:36: roles.writer.goal: {topic}: nothing defines topic (variables:, an output_variable or --var topic=VALUE), so the text keeps it as written; known: date, month, now, timestamp, today, uuid, year`,
		}},
		{"native", "a.yaml", native, nil, []string{
			`a.yaml:6:21: agents.w.goal: {audience}: nothing defines audience (variables:, an output_variable or --var audience=VALUE), so the text keeps it as written; known: notes, topic`,
			`a.yaml:16:19: tasks.write.description: {topik}: nothing defines topik (variables:, an output_variable or --var topik=VALUE), so the text keeps it as written (did you mean "topic"?); known: notes, topic`,
			`a.yaml:16:31: tasks.write.description: {audience}: nothing defines audience (variables:, an output_variable or --var audience=VALUE), so the text keeps it as written; known: notes, topic`,
			`a.yaml:17:23: tasks.write.expected_output: {json}: nothing defines json (variables:, an output_variable or --var json=VALUE), so the text keeps it as written; known: notes, topic`,
		}},
		{"a --var defines it", "a.yaml", native, map[string]any{"audience": "x", "topik": "y", "json": "z"}, nil},
		// The variables made for step outputs are listed as a text writes
		// them; a spelling several step names come out as says which.
		{"step outputs as written", "s.yaml", `agents: {a: {role: A, llm: m}}
steps:
  - {name: fetch-data, agent: a, action: dash}
  - {name: fetch data, agent: a, action: space}
  - {name: 調査, agent: a, action: research}
  - {agent: a, action: "{{fetch-data_output}} {{fetch data_output}} {{調査_output}} {{fetch_data_output}}"}
`, nil, []string{
			`s.yaml:6:83: steps[3].action: {{fetch_data_output}}: nothing defines fetch_data_output (variables:, an output_variable or --var fetch_data_output=VALUE), so the text keeps it as written; no step is named so, and {{fetch-data_output}} and {{fetch data_output}} come out as it once _ replaces what a variable name cannot hold, so it reads none of them: write the one meant, with its step's name as written; known: date, fetch data_output, fetch-data_output, month, now, timestamp, today, uuid, year, 調査_output`,
		}},
		{"roles: name the agent where it is declared", "r.yaml", roles, nil, []string{
			`r.yaml:5:21: roles.w.goal: {audience}: nothing defines audience (variables:, an output_variable or --var audience=VALUE), so the text keeps it as written; known: date, month, now, timestamp, today, topic, uuid, year`,
		}},
		{"praisonai {{ }}", "p.yaml", praison, nil, []string{
			`p.yaml:8:39: steps[0].action: {{inputs}}: nothing defines inputs (variables:, an output_variable or --var inputs=VALUE), so the text keeps it as written (did you mean "input"?); known: date, input, month, now, timestamp, today, uuid, year`,
			// the first step has no step before it: PraisonAI sends the text as written
			`p.yaml:8:56: steps[0].action: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; it is the output of the step before, and the first step has none; known: date, input, month, now, timestamp, today, uuid, year`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse(tt.file, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range team.UndefinedPlaceholders(tt.vars) {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// PraisonAI's {{a.b}} reads field b of the mapping a, as its
// substitute_variables does, and {{item.field}} a loop item's field; what
// cannot resolve is a warning and stays as written. A native file's {a.b}
// stays as written: its placeholders are identifiers only.
func TestFieldPlaceholders(t *testing.T) {
	const praison = `variables:
  user: {name: Ann, address: {city: Oslo}}
  items: [{title: Alpha}, {title: Beta}]
  word: plain
agents:
  a: {role: A}
steps:
  - agent: a
    action: "%s"
  - agent: a
    action: "%s"
    loop: {over: items}
`
	tests := []struct {
		name, src string
		descs     []string // the declared tasks' texts as rendered, then the instances'
		warnings  []string // UndefinedPlaceholders, exactly
	}{
		{"fields", fmt.Sprintf(praison, "Greet {{user.name}} of {{ user.address.city }}", "Do {{item.title}}"),
			[]string{"Greet Ann of Oslo", "Do {{item.title}}", "Do Alpha", "Do Beta"}, nil},
		{"misses", fmt.Sprintf(praison, "{{user.nme}} {{word.x}} {{usr.name}}", "Do {{item.titel}}"),
			[]string{"{{user.nme}} {{word.x}} {{usr.name}}", "Do {{item.titel}}", "Do {{item.titel}}", "Do {{item.titel}}"}, []string{
				"p.yaml:9:14: steps[0].action: {{user.nme}}: user has no field nme (its fields: address, name), so the text keeps it as written",
				"p.yaml:9:27: steps[0].action: {{word.x}}: word is not a mapping, so it has no field x (it is \"plain\"), so the text keeps it as written",
				"p.yaml:9:38: steps[0].action: {{usr.name}}: nothing defines usr, the mapping it reads a field of (variables:, an output_variable), so the text keeps it as written (did you mean \"user\"?); known: date, items, month, now, timestamp, today, user, uuid, word, year",
				"p.yaml:11:17: steps[1].action: {{item.titel}}: item 0 of items has no field titel (its fields: title), so the text keeps it as written"}},
		{"native", "variables: {user: {name: Ann}}\nagents:\n  w: {shell: cat}\ntasks:\n  t: {description: \"Greet {user.name} {user}\", agent: w}\n",
			[]string{`Greet {user.name} {"name":"Ann"}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			state := team.InitialState(nil)
			var got []string
			for _, d := range team.TaskDefs(state) {
				got = append(got, d.Description)
			}
			x, err := team.Expand(state)
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range x.Tasks {
				if tk.Expanded().ForeachOf != "" && tk.Expanded().Iteration == 0 && strings.Contains(tk.Name, "[") {
					got = append(got, x.Render(tk.Description, tk.Scope(state)))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.descs, "\n") {
				t.Errorf("texts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.descs, "\n"))
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(state) {
				said = append(said, d.String())
			}
			if strings.Join(said, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
}

// PraisonAI's built-in variables ({{today}}, {{date}}, …) are filled when
// the run starts, in the texts and in the variables' values, as its
// substitute_variables does; a --var or a variable of that name is what
// both read. A native file's {today} is a placeholder like any other.
func TestPraisonBuiltinVariables(t *testing.T) {
	now := time.Date(2026, time.March, 7, 9, 5, 3, 120000000, time.UTC)
	tests := []struct {
		name, src string
		vars      map[string]string // --var
		desc      string
		warnings  []string
	}{
		{"in a text", "agents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{today}} ({{date}}, {{year}}, {{month}}) {{now}} {{timestamp}}\"\n",
			nil, "March 07, 2026 (2026-03-07, 2026, March) 2026-03-07T09:05:03.120000 1772874303", nil},
		{"in a variable", "variables:\n  today: \"{{today}}\"\n  topic: \"news of {{date}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{today}}: {{topic}}\"\n",
			nil, "March 07, 2026: news of 2026-03-07", nil},
		{"a variable of that name", "variables:\n  date: yesterday\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{date}}\"\n",
			nil, "yesterday", nil},
		{"a --var, in a text and in a variable", "variables:\n  day: \"{{today}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{day}} / {{today}}\"\n",
			map[string]string{"today": "Easter"}, "Easter / Easter", nil},
		{"a --var of a variable that reads itself", "variables:\n  today: \"{{today}}\"\n  day: \"on {{today}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{day}} / {{today}}\"\n",
			map[string]string{"today": "Easter"}, "on Easter / Easter", nil},
		{"a variable of that name, in another's value", "variables:\n  today: the {{date}}\n  day: \"{{today}}!\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{day}} / {{today}}\"\n",
			nil, "the 2026-03-07! / the 2026-03-07", nil},
		{"two variables of built-in names that read each other", "variables:\n  date: \"{{today}}\"\n  today: \"{{date}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{date}} / {{today}}\"\n",
			nil, "2026-03-07 / March 07, 2026", nil}, // each ends with its own built-in
		{"a typo of one", "agents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{toady}}\"\n",
			nil, "{{toady}}", []string{`p.yaml:5:14: steps[0].action: {{toady}}: nothing defines toady (variables:, an output_variable or --var toady=VALUE), so the text keeps it as written (did you mean "today"?); known: date, month, now, timestamp, today, uuid, year`}},
		{"native", "agents:\n  w: {shell: cat}\ntasks:\n  t: {description: \"{today}\", agent: w}\n",
			nil, "{today}", []string{"p.yaml:4:21: tasks.t.description: {today}: nothing defines today (variables:, an output_variable or --var today=VALUE), so the text keeps it as written"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			state := team.initialStateAt(tt.vars, now)
			if got := team.TaskDefs(state)[0].Description; got != tt.desc {
				t.Errorf("description %q, want %q", got, tt.desc)
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(nil) {
				said = append(said, d.String())
			}
			if strings.Join(said, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
	team, err := Parse("p.yaml", []byte("agents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{uuid}}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if u := team.TaskDefs(team.InitialState(nil))[0].Description; !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(u) {
		t.Errorf("{{uuid}} is %q, want a random UUID", u)
	}
}

// TestBuiltinsIn: the built-ins a session's state holds, as --var gives
// them, make the variables' values it started with again.
func TestBuiltinsIn(t *testing.T) {
	team, err := Parse("p.yaml", []byte("variables:\n  day: \"on {{today}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{day}} {{year}}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	then := team.initialStateAt(nil, time.Date(2026, time.March, 7, 0, 0, 0, 0, time.UTC))
	got := team.BuiltinsIn(then)
	// The texts name year; the value of day reads today: --continue on a
	// later day makes day again from the session's today, so that an
	// unedited variable is not said to have changed.
	if len(got) != 2 || got["year"] != "2026" || got["today"] != "March 07, 2026" {
		t.Errorf("builtins %v, want year and today: the state holds the built-ins its texts and its variables' values read", got)
	}
	again := team.initialStateAt(got, time.Date(2027, time.May, 1, 0, 0, 0, 0, time.UTC))
	if again["day"] != then["day"] {
		t.Errorf("day %v, want %v", again["day"], then["day"])
	}
	// One {{uuid}} is one value: in every variable, and kept as the
	// texts' is.
	ids, err := Parse("p.yaml", []byte("variables:\n  a: \"{{uuid}}\"\n  b: \"run {{uuid}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n    action: \"{{a}} {{b}}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := ids.InitialState(nil)
	if st["b"] != "run "+FormatValue(st["a"]) || st["uuid"] != st["a"] {
		t.Errorf("a %v, b %v, uuid %v: want one uuid", st["a"], st["b"], st["uuid"])
	}
	if again := ids.InitialState(ids.BuiltinsIn(st)); again["a"] != st["a"] || again["b"] != st["b"] {
		t.Errorf("again a %v, b %v, want %v, %v", again["a"], again["b"], st["a"], st["b"])
	}
	native, err := Parse("n.yaml", []byte("agents:\n  w: {shell: cat}\ntasks:\n  t: {description: x, agent: w}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := native.BuiltinsIn(map[string]any{"today": "x"}); got != nil {
		t.Errorf("a native team's builtins: %v", got)
	}
}

// TestPraisonPlaceholderSyntax: a steps: file fills only {{NAME}}, as
// PraisonAI's workflow substitutes step texts, so a shell line's ${NAME}
// and a Python f-string's {NAME} reach the model as written, unwarned; a
// roles: file fills {topic} too, as PraisonAI's agents_generator formats
// its texts. In both, a {{NAME}} nothing defines is sent as written (not
// as {NAME}), which is what its warning says.
func TestPraisonPlaceholderSyntax(t *testing.T) {
	const steps = "variables: {PR: \"42\"}\nagents:\n  r: {role: R, instructions: \"%s\"}\nsteps:\n  - agent: r\n    action: \"%s\"\n"
	const roles = "topic: AI\nroles:\n  r:\n    role: R\n    goal: \"%s\"\n    tasks:\n      t: {description: \"%s\"}\n"
	tests := []struct {
		name, src          string
		desc, instructions string
		warnings           []string
	}{
		{"steps: single braces are text", fmt.Sprintf(steps, "PR {PR}", "Review {{PR}}: gh pr diff ${PR}; print(f'{PR}')"),
			"Review 42: gh pr diff ${PR}; print(f'{PR}')", "PR {PR}", nil},
		{"steps: {{ NAME }} with spaces", fmt.Sprintf(steps, "{{ PR }}", "{{ PR }}"), "42", "42", nil},
		{"steps: unresolved {{NAME}} is sent as written", fmt.Sprintf(steps, "", "branch issue-{{ISSUE}} for {{ input }} {X}"),
			"branch issue-{{ISSUE}} for {{ input }} {X}", "", []string{
				"p.yaml:6:27: steps[0].action: {{ISSUE}}: nothing defines ISSUE (variables:, an output_variable or --var ISSUE=VALUE), so the text keeps it as written; known: PR, date, month, now, timestamp, today, uuid, year",
				"p.yaml:6:41: steps[0].action: {{ input }}: nothing defines input (variables:, an output_variable or --var input=VALUE), so the text keeps it as written; it is the workflow's input: input: at the top, or PraisonAI's --input; known: PR, date, month, now, timestamp, today, uuid, year"}},
		{"roles: both spellings", fmt.Sprintf(roles, "Study {topic}", "About {{topic}} and {topic}"), "About AI and AI", "", nil},
		{"roles: unresolved, as written", fmt.Sprintf(roles, "", "{{nope}} {nope}"), "{{nope}} {nope}", "", []string{
			"p.yaml:7:25: roles.r.tasks.t.description: {{nope}}: nothing defines nope (variables:, an output_variable or --var nope=VALUE), so the text keeps it as written (did you mean \"now\"?); known: date, month, now, timestamp, today, topic, uuid, year"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			state := team.InitialState(nil)
			if got := team.TaskDefs(state)[0].Description; got != tt.desc {
				t.Errorf("description %q, want %q", got, tt.desc)
			}
			if got := team.Render(team.Agents[0].Instructions, state); got != tt.instructions {
				t.Errorf("instructions %q, want %q", got, tt.instructions)
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(state) {
				said = append(said, d.String())
			}
			if strings.Join(said, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
}

// TestPraisonInputTemplate: PraisonAI fills only its built-in variables
// in a steps: file's input (input:, else topic:), and puts the input into
// a step's text after the variables, so a {{NAME}} there reaches the model
// as written: teamrun sends it so too, and says so where the input is
// written (not when --var input replaces it, nor when no step reads the
// input). The variable topic, which PraisonAI fills from the variables
// (and --var) when it loads the file, reads them.
func TestPraisonInputTemplate(t *testing.T) {
	const warn = "%s: {{question}}: PraisonAI fills only its built-in variables ({{today}} and the like) in the input, not variables:, so the steps that read the input get {{question}} as written; write the text itself here, or pass --var input=TEXT"
	tests := []struct {
		name, src string
		vars      map[string]string
		descs     []string
		warnings  []string
	}{
		{"input", "input: \"{{question}}\"\nvariables: {question: Find MAPK models}\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n  - {agent: a, action: \"Search for: {{input}}\"}\n",
			nil, []string{"{{question}}", "Search for: {{question}}"}, []string{fmt.Sprintf(warn, "p.yaml:1:8: input")}},
		{"--var input replaces it", "input: \"{{question}}\"\nvariables: {question: Find MAPK models}\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n",
			map[string]string{"input": "Hi"}, []string{"Hi"}, nil},
		{"a built-in is filled", "input: \"news of {{date}}\"\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n",
			nil, []string{"news of 2026-03-07"}, nil},
		{"no step reads the input", "input: \"{{question}}\"\nvariables: {question: Q}\nagents:\n  a: {role: A}\nsteps:\n  - {agent: a, action: \"Go {{question}}\"}\n",
			nil, []string{"Go Q"}, nil},
		{"topic, read as the input and as itself", "topic: \"{{question}} in {{date}}\"\nvariables: {question: Find MAPK models}\nagents:\n  a: {role: A}\nsteps:\n  - agent: a\n  - {agent: a, action: \"About {{topic}}\"}\n",
			nil, []string{"{{question}} in 2026-03-07", "About Find MAPK models in 2026-03-07"}, []string{fmt.Sprintf(warn, "p.yaml:1:8: topic")}},
		{"topic, --var", "topic: \"{{question}}\"\nvariables: {question: Q}\nagents:\n  a: {role: A}\nsteps:\n  - {agent: a, action: \"About {{topic}}\"}\n",
			map[string]string{"question": "R"}, []string{"About R"}, nil},
		{"topic, a name nothing defines", "topic: \"{{nope}}\"\nagents:\n  a: {role: A}\nsteps:\n  - {agent: a, action: \"About {{topic}}\"}\n",
			nil, []string{"About {{nope}}"}, []string{"p.yaml:1:8: topic: {{nope}}: nothing defines nope (variables:, an output_variable or --var nope=VALUE), so the text keeps it as written (did you mean \"now\"?); known: date, input, month, now, timestamp, today, topic, uuid, year"}},
	}
	now := time.Date(2026, 3, 7, 9, 5, 3, 0, time.Local)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			state := team.initialStateAt(tt.vars, now)
			var got []string
			for _, d := range team.TaskDefs(state) {
				got = append(got, d.Description)
			}
			if strings.Join(got, "\n") != strings.Join(tt.descs, "\n") {
				t.Errorf("texts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.descs, "\n"))
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(state) {
				said = append(said, d.String())
			}
			if strings.Join(said, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
}

// The places of 20,000 placeholders on one line: each line is read once
// (a search of the line per placeholder made validate of 50,000 of them
// take minutes), and the column counts characters, as YAML's do, not
// bytes (the "é" before them is two).
func TestPlaceholderPlacesOnALongLine(t *testing.T) {
	const n = 20_000
	var vars, text strings.Builder
	for i := range n {
		fmt.Fprintf(&vars, "  v%d: %d\n", i, i)
		fmt.Fprintf(&text, " {{v%d}}", i)
	}
	src := "llm: m\nvariables:\n" + vars.String() + "agents:\n  a: {role: A}\nsteps:\n  - {agent: a, action: \"é" + text.String() + "\"}\n"
	tm, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Placeholders) != n {
		t.Fatalf("%d placeholders, want %d", len(tm.Placeholders), n)
	}
	line := n + 6
	prefix := len(`  - {agent: a, action: "é`) - 1 // é is two bytes, one character
	for _, k := range []int{0, 1, n - 1} {
		col := prefix + 1
		for i := range k {
			col += len(fmt.Sprintf(" {{v%d}}", i))
		}
		want := PlaceholderUse{Name: fmt.Sprintf("v%d", k), Written: fmt.Sprintf("{{v%d}}", k), Pos: Pos{Line: line, Column: col + 1}, Path: "steps[0].action"}
		if got := tm.Placeholders[k]; got != want {
			t.Errorf("placeholder %d: %+v, want %+v", k, got, want)
		}
	}
}
