package spec

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCheckOutput(t *testing.T) {
	team, err := Parse("o.yaml", []byte(`agents:
  c: {shell: cat}
tasks:
  triage:
    description: x
    agent: c
    output_schema:
      type: object
      properties:
        severity: {enum: [low, high]}
        count: {type: integer, minimum: 0}
      required: [severity]
  plain: {description: x, agent: c}
  never: {description: x, agent: c, output_schema: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		task, result, wantErr string // wantErr "": fits
	}{
		{"triage", `{"severity": "high", "count": 3}`, ""},
		{"triage", "  {\"severity\": \"low\"}\n", ""},
		{"triage", `approve`, `the result does not fit output_schema: it is not JSON (from byte 1 on): "approve"`},
		{"triage", "```json\n{\"severity\": \"low\"}\n```", "it is JSON in a ``` fence: the answer must be the JSON alone, without the fence"},
		{"triage", `{"severity": "lo`, `its JSON is cut short`},
		{"triage", `{"severity": "low"} Hope this helps`, `text follows the JSON value, which must be all of the answer`},
		{"triage", `{"severity": "medium"}`, `the result does not fit output_schema: at /severity: value must be one of "low", "high"`},
		{"triage", `{"count": 1}`, `the result does not fit output_schema: at the top: missing properties: 'severity'`},
		{"triage", `{"severity": "low", "count": -1}`, `at /count: must be >= 0 but found -1`},
		{"triage", `{"severity": "low"} {"severity": "low"}`, `text follows the JSON value`},
		{"triage", ``, `it is empty, where JSON was wanted: (empty)`},
		{"plain", `not json at all`, ""},
		{"never", `{}`, `the result does not fit output_schema: at the top:`},
	}
	for _, tt := range tests {
		_, err := team.Tasks[team.TaskIndex(tt.task)].CheckOutput(tt.result)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s %q: %v", tt.task, tt.result, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrOutputSchema)):
			t.Errorf("%s %q: err = %v, want %q", tt.task, tt.result, err, tt.wantErr)
		}
	}
}

// TestSets: what a result puts in the shared state, the one rule for a
// result that completes, is reused or is restored.
func TestSets(t *testing.T) {
	team, err := Parse("o.yaml", []byte(`agents:
  c: {shell: cat}
tasks:
  none: {description: x, agent: c}
  text: {description: x, agent: c, output_variable: v}
  json: {description: x, agent: c, output_variable: j, output_schema: {type: object}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		task, result, wantName string
		want                   any
	}{
		{"none", "42\n", "", nil},
		{"text", "42\n", "v", "42"},
		{"text", "a\r\n\n", "v", "a"},
		{"text", "  x  ", "v", "  x  "},
		{"text", "", "v", ""},
		{"text", "a\nb\n", "v", "a\nb"},
		{"json", `{"n": 3, "f": 1.5}` + "\n", "j", map[string]any{"n": int64(3), "f": 1.5}},
		{"json", "not json\n", "j", "not json"}, // a result that does not fit: its text
	}
	for _, tt := range tests {
		name, got := team.Tasks[team.TaskIndex(tt.task)].Sets(tt.result)
		if name != tt.wantName || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s.Sets(%q) = %q, %#v; want %q, %#v", tt.task, tt.result, name, got, tt.wantName, tt.want)
		}
	}
}

// TestOutputSchemaKey checks that the schema is part of the task's key
// (plan and --reuse unchanged see an edit to it) and that a task without
// one keeps the key it had before output_schema existed.
func TestOutputSchemaKey(t *testing.T) {
	base := "agents:\n  c: {shell: cat}\ntasks:\n  a: {description: x, agent: c%s}\n"
	key := func(extra string) string {
		_, defs := defsOf(t, strings.Replace(base, "%s", extra, 1), nil)
		return defs[0].Key
	}
	none, obj, other := key(""), key(", output_schema: {type: object}"), key(", output_schema: {type: array}")
	if none == obj || obj == other {
		t.Errorf("keys: none %s, object %s, array %s: a schema edit must change the key", none, obj, other)
	}
	if key(", condition: {a: []}, route_on: /a") == key(", condition: {a: []}, route_on: /b") {
		t.Errorf("route_on is not part of the key")
	}
	if key(", output_file: x.md") != none {
		t.Errorf("output_file changed the key: where a result is copied to changes no result")
	}
}

func TestRouteKey(t *testing.T) {
	tests := []struct {
		on, raw, want, wantErr string
	}{
		{"", "  approve\n", "approve", ""},
		{"/severity", `{"severity": "high"}`, "high", ""},
		{"/a~1b/0", `{"a/b": [3, 4]}`, "3", ""},
		{"/ok", `{"ok": true}`, "true", ""},
		{"/n", `{"n": {"x": 1}}`, `{"x":1}`, ""},
		{"/severity", `high`, "", `route_on /severity: the result is not JSON: "high"`},
		{"/severity", `{"level": 1}`, "", `route_on /severity: the result has no "severity"`},
		{"/list/5", `{"list": [1]}`, "", `route_on /list/5: the result's list has no item "5"`},
		{"/a/b", `{"a": 1}`, "", `the result has no "b" (it is not an object or a list there)`},
	}
	for _, tt := range tests {
		tk := &Task{more: &taskMore{routeOn: tt.on}}
		got, err := tk.RouteKey(tt.raw)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%s on %q: %q, %v; want %q", tt.on, tt.raw, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s on %q: err %v, want %q", tt.on, tt.raw, err, tt.wantErr)
		}
	}
}

// TestOutputPath: a PraisonAI steps: file's output_file has its {{NAME}}s
// filled when it is written, as PraisonAI's workflow fills them; a roles:
// file's (PraisonAI writes a Task's output_file as it is) and a native
// file's are used as written. Filled in, a path that names no file, or
// that a value takes out of the folder its written part names, is an
// error; what the spec writes outside the spec's folder stays allowed.
func TestOutputPath(t *testing.T) {
	const steps = "variables: {model_id: BIOMD1, up: ../.., abs: /etc/passwd, dir: a/b, none: \"\"}\nagents:\n  e: {role: E}\nsteps:\n  - {name: first, agent: e, action: go}\n  - {agent: e, action: run, output_file: \"%s\"}\n"
	const roles = "variables: {model_id: BIOMD1}\nroles:\n  e:\n    role: E\n    tasks:\n      t: {description: run, output_file: \"%s\"}\n"
	const native = "variables: {model_id: BIOMD1}\nagents:\n  e: {shell: cat}\ntasks:\n  t: {agent: e, description: run, output_file: \"%s\"}\n"
	state := map[string]any{"first_output": "draft"}
	tests := []struct {
		name, src, want, err string
	}{
		{"filled", fmt.Sprintf(steps, "reports/{{model_id}}_baseline.md"), "reports/BIOMD1_baseline.md", ""},
		{"a step's output", fmt.Sprintf(steps, "out/{{first_output}}.md"), "out/draft.md", ""},
		{"deeper", fmt.Sprintf(steps, "{{dir}}/{{ model_id }}.md"), "a/b/BIOMD1.md", ""},
		{"nothing defines it: as written", fmt.Sprintf(steps, "reports/{{nope}}.md"), "reports/{{nope}}.md", ""},
		{"single braces are text", fmt.Sprintf(steps, "out/{model_id}.md"), "out/{model_id}.md", ""},
		{"written outside, filled inside", fmt.Sprintf(steps, "../shared/{{model_id}}.md"), "../shared/BIOMD1.md", ""},
		{"absolute as written", fmt.Sprintf(steps, "/tmp/r/{{model_id}}.md"), "/tmp/r/BIOMD1.md", ""},
		{"a value climbs out", fmt.Sprintf(steps, "reports/{{up}}/x.md"), "",
			`output_file "reports/{{up}}/x.md" is "reports/../../x.md" once its placeholders are filled, outside reports, where its written part puts it`},
		{"a value is absolute", fmt.Sprintf(steps, "{{abs}}"), "",
			`output_file "{{abs}}" is "/etc/passwd" once its placeholders are filled, outside .,`},
		{"empty", fmt.Sprintf(steps, "{{none}}"), "", `output_file "{{none}}" names no file once its placeholders are filled ("")`},
		{"a folder", fmt.Sprintf(steps, "reports/{{none}}"), "", `output_file "reports/{{none}}" names no file once its placeholders are filled ("reports/")`},
		{"roles: as written", fmt.Sprintf(roles, "reports/{{model_id}}.md"), "reports/{{model_id}}.md", ""},
		{"native: as written", fmt.Sprintf(native, "reports/{model_id}.md"), "reports/{model_id}.md", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("/w/s.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			st := team.InitialState(nil)
			for k, v := range state {
				st[k] = v
			}
			got, err := team.OutputPath(team.Tasks[len(team.Tasks)-1], st)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			want := tt.want
			if !filepath.IsAbs(want) {
				want = filepath.Join("/w", want)
			}
			if err != nil || got != want {
				t.Errorf("got %q, %v; want %q", got, err, want)
			}
		})
	}
	// What nothing defines is said where it is written, as in any text.
	team, err := Parse("s.yaml", []byte(fmt.Sprintf(steps, "reports/{{nope}}.md")))
	if err != nil {
		t.Fatal(err)
	}
	said := ErrorList(team.UndefinedPlaceholders(nil)).Error()
	if want := "s.yaml:6:51: steps[1].output_file: {{nope}}: nothing defines nope"; !strings.HasPrefix(said, want) {
		t.Errorf("warnings %q, want %q", said, want)
	}
}

// A native (or roles:) output_file is used as written: a {name} in it is
// no placeholder, and said so where it is written, once per task, rather
// than a file named "{topic}.md" turning up unexplained.
func TestOutputFileBracesSaid(t *testing.T) {
	const native = "variables: {topic: Go}\nagents:\n  e: {shell: cat}\ntasks:\n  t: {agent: e, description: run, output_file: \"%s\"}\n"
	for _, tt := range []struct{ path, want string }{
		{"out/{topic}.md", `s.yaml:5:48: tasks.t.output_file: output_file "out/{topic}.md" is used as written, a file named {topic}.md in out: only a task's description and expected_output and an agent's role, goal, backstory and instructions take {placeholders}`},
		{"out/{topic}-{nope}.md", `s.yaml:5:48: tasks.t.output_file: output_file "out/{topic}-{nope}.md" is used as written, a file named {topic}-{nope}.md in out: only`},
		{"out/report.md", ""},
		{"out/{1}.json", ""}, // not identifier-shaped: no placeholder anywhere
	} {
		team, err := Parse("s.yaml", []byte(fmt.Sprintf(native, tt.path)))
		if err != nil {
			t.Fatal(err)
		}
		var said []string
		for _, w := range team.Warnings {
			said = append(said, w.String())
		}
		switch {
		case tt.want == "" && len(said) > 0:
			t.Errorf("%s: warnings %q, want none", tt.path, said)
		case tt.want != "" && (len(said) != 1 || !strings.HasPrefix(said[0], tt.want)):
			t.Errorf("%s: warnings %q, want one starting %q", tt.path, said, tt.want)
		}
	}
}

// output_schema and route_on are kept in taskMore, where the model's
// golden JSON (TestValidSpecs) does not show them: read them back here.
func TestOutputSchemaAndRouteOnParsed(t *testing.T) {
	team, err := Parse("agents.yaml", []byte(`agents:
  c: {shell: cat}
tasks:
  triage:
    description: d
    agent: c
    output_schema: {type: object, required: [severity]}
    route_on: /severity
    condition: {high: [page]}
  page:
    description: d
    agent: c
  plain:
    description: d
    agent: c
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "object", "required": []any{"severity"}}
	if got := team.Tasks[0].OutputSchema(); !reflect.DeepEqual(got, want) {
		t.Errorf("triage's OutputSchema() = %#v; want %#v", got, want)
	}
	if got := team.Tasks[0].RouteOn(); got != "/severity" {
		t.Errorf("triage's RouteOn() = %q; want /severity", got)
	}
	if got, err := team.Tasks[0].RouteKey(`{"severity": "high"}`); err != nil || got != "high" {
		t.Errorf("triage's RouteKey = %q, %v; want high", got, err)
	}
	if s, on := team.Tasks[2].OutputSchema(), team.Tasks[2].RouteOn(); s != nil || on != "" {
		t.Errorf("plain's OutputSchema(), RouteOn() = %v, %q; want nil, \"\"", s, on)
	}
}
