package spec

import (
	"strings"
	"testing"
)

// TestKeyPathsQuoted: a key holding a newline or a tab would split an
// error line in two, or hide where the key ends; the path is quoted then.
func TestKeyPathsQuoted(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want string // the first line of the error
	}{
		{"newline in a task name", "agents:\n  e: {shell: cat}\ntasks:\n  \"a\\nb\": {description: t, agent: e}\n",
			`d.yaml:4:3: "tasks.a\nb": expected a name without slashes or control characters, not starting with a dot or a space, got "a\nb"`},
		{"tab in an unknown key", "agents:\n  e: {shell: cat, \"she\\tll\": x}\ntasks:\n  t: {description: t, agent: e}\n",
			`d.yaml:2:19: "agents.e.she\tll": unknown key "she\tll"`},
		{"line separator in a variable name", "variables: {\"a\\Lb\": 1}\nagents:\n  e: {shell: cat}\ntasks:\n  t: {description: t, agent: e}\n",
			`d.yaml:1:13: "variables.a\u2028b": expected an identifier`},
		{"a space at a key's end", "agents:\n  e: {shell: cat, \"dir \": x}\ntasks:\n  t: {description: t, agent: e}\n",
			`d.yaml:2:19: "agents.e.dir ": unknown key "dir " (did you mean "dir"?)`},
		{"a plain path stays as it is", "agents:\n  e: {shell: cat}\ntasks:\n  \"a b/c\": {description: t, agent: e}\n",
			`d.yaml:4:3: tasks.a b/c: expected a name without slashes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("d.yaml", []byte(tt.spec))
			if err == nil {
				t.Fatal("accepted")
			}
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			if !strings.HasPrefix(first, tt.want) {
				t.Fatalf("got\n%s\nwant it to start with\n%s", err, tt.want)
			}
		})
	}
}

func TestQuotePath(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"tasks.count":       "tasks.count",
		"tasks.é ü":         "tasks.é ü",
		"tasks.a\tb":        `"tasks.a\tb"`,
		"tasks.a\x00b":      `"tasks.a\x00b"`,
		"tasks.\u200bwidth": `"tasks.\u200bwidth"`,
		"tasks.t .agent":    `"tasks.t .agent"`,
		"steps[0].action ":  `"steps[0].action "`,
		"roles. r":          `"roles. r"`,
		"tasks.a b.agent":   "tasks.a b.agent",
	} {
		if got := QuotePath(in); got != want {
			t.Errorf("QuotePath(%q) = %s, want %s", in, got, want)
		}
	}
}

// A PraisonAI key with a space at its end (quoted in the file) is
// ignored, and the warning says why and what to write.
func TestPraisonKeySpace(t *testing.T) {
	tm, err := Parse("p.yaml", []byte("llm: m\nagents:\n  a: {role: A}\nsteps:\n  - {agent: a, action: x, \"timeout \": 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `p.yaml:5:27: "steps[0].timeout ": not supported by teamrun, ignored: the key "timeout " has a space at its start or end, which YAML keeps inside quotes: write timeout`
	if len(tm.Warnings) != 1 || tm.Warnings[0].String() != want {
		t.Fatalf("warnings %v, want\n%s", tm.Warnings, want)
	}
}
