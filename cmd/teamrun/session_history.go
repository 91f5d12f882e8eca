package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
	"github.com/teamrun/teamrun/pkg/textdiff"
)

// sessionTask is the named task of sess, or exit 2 with a did-you-mean.
func sessionTask(sess *checkpoint.Session, name string) (*checkpoint.TaskRecord, error) {
	if t, ok := sess.Task(name); ok {
		return t, nil
	}
	names := make([]string, len(sess.Team.Tasks))
	for i, t := range sess.Team.Tasks {
		names[i] = t.Name
	}
	msg := fmt.Sprintf("session %s has no task %s; its tasks: %s", sess.ID, spec.ShownValue(name), strings.Join(names, ", "))
	if m := spec.Closest(name, names); m != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", m)
	}
	return nil, exitf(exitUsage, "%s", msg)
}

// printTaskHistory is the attempts part of `session show ID --task T`;
// store is the --store it was given, for the diff command it prints.
func printTaskHistory(w io.Writer, s *checkpoint.Session, t *checkpoint.TaskRecord, store string, now time.Time, tty bool) {
	fmt.Fprintf(w, "\nattempts of %s (%d):\n", t.Name, t.Attempts)
	switch {
	case len(t.History) == 0 && t.Attempts == 0:
		fmt.Fprintf(w, "none yet (the task is %s)\n", t.Status)
		return
	case len(t.History) == 0:
		fmt.Fprintln(w, "no attempt history (the session was written before teamrun kept one)")
		return
	}
	tw := iostreams.NewTable(w)
	fmt.Fprintln(tw, "ATTEMPT\tSTARTED\tDURATION\tOUTCOME\tRESULT DIGEST\tTOKENS")
	for _, a := range t.History {
		dur, digest, tokens := "-", orDash(a.Digest), "-"
		if a.End != nil && !a.End.Before(a.Start) {
			dur = a.End.Sub(a.Start).Round(time.Millisecond).String()
		}
		if len(digest) > len("sha256:")+16 {
			digest = digest[:len("sha256:")+16]
		}
		if u := runner.AttemptUsage(t.Usage, a.N); runner.HasUsage(u) && t.Usage != nil && len(t.Usage.Calls) > 0 {
			tokens = runner.UsageText(u)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.N, formatWhen(a.Start, now, tty), dur, attemptOutcome(a), digest, tokens)
	}
	tw.Flush()
	if t.Previous != nil {
		fmt.Fprintf(w, "an earlier result is kept: %s\n", shellcmd.Command("session diff", cmdline.Store(store), []string{s.ID, t.Name}, nil))
	}
}

func sessionDiffCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:            "diff",
		HideHelpCommand: true,
		Usage:           "how a task's latest result differs from the one before it (a unified diff)",
		ArgsUsage:       "ID TASK",
		Description: "Compares the task's result with the result it had before it last ran again\n" +
			"(--rerun, --rerun-from, or a changed definition). Exit 0 with no output when they are\n" +
			"byte-identical; exit 2 when the task has no earlier result.\n\n" +
			"Example:\n" +
			"   teamrun session diff nightly-2026-03-01 review",
		Flags:        []cli.Flag{projectFlag(), storeFlagDef()},
		BashComplete: completeSessionTasks(func(*checkpoint.TaskRecord) bool { return true }),
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) != 2 {
				return exitf(exitUsage, "session diff takes a session ID and a TASK (e.g. teamrun session diff ID review)")
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			sess, err := a.load(c, args[0])
			if err != nil {
				return err
			}
			t, err := sessionTask(sess, args[1])
			if err != nil {
				return err
			}
			if t.Status != checkpoint.StatusCompleted {
				return exitf(exitUsage, "task %s of session %s is %s: it has no latest result to compare (%s lists its attempts)", t.Name, sess.ID, t.Status, shellcmd.Command("session show", pasteStore(c), []string{sess.ID}, shellcmd.Flag("--task", t.Name)))
			}
			prev := t.PreviousOutcome()
			if t.Previous == nil && len(completedAttempts(t)) < 2 {
				return exitf(exitUsage, "task %s of session %s has no earlier result to compare with: it completed once (%s runs it again)", t.Name, sess.ID, shellcmd.Command("run", nil, []string{specOr(sess.SpecPath)}, slices.Concat([]string{"--continue"}, shellcmd.Flag("--session", sess.ID), shellcmd.Flag("--rerun", t.Name), pasteStore(c))))
			}
			if t.Blob != nil || prev.Blob != nil {
				// Results stored out of line are not diffed in memory:
				// their digests say whether they differ.
				if !prev.Same(t.Outcome()) {
					fmt.Fprintf(ios.Out, "the results differ: previous %s, latest %s (over %d bytes, a result is stored out of line and not diffed)\n",
						outcomeText(prev), outcomeText(t.Outcome()), checkpoint.BlobThreshold)
				}
				return nil
			}
			fmt.Fprint(ios.Out, ios.Shown(textdiff.Unified(t.Name+" (previous)", t.Name+" (latest)", prev.Text, t.Result, 3)))
			return nil
		}),
	}
}

// completedAttempts lists the attempts of t that completed.
func completedAttempts(t *checkpoint.TaskRecord) []checkpoint.Attempt {
	var out []checkpoint.Attempt
	for _, a := range t.History {
		if a.Outcome == checkpoint.StatusCompleted {
			out = append(out, a)
		}
	}
	return out
}

// outcomeText names a result by its digest and size.
func outcomeText(o checkpoint.Outcome) string {
	if o.Blob != nil {
		return fmt.Sprintf("%s (%s)", o.Blob.Digest, sizeText(o.Blob.Size))
	}
	return fmt.Sprintf("%s (%s)", checkpoint.Digest(o.Text), sizeText(int64(len(o.Text))))
}

// specOr is the spec a printed `teamrun run` names: the session's (from the
// root, so that it is pasteable in any folder), or FILE for a session that
// recorded none.
func specOr(path string) string {
	if path == "" {
		return "FILE"
	}
	return path
}
