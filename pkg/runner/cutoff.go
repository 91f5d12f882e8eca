package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/schedule"
	"github.com/teamrun/teamrun/pkg/spec"
)

// cutoffInputs is what the engine needs of a restore for the early cut-off:
// the held tasks' recorded outputs and the recorded result of every task
// that runs again, by index.
func cutoffInputs(r *checkpoint.Restored, defs []spec.TaskDef, open BlobOpener) (held map[int]Output, recorded map[int]checkpoint.Outcome) {
	held, recorded = map[int]Output{}, map[int]checkpoint.Outcome{}
	if r == nil {
		return held, recorded
	}
	for i, d := range defs {
		if t, ok := r.Held[d.Name]; ok {
			held[i] = Output{Description: d.Description, Raw: t.Result, Agent: d.Agent, OutputFormat: "RAW"}.withBlob(t.Blob, open)
		}
		if v, ok := r.Recorded[d.Name]; ok {
			recorded[i] = v
		}
	}
	return held, recorded
}

// asRecorded says whether task i stands as the checkpoint had it: restored
// (or cut off), run again with a byte-identical result, or skipped again.
func (e *Engine) asRecorded(i int) bool {
	switch e.sched.Status(i) {
	case schedule.Skipped:
		v, ok := e.Recorded[i]
		return ok && v.Skipped
	case schedule.Completed:
	default:
		return false
	}
	// A task an earlier pass of this run ran is restored in this one, and
	// so is one a killed run that held tasks ran (its hold recorded the
	// result they were made from): either stands as recorded only if its
	// result is the recorded one.
	v, ok := e.Recorded[i]
	if e.tasks[i].restored && !e.RanBefore[e.Team.Tasks[i].Name] {
		return !ok || v.Same(e.tasks[i].out.outcome())
	}
	return ok && v.Same(e.tasks[i].out.outcome())
}

// cutOff says whether held task i may take over its recorded output now,
// and says why: everything it waits for stands as recorded, and so does
// every task whose output_variable its texts name. An agent with memory
// is never cut off: the turns of its recorded answer were not kept.
func (e *Engine) cutOff(ctx context.Context, i int) (Output, string, string, bool) {
	out, ok := e.Held[i]
	if !ok || e.agentOf(i).Memory {
		return Output{}, "", "", false
	}
	text, err := resultText(ctx, e.Team.Tasks[i], out)
	if err != nil || e.graph.RestoreProblem(i, text) != "" {
		return Output{}, "", "", false // unreadable: it runs again
	}
	var reran, skipped []string
	// What it waits for and what it reads (in a sequential team a task may
	// read an earlier task than the one it waits for).
	for _, d := range append(slices.Clone(e.graph.Deps(i)), e.Context[i]...) {
		if !e.asRecorded(d) {
			return Output{}, "", "", false
		}
		name := e.Team.Tasks[d].Name
		switch {
		case e.sched.Status(d) == schedule.Skipped:
			if !slices.Contains(skipped, name) {
				skipped = append(skipped, name)
			}
		case (!e.tasks[d].restored || e.tasks[d].cutoff) && !slices.Contains(reran, name):
			reran = append(reran, name)
		}
	}
	t := e.Team.Tasks[i]
	for j, o := range e.Team.Tasks {
		if o.OutputVariable == "" || j == i {
			continue
		}
		if (e.Team.Reads(t.Description, o.OutputVariable) || e.Team.Reads(t.ExpectedOutput, o.OutputVariable)) && !e.asRecorded(j) {
			return Output{}, "", "", false
		}
	}
	var whys []string
	if len(reran) > 0 {
		whys = append(whys, fmt.Sprintf("the output of %s came out unchanged", strings.Join(reran, ", ")))
	}
	if len(skipped) > 0 {
		whys = append(whys, fmt.Sprintf("%s skipped again, as recorded", strings.Join(skipped, ", ")))
	}
	why := "what it reads is unchanged"
	if len(whys) > 0 {
		why = strings.Join(whys, "; ")
	}
	return out, text, why, true
}

// reuse completes held task i with its recorded output (early cut-off).
func (e *Engine) reuse(i int, out Output, text, why string) error {
	t := e.Team.Tasks[i]
	e.sched.Complete(i, text)
	e.tasks[i].out, e.tasks[i].restored, e.tasks[i].cutoff = out, true, true
	ev := Event{Type: TaskReused, Index: i, Task: t.Name, Agent: t.Agent, Result: out.Raw, ResultBlob: out.Blob, Reason: why}
	if t.OutputVariable != "" {
		ev.OutputVariable, ev.OutputValue = t.OutputVariable, OutputValue(t, text)
		e.State[t.OutputVariable] = ev.OutputValue
	}
	return e.record(ev)
}

// refuser is the restore's check of the results it takes over against
// set's team (checkpoint.Choice.Refuse), the one the engine makes: asked
// before the session is written, so that what it refuses, and what reads
// that, is recorded as running again before anything runs. open reads the
// results stored out of line; the first that does not read back is the
// error *readErr points at once the restore has asked. refuse is nil when
// the team's graph cannot be made (the engine says why).
func refuser(ctx context.Context, set *TaskSet, open BlobOpener) (refuse func(*checkpoint.Restored) []checkpoint.Refusal, readErr *error) {
	readErr = new(error)
	g, err := set.graph()
	if err != nil {
		return nil, readErr
	}
	return g.Refuser(func(i int, t checkpoint.TaskRecord) string {
		out := Output{Raw: t.Result}.withBlob(t.Blob, open)
		text, err := resultText(ctx, set.Team.Tasks[i], out)
		if err != nil && *readErr == nil {
			*readErr = err
		}
		return text
	}), readErr
}

// checkChoice refuses, before anything is written, --rerun, --rerun-from
// or --keep without --continue or naming a task the spec does not have.
func checkChoice(c checkpoint.Choice, team *spec.Team, cont bool) error {
	if !cont && len(c.Rerun)+len(c.RerunFrom)+len(c.Keep) > 0 {
		return usagef("--rerun, --rerun-from and --keep choose what a resumed session runs again: add --continue")
	}
	if err := c.Check(team.TaskNames()); err != nil {
		return &UsageError{Err: fmt.Errorf("%s: %w", team.File, err)}
	}
	return nil
}
