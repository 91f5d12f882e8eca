package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
)

func sessionCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "session",
		Usage: "list, show, delete and prune sessions; record human decisions; show task output",
		Description: "Sessions live in the store: --store URL, else $TEAMRUN_STORE, else $TEAMRUN_HOME (default\n" +
			"~/.teamrun); a folder keeps them in its sessions/ folder. The project — the current folder, or --project DIR — supplies the\n" +
			"active session and the audit log (.teamrun/state.json and audit.log, or the database's\n" +
			"with a PostgreSQL store) and config.yml.\n\n" +
			"Examples:\n" +
			"   teamrun session list\n" +
			"   teamrun session show nightly-2026-03-01\n" +
			"   teamrun session prune --older-than 7d --dry-run",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowSubcommandHelp(c)
			}
			return unknownSessionCommand(c, c.Args().First())
		},
		Subcommands: []*cli.Command{
			sessionListCommand(ios),
			sessionShowCommand(ios),
			sessionDeleteCommand(),
			sessionPruneCommand(ios),
			sessionDecideCommand(),
			sessionLogsCommand(ios),
			sessionExportCommand(),
			sessionImportCommand(),
			sessionDiffCommand(ios),
		},
	}
}

// admin is what every session subcommand works on.
type admin struct {
	store   checkpoint.Backend
	project checkpoint.ProjectState
	dir     string // the project folder
}

func openAdmin(c *cli.Context) (*admin, error) {
	dir, err := projectDir(c)
	if err != nil {
		return nil, err
	}
	store, err := openStore(c)
	if err != nil {
		return nil, err
	}
	return &admin{store: store, project: store.Project(dir), dir: dir}, nil
}

// openStore opens the store the command names (DESIGN §5); failing that is
// exit 5, a malformed location exit 2.
func openStore(c *cli.Context) (checkpoint.Backend, error) {
	store, err := runner.OpenStore(c.Context, storeFlag(c), os.LookupEnv)
	if err != nil {
		return nil, storeExit(err)
	}
	return store, nil
}

// storeFlag is --store where the command has it.
func storeFlag(c *cli.Context) string {
	for _, cc := range c.Lineage() {
		if cc.IsSet("store") {
			return cc.String("store")
		}
	}
	return ""
}

// pasteStore is the --store words of the commands c prints for the user
// to paste (cmdline.Store): the store c was given, so that they reach it.
func pasteStore(c *cli.Context) []string { return cmdline.Store(storeFlag(c)) }

// storeExit gives a checkpoint error its exit code (DESIGN §3).
func storeExit(err error) error {
	var held *checkpoint.HeldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &held):
		return withCode(exitLocked, errors.New(heldMessage(held)))
	case errors.Is(err, checkpoint.ErrLocked):
		return withCode(exitLocked, err)
	case errors.Is(err, checkpoint.ErrBadID), errors.Is(err, checkpoint.ErrBadLocation):
		return withCode(exitUsage, err)
	case errors.Is(err, checkpoint.ErrStore):
		return withCode(exitStore, err)
	}
	return withCode(exitStore, err)
}

func heldMessage(h *checkpoint.HeldError) string {
	return heldBy(h) + ": try again when it has finished"
}

// heldBy says which run holds session h.ID, as far as the lock tells.
func heldBy(h *checkpoint.HeldError) string {
	if h.PID > 0 {
		return fmt.Sprintf("session %s is held by a run (pid %d on %s, started %s)",
			h.ID, h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("session %s is held by a run", h.ID)
}

// load reads a session for show and decide. A session the audit log knows
// but this store lacks is exit 5, naming both; an unknown one is exit 2.
func (a *admin) load(c *cli.Context, id string) (*checkpoint.Session, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, withCode(exitUsage, err)
	}
	sess, err := a.store.Load(c.Context, id)
	if err == nil {
		return sess, nil
	}
	if !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, storeExit(err)
	}
	return nil, a.notFound(c, id)
}

func (a *admin) notFound(c *cli.Context, id string) error {
	m, err := checkpoint.FindMissing(c.Context, a.store, a.project, id)
	if err != nil {
		return storeExit(err)
	}
	if m.Damage != nil {
		adminWarnf(c, "%v", m.Damage)
	}
	if m.Audited {
		return exitf(exitStore, "%s", m.Note("session "+id+" is"))
	}
	return exitf(exitUsage, "no session %s in %s (`%s` shows them)", id, a.store.Location(), shellcmd.Command("session list", nil, nil, pasteStore(c)))
}

func adminWarnf(c *cli.Context, format string, args ...any) {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = explainedText(c, err)
		}
	}
	fmt.Fprintln(c.App.ErrWriter, runner.WarningLine(fmt.Sprintf(format, args...)))
}

func oneArg(args []string, what, example string) (string, error) {
	if len(args) != 1 {
		return "", exitf(exitUsage, "%s needs exactly one session ID (e.g. %s)", what, example)
	}
	return args[0], nil
}

// completeSessions offers the store's session ids to shell completion.
func completeSessions(c *cli.Context) {
	if c.NArg() > 0 {
		return
	}
	for _, id := range sessionIDs(c) {
		fmt.Fprintln(c.App.Writer, id)
	}
}

// completeSessionTasks offers the store's session ids, then, after one,
// the names of that session's tasks that keep accepts.
func completeSessionTasks(keep func(*checkpoint.TaskRecord) bool) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		if c.NArg() == 0 {
			completeSessions(c)
			return
		}
		if c.NArg() != 1 {
			return
		}
		for _, name := range sessionTasks(c, c.Args().First(), keep) {
			fmt.Fprintln(c.App.Writer, name)
		}
	}
}

// sessionTasks are the names of session id's tasks that keep accepts, for
// shell completion; nothing when the session cannot be read (a completion
// never prints an error).
func sessionTasks(c *cli.Context, id string, keep func(*checkpoint.TaskRecord) bool) []string {
	store, err := openStore(c)
	if err != nil {
		return nil
	}
	defer store.Close()
	sess, err := store.Load(c.Context, id)
	if err != nil {
		return nil
	}
	var names []string
	for i := range sess.Team.Tasks {
		if t := &sess.Team.Tasks[i]; keep(t) {
			names = append(names, t.Name)
		}
	}
	return names
}

// ---- list

type listJSON struct {
	Store    string              `json:"store"`
	Project  string              `json:"project"`
	Active   string              `json:"active,omitempty"`
	Sessions []listEntry         `json:"sessions"`
	Missing  []checkpoint.Absent `json:"missing"`
}

type listEntry struct {
	ID         string    `json:"id"`
	Spec       string    `json:"spec"`
	Team       string    `json:"team,omitempty"`
	TasksDone  int       `json:"tasks_done"`
	TasksTotal int       `json:"tasks_total"`
	Status     string    `json:"status"` // done, partial, failed, halted, running, interrupted, corrupt
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	Active     bool      `json:"active"`
	Error      string    `json:"error,omitempty"`
	err        error     // what Error says
}

func sessionListCommand(ios *iostreams.IOStreams) *cli.Command {
	limit := &posIntFlag{}
	return &cli.Command{
		Name:            "list",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "every session in the store, newest first; the project's active one marked with *",
		Description: "Columns: id, status, tasks done/total, last update (relative on a terminal, RFC 3339\n" +
			"otherwise), spec. STATUS is done, partial (finished; routing skipped some tasks),\n" +
			"failed, halted (waiting for a decision), running (a run holds it), interrupted\n" +
			"(stopped before the end: Ctrl-C, kill -9, a crash), corrupt (its file cannot be decoded)\n" +
			"or unreadable (it cannot be read: permissions, a special file, the server). Below them, sessions\n" +
			"this project's audit log names that have no file in this store, \"missing from\n" +
			"<store>\" (made under another TEAMRUN_HOME).\n\n" +
			"Examples:\n" +
			"   teamrun session list --status failed,interrupted\n" +
			"   teamrun session list --spec agents.yaml --limit 5\n" +
			"   TEAMRUN_HOME=/srv/teamrun teamrun session list --project /srv/nightly --json",
		Flags: []cli.Flag{projectFlag(), storeFlagDef(), jsonFlag("the list"),
			&cli.StringFlag{Name: "spec", Usage: "only the sessions of the spec `FILE`"},
			&cli.StringFlag{Name: "status", Usage: "only sessions with this `STATUS` (several: comma-separated)"},
			&cli.GenericFlag{Name: "limit", Value: limit, Usage: "at most `N` sessions, the newest", DefaultText: "all"},
		},
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) > 0 {
				return exitf(exitUsage, "session list takes no arguments")
			}
			var want map[string]bool
			if c.IsSet("status") {
				var err error
				if want, err = parseStatuses(c.String("status")); err != nil {
					return withCode(exitUsage, err)
				}
			}
			specAbs := ""
			if c.IsSet("spec") {
				abs, err := filepath.Abs(c.String("spec"))
				if err != nil {
					return exitf(exitUsage, "--spec: %v", err)
				}
				specAbs = abs
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			entries, err := a.store.List(c.Context)
			if err != nil {
				return storeExit(err)
			}
			active, err := a.project.Active(c.Context)
			if err != nil {
				adminWarnf(c, "%v", err)
			}
			recs, err := a.project.AuditRecords(c.Context)
			if err != nil {
				adminWarnf(c, "%v", err)
			}
			have := make(map[string]bool, len(entries))
			for _, e := range entries {
				have[e.ID] = true
			}
			missing, err := checkpoint.AbsentSessions(c.Context, a.store, recs, have)
			if err != nil {
				return storeExit(err)
			}
			out := listJSON{Store: a.store.Location(), Project: a.dir, Active: active, Sessions: make([]listEntry, 0, len(entries)), Missing: missing}
			if out.Missing == nil || want != nil || specAbs != "" {
				out.Missing = []checkpoint.Absent{} // they have neither a status nor a spec to filter on
			}
			for _, e := range entries {
				if specAbs != "" && !checkpoint.SamePath(e.SpecPath, specAbs) {
					continue
				}
				le := listEntry{ID: e.ID, Spec: e.SpecPath, Team: e.TeamName, TasksDone: e.Done, TasksTotal: e.Total,
					Created: e.CreatedAt, Updated: e.Touched, Active: e.ID == active}
				if e.Err != nil {
					le.Error, le.err = e.Err.Error(), e.Err
				}
				out.Sessions = append(out.Sessions, le)
			}
			out.Sessions = newestFirst(c.Context, a.store, out.Sessions, want, limit.n)
			for i, e := range out.Sessions {
				if e.err != nil {
					out.Sessions[i].Error = explainedText(c, e.err)
				}
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, out)
			}
			// An empty list says what it was filtered on: no sessions of
			// that spec is not no sessions at all.
			var filter []string
			if specAbs != "" {
				filter = append(filter, "of "+c.String("spec"))
			}
			if want != nil {
				var typed []string
				for _, st := range strings.Split(c.String("status"), ",") {
					if st = strings.TrimSpace(st); !slices.Contains(typed, st) {
						typed = append(typed, st)
					}
				}
				filter = append(filter, "with status "+orList(typed))
			}
			return printList(c.App.Writer, out, strings.Join(filter, " "), time.Now(), ios.IsTerminal())
		}),
	}
}

// newestFirst sorts the sessions by last update, newest first (ties by id),
// gives them their status and keeps those with a wanted status (nil: all),
// at most limit of them (0: all). Without --status only the sessions shown
// are loaded for their status.
func newestFirst(ctx context.Context, store checkpoint.Backend, list []listEntry, want map[string]bool, limit int) []listEntry {
	slices.SortStableFunc(list, func(a, b listEntry) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if want == nil && limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	statusOf(ctx, store, list)
	if want != nil {
		list = slices.DeleteFunc(list, func(e listEntry) bool { return !want[e.Status] })
	}
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	return list
}

// brokenCell is a session that cannot be read, in one short cell: its
// status (corrupt, unreadable) and the reason on one line, cut.
func brokenCell(status, reason string) string {
	// The store's message names the file and what to do at length; the
	// cell keeps what is wrong.
	if _, after, ok := strings.Cut(reason, " is corrupt: "); ok {
		reason = after
	}
	if before, _, ok := strings.Cut(reason, "; "); ok {
		reason = before
	}
	return "(" + status + ": " + resultCut(oneLineText(reason), 60) + ")"
}

// missingCell is what the row of session m, missing from store, says.
func missingCell(store string, m checkpoint.Absent) string {
	return fmt.Sprintf("missing from %s (%s)", store, m.Describe())
}

// printList prints the list; filter is what it was filtered on ("of
// a.yaml with status failed"), for the line that says it is empty.
func printList(w io.Writer, l listJSON, filter string, now time.Time, tty bool) error {
	if len(l.Sessions) == 0 {
		if filter != "" {
			filter += " "
		}
		fmt.Fprintf(w, "no sessions %sin %s\n", filter, l.Store)
	} else {
		// A corrupt session's row is its id and one cell, its last: it
		// neither widens the columns of the others nor breaks them up.
		tab := iostreams.NewTable(w)
		tab.Row("  ID", "STATUS", "TASKS", "UPDATED", "SPEC")
		for _, s := range l.Sessions {
			id := "  " + s.ID
			if s.Active {
				id = "* " + s.ID
			}
			if s.Error != "" {
				reason := s.Error
				var se *checkpoint.StoreError
				if errors.As(s.err, &se) {
					reason = se.Err.Error() // the row names the session: not its path again
				}
				tab.Row(id, brokenCell(s.Status, reason))
				continue
			}
			tab.Row(id, s.Status, fmt.Sprintf("%d/%d", s.TasksDone, s.TasksTotal), formatWhen(s.Updated, now, tty), s.Spec)
		}
		// A missing session's row is as a corrupt one's: its id in the
		// ID column, then one cell.
		for _, m := range l.Missing {
			tab.Row("! "+m.ID, missingCell(l.Store, m))
		}
		return tab.Flush()
	}
	for _, m := range l.Missing {
		fmt.Fprintf(w, "! %s  %s\n", m.ID, missingCell(l.Store, m))
	}
	return nil
}

// ---- show

func sessionShowCommand(ios *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:            "show",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "a session's checkpoint, fingerprint and tasks",
		ArgsUsage:       "[ID]",
		Description: "Without ID, the project's active session. Shows the checkpoint (current task,\n" +
			"decisions, memory summary, timestamp), the fingerprint, and every task with its status,\n" +
			"attempts, duration and the start of its result. --json prints the whole session file;\n" +
			"--task TASK lists that task's attempts instead (`session diff ID TASK` compares results).\n" +
			"A session the audit log knows but this store lacks is exit 5, naming both stores.\n\n" +
			"Examples:\n" +
			"   teamrun session show\n" +
			"   teamrun session show release-notes-20260301-101500-ab12 --json\n" +
			"   teamrun session show release-notes-20260301-101500-ab12 --task draft",
		Flags: []cli.Flag{projectFlag(), storeFlagDef(), jsonFlag("the whole session"),
			&cli.StringFlag{Name: "task", Usage: "show one `TASK`: its tool calls (turn, tool, arguments, duration, result size, replayed on a resume) and its attempts (start, duration, outcome, result digest, tokens)"}},
		BashComplete: completeSessions,
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) > 1 {
				return exitf(exitUsage, "session show takes at most one session ID")
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				// An empty id is a bad id (DESIGN §5), as run's --session '' is,
				// not "show the active one".
				if id = args[0]; id == "" {
					return withCode(exitUsage, checkpoint.ValidateID(id))
				}
			}
			if id == "" {
				// It only looks: the audit record is a run's (DESIGN §5).
				res, err := checkpoint.FindActive(c.Context, a.store, a.project, "")
				if err != nil {
					return storeExit(err)
				}
				for _, n := range res.Notes {
					adminWarnf(c, "%s", n)
				}
				if res.ID == "" {
					if res.Missing {
						return a.notFound(c, res.Named)
					}
					return exitf(exitUsage, "this project (%s) has no active session: name one, e.g. %s (`%s` shows them)", a.dir,
						shellcmd.Command("session show", nil, []string{"ID"}, pasteStore(c)), shellcmd.Command("session list", nil, nil, pasteStore(c)))
				}
				id = res.ID
			}
			sess, err := a.load(c, id)
			if err != nil {
				return err
			}
			if task := c.String("task"); c.IsSet("task") {
				t, err := sessionTask(sess, task)
				if err != nil {
					return err
				}
				if err := showTask(c.App.Writer, sess, t, c.Bool("json")); err != nil || c.Bool("json") {
					return err
				}
				printTaskHistory(c.App.Writer, sess, t, storeFlag(c), time.Now(), ios.IsTerminal())
				return nil
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, sess)
			}
			previews, err := blobPreviews(c.Context, a.store, sess)
			if err != nil {
				return storeExit(err)
			}
			held, err := a.store.Held(c.Context, id)
			if err != nil {
				adminWarnf(c, "%v", err)
			}
			active, _ := a.project.Active(c.Context)
			printSession(c.App.Writer, sess, held, previews, id == active, time.Now(), ios.IsTerminal(), ios.Width())
			return nil
		}),
	}
}

func printSession(w io.Writer, s *checkpoint.Session, held *checkpoint.HeldError, previews map[string]string, active bool, now time.Time, tty bool, width int) {
	kv := iostreams.NewTable(w)
	id := s.ID
	if active {
		id += " (active)"
	}
	fmt.Fprintf(kv, "session\t%s\n", id)
	fmt.Fprintf(kv, "spec\t%s\n", s.SpecPath)
	fmt.Fprintf(kv, "created\t%s\n", formatWhen(s.CreatedAt, now, tty))
	fmt.Fprintf(kv, "updated\t%s\n", formatWhen(s.UpdatedAt, now, tty))
	fmt.Fprintf(kv, "fingerprint\t%s\n", orDash(s.Team.TasksFingerprint))
	fmt.Fprintf(kv, "process\t%s\n", orDash(s.Team.Process))
	fmt.Fprintf(kv, "tasks\t%d/%d done\n", s.Summary.Done, s.Summary.Total)
	used := s.Usage()
	if runner.HasUsage(used) {
		fmt.Fprintf(kv, "tokens\t%s\n", runner.UsageText(used))
	}
	if held != nil {
		fmt.Fprintf(kv, "held by\tpid %d on %s since %s\n", held.PID, held.Host, formatWhen(held.Started, now, tty))
	}
	cp := s.Checkpoint
	fmt.Fprintf(kv, "checkpoint\t%s\n", formatWhen(cp.Timestamp, now, tty))
	fmt.Fprintf(kv, "  current task\t%s\n", orDash(cp.CurrentTask))
	fmt.Fprintf(kv, "  decisions\t%s\n", joinMap(cp.Decisions, func(v string) string { return fmt.Sprintf("%q", v) }))
	fmt.Fprintf(kv, "  memory\t%s\n", joinMap(cp.MemorySummary, func(n int) string { return countOf(n, "message") }))
	kv.Flush()

	fmt.Fprintln(w)
	tw := iostreams.NewTable(w)
	// The TOKENS column only for sessions that used an LLM.
	tokens := runner.HasUsage(used)
	if tokens {
		fmt.Fprintln(tw, "TASK\tAGENT\tSTATUS\tATTEMPTS\tDURATION\tTOKENS\tRESULT")
	} else {
		fmt.Fprintln(tw, "TASK\tAGENT\tSTATUS\tATTEMPTS\tDURATION\tRESULT")
	}
	kept := s.KeptRecords()
	for _, t := range s.Team.Tasks {
		result, status := t.Result, shownStatus(t)
		if t.Status == checkpoint.StatusRunning && held == nil {
			// Recorded as running, and no run holds the session: its run
			// died (kill -9, a crash), as the session's status says.
			status = statusInterrupted
		}
		if kept[t.Name] {
			status = statusKept
		}
		switch {
		case status == statusHalted:
			result = t.Error // what it waits for
		case t.Status == checkpoint.StatusFailed && t.Error != "":
			result = "error: " + t.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t", t.Name, t.Agent, status, t.Attempts, taskDuration(t))
		if tokens {
			u := "-"
			if runner.HasUsage(t.Usage) {
				u = runner.UsageText(t.Usage)
			}
			fmt.Fprintf(tw, "%s\t", u)
		}
		if p, ok := previews[t.Name]; ok && t.Status == checkpoint.StatusCompleted {
			fmt.Fprintf(tw, "%s\n", p)
			continue
		}
		fmt.Fprintf(tw, "%s\n", resultPreview(result, 60))
	}
	tw.Flush()
	if len(kept) > 0 {
		fmt.Fprintf(w, "%s: a record kept for an instance of a foreach that waits for its producer; not a task of this run until the producer finishes, then restored if its item is the recorded one\n", statusKept)
	}
	if spans := spansOf(s); len(spans) > 0 {
		fmt.Fprintln(w)
		printTimeline(w, spans, width, tty)
	}
}

// statusKept is how session show names a record kept for an instance of a
// deferred foreach (Session.KeptRecords): a task status, not a session's.
const statusKept = "kept"

// shownStatus is a task's status as session show says it: a task halted
// in the middle (a tool call, the budget) is recorded as a failure, but it
// waits, and is said to.
func shownStatus(t checkpoint.TaskRecord) string {
	if t.Status == checkpoint.StatusFailed && checkpoint.HaltedError(t.Error) {
		return statusHalted
	}
	return string(t.Status)
}

func taskDuration(t checkpoint.TaskRecord) string {
	if t.StartedAt == nil || t.FinishedAt == nil || t.FinishedAt.Before(*t.StartedAt) {
		return "-"
	}
	return runner.FormatDuration(t.FinishedAt.Sub(*t.StartedAt))
}

// resultPreview is the start of a result on one line, quoted so that blanks and
// control characters show.
func resultPreview(s string, n int) string {
	if s == "" {
		return "-"
	}
	s = strings.TrimSpace(s)
	r := []rune(s)
	cut := len(r) > n
	if cut {
		r = r[:n]
	}
	q := fmt.Sprintf("%q", string(r))
	if cut {
		q += "…"
	}
	return q
}

func joinMap[V any](m map[string]V, f func(V) string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + f(m[k])
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ---- delete

func sessionDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:            "delete",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "remove a session and its helper files (journal, lock)",
		ArgsUsage:       "ID",
		Description: "Refused with exit 4 while a run holds the session. The removal is audited.\n\n" +
			"Example:\n" +
			"   teamrun session delete release-notes-20260301-101500-ab12",
		Flags:        []cli.Flag{projectFlag(), storeFlagDef()},
		BashComplete: completeSessions,
		Action: action(func(c *cli.Context, args []string) error {
			id, err := oneArg(args, "session delete", "teamrun session delete ID")
			if err != nil {
				return err
			}
			if err := checkpoint.ValidateID(id); err != nil {
				return withCode(exitUsage, err)
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			head, _ := a.store.Head(c.Context, id) // its spec: where its removal is audited
			rec := checkpoint.AuditRecord{Event: checkpoint.EventDeleted, Session: id, Store: a.store.Location()}
			done := fmt.Sprintf("deleted session %s from %s", id, a.store.Location())
			if err := a.store.Delete(c.Context, id); errors.Is(err, checkpoint.ErrNotFound) {
				// A delete cut short (kill -9) removed the session's file
				// but not its helpers, nor audited: this one finishes it.
				left, lerr := checkpoint.DeleteLeft(c.Context, a.store, id)
				if lerr != nil {
					return storeExit(lerr)
				}
				if left == nil {
					return a.notFound(c, id)
				}
				what := checkpoint.Leftovers(left)
				if what == "" {
					what = "the lock"
				}
				rec.Detail = what + " left of a session whose file was gone (a delete or a run cut short)"
				done = fmt.Sprintf("deleted %s left of session %s, whose file was gone, from %s", what, id, a.store.Location())
			} else if err != nil {
				return storeExit(err)
			}
			removeLocal(c, a.store, id)
			if err := checkpoint.AuditRemoval(c.Context, a.store, a.project, head.SpecPath, rec); err != nil {
				return storeExit(fmt.Errorf("session %s was deleted, but the audit log could not be written: %w", id, err))
			}
			fmt.Fprintln(c.App.Writer, done)
			return nil
		}),
	}
}

// ---- prune

type pruneJSON struct {
	Store   string      `json:"store"`
	Before  time.Time   `json:"before"`
	DryRun  bool        `json:"dry_run"`
	Removed []pruneItem `json:"removed"`
	Kept    []pruneItem `json:"kept"`
	Newer   int         `json:"newer_kept"`
	// Locks with no session (checkpoint.Stale.Lock).
	RemovedLocks []pruneLock `json:"removed_locks"`
	KeptLocks    []pruneLock `json:"kept_locks"`
}

type pruneLock struct {
	ID     string    `json:"id"`
	Taken  time.Time `json:"taken"` // when the lock was last taken (or what is left, written)
	Reason string    `json:"reason,omitempty"`
	// Left: what else is left of a session whose file is gone, lock
	// included ("journal", "lock"); absent for a lock alone.
	Left []string `json:"left,omitempty"`
}

type pruneItem struct {
	ID      string    `json:"id"`
	Updated time.Time `json:"updated"`
	Reason  string    `json:"reason,omitempty"`
}

func sessionPruneCommand(ios *iostreams.IOStreams) *cli.Command {
	olderThan := &ageFlag{}
	return &cli.Command{
		Name:            "prune",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "remove sessions not updated for max_session_age_days (config.yml, default 30)",
		Description: "Age counts from the last write of a session's files. Never removes the project's\n" +
			"active session or one a run holds; each old session kept is listed with the reason.\n" +
			"Also removes what a session whose file is gone left behind (a lock a run killed\n" +
			"before it wrote its session, a journal, stored results, logs, a scratch folder),\n" +
			"once older than the cut-off and held by no run, and says what each was.\n" +
			"Every removal is written to the project's audit log.\n\n" +
			"Examples:\n" +
			"   teamrun session prune --dry-run\n" +
			"   teamrun session prune --older-than 7d",
		Flags: []cli.Flag{
			projectFlag(),
			storeFlagDef(),
			&cli.GenericFlag{Name: "older-than", Value: olderThan, Usage: "remove sessions older than `DUR` (e.g. 7d, 36h) instead of max_session_age_days"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed; remove nothing"},
			jsonFlag("what was removed and kept"),
		},
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) > 0 {
				return exitf(exitUsage, "session prune takes no arguments (did you mean --older-than %s?)", args[0])
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			var age time.Duration
			what := ""
			if c.IsSet("older-than") {
				age, what = olderThan.d, "--older-than "+olderThan.typed
			} else {
				// Read, never create: a prune (a dry run above all) writes
				// nothing but its removals and their audit records.
				cfg, err := spec.ReadConfig(spec.ConfigPath(a.dir))
				if err != nil {
					return withCode(exitUsage, err)
				}
				age = time.Duration(cfg.MaxSessionAgeDays) * 24 * time.Hour
				what = fmt.Sprintf("max_session_age_days %d", cfg.MaxSessionAgeDays)
			}
			active, err := a.project.Active(c.Context)
			if err != nil {
				// Not knowing the active session must not make it prunable.
				return storeExit(fmt.Errorf("%w; prune needs to know the active session", err))
			}
			now := time.Now()
			stale, newer, perr := checkpoint.Prune(c.Context, a.store, a.project, checkpoint.PruneOptions{Before: now.Add(-age), Active: active, DryRun: c.Bool("dry-run"), Store: pasteStore(c)})
			out := pruneJSON{Store: a.store.Location(), Before: now.Add(-age).UTC().Truncate(time.Second), DryRun: c.Bool("dry-run"),
				Removed: []pruneItem{}, Kept: []pruneItem{}, Newer: newer, RemovedLocks: []pruneLock{}, KeptLocks: []pruneLock{}}
			for _, s := range stale {
				it := pruneItem{ID: s.ID, Updated: s.Touched.UTC().Truncate(time.Second), Reason: s.Reason}
				if s.Removed && !out.DryRun {
					removeLocal(c, a.store, s.ID)
				}
				lk := pruneLock{ID: it.ID, Taken: it.Updated, Reason: it.Reason, Left: s.Left}
				switch {
				case s.Lock && s.Removed:
					out.RemovedLocks = append(out.RemovedLocks, lk)
				case s.Lock:
					out.KeptLocks = append(out.KeptLocks, lk)
				case s.Removed:
					out.Removed = append(out.Removed, it)
				default:
					out.Kept = append(out.Kept, it)
				}
			}
			if c.Bool("json") {
				if err := writeJSON(c.App.Writer, out); err != nil {
					return err
				}
			} else {
				printPrune(c.App.Writer, out, what, now, ios.IsTerminal(), perr == nil)
			}
			return storeExit(perr)
		}),
	}
}

// printPrune prints what prune did; the totals only when it ended
// (finished): one that stopped at an error (a store it cannot read) has
// no totals to give, and "removed 0 sessions" would say it found nothing.
func printPrune(w io.Writer, p pruneJSON, what string, now time.Time, tty, finished bool) {
	verb := "removed"
	if p.DryRun {
		verb = "would remove"
	}
	for _, it := range p.Removed {
		fmt.Fprintf(w, "%s %s (last update %s)\n", verb, it.ID, formatWhen(it.Updated, now, tty))
	}
	for _, it := range p.Kept {
		fmt.Fprintf(w, "kept %s (last update %s): %s\n", it.ID, formatWhen(it.Updated, now, tty), it.Reason)
	}
	for _, it := range p.RemovedLocks {
		fmt.Fprintf(w, "%s %s\n", verb, orphanLine(it, formatWhen(it.Taken, now, tty)))
	}
	for _, it := range p.KeptLocks {
		fmt.Fprintf(w, "kept %s: %s\n", orphanLine(it, formatWhen(it.Taken, now, tty)), it.Reason)
	}
	if !finished {
		return
	}
	removed := countOf(len(p.Removed), "session")
	locks, leftovers := 0, 0
	for _, it := range p.RemovedLocks {
		if checkpoint.Leftovers(it.Left) == "" {
			locks++
		} else {
			leftovers++
		}
	}
	if locks > 0 {
		removed += " and " + countOf(locks, "lock") + " with no session"
	}
	if leftovers > 0 {
		removed += " and what " + countOf(leftovers, "session") + " left without its file"
	}
	fmt.Fprintf(w, "%s %s, kept %d old and %d newer (%s: before %s) in %s\n", verb, removed,
		len(p.Kept), p.Newer, what, p.Before.Format(time.RFC3339), p.Store)
}

// orphanLine names a lock with no session, or what else a session whose
// file is gone left (checkpoint.Leftovers), as prune reports it.
func orphanLine(it pruneLock, when string) string {
	if what := checkpoint.Leftovers(it.Left); what != "" {
		return fmt.Sprintf("%s of %s, which has no session file (last written %s)", what, it.ID, when)
	}
	return fmt.Sprintf("lock %s, which has no session (last taken %s)", it.ID, when)
}

// ---- decide

func sessionDecideCommand() *cli.Command {
	return &cli.Command{
		Name:            "decide",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "record the decision a halted human task, or a tool call a crash left unsettled, waits for",
		ArgsUsage:       "ID TASK VALUE",
		Description: "VALUE must be one of the task's options when the spec lists them. The decision is\n" +
			"stored in checkpoint.decisions and audited; the next `teamrun run FILE --continue`\n" +
			"completes the human task with VALUE as its result. TASK budget (when no task has that\n" +
			"name) raises the budget of a session halted by it: raise=N adds N to the one limit the\n" +
			"spec sets (dollars or tokens); max_cost_usd=X or max_tokens=N sets that limit.\n\n" +
			"A task halted at a tool call whose outcome a crash hid (its tool was not idempotent)\n" +
			"takes rerun (run the call again), fail (fail the task's attempt) or unknown (tell the\n" +
			"model the outcome is unknown; the call is not repeated). A task halted because its\n" +
			"tool loop ended on max_turns or max_tool_calls after calls of tools that are not\n" +
			"idempotent takes rerun (start the loop afresh; the model may make them again), unless\n" +
			"the limit is raised in the spec instead (the loop then goes on). A task whose unfinished\n" +
			"tool loop holds such calls (kept, replayed, across any edit of the task) takes rerun to\n" +
			"start that loop afresh.\n\n" +
			"Example:\n" +
			"   teamrun session decide release-notes-20260301-101500-ab12 review approve\n" +
			"   teamrun session decide nightly budget raise=2",
		Flags:        []cli.Flag{projectFlag(), storeFlagDef()},
		BashComplete: completeSessionTasks(func(t *checkpoint.TaskRecord) bool { return t.Agent == spec.HumanAgent }),
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) != 3 {
				return exitf(exitUsage, "session decide needs ID TASK VALUE (e.g. teamrun session decide nightly review approve)")
			}
			id, task, value := args[0], args[1], args[2]
			if strings.TrimSpace(value) == "" {
				// As an empty flag value is refused: `"$CHOICE"` left unset
				// would record "" as the task's result.
				return exitf(exitUsage, "session decide: VALUE is empty (a variable left unset?): give the decision for task %s (see teamrun session decide --help)", task)
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			sess, err := a.load(c, id)
			if err != nil {
				return err
			}
			if _, isTask := sess.Task(task); !isTask && task == runner.BudgetDecision {
				return decideBudget(c, a, sess, value)
			}
			if call, terr := checkpoint.WaitingToolCall(sess, task); terr == nil {
				// A call of a tool that was not idempotent, which a crash left
				// without its result (issue 10).
				if !slices.Contains(checkpoint.ToolDecisions(), value) {
					return exitf(exitUsage, "task %s waits for a decision on its call of tool %s with %s: decide %s", task, call.Tool, checkpoint.ShortArguments(call.Arguments), strings.Join(checkpoint.ToolDecisions(), ", "))
				}
			} else if checkpoint.LoopWaits(sess, task) {
				// A tool loop a limit ended after calls that were not
				// idempotent: rerun starts it afresh.
				if lg := sess.ToolLogs[task]; value != checkpoint.DecideRerun && lg.Resumable() {
					return exitf(exitUsage, "task %s's tool loop holds calls of tools that were not idempotent (%s): decide %s to start it afresh (the model may make those calls again); without a decision --continue resumes it, replaying their recorded results",
						task, checkpoint.ToolNames(lg.Unrepeatable()), checkpoint.DecideRerun)
				} else if value != checkpoint.DecideRerun {
					return exitf(exitUsage, "task %s's tool loop ended on its agent's %s (%d): decide %s to start it afresh (the model may make its calls again), or raise %s in the spec and --continue goes on with the loop",
						task, lg.Limit, lg.Max, checkpoint.DecideRerun, lg.Limit)
				}
			} else if err := checkpoint.HumanTask(sess, task); err != nil {
				return withCode(exitUsage, err)
			} else if err := checkOptions(c, sess, task, value); err != nil {
				return err
			}
			rec, _ := sess.Task(task)
			if rec != nil && rec.Status == checkpoint.StatusCompleted {
				adminWarnf(c, "task %s already completed with %s: the decision only counts if it runs again", task, resultPreview(rec.Result, 40))
			}
			// One the task completed with was used: the warning above says it.
			if was, ok := sess.Checkpoint.Decisions[task]; ok && was != value && !checkpoint.UsedDecision(rec, was) {
				// The last decide wins; a second one (a typo put right, or
				// two people) is said, not silent.
				adminWarnf(c, "task %s had the decision %s, not yet used: it is replaced by %s", task, resultPreview(was, 40), resultPreview(value, 40))
			}
			if err := checkpoint.Decide(c.Context, a.store, id, task, value); err != nil {
				return storeExit(err)
			}
			if err := a.project.Audit(c.Context, checkpoint.AuditRecord{Event: checkpoint.EventDecided, Session: id, Store: a.store.Location(),
				Detail: fmt.Sprintf("%s=%q", task, value)}); err != nil {
				return storeExit(fmt.Errorf("the decision was recorded, but the audit log could not be written: %w", err))
			}
			fmt.Fprintf(c.App.Writer, "recorded decision %q for task %s of session %s\nresume: %s\n",
				value, task, id, runner.ResumeCommand(runner.Options{SpecPath: sess.SpecPath, Home: storeFlag(c)}, id))
			return nil
		}),
	}
}

// decideBudget raises the budget of a session halted by it: `session
// decide ID budget raise=N` (or max_cost_usd=X, max_tokens=N), checked
// against the budget of the spec at the session's spec path.
func decideBudget(c *cli.Context, a *admin, sess *checkpoint.Session, value string) error {
	team, err := spec.Load(sess.SpecPath)
	if err != nil {
		return exitf(exitUsage, "session %s: cannot read its spec to raise the budget: %s", sess.ID, firstLineOf(err.Error()))
	}
	v, err := runner.RaisedBudget(team.Budget, sess.Checkpoint.Decisions[runner.BudgetDecision], value)
	if err != nil {
		return exitf(exitUsage, "session %s: budget %v (%s)", sess.ID, err, sess.SpecPath)
	}
	if err := runner.RecordBudget(c.Context, a.store, sess.ID, v); err != nil {
		return storeExit(err)
	}
	if err := a.project.Audit(c.Context, checkpoint.AuditRecord{Event: checkpoint.EventDecided, Session: sess.ID, Store: a.store.Location(),
		Detail: fmt.Sprintf("%s=%q", runner.BudgetDecision, v)}); err != nil {
		return storeExit(fmt.Errorf("the budget was recorded, but the audit log could not be written: %w", err))
	}
	fmt.Fprintf(c.App.Writer, "recorded budget %s for session %s\nresume: %s\n",
		v, sess.ID, runner.ResumeCommand(runner.Options{SpecPath: sess.SpecPath, Home: storeFlag(c)}, sess.ID))
	return nil
}

// checkOptions holds VALUE to the task's options as the spec (the one the
// next --continue runs) lists them.
func checkOptions(c *cli.Context, sess *checkpoint.Session, task, value string) error {
	team, err := spec.Load(sess.SpecPath)
	if err != nil {
		adminWarnf(c, "cannot read the session's spec to check the task's options (%v): recording %q unchecked", firstLineOf(err.Error()), value)
		return nil
	}
	i := team.TaskIndex(task)
	if i < 0 {
		adminWarnf(c, "%s no longer has task %s: the next --continue will skip it", sess.SpecPath, task)
		return nil
	}
	opts := team.Tasks[i].Options()
	if len(opts) > 0 && !slices.Contains(opts, value) {
		return exitf(exitUsage, "%q is not an option of task %s (%s: tasks.%s.options: %s)", value, task, sess.SpecPath, task, strings.Join(opts, ", "))
	}
	return nil
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// blobPreviews are the RESULT column of the tasks whose result is stored
// out of line: its start and its size. Each blob is read to its end, so a
// damaged one is an error naming its file (exit 5), never shown as good.
func blobPreviews(ctx context.Context, store checkpoint.Backend, s *checkpoint.Session) (map[string]string, error) {
	bs, _ := store.(checkpoint.BlobStore)
	out := map[string]string{}
	for _, t := range s.Team.Tasks {
		if t.Blob == nil || t.Status != checkpoint.StatusCompleted {
			continue
		}
		head, size, err := checkpoint.Preview(ctx, bs, s.ID, t, 240)
		if err != nil {
			return nil, err
		}
		out[t.Name] = fmt.Sprintf("%s (%s, stored out of line)", resultPreview(head, 40), sizeText(size))
	}
	return out, nil
}

// sizeText is a size in bytes as people read it.
func sizeText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}
