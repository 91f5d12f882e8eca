package runner

import (
	"context"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

// TestJoinResults: what the tasks an expansion makes produce from what
// they read (only completed tasks: a skipped iteration is not there).
func TestJoinResults(t *testing.T) {
	out := func(task, raw string) ContextOutput { return ContextOutput{Task: task, Output: Output{Raw: raw}} }
	tests := []struct {
		name    string
		x       spec.Expansion
		context []ContextOutput
		want    string
		err     bool
	}{
		{"a foreach", spec.Expansion{ForeachOf: "f"}, []ContextOutput{out("f[0]", "a"), out("f[1]", "b\n")}, `["a","b\n"]`, false},
		{"a foreach of nothing", spec.Expansion{ForeachOf: "f"}, nil, `[]`, false},
		{"a foreach whose producer was skipped, with a context", spec.Expansion{ForeachOf: "f", After: []string{"p"}, ExpandsWhen: "p"}, []ContextOutput{out("g", "no\n")}, `[]`, false},
		{"a repeat", spec.Expansion{RepeatOf: "r"}, []ContextOutput{out("r#1", "one"), out("r#2", "two")}, "two", false},
		{"a repeat read after its count", spec.Expansion{RepeatOf: "r"}, []ContextOutput{out("r#iterations", "2"), out("r#1", "one"), out("r#2", "two")}, "two", false},
		{"a repeat of no iteration", spec.Expansion{RepeatOf: "r"}, []ContextOutput{out("r#iterations", "0")}, "", true},
		{"a repeat's count", spec.Expansion{RepeatOf: "r", Counts: true}, []ContextOutput{out("r#1", "one"), out("r#2", "two")}, "2", false},
		{"a count of one", spec.Expansion{RepeatOf: "r", Counts: true}, []ContextOutput{out("r#1", "done")}, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := tt.x
			res, err := joinResults(context.Background(), &Job{Task: &spec.Task{Name: "t", Expansion: &x}, Context: tt.context})
			if (err != nil) != tt.err || res.Raw != tt.want {
				t.Errorf("result %q (error %v), want %q (error: %v)", res.Raw, err, tt.want, tt.err)
			}
		})
	}
}
