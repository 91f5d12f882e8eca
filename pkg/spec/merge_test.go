package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Merge keys resolve as the YAML merge key spec says, the tree holding
// what yaml.v3 decodes (PyYAML agrees on each): own keys win, the earlier
// of a list's sources wins, and a source's own "<<" resolves too.
func TestMergeKeysAsYAML(t *testing.T) {
	tests := []struct {
		name, doc string
		keys      []string // of cfg, in order; nil: not checked
		want      string   // the JSON, where yaml.v3 does not read doc
	}{
		{"nested source", "x-region: &region\n  region: eu\nx-prod: &prod\n  <<: *region\n  tier: gold\ncfg:\n  <<: *prod\n  name: prod\n",
			[]string{"region", "tier", "name"}, ""},
		{"nested three deep", "a: &a {k: a, a: 1}\nb: &b {<<: *a, k: b, b: 1}\nc: &c {<<: *b, c: 1}\ncfg: {<<: *c, d: 1}\n",
			[]string{"a", "k", "b", "c", "d"}, ""}, // b's own k stays where b has it
		{"own key wins", "a: &a {k: a, j: a}\ncfg: {k: own, <<: *a}\n", []string{"k", "j"}, ""},
		{"earlier source wins", "a: &a {k: a}\nb: &b {k: b, m: b}\ncfg: {<<: [*a, *b]}\n", []string{"k", "m"}, ""},
		{"earlier source wins over a nested one", "a: &a {k: a}\nb: &b {k: b}\nc: &c {<<: *b}\ncfg: {<<: [*a, *c]}\n", []string{"k"}, ""},
		{"inline sources", "cfg: {<<: [{k: 1}, {<<: {k: 2, j: 2}}]}\n", []string{"k", "j"}, ""},
		// yaml.v3 refuses an alias to a list; PyYAML reads it so.
		{"list of sources through an alias", "a: &a {k: a}\nl: &l [*a, {j: 1}]\ncfg: {<<: *l}\n", []string{"k", "j"},
			`{"a":{"k":"a"},"cfg":{"j":1,"k":"a"},"l":[{"k":"a"},{"j":1}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, diags := parseTree("f.yaml", []byte(tt.doc))
			if len(diags) > 0 {
				t.Fatalf("diagnostics: %v", diags)
			}
			want := tt.want
			if want == "" {
				var v any
				if err := yaml.Unmarshal([]byte(tt.doc), &v); err != nil {
					t.Fatal(err)
				}
				want = jsonOf(t, v)
			}
			if got := jsonOf(t, tr.json()); got != want {
				t.Errorf("tree %s, yaml.v3 %s", got, want)
			}
			if got := tr.get("cfg").keys(); tt.keys != nil && !reflect.DeepEqual(got, tt.keys) {
				t.Errorf("cfg's keys %q, want %q", got, tt.keys)
			}
			if typed := tr.get("cfg").typed(); len(typed) > 0 {
				t.Errorf("typed keys %q: a merge key was copied as a key", typed)
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A merge yaml.v3 or PyYAML refuses is refused at its line, naming its
// key and what to write, not dropped or resolved one loader's way.
func TestMergeKeysRefused(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // "line:col path: message fragment"
	}{
		{"two merge keys", "a: &a {k: a}\nb: &b {k: b}\ncfg:\n  <<: *a\n  <<: *b\n",
			[]string{`5:3 cfg.<<: duplicate key "<<" (first at line 4): keep one; to merge several mappings, list them in one: <<: [*a, *b]`}},
		{"scalar through an alias", "r: &r 3\ncfg:\n  <<: *r\n  k: 1\n",
			[]string{`3:7 cfg.<<: a merge key (<<) takes a mapping or a list of mappings, got integer 3: write <<: *name`}},
		{"list of scalars", "cfg:\n  <<: [x, {k: 1}, y]\n",
			[]string{`2:8 cfg.<<: a merge key (<<) takes a mapping or a list of mappings, got string "x"`,
				`2:19 cfg.<<: a merge key (<<) takes a mapping or a list of mappings, got string "y"`}},
		{"null", "cfg:\n  <<: ~\n", []string{`2:7 cfg.<<: a merge key (<<) takes a mapping or a list of mappings, got null`}},
		{"a list through an alias", "l: &l [x]\ncfg: {<<: *l}\n", []string{`2:11 cfg.<<: a merge key (<<) takes a mapping or a list of mappings, got string "x"`}},
		{"nested list", "cfg: {<<: [[{k: 1}]]}\n", []string{`1:12 cfg.<<: a merge key (<<) takes a mapping or a list of mappings, got a list`}},
		{"bad merge in a source said once, at its own line", "a: &a {<<: 3}\ncfg: {<<: *a}\n", []string{`1:12 a.<<: a merge key (<<) takes`}},
		{"inline source's duplicate", "cfg: {<<: {k: 1, k: 2}}\n", []string{`1:18 cfg.k: duplicate key "k" (first at line 1): keep one`}},
		{"merge into itself", "a: &a {<<: *a}\n", []string{`1:8 a: alias refers to itself`}},
		{"merge through a source into itself", "a: &a {b: &b {<<: *a}, <<: *b}\n", []string{"alias refers to itself"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := parseTree("f.yaml", []byte(tt.doc))
			var got []string
			for _, d := range diags {
				got = append(got, fmt.Sprintf("%d:%d %s: %s", d.Line, d.Column, d.Path, d.Message))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d diagnostics %q, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("diagnostic %d:\n got  %s\n want %s", i, got[i], w)
				}
			}
		})
	}
}

// The findings' files: a task and a variable layered through a source's
// own "<<" load as PyYAML reads them, and a merge bomb meets the budget.
func TestMergeKeysInSpecs(t *testing.T) {
	team, err := Parse("task.yaml", []byte("x-base: &base\n  agent: sh\n  max_retries: 1\nx-review: &review\n  <<: *base\n  expected_output: a verdict\n"+
		"agents:\n  sh:\n    shell: cat\ntasks:\n  check:\n    <<: *review\n    description: Check the draft\n"))
	if err != nil {
		t.Fatal(err)
	}
	if task := team.Tasks[0]; task.Agent != "sh" || task.MaxRetries != 1 || task.ExpectedOutput != "a verdict" {
		t.Errorf("task %+v", task)
	}
	team, err = Parse("var.yaml", []byte("x-region: &region\n  region: eu\nx-prod: &prod\n  <<: *region\n  tier: gold\nvariables:\n  cfg:\n    <<: *prod\n    name: prod\n"+
		"agents:\n  sh:\n    shell: cat\ntasks:\n  show:\n    description: cfg is {cfg}\n    agent: sh\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, team.Variables["cfg"]); got != `{"name":"prod","region":"eu","tier":"gold"}` || len(team.Warnings) > 0 {
		t.Errorf("cfg %s, warnings %v", got, team.Warnings)
	}

	var bomb strings.Builder
	bomb.WriteString("x0: &x0 {k: 1}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&bomb, "x%d: &x%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*x%d, ", i-1), 9), ", "))
	}
	if _, diags := parseTree("bomb.yaml", []byte(bomb.String())); len(diags) != 1 || !strings.Contains(diags[0].Message, "too many values") {
		t.Errorf("merge bomb: %v", diags)
	}
}
