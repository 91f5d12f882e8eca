package spec

import (
	"math"
	"testing"
)

func TestRender(t *testing.T) {
	state := map[string]any{
		"topic": "Go 1.26",
		"n":     int64(3),
		"i":     7,
		"ratio": 0.5,
		"big":   1e21,
		"inf":   math.Inf(1),
		"ok":    true,
		"none":  nil,
		"_x1":   "under",
		"cfg":   map[string]any{"b": []any{int64(1), "two"}, "a": "<&>"},
		"list":  []any{"x", "é"},
		"empty": "",
	}
	tests := []struct{ in, want string }{
		{"", ""},
		{"no braces", "no braces"},
		{"About {topic}.", "About Go 1.26."},
		{"{topic}{topic}", "Go 1.26Go 1.26"},
		{"{unknown} stays", "{unknown} stays"},
		{`keep {"json": 1} as is`, `keep {"json": 1} as is`},
		{"{ topic }", "{ topic }"},
		{"{topic", "{topic"},
		{"topic}", "topic}"},
		{"{9lives}", "{9lives}"},
		{"{{topic}}", "{Go 1.26}"},
		{"{_x1}", "under"},
		{"n={n} i={i}", "n=3 i=7"},
		{"{ratio} {big} {inf}", "0.5 1e+21 .inf"},
		{"{ok}", "true"},
		{"[{none}]", "[]"},
		{"{cfg}", `{"a":"<&>","b":[1,"two"]}`},
		{"{list}", `["x","é"]`},
		{"[{empty}]", "[]"},
		{"Café {topic} 🚀", "Café Go 1.26 🚀"},
		{"{tópico}", "{tópico}"},
	}
	for _, tt := range tests {
		if got := Render(tt.in, state); got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Render("{topic}", nil); got != "{topic}" {
		t.Errorf("Render with nil state = %q", got)
	}
}

func TestInitialState(t *testing.T) {
	team, err := Parse("a.yaml", []byte(`variables:
  topic: Go
  nested: {a: [1, 2]}
  count: 2
agents: {w: {shell: cat}}
tasks:
  a: {description: "{topic} {count}", agent: w}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := team.InitialState(map[string]string{"topic": "Rust", "extra": "x"})
	if s["topic"] != "Rust" || s["extra"] != "x" || s["count"] != int64(2) {
		t.Errorf("state = %v", s)
	}
	s["nested"].(map[string]any)["a"].([]any)[0] = "changed"
	if team.Variables["nested"].(map[string]any)["a"].([]any)[0] != int64(1) {
		t.Error("InitialState must return a deep copy")
	}
	if team.Variables["topic"] != "Go" {
		t.Error("overrides must not change the team")
	}
	if got := team.TaskDefs(team.InitialState(map[string]string{"topic": "Zig"}))[0].Description; got != "Zig 2" {
		t.Errorf("rendered description = %q", got)
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{map[string]any{"b": 1, "a": "x", "é": nil, "Z": true}, `{"Z":true,"a":"x","b":1,"é":null}`},
		{"quote\" back\\ nl\n tab\t cr\r bell\a del\x7f", `"quote\" back\\ nl\n tab\t cr\r bell\u0007 del` + "\x7f" + `"`},
		{"<html> & \u2028", "\"<html> & \u2028\""},
		{"bad \xff byte", "\"bad \uFFFD byte\""},
		{[]any{1.5, int64(-2), math.NaN()}, `[1.5,-2,null]`},
	}
	for _, tt := range tests {
		if got := string(canonicalJSON(tt.in)); got != tt.want {
			t.Errorf("canonicalJSON(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
