package main

// session show's timeline: when each attempt ran, for how long and how it
// ended, as bars on one time axis (a small Gantt chart).

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// span is one attempt on the timeline.
type span struct {
	task    string
	attempt int
	start   time.Time
	end     time.Time // zero: no end recorded (running, or the run died)
	outcome string
}

// spansOf are the attempts of a session's tasks, in file order and
// attempt order, from the session's attempt history; a session written
// before teamrun kept one shows each task's last attempt.
func spansOf(s *checkpoint.Session) []span {
	var out []span
	for _, t := range s.Team.Tasks {
		if len(t.History) == 0 {
			if t.StartedAt != nil {
				out = append(out, spanOf(t.Name, checkpoint.Attempt{N: t.Attempts, Start: *t.StartedAt, End: t.FinishedAt, Outcome: t.Status, Error: t.Error}))
			}
			continue
		}
		for _, a := range t.History {
			out = append(out, spanOf(t.Name, a))
		}
	}
	return out
}

// spanOf is attempt a of task on the timeline.
func spanOf(task string, a checkpoint.Attempt) span {
	sp := span{task: task, attempt: a.N, start: a.Start, outcome: attemptOutcome(a)}
	if a.End != nil && !a.End.Before(a.Start) {
		sp.end = *a.End
	}
	return sp
}

// attemptOutcome is how attempt a ended, as session show says it: an
// attempt a signal stopped is interrupted, and one that halted for a
// decision halted, not failed; one without an end is still running, or
// its run died.
func attemptOutcome(a checkpoint.Attempt) string {
	switch {
	case a.Outcome == checkpoint.StatusRunning:
		return "no end recorded"
	case a.Outcome == checkpoint.StatusFailed && a.Error == runner.InterruptedError:
		return "interrupted"
	case a.Outcome == checkpoint.StatusFailed && checkpoint.HaltedError(a.Error):
		return statusHalted
	}
	return string(a.Outcome)
}

// printTimeline writes the spans as rows — task, attempt, start (from the
// first start), duration, outcome — and a bar each on one axis from the
// first start to the last end, as wide as lineWidth leaves room for (10 to
// 60 columns).
func printTimeline(w io.Writer, spans []span, lineWidth int, tty bool) {
	if len(spans) == 0 {
		return
	}
	t0, t1 := spans[0].start, spans[0].start
	for _, sp := range spans {
		if sp.start.Before(t0) {
			t0 = sp.start
		}
		if sp.start.After(t1) {
			t1 = sp.start
		}
		if sp.end.After(t1) {
			t1 = sp.end
		}
	}
	total := t1.Sub(t0)
	full, open := "#", "?"
	if tty {
		full, open = "█", "░"
	}
	rows := [][]string{{"TASK", "ATTEMPT", "START", "DURATION", "OUTCOME", ""}}
	for _, sp := range spans {
		dur := "-"
		if !sp.end.IsZero() {
			dur = runner.FormatDuration(sp.end.Sub(sp.start))
		}
		rows = append(rows, []string{sp.task, fmt.Sprint(sp.attempt), "+" + runner.FormatDuration(sp.start.Sub(t0)), dur, sp.outcome, ""})
	}
	// The bars, each row's last cell, take no part in the widths: they
	// are drawn as wide as the other columns leave room for.
	tab := iostreams.NewTable(w)
	for _, r := range rows {
		tab.Row(r...)
	}
	used := 2 + 2 // the indent and the bar's two |
	for _, n := range tab.Widths() {
		used += n + 2
	}
	barWidth := min(max(lineWidth-1-used, 10), 60)
	tab = iostreams.NewTable(w)
	tab.Row(rows[0]...)
	for k, sp := range spans {
		rows[k+1][len(rows[0])-1] = bar(sp, t0, total, barWidth, full, open)
		tab.Row(rows[k+1]...)
	}
	fmt.Fprintf(w, "timeline (from %s, %s in all):\n", t0.UTC().Format(time.RFC3339), runner.FormatDuration(total))
	for _, l := range tab.Lines() {
		fmt.Fprintln(w, strings.TrimRight("  "+l, " "))
	}
}

// bar is sp on a time axis of width columns: spaces before its start, then
// at least one column of full (or open, when no end was recorded: up to the
// end of the axis).
func bar(sp span, t0 time.Time, total time.Duration, width int, full, open string) string {
	col := func(t time.Time) int {
		if total <= 0 {
			return 0
		}
		return int(int64(t.Sub(t0)) * int64(width) / int64(total))
	}
	from := min(col(sp.start), width-1)
	if sp.end.IsZero() {
		return "|" + strings.Repeat(" ", from) + strings.Repeat(open, width-from) + "|"
	}
	to := min(max(col(sp.end), from+1), width)
	if total <= 0 {
		to = width
	}
	return "|" + strings.Repeat(" ", from) + strings.Repeat(full, to-from) + strings.Repeat(" ", width-to) + "|"
}
