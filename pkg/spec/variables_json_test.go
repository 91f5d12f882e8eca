package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A variable JSON cannot hold is {} from the parse on, with a warning at
// its line (DESIGN §4), so a first run and its --continue see one value.
func TestVariablesJSONCannotHold(t *testing.T) {
	const tail = "agents: {sh: {shell: cat}}\ntasks:\n  a: {description: a, agent: sh}\n"
	for _, tc := range []struct {
		name, vars string
		want       any
		warn       string // "" for none
	}{
		{"nan", "x: .nan", map[string]any{}, "2:6: variables.x: .nan is not a number JSON has"},
		{"infinity", "x: -.inf", map[string]any{}, "variables.x: -.inf is not a number JSON has"},
		{"int and bool keys, flow", "x: {1: a, true: b}", map[string]any{}, "variables.x: a mapping with keys that are not strings (1, true)"},
		{"int key, block", "x:\n    1: a\n    k: b", map[string]any{}, "a mapping with keys that are not strings (1)"},
		{"nested", "x: {k: [1, .nan]}", map[string]any{}, "variables.x: .nan is not a number JSON has"},
		{"quoted keys are strings", "x: {\"1\": a, 'true': b}", map[string]any{"1": "a", "true": "b"}, ""},
		{"plain", "x: {k: [1, 2.5]}", map[string]any{"k": []any{int64(1), 2.5}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			team, err := Parse("v.yaml", []byte("variables:\n  "+tc.vars+"\n"+tail))
			if err != nil {
				t.Fatal(err)
			}
			if got := team.Variables["x"]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("x = %#v, want %#v", got, tc.want)
			}
			all := ErrorList(team.Warnings).Error()
			if tc.warn == "" && len(team.Warnings) > 0 || !strings.Contains(all, tc.warn) {
				t.Errorf("warnings %q, want %q", all, tc.warn)
			}
		})
	}
}

// An integer no int64 holds keeps its digits as written (in decimal) in a
// placeholder, in its JSON (TEAMRUN_VAR_<NAME>, the session file) and
// after a restore reads that JSON back: a float64 rounded a 20-digit id,
// and the placeholder (1.2345678901234567e+19) and the environment
// (12345678901234567000) disagreed. The same whichever YAML reader reads
// the file (an anchor sends it to yaml.v3's).
func TestVariablesBigIntegers(t *testing.T) {
	const tail = "agents: {sh: {shell: cat}}\ntasks:\n  a: {description: a, agent: sh}\n"
	for _, tc := range []struct {
		yaml, text, json string
	}{
		{"12345678901234567890", "12345678901234567890", "12345678901234567890"},
		{"100000000000000000000", "100000000000000000000", "100000000000000000000"},
		{"-12345678901234567890", "-12345678901234567890", "-12345678901234567890"},
		{"+00012345678901234567890", "12345678901234567890", "12345678901234567890"},
		{"0xFFFFFFFFFFFFFFFF", "18446744073709551615", "18446744073709551615"},
		{"1_000_000_000_000_000_000_000", "1000000000000000000000", "1000000000000000000000"},
		{"9223372036854775807", "9223372036854775807", "9223372036854775807"},
		{"9007199254740993", "9007199254740993", "9007199254740993"},
		{"1e21", "1e+21", "1e+21"},
		{"1.5", "1.5", "1.5"},
	} {
		for _, reader := range []string{"fast", "yaml.v3"} {
			t.Run(tc.yaml+"/"+reader, func(t *testing.T) {
				vars := "variables:\n  x: " + tc.yaml + "\n"
				if reader == "yaml.v3" {
					vars = "variables:\n  x: &n " + tc.yaml + "\n"
				}
				team, err := Parse("v.yaml", []byte(vars+tail))
				if err != nil {
					t.Fatal(err)
				}
				v := team.Variables["x"]
				if got := FormatValue(v); got != tc.text {
					t.Errorf("placeholder %q, want %q", got, tc.text)
				}
				b, err := json.Marshal(v)
				if err != nil || string(b) != tc.json {
					t.Fatalf("JSON %s (%v), want %s", b, err, tc.json)
				}
				if got := string(canonicalJSON([]any{v})); got != "["+tc.json+"]" {
					t.Errorf("canonical JSON %s, want [%s]", got, tc.json)
				}
				back := PlainNumber(json.Number(b))
				if !reflect.DeepEqual(back, v) {
					t.Errorf("read back %#v, want %#v", back, v)
				}
			})
		}
	}
}
