package main

import (
	"fmt"
	"io"
	"strings"

	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// taskToolsJSON is `session show ID --task T --json`: the task's record and
// its tool loop as the journal folded it.
type taskToolsJSON struct {
	Task  checkpoint.TaskRecord `json:"task"`
	Tools *checkpoint.ToolLog   `json:"tool_loop"`
}

// showTask prints one task of a session with its tool calls: turn, tool,
// arguments, duration, result size, and how often a resumed run replayed
// the recorded result instead of running the call. t is one of s's tasks
// (sessionTask).
func showTask(w io.Writer, s *checkpoint.Session, t *checkpoint.TaskRecord, asJSON bool) error {
	lg := s.ToolLogs[t.Name]
	if asJSON {
		return writeJSON(w, taskToolsJSON{Task: *t, Tools: lg})
	}
	kv := iostreams.NewTable(w)
	fmt.Fprintf(kv, "task\t%s\n", t.Name)
	fmt.Fprintf(kv, "agent\t%s\n", t.Agent)
	fmt.Fprintf(kv, "status\t%s (attempts: %d)\n", shownStatus(*t), t.Attempts)
	if lg == nil {
		fmt.Fprintf(kv, "tool calls\tnone\n")
		return kv.Flush()
	}
	n := 0
	for _, tr := range lg.Turns {
		n += len(tr.Calls)
	}
	state := "open: a --continue resumes it"
	if lg.Ended != "" {
		state = "ended: " + lg.Ended
	}
	fmt.Fprintf(kv, "tool loop\t%d turns with %d calls (attempt %d), %s; resumed %d times\n", len(lg.Turns), n, lg.Attempt, state, lg.Resumes)
	if err := kv.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw := iostreams.NewTable(w)
	fmt.Fprintln(tw, "TURN\tTOOL\tARGUMENTS\tDURATION\tRESULT\tREPLAYED")
	for _, tr := range lg.Turns {
		for _, c := range tr.Calls {
			dur, res := "-", "-"
			switch {
			case c.Done:
				dur = time.Duration(c.Millis * int64(time.Millisecond)).String()
				res = fmt.Sprintf("%d bytes", len(c.Result))
				if c.IsError {
					res += " (error)"
				}
			case c.Pending():
				res = "unknown: started, no result recorded"
			default:
				res = "not run"
			}
			if c.Decision != "" {
				res += ", decided " + c.Decision
			}
			replayed := "no"
			if c.Replays > 0 {
				replayed = fmt.Sprintf("yes (%d)", c.Replays)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", tr.Turn, c.Tool, argsPreview(c.Arguments, 48), dur, res, replayed)
		}
	}
	return tw.Flush()
}

// argsPreview is a call's arguments on one line, cut to n characters.
func argsPreview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}
