package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
)

func sessionLogsCommand(ios *iostreams.IOStreams) *cli.Command {
	attempt := &posIntFlag{}
	return &cli.Command{
		Name:            "logs",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "the stdout and stderr each attempt of a command agent wrote",
		ArgsUsage:       "ID [TASK]",
		Description: fmt.Sprintf("Every attempt's stdout and stderr are kept with the session, the first %d MiB of\n"+
			"each stream (a log cut there says so on its last line), and removed with it. Without\n"+
			"TASK, every task's attempts in file order; --attempt N only that attempt.\n\n"+
			"Examples:\n"+
			"   teamrun session logs nightly-2026-03-01\n"+
			"   teamrun session logs nightly-2026-03-01 fetch --attempt 2", runner.LogCap>>20),
		Flags: []cli.Flag{projectFlag(), storeFlagDef(),
			&cli.GenericFlag{Name: "attempt", Value: attempt, Usage: "only attempt `N` (1, 2, … as run counts them)", DefaultText: "all"},
		},
		BashComplete: completeSessionTasks(func(*checkpoint.TaskRecord) bool { return true }),
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return exitf(exitUsage, "session logs needs ID and at most one TASK (e.g. teamrun session logs ID fetch)")
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			sess, err := a.load(c, args[0])
			if err != nil {
				return err
			}
			tasks := sess.Team.Tasks
			if len(args) == 2 {
				t, err := sessionTask(sess, args[1])
				if err != nil {
					return err
				}
				tasks = []checkpoint.TaskRecord{*t}
				where := cmdline.Where{Store: storeFlag(c), Project: filepath.Dir(sess.SpecPath)}
				switch {
				case t.Attempts == 0 && attempt.n != 0:
					return exitf(exitUsage, "%s: there is no attempt %d", noAttempts(sess, t, where), attempt.n)
				case t.Attempts == 0:
					// Not "no attempts have run in session ID": others may have.
					fmt.Fprintln(c.App.Writer, noAttempts(sess, t, where))
					return nil
				case attempt.n > t.Attempts:
					return exitf(exitUsage, "task %s of session %s has run %s; there is no attempt %d", t.Name, sess.ID, countOf(t.Attempts, "attempt"), attempt.n)
				}
			}
			logs, ok := a.store.(logReader)
			if !ok {
				return exitf(exitUsage, "session logs: %s keeps no task output", a.store.Location())
			}
			return printLogs(c.Context, ios, logs, sess.ID, tasks, attempt.n)
		}),
	}
}

// noAttempts says why task t of sess has no attempt to show: a human task
// never runs one, and has a decision instead (or waits for one, recorded
// by the command it names: w is the session's store and project, its
// spec's folder, as for the run's); another has not run yet.
func noAttempts(sess *checkpoint.Session, t *checkpoint.TaskRecord, w cmdline.Where) string {
	if t.Agent != spec.HumanAgent {
		return fmt.Sprintf("task %s of session %s has run no attempt (it is %s)", t.Name, sess.ID, t.Status)
	}
	decision := "no decision is recorded yet: " + cmdline.Decide(w, sess.ID, t.Name, "")
	if v, ok := sess.Checkpoint.Decisions[t.Name]; ok {
		decision = "its decision: " + resultPreview(v, 40)
	} else if t.Status == checkpoint.StatusCompleted {
		decision = "it completed with " + resultPreview(t.Result, 40)
	}
	return fmt.Sprintf("task %s of session %s is a human task: it runs no attempts and has no output (%s)", t.Name, sess.ID, decision)
}

// logReader is a store that keeps the attempts' output (the file store,
// PostgreSQL).
type logReader interface {
	// ReadLog is one stream of an attempt; an error wrapping
	// fs.ErrNotExist when none was kept.
	ReadLog(ctx context.Context, id, task string, attempt int, stream string) ([]byte, error)
}

// printLogs writes the kept output of the tasks' attempts (only attempt
// only, when it is not 0), each stream under a header naming it.
//
// On a terminal a log's control characters are escaped, as a run's
// results are (iostreams' Shown): a command's output may hold sequences
// that clear the screen or write the clipboard.
func printLogs(ctx context.Context, ios *iostreams.IOStreams, logs logReader, id string, tasks []checkpoint.TaskRecord, only int) error {
	w := ios.Out
	shown := 0
	for _, t := range tasks {
		for n := 1; n <= t.Attempts; n++ {
			if only != 0 && n != only {
				continue
			}
			shown++
			any := false
			for _, stream := range []string{"stdout", "stderr"} {
				data, err := logs.ReadLog(ctx, id, t.Name, n, stream)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return storeExit(fmt.Errorf("session logs: %w", err))
				}
				any = true
				fmt.Fprintf(w, "── %s, attempt %d: %s ──\n", t.Name, n, stream)
				io.WriteString(w, ios.Shown(string(data)))
				if len(data) > 0 && data[len(data)-1] != '\n' {
					fmt.Fprintln(w)
				}
			}
			if !any {
				fmt.Fprintf(w, "── %s, attempt %d: no output kept ──\n", t.Name, n)
			}
		}
	}
	if shown == 0 {
		fmt.Fprintf(w, "no attempts have run in session %s\n", id)
	}
	return nil
}

// removeLocal removes what a deleted session kept on this machine outside
// its store (its logs go with the session): the scratch of its runs.
func removeLocal(c *cli.Context, store checkpoint.Backend, id string) {
	if err := runner.RemoveScratch(store, id); err != nil {
		adminWarnf(c, "session %s was removed, but not its scratch on this machine: %v", id, err)
	}
}
