package spec

import (
	"errors"
	"strings"
	"testing"
)

// nested is a variable x whose value nests lists so that the deepest value
// is at level total of the document (the top mapping is level 1, variables
// level 2, x's value level 3). block writes it one level per line.
func nested(total int, block bool) string {
	var b strings.Builder
	b.WriteString("agents:\n  e: {shell: cat}\ntasks:\n  t: {description: t, agent: e}\nvariables:\n  x: ")
	lists := total - 3
	if block {
		b.WriteString("\n")
		for i := 0; i < lists; i++ {
			b.WriteString(strings.Repeat(" ", 4+2*i) + "-")
			if i < lists-1 {
				b.WriteString("\n")
			}
		}
		b.WriteString(" leaf\n")
		return b.String()
	}
	b.WriteString(strings.Repeat("[", lists) + "leaf" + strings.Repeat("]", lists) + "\n")
	return b.String()
}

func TestNestingDepthLimit(t *testing.T) {
	tests := []struct {
		name  string
		spec  string
		error string // "" when valid
	}{
		{"at the limit, flow style", nested(MaxDepth, false), ""},
		{"at the limit, block style", nested(MaxDepth, true), ""},
		{"one level over", nested(MaxDepth+1, false),
			"d.yaml:6:3: variables.x: nests more than 256 levels deep (level 257 starts at line 6, column 260): that is teamrun's limit, so that its session can always be read back; flatten the value"},
		{"one level over, block style", nested(MaxDepth+1, true),
			"d.yaml:6:3: variables.x: nests more than 256 levels deep (level 257 starts at line 260, column 513): that is teamrun's limit, so that its session can always be read back; flatten the value"},
		// The case: deep enough that the session's JSON would be
		// past encoding/json's 10,000 levels.
		{"9,998 levels", nested(9998, false),
			"d.yaml:6:3: variables.x: nests more than 256 levels deep (level 257 starts at line 6, column 260): that is teamrun's limit, so that its session can always be read back; flatten the value"},
		// Aliases nest what they name: depth counts the expanded value.
		{"through aliases", "x-a: &a " + strings.Repeat("[", 250) + "1" + strings.Repeat("]", 250) + "\n" +
			"x-b: &b [*a , [*a ]]\nagents:\n  e: {shell: cat}\ntasks:\n  t: {description: t, agent: e}\nvariables:\n  x: [[*b]]\n",
			"d.yaml:8:3: variables.x: nests more than 256 levels deep (level 257 starts at line 1, column 259): that is teamrun's limit, so that its session can always be read back; flatten the value"},
		// Any key, not only variables.
		{"under a task", "agents:\n  e: {shell: cat}\ntasks:\n  t: {description: t, agent: e, x-note: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "}\n",
			"d.yaml:4:3: tasks.t: nests more than 256 levels deep (level 257 starts at line 4, column 294): that is teamrun's limit, so that its session can always be read back; flatten the value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("d.yaml", []byte(tt.spec))
			if tt.error == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, ok := team.Variables["x"]; !ok {
					t.Fatal("the variable is missing")
				}
				return
			}
			var el ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("got %v (%T), want an ErrorList", err, err)
			}
			if got := el.Error(); got != tt.error {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.error)
			}
		})
	}
}
