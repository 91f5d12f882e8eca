package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/plan"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
)

func planCommand() *cli.Command {
	vars := &varsFlag{}
	return &cli.Command{
		Name:            "plan",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "say, per task, what `run --continue` would do now — restore, run or skip — and why",
		ArgsUsage:       "FILE",
		Description: "Applies the resume rules to the session `run FILE --continue` would pick (or --session)\n" +
			"and explains each task: fingerprint match; which task and field changed; added or\n" +
			"removed tasks; downstream of a changed task; failed or interrupted last time; a pending\n" +
			"decision. It writes nothing and takes no lock (only a missing active session is audited).\n\n" +
			"Examples:\n" +
			"   teamrun plan agents.yaml\n" +
			"   teamrun plan agents.yaml --session nightly-2026-03-01 --reuse unchanged --json\n" +
			"   teamrun plan agents.yaml --rerun review",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "the session `ID` (default: the project's active session)"},
			&cli.StringFlag{Name: "reuse", Value: "strict", Usage: "as for run: `MODE` strict or unchanged"},
			&cli.GenericFlag{Name: "var", Usage: "set `KEY=VALUE` as run would (repeatable)", Value: vars},
			storeFlagDef(),
			jsonFlag("the plan"),
		}, rerunFlags("as with run --continue: ")...),
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) != 1 {
				return exitf(exitUsage, "plan needs exactly one FILE (e.g. teamrun plan agents.yaml)")
			}
			path := args[0]
			// Before the store's prefetch reads the project's state.
			dir, err := spec.ProjectDir(path)
			if err != nil {
				return withCode(exitUsage, err)
			}
			ch, err := choiceFlags(c)
			if err != nil {
				return err
			}
			loadingGC(path)
			// As run does: the session is decoded while the spec is
			// parsed; a store error waits until the spec is known good.
			store, storeErr := openStore(c)
			if storeErr == nil {
				defer store.Close()
				runner.PrefetchSession(c.Context, store, path, c.String("session"))
			}
			team, err := spec.Load(path)
			if err != nil {
				if !isSpecErrorList(err) {
					return withCode(exitUsage, err) // such as "cannot read FILE: ...", said once
				}
				printSpecError(c.App.ErrWriter, err, nil)
				return exitf(exitUsage, "%s is invalid", path)
			}
			if err := ch.Check(team.TaskNames); err != nil {
				return exitf(exitUsage, "%s: %v", path, err)
			}
			specAbs, err := filepath.Abs(path)
			if err != nil {
				return exitf(exitUsage, "%s: %v", path, err)
			}
			config := spec.ConfigPath(dir)
			_, cerr := team.ApplyProjectConfig(config)
			printSpecWarnings(c.App.ErrWriter, team) // after the config: its prices may settle one
			if cerr != nil {
				return withCode(exitUsage, cerr)
			}
			// What run would refuse, plan refuses: it would run nothing.
			if problems := specProblems(path, team, config); len(problems) > 0 {
				fmt.Fprintln(c.App.ErrWriter, strings.Join(problems, "\n"))
				return exitf(exitUsage, "%s is invalid", path)
			}
			inputWarns := append(keyWarnings(path, team), runner.VarWarnings(team, vars.vals, vars.order)...)
			for _, w := range inputWarns {
				fmt.Fprintln(c.App.ErrWriter, runner.WarningLine(w))
			}
			if storeErr != nil {
				return storeErr
			}
			sess, notes, warnings, err := planSession(c, store, team, specAbs)
			if err != nil {
				return err
			}
			// As run does: the texts are rendered from the state the
			// session started from, with this invocation's --var over it.
			set, err := runner.TaskSetOf(team, sess, vars.vals)
			if err != nil {
				return withCode(exitUsage, err)
			}
			printPlaceholderWarnings(c.App.ErrWriter, team, set.State)
			team = set.Team
			where := cmdline.Where{Store: storeFlag(c), Project: dir}
			ch.FingerprintBefore = set.FingerprintBefore
			p := plan.Make(team, set.Defs, set.Fingerprint, sess, ch, where)
			p.Spec, p.Notes = path, notes
			if team.Budget != nil {
				decide := ""
				if sess != nil {
					decide = cmdline.Decide(where, sess.ID, runner.BudgetDecision, "raise=N")
				}
				p.NoteBudget(team, func(task string) string { return set.BudgetHaltsBefore(sess, task) }, decide)
			}
			p.Warnings = append(p.Warnings, set.Warnings...)
			// The plan's own warnings go to stderr as every warning does;
			// the session's were printed when they were found.
			for _, w := range p.Warnings {
				fmt.Fprintln(c.App.ErrWriter, runner.WarningLine(w))
			}
			p.Warnings = append(append(warnings, inputWarns...), p.Warnings...)
			if c.Bool("json") {
				return writeJSON(c.App.Writer, p)
			}
			printPlan(c.App.Writer, p)
			return nil
		}),
	}
}

// planSession finds the session run --continue would use: the same
// resolution as run's. It writes nothing, not even what run would audit.
func planSession(c *cli.Context, store checkpoint.Backend, team *spec.Team, specAbs string) (sess *checkpoint.Session, notes, warnings []string, err error) {
	project := store.Project(filepath.Dir(specAbs))
	res, err := runner.PlanSession(c.Context, store, project, specAbs, team.Name, c.String("session"))
	if err != nil {
		if runner.IsUsage(err) {
			return nil, nil, nil, withCode(exitUsage, err)
		}
		return nil, nil, nil, storeExit(err)
	}
	warnings = slices.Clone(res.Notes)
	if n := len(warnings); n > 0 {
		switch {
		case res.Fallback:
			// The id a run would make is its own, made then.
			warnings[n-1] += ": run --continue would start a new session"
		case res.Lost != nil:
			warnings[n-1] += fmt.Sprintf(": run --continue --session %s would start it again in this store, every task with it", res.ID)
		}
	}
	for _, n := range warnings {
		adminWarnf(c, "%s", n)
	}
	notIn := func() string {
		return fmt.Sprintf("session %s is not in %s: run --continue %s would start it", res.ID, store.Location(), strings.Join(shellcmd.Flag("--session", res.ID), " "))
	}
	switch {
	case !res.Exists && c.String("session") != "":
		return nil, []string{notIn()}, warnings, nil
	case res.Pending:
		return nil, []string{fmt.Sprintf("session %s, the project's active session, is being started by a run and is not in %s yet: run --continue would wait for it (--wait) or exit 4", res.ID, store.Location())}, warnings, nil
	case !res.Exists:
		// Nothing of the store was read yet: one that cannot be (a
		// TEAMRUN_HOME that is a file) is exit 5 here, as run --continue's
		// start of res.ID there would be.
		if _, err := store.Exists(c.Context, res.ID); err != nil {
			return nil, nil, nil, storeExit(err)
		}
		return nil, []string{"no active session: run --continue would start a new one"}, warnings, nil
	case res.Active:
		notes = append(notes, fmt.Sprintf("session %s is the project's active session", res.ID))
	}
	sess, err = store.Load(c.Context, res.ID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, append(notes, notIn()), warnings, nil
	}
	if err != nil {
		return nil, nil, nil, storeExit(err)
	}
	if err := runner.ReadBlobs(c.Context, store, team, sess); err != nil {
		return nil, nil, nil, storeExit(err)
	}
	// What run --continue would do now: wait, or exit 4. The plan is of
	// the session as that run last saved it.
	if held, err := store.Held(c.Context, res.ID); err != nil {
		adminWarnf(c, "%v", err)
	} else if held != nil {
		notes = append(notes, heldBy(held)+": run --continue would exit 4 now (or wait for it with --wait); this plan is of the session as that run last saved it")
	}
	if sess.SpecPath != "" && !checkpoint.SameSpec(project, sess.SpecPath, specAbs) {
		// Two specs in one folder share the active session: say that run
		// --continue would carry the other spec's session over to this one.
		w := fmt.Sprintf("session %s was saved for %s, not %s: run --continue would resume it with this file's tasks (pass --session ID to pick another session)", sess.ID, sess.SpecPath, specAbs)
		adminWarnf(c, "%s", w)
		warnings = append(warnings, w)
	}
	return sess, notes, warnings, nil
}

func printPlan(out io.Writer, p *plan.Plan) {
	// One write for the whole plan, not one per line (text/tabwriter,
	// used before, wrote each cell and its padding on its own: 6,000
	// writes for 1,000 tasks, a third of the command's time).
	w := bufio.NewWriterSize(out, 64<<10)
	defer w.Flush()
	fmt.Fprintf(w, "plan for %s (fingerprint %s)\n", p.Spec, p.Fingerprint)
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	switch p.Restore {
	case "none":
		fmt.Fprintln(w, "restore: none (no session): every task runs")
	case "full":
		fmt.Fprintf(w, "restore: full (session %s has the same fingerprint)\n", p.Session)
	case "partial":
		fmt.Fprintf(w, "restore: shared state only (session %s has fingerprint %s; --reuse strict)\n", p.Session, orDash(p.SessionFingerprint))
	case "per-task":
		fmt.Fprintf(w, "restore: unchanged tasks only (session %s has fingerprint %s; --reuse unchanged)\n", p.Session, orDash(p.SessionFingerprint))
	}
	if len(p.Changes) > 0 {
		fmt.Fprintln(w, "changes since the checkpoint:")
		for _, ch := range p.Changes {
			fmt.Fprintf(w, "  %s\n", ch)
		}
	}
	fmt.Fprintln(w)
	tw := iostreams.NewTable(w)
	tw.Row("TASK", "ACTION", "WHY")
	for _, s := range p.Steps {
		// Cells, not a formatted line the table splits again: a task
		// name holds no tab or newline (spec.nameRE), a reason none.
		tw.Row(s.Task, string(s.Action), s.Reason)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d to restore, %d to run, %d to skip\n", p.Count(plan.Restore), p.Count(plan.Run), p.Count(plan.Skip))
}
