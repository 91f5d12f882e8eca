package runner

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// A PraisonAI route or if step decides in teamrun's process, on the whole
// of what it reads (context outputs, stored out of line or not, and
// variables of any size), with no command and no environment between:
// values over what one environment string may hold (128 KiB) take the
// branch they should, and an output that cannot be read fails the task
// instead of being taken for else.
func TestDecideReadsWholeValues(t *testing.T) {
	team, err := spec.Parse("d.yaml", []byte(`agents:
  w: {role: W, llm: m}
steps:
  - name: research
    parallel:
      - {agent: w, action: one}
      - {agent: w, action: two}
  - name: pick
    route: {ärger: [w], done: [w]}
  - name: check
    if: {condition: "{{previous_output}} contains DONE", then: [{agent: w, action: yes}], else: [{agent: w, action: no}]}
  - name: vars
    if: {condition: "{{report}} contains done", then: [{agent: w, action: yes}], else: [{agent: w, action: no}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("word ", 40_000) + "DONE" // 200,004 bytes
	gone := errors.New("no such blob")
	stored := Output{}.withBlob(&checkpoint.Blob{Digest: "sha256:" + strings.Repeat("0", 64), Size: int64(len(big))},
		func(context.Context, checkpoint.Blob) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(big)), nil
		})
	unreadable := Output{}.withBlob(&checkpoint.Blob{Digest: "sha256:" + strings.Repeat("1", 64), Size: 9},
		func(context.Context, checkpoint.Blob) (io.ReadCloser, error) { return nil, gone })
	ctxOf := func(outs ...Output) []Output { return outs }
	tests := []struct {
		name  string
		task  string
		ctx   []Output // the outputs of the tasks before the step, in order
		state map[string]any
		want  string // the result, "" when the attempt fails
	}{
		{"a label in the second output", "pick", ctxOf(Output{Raw: "calm"}, Output{Raw: "big ÄRGER"}), nil, "ärger\n"},
		{"no label", "pick", ctxOf(Output{Raw: "calm"}, Output{Raw: "quiet"}), nil, "default\n"},
		{"a label at the end of a large output", "pick", ctxOf(Output{Raw: "calm"}, Output{Raw: big}), nil, "done\n"},
		{"a large previous output", "check", ctxOf(Output{Raw: "x"}, Output{Raw: big}), nil, "then\n"},
		{"a previous output stored out of line", "check", ctxOf(Output{Raw: "x"}, stored), nil, "then\n"},
		{"a large variable", "vars", ctxOf(Output{Raw: "x"}, Output{Raw: "y"}), map[string]any{"report": big}, "then\n"},
		{"a large variable without it", "vars", nil, map[string]any{"report": strings.Repeat("word ", 40_000)}, "else\n"},
		{"an output that cannot be read", "check", ctxOf(Output{Raw: "x"}, unreadable), nil, ""},
		{"a route on an output that cannot be read", "pick", ctxOf(unreadable), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := team.Tasks[team.TaskIndex(tt.task)]
			job := &Job{Task: tk, Agent: team.Agent(tk.Agent), State: tt.state}
			if job.Agent.Kind != spec.RouteAgent || len(job.Agent.Decides.Prev) < len(tt.ctx) {
				t.Fatalf("agent %s is %s, reading %v: want a route agent reading the steps before", job.Agent.Name, job.Agent.Kind, job.Agent.Decides)
			}
			for i, o := range tt.ctx {
				job.Context = append(job.Context, ContextOutput{Task: job.Agent.Decides.Prev[i], Output: o})
			}
			res, err := Agents{}.Execute(context.Background(), job)
			switch {
			case tt.want == "" && !errors.Is(err, gone):
				t.Errorf("result %q, error %v: want the read error", res.Raw, err)
			case tt.want != "" && (err != nil || res.Raw != tt.want):
				t.Errorf("result %q, error %v: want %q", res.Raw, err, tt.want)
			}
		})
	}
}
