package spec

import (
	"errors"
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
		{"triage", `approve`, `the result does not fit output_schema: it is not JSON (invalid character 'a' looking for beginning of value): "approve"`},
		{"triage", `{"severity": "medium"}`, `the result does not fit output_schema: at /severity: value must be one of "low", "high"`},
		{"triage", `{"count": 1}`, `the result does not fit output_schema: at the top: missing properties: 'severity'`},
		{"triage", `{"severity": "low", "count": -1}`, `at /count: must be >= 0 but found -1`},
		{"triage", `{"severity": "low"} {"severity": "low"}`, `it holds more than one JSON value`},
		{"triage", ``, `it is not JSON (EOF): (empty)`},
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
		tk := &Task{RouteOn: tt.on}
		got, err := tk.RouteKey(tt.raw)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%s on %q: %q, %v; want %q", tt.on, tt.raw, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s on %q: err %v, want %q", tt.on, tt.raw, err, tt.wantErr)
		}
	}
}
