package spec

import (
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
