package runner

import (
	"context"
	"fmt"
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

// asRecorded says whether task i stands as the checkpoint had it
// (checkpoint.Stands, the rule plan applies too).
func (e *Engine) asRecorded(i int) bool {
	v, ok := e.Recorded[i]
	return checkpoint.Stands(v, ok, e.standing(i)) == checkpoint.AsRecorded
}

// standing is task i as this pass has it, for checkpoint.Stands. A task an
// earlier pass of this run ran is restored in this one: it counts as run.
func (e *Engine) standing(i int) checkpoint.Now {
	switch e.sched.Status(i) {
	case schedule.Skipped:
		return checkpoint.Now{Ended: true, Outcome: checkpoint.Outcome{Skipped: true}}
	case schedule.Completed:
		return checkpoint.Now{Ended: true, Outcome: e.out(i).outcome(),
			Restored: e.tasks[i].restored && !e.RanBefore[e.Team.Tasks[i].Name]}
	}
	return checkpoint.Now{}
}

// cutOff says whether held task i may take over its recorded output now,
// and says why: everything its cut-off compares (schedule's CutoffReads)
// stands as recorded. An agent with memory
// is never cut off: the turns of its recorded answer were not kept.
func (e *Engine) cutOff(ctx context.Context, i int) (Output, string, string, bool) {
	out, ok := e.Held[i]
	if !ok || e.graph.Memory(i) {
		return Output{}, "", "", false
	}
	text, err := readResult(ctx, e.Team.Tasks[i], out, e.texts)
	if err != nil || e.graph.RestoreProblem(i, text) != "" {
		return Output{}, "", "", false // unreadable: it runs again
	}
	var reran, skipped []string
	for _, d := range e.graph.CutoffReads(i) {
		if !e.asRecorded(d) {
			return Output{}, "", "", false
		}
		name := e.Team.Tasks[d].Name
		switch {
		case e.sched.Status(d) == schedule.Skipped:
			skipped = append(skipped, name)
		case !e.tasks[d].restored || e.tasks[d].cutoff || e.RanBefore[name]:
			reran = append(reran, name)
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
// Taken over as a restored result is, it writes its missing output_file
// as one does (restoreOutputFile).
func (e *Engine) reuse(ctx context.Context, i int, out Output, text, why string) error {
	t := e.Team.Tasks[i]
	e.sched.Complete(i, text)
	e.tasks[i].setOut(out)
	e.tasks[i].restored, e.tasks[i].cutoff = true, true
	e.restoreOutputFile(ctx, i)
	ev := Event{Type: TaskReused, Index: i, Task: t.Name, Agent: t.Agent, Result: out.Raw, ResultBlob: out.Blob, Reason: why}
	e.completeVariable(i, text, &ev)
	return e.record(ev)
}

// refuser is the restore's check of the results it takes over against
// set's team (checkpoint.Choice.Refuse), the one the engine makes: asked
// before the session is written, so that what it refuses, and what reads
// that, is recorded as running again before anything runs; and sets is
// what those results set in the shared state today (Choice.Sets). open
// reads the results stored out of line; the first that does not read back
// is the error *readErr points at once the restore has asked; what it
// reads whole it keeps in texts. refuse and sets are nil when the team's
// graph cannot be made (the engine says why).
func refuser(ctx context.Context, set *TaskSet, open BlobOpener, texts blobTexts) (refuse func(*checkpoint.Restored) []checkpoint.Refusal,
	sets func(int, checkpoint.TaskRecord) (string, any), readErr *error) {
	readErr = new(error)
	g, err := set.graph()
	if err != nil {
		return nil, nil, readErr
	}
	text := func(i int, t checkpoint.TaskRecord) string {
		out := Output{Raw: t.Result}.withBlob(t.Blob, open)
		text, err := readResult(ctx, set.Team.Tasks[i], out, texts)
		if err != nil && *readErr == nil {
			*readErr = err
		}
		return text
	}
	return g.Refuser(text), g.Setter(text), readErr
}

// checkChoice refuses, before anything is written, --rerun, --rerun-from
// or --keep without --continue or naming a task the spec does not have.
func checkChoice(c checkpoint.Choice, team *spec.Team, cont bool) error {
	if !cont && len(c.Rerun)+len(c.RerunFrom)+len(c.Keep) > 0 {
		return usagef("--rerun, --rerun-from and --keep choose what a resumed session runs again: add --continue")
	}
	if err := c.Check(team.TaskNames); err != nil {
		return &UsageError{Err: fmt.Errorf("%s: %w", team.File, err)}
	}
	return nil
}
