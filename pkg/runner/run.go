package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teamrun/teamrun/internal/ownfiles"
	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/runner/schedule"
	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Options is one `teamrun run`.
type Options struct {
	SpecPath    string
	Continue    bool
	Session     string            // --session; "" picks one (DESIGN §5)
	Vars        map[string]string // --var
	VarOrder    []string          // --var keys as given, for the resume command
	MaxParallel int
	Reuse       checkpoint.Reuse
	Wait        time.Duration // --wait; 0 fails at once when the session is held
	Mode        Mode
	StreamJSON  bool // with ModeJSON: task_delta events of streamed answers
	Verbose     bool // stream each task's output lines, prefixed with its name
	IO          *iostreams.IOStreams
	Getenv      func(string) string // nil: os.Getenv
	Home        string              // the session store (--store); "" means $TEAMRUN_STORE, else $TEAMRUN_HOME
	HTTP        *http.Client        // for LLM agents; nil: a default client
	// Interrupts turns signals into the run's cancellation (the context
	// given to Run must be the one it returned); nil: no signal handling.
	Interrupts *Interrupts
	// Subreaper makes this process the subreaper of the tasks' processes,
	// so that none outlives its task (Groups.Subreap). Only a process
	// that starts no children of its own, the teamrun command, may set it.
	Subreaper bool
	// Parsed, when set, is called once the spec is parsed, before
	// anything is built from it: what the parse alone needed is garbage
	// then (newRunGC in cmd/teamrun collects it there).
	Parsed func()
	// Loaded, when set, is called once the spec and the session are
	// loaded, just before the first task runs, and not at all when every
	// task is restored: the teamrun command tunes the collector for the
	// run's steady heap then (loadingGC in cmd/teamrun).
	Loaded func()
	// Rerun, RerunFrom and Keep are --rerun, --rerun-from and --keep
	// (checkpoint.Choice); they need Continue.
	Rerun, RerunFrom, Keep []string

	store checkpoint.Backend // a test's store, used instead of opening Home
}

// UsageError is bad usage or a bad spec: nothing was run or written.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// DiscardedError is a store failure after which the run removed the
// session it had just begun, before any task ran: nothing of it is left,
// so what does it again is the same run, once the cause is fixed.
type DiscardedError struct{ Err error }

func (e *DiscardedError) Error() string {
	return e.Err.Error() + "; no session was created and nothing was run: when that is fixed, run the same `teamrun run` again"
}

func (e *DiscardedError) Unwrap() error { return e.Err }

// Retryable is false: the message says already how to do it again.
func (e *DiscardedError) Retryable() bool { return false }

// UnnamedError is the error of a run without --continue that ended
// before the project named its session the active one: --continue would
// resume another session (the one the project names), so what does it
// again is the same run.
type UnnamedError struct{ Err error }

func (e *UnnamedError) Error() string { return e.Err.Error() }
func (e *UnnamedError) Unwrap() error { return e.Err }

// IsUsage reports whether err is bad usage or a bad spec (exit 2).
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Run runs a team from its spec file with checkpoints, resuming a session
// when asked. The summary says how the run ended; the error is a
// *UsageError, a store failure (errors.Is checkpoint.ErrStore or a
// *StoreError), or a held session (errors.Is checkpoint.ErrLocked).
func Run(ctx context.Context, o Options) (sum *Summary, err error) {
	started := time.Now()
	var p *pass
	defer func() {
		if err != nil && !o.Continue && (p == nil || !p.named) {
			err = &UnnamedError{Err: err}
		}
	}()
	getenv, lookup := o.Getenv, os.LookupEnv
	if getenv == nil {
		getenv = os.Getenv
	} else {
		// An environment given as a function (tests) has no variable
		// set to nothing: "" is unset.
		lookup = func(name string) (string, bool) {
			v := getenv(name)
			return v, v != ""
		}
	}
	// Before the store is opened: a prefetch would read the project
	// folder of a stream (/dev/.teamrun).
	projectDir, err := spec.ProjectDir(o.SpecPath)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	// The store is opened first, so that a file store can decode the
	// session while the spec is parsed (prefetch); its error waits until
	// the spec is known to be runnable: a typo is exit 2 whatever the store.
	store, storeErr := o.store, error(nil)
	if store == nil {
		store, storeErr = OpenStore(ctx, o.Home, lookup)
	}
	if storeErr == nil {
		defer store.Close()
		if o.Continue {
			PrefetchSession(ctx, store, o.SpecPath, o.Session)
		}
	}
	o.Home = stores.Shown(o.Home) // the resume command names it: never a password
	// The spec may be a pipe or a FIFO: the run catches Ctrl-C to finish
	// its writes, and has written nothing yet.
	team, err := Interruptible(ctx, func() (*spec.Team, error) { return spec.Load(o.SpecPath) })
	if errors.Is(err, context.Canceled) {
		return nil, &ReadInterruptedError{Read: o.SpecPath, Done: "nothing was run", Err: err}
	}
	if err != nil {
		return nil, &UsageError{Err: err} // a spec.ErrorList, or an unreadable file
	}
	if o.Parsed != nil {
		o.Parsed()
	}
	choice := checkpoint.Choice{Reuse: o.Reuse, Rerun: o.Rerun, RerunFrom: o.RerunFrom, Keep: o.Keep}
	if err := checkChoice(choice, team, o.Continue); err != nil {
		return nil, err
	}
	rep := NewReporter(o.IO, o.Mode)
	if o.StreamJSON {
		StreamDeltas(rep)
	}
	defer rep.Close()
	if o.Interrupts != nil {
		o.Interrupts.Say(rep.Notice)
	}
	warn := func(msg string) { rep.Observe(Event{Time: time.Now(), Type: RunWarning, Index: -1, Message: msg}) }
	specAbs := absOr(o.SpecPath)
	configPath := spec.ConfigPath(projectDir)
	// Nothing is written before the spec is known to be runnable: the
	// config is only read here, and created with the session. It is read
	// before the spec's warnings are said: its prices may settle one.
	haveConfig, configErr := team.ApplyProjectConfig(configPath)
	for _, d := range team.Warnings {
		warn(d.String())
	}
	for _, d := range team.Notes { // information: --quiet leaves it out
		rep.Observe(Event{Time: time.Now(), Type: RunInfo, Index: -1, Message: d.String()})
	}
	for _, w := range VarWarnings(team, o.Vars, o.VarOrder) {
		warn(w)
	}
	if configErr != nil {
		return nil, &UsageError{Err: configErr}
	}
	if err := checkLLMAgents(team, configPath, getenv); err != nil {
		return nil, err
	}
	if storeErr != nil {
		return nil, storeErr
	}
	// SpecProblems knew no store: an output_file into it is refused now,
	// before anything is written.
	if ds := ownOutputFiles(team, guardedFiles(specAbs, configPath, store, filepath.Dir(specAbs), "")); len(ds) > 0 {
		return nil, &UsageError{Err: errors.New(ds[0].String())}
	}
	project := store.Project(projectDir)
	if h, ok := store.(homeWarner); ok {
		if w := h.HomeWarning(); w != "" {
			warn(w)
		}
	}

	// What makes this bad usage is asked before the lock is taken, so that
	// exit 2 writes nothing, and again under it: a session to be made
	// must not exist, and its task set comes from the spec and --var
	// alone (a --var foreach list that is not one, say).
	//
	// A new session --continue starts is locked and written (its header)
	// before it is claimed as the project's active one, so that
	// overlapping runs (cron ticks, two hosts' crons) start one session
	// between them: a run that loses the claim discards its session,
	// resolves again and finds the winner's, which the winner holds (exit
	// 4, or --wait). Each lost claim is another run's won one. Written
	// first, the session the project names is in the store whenever a run
	// dies: a kill between the claim and the header would leave state.json
	// naming a session that is not.
	var (
		res    Resolution
		newSet *TaskSet
		lock   checkpoint.Lock
		begun  *journalRecorder
	)
	host, _ := os.Hostname() // on started records, and to tell another host's tasks
	// What a task gets is real; what is written or printed of the keys
	// the team sends is redacted (DESIGN §2).
	secrets := teamSecrets(team, store, getenv)
	redact := redactor(secretValues(secrets))
	// Waiting is no fault: a note, which --quiet leaves out of cron's mail.
	note := func(msg string) { rep.Observe(Event{Time: time.Now(), Type: RunInfo, Index: -1, Message: msg}) }
	for {
		if res, err = ResolveSession(ctx, store, project, specAbs, team.Name, o.Session, o.Continue); err != nil {
			return nil, err
		}
		if pre, ok := store.(interface {
			Prefetched(id string) *checkpoint.Session
		}); ok && res.Exists {
			// Refused again under the lock (TaskSetOf); said here from
			// the decode the prefetch made, so that exit 2 takes no lock,
			// and so writes no lock file.
			if err := redactedStart(team, pre.Prefetched(res.ID), o.Vars); err != nil {
				return nil, err
			}
		}
		if exists, err := store.Exists(ctx, res.ID); err == nil && !exists && newSet == nil {
			if newSet, err = TaskSetOf(team, nil, o.Vars); err != nil {
				return nil, err
			}
		} else if err == nil && exists && !o.Continue {
			// One a run holds is said to be held (exit 4), under the lock.
			if held, err := store.Held(ctx, res.ID); err == nil && held == nil {
				return nil, existsError(res.ID, store.Location())
			}
		}
		if lock, err = lockSession(ctx, store, res.ID, o.Wait, note); err != nil {
			return nil, err
		}
		if res.Exists {
			// Waited for (--wait) until its run discarded it, having lost
			// its claim: what is active now is another's.
			if ok, err := store.Exists(ctx, res.ID); err == nil && !ok {
				lock.Release()
				continue
			}
		}
		if !res.Claim {
			break
		}
		if newSet == nil { // the store could not say whether res.ID exists
			if newSet, err = TaskSetOf(team, nil, o.Vars); err != nil {
				lock.Release()
				return nil, err
			}
		}
		sess := checkpoint.NewSession(res.ID, specAbs, newSet.Team.Name, newSet.Team.Process, newSet.Defs, newSet.Fingerprint, time.Now())
		startState(sess, newSet, o.Vars, nil)
		rec := &journalRecorder{ctx: ctx, store: store, lock: lock, sess: sess, warn: warn, host: host, pgid: runGroup(), redact: redact}
		won, err := startClaimed(ctx, store, project, rec, res)
		if err != nil {
			return nil, err
		}
		if won {
			begun = rec
			break
		}
	}
	defer lock.Release()
	if begun != nil {
		defer begun.close() // a pass takes it over; if none does, closed here, under the lock
	}
	id, notes := res.ID, res.Starting()
	if o.Interrupts != nil {
		o.Interrupts.Started()
	}
	scratch := scratchOf(store, warn)

	exists := false // the session just begun is new
	if begun == nil {
		if exists, err = store.Exists(ctx, id); err != nil {
			return nil, err
		}
	}
	if exists && !o.Continue {
		return nil, existsError(id, store.Location())
	}
	// A session file the project cannot name (state.json, audit.log) would
	// be an orphan in the store: check before the session is written.
	if p, ok := project.(interface{ CheckWritable() error }); ok {
		if err := p.CheckWritable(); err != nil {
			if !exists && begun == nil {
				// Nothing of the session was written: its lock file goes
				// too, not left for prune to find (one each try).
				if derr := store.Discard(context.WithoutCancel(ctx), lock); derr != nil {
					err = errors.Join(err, derr)
				}
			}
			return nil, err
		}
	}
	now := time.Now()
	var (
		old   *checkpoint.Session
		audit = checkpoint.EventCreated
	)
	if exists {
		if old, err = store.Load(ctx, id); err != nil {
			return nil, err
		}
		if old.SpecPath != "" && !checkpoint.SameSpec(project, old.SpecPath, specAbs) {
			// As plan says it: the session named is resumed with this
			// file's tasks, and the other file's outputs go. In a
			// project named apart from its folder, the spec of the same
			// name elsewhere is the same spec (a CronJob's next node).
			notes = append(notes, fmt.Sprintf("session %s was saved for %s, not %s: resuming it with this file's tasks (pass --session ID to pick another session)", id, old.SpecPath, specAbs))
		}
		// Before any task runs again: what a dead run left behind must
		// not do the same work a second time, in parallel. Only a task
		// recorded as running can have left anything (a task's group is
		// killed when it ends), so the /proc scan is skipped otherwise.
		if slices.ContainsFunc(old.Team.Tasks, func(t checkpoint.TaskRecord) bool { return t.Status == checkpoint.StatusRunning }) {
			// The run they belong to may be alive: its lock file removed
			// or moved by hand let this run take the lock.
			if f, ok := lock.(lockFiles); ok {
				if pid := liveHolder(f.JournalPath()); pid > 0 {
					return nil, &LiveRunError{Session: id, PID: pid, Lock: f.Path()}
				}
			}
			if pids := killOrphans(id, stores.Named(store), procsRecord(scratch, id)); len(pids) > 0 {
				// A lock with a lease lapses while its holder lives; a
				// file store's live holder was refused above.
				_, lapses := lock.(interface{ Lease() time.Duration })
				notes = append(notes, orphansNote(id, pids, lapses))
			}
			notes = append(notes, elsewhereNotes(old, host)...)
		}
	}
	// What a killed run left (its scratch, snapshot temp files) is litter
	// now that its processes are gone: the lock makes it ours.
	swept := sweepScratch(scratch, lock, warn, "")
	// The task texts, and so the fingerprint, are rendered from the state
	// the session started from, not from this invocation's --var alone: a
	// run with --var resumed without it renders the same texts. Computed
	// before the subreaper is set up: bad usage leaves nothing behind.
	set := newSet
	texts := blobTexts{}
	open := blobOpener(blobsOf(store), id)
	text := func(tk *spec.Task, rec *checkpoint.TaskRecord) (string, error) {
		return readResult(ctx, tk, Output{Raw: rec.Result}.withBlob(rec.Blob, open), texts)
	}
	if old != nil || set == nil {
		if set, err = taskSetOf(team, old, o.Vars, text); err != nil {
			return nil, err
		}
	}
	groups := &Groups{}
	if o.Interrupts != nil {
		groups = o.Interrupts.Groups()
	}
	if o.Subreaper {
		if err := groups.Subreap(procsRecord(scratch, id)); err != nil {
			warn(err.Error())
		}
		defer groups.Close()
	}
	// A run that lost the store may have lost the session to another run,
	// which now uses the same scratch (PostgreSQL: another run on this
	// host took over): it leaves the sweep to the session's next run.
	defer func() {
		if p == nil || !p.lostStore && !p.discarded {
			sweepScratch(scratch, lock, warn, swept)
		}
	}()
	commands := &Commands{Groups: groups, Warn: warn, Store: stores.Named(store), TempDir: scratchDir(scratch, id),
		Logs: logsOf(store), Lock: lock, LogsCtx: context.WithoutCancel(ctx), Kept: &keptLogs{}, Session: id, Blobs: blobsOf(store),
		Keys: secretValues(secrets)}
	if o.Verbose {
		commands.Line = func(task, stream, line string) {
			rep.Observe(Event{Time: time.Now(), Type: TaskLine, Index: -1, Task: task, Stream: stream, Message: line})
		}
	}
	defer commands.Close()

	// A pass runs the task set as far as it is known. A foreach over a
	// task's output_variable is expanded when that task finishes: the pass
	// ends there, the session is loaded back as --continue loads it, and
	// the next pass runs the task set expanded with the list, what is done
	// restored (the fingerprint, over the declared tasks, is the same).
	p = &pass{o: o, store: store, lock: lock, project: project, id: id, rep: rep, warn: warn, getenv: getenv, host: host, secrets: secrets, redact: redact,
		specAbs: specAbs, configPath: configPath, haveConfig: haveConfig, started: started, commands: commands, ranBefore: map[string]bool{}, cutBefore: map[string]bool{}, restoredBefore: map[string]bool{}, skippedBefore: map[string]bool{}, texts: texts, begun: begun}
	for n := 0; ; n++ {
		sum, grew, err := p.run(ctx, set, old, exists, choice, res, notes, audit, n, now)
		if err != nil || !grew {
			return sum, err
		}
		if old, err = store.Load(ctx, id); err != nil {
			return nil, err
		}
		if set, err = taskSetOf(team, old, o.Vars, text); err != nil {
			return nil, err
		}
		exists, now = true, time.Now()
		// What the user chose to run again ran in the first pass; what
		// they chose to keep stays kept.
		choice = checkpoint.Choice{Reuse: o.Reuse, Keep: o.Keep}
	}
}

// pass is what the passes of one run share.
type pass struct {
	o          Options
	store      checkpoint.Backend
	lock       checkpoint.Lock
	project    checkpoint.ProjectState
	id         string
	rep        Reporter
	warn       func(string)
	getenv     func(string) string
	host       string              // this host's name, on started records
	secrets    []teamSecret        // teamSecrets: kept out of the resume command
	redact     func(string) string // the session's Redact
	specAbs    string
	configPath string // the project's config.yml: its folder is guarded
	haveConfig bool
	started    time.Time
	named      bool // the project names the session active: --continue resumes it
	commands   *Commands
	ranBefore  map[string]bool // tasks an earlier pass completed
	cutBefore  map[string]bool // tasks an earlier pass cut off
	// skippedBefore: tasks an earlier pass skipped (and said so); the
	// next one skips them again, as its restore left them, unsaid
	skippedBefore map[string]bool
	// restoredBefore: tasks an earlier pass restored (and said so)
	restoredBefore map[string]bool
	// held and recorded are the first pass's early cut-off (what its
	// restore held, and the recorded results to compare with): a later
	// pass holds again what is still pending.
	held       map[string]checkpoint.TaskRecord
	recorded   map[string]checkpoint.Outcome
	usedBefore *Usage // what earlier passes' LLM requests cost
	// texts are the results stored out of line read whole so far: each
	// is read once, whatever pass or check asks for it.
	texts     blobTexts
	lostStore bool // a pass ended for a store failure
	discarded bool // the session just begun was removed, its lock released
	// begun is the new session --continue claimed, begun before the
	// claim; pass 0 takes it over.
	begun *journalRecorder
}

// decideCommand is the `session decide` the run prints for task of its
// session: pasted in any folder, it records into this run's store and
// project.
func (p *pass) decideCommand(task, value string) string {
	return cmdline.Decide(cmdline.Where{Store: p.o.Home, Project: filepath.Dir(p.specAbs)}, p.id, task, value)
}

// run runs pass n on task set set of session old (exists: in the store);
// grew reports that the pass ended for a new expansion.
func (p *pass) run(ctx context.Context, set *TaskSet, old *checkpoint.Session, exists bool, choice checkpoint.Choice,
	res Resolution, notes []string, audit string, n int, now time.Time) (*Summary, bool, error) {
	o, store, lock, project, id, rep, warn := p.o, p.store, p.lock, p.project, p.id, p.rep, p.warn
	var (
		sess     *checkpoint.Session
		restored *checkpoint.Restored
		skipped  map[string]bool // under a full restore, the tasks old records skipped
	)
	team, state0, defs, fingerprint := set.Team, set.State, set.Defs, set.Fingerprint
	if n == 0 {
		for _, d := range team.UndefinedPlaceholders(state0) {
			warn(d.String())
		}
	}
	if exists {
		refuse, sets, readErr := refuser(ctx, set, blobOpener(blobsOf(store), id), p.texts)
		if refuse != nil {
			choice.Refuse, choice.Sets = refuse, sets
		}
		if g, err := set.graph(); err == nil {
			choice.CutoffReads, choice.Reads, choice.Upstream, choice.Memory, choice.Human = g.CutoffReads, g.Reads, g.Upstream, g.Memory, g.Human
			choice.After = g.VariableReads().After
		}
		choice.DeferredJoin = set.Team.DeferredJoin
		choice.FingerprintBefore = set.FingerprintBefore
		choice.VariableChanges = func() map[string]string { return checkpoint.VariableChanges(team, old) }
		choice.SettingAdded = team.SettingAdded(defs)
		restored = checkpoint.RestoreChoice(old, defs, fingerprint, choice)
		if err := *readErr; err != nil {
			return nil, false, err // a result stored out of line that does not read back
		}
		if n == 0 {
			p.held, p.recorded = maps.Clone(restored.Held), maps.Clone(restored.Recorded)
			maps.Copy(p.held, restored.HeldLater) // decided after the expansion
		} else {
			restored.HoldAgain(old, defs, p.held, p.recorded)
		}
		if restored.Kind == checkpoint.RestoreFull {
			skipped = skippedIn(old) // before Continue, which may take old's records over
		}
		sess = checkpoint.Continue(old, restored, team.Process, defs, fingerprint, now)
		if v, ok := old.Checkpoint.Decisions[BudgetDecision]; ok && team.TaskIndex(BudgetDecision) < 0 {
			sess.Checkpoint.Decisions[BudgetDecision] = v // the session's, not a task's: Restore keeps only tasks'
		}
		sess.SpecPath = p.specAbs
		audit = checkpoint.EventResumed
		// A result stored out of line counts as restored only once it
		// reads back as written: a damaged blob is exit 5, before
		// anything is written. A later pass restores what this run wrote.
		if n == 0 {
			if err := verifyBlobs(ctx, blobsOf(store), team, sess, restored, p.texts); err != nil {
				return nil, false, err
			}
		}
	} else if p.begun == nil {
		sess = checkpoint.NewSession(id, p.specAbs, team.Name, team.Process, defs, fingerprint, now)
	}
	var (
		state map[string]any
		rec   = p.begun // the session --continue claimed: begun before the claim
	)
	if rec != nil {
		p.begun = nil
		sess, state = rec.sess, rec.sess.Team.State
	} else {
		var setOver map[string]any
		if restored != nil && len(o.Vars) > 0 {
			var after func(j, k int) bool
			if g, err := set.graph(); err == nil {
				after = g.VariableReads().After
			}
			setOver = restored.SetOver(defs, after, o.Vars)
		}
		state = startState(sess, set, o.Vars, setOver)
		rec = &journalRecorder{ctx: ctx, store: store, lock: lock, sess: sess, warn: warn, host: p.host, pgid: runGroup(), redact: p.redact}
	}
	// A full restore may have nothing left to do: then the session file
	// stays as it is and the journal is only begun by the first record,
	// unless a journal was left beside it (a run killed before its end):
	// its end folds that one. Any other restore rewrites the session for
	// today's task set at once.
	defer rec.close()
	if restored != nil && restored.Kind == checkpoint.RestoreFull {
		rec.prior = skipped
	}
	full := restored != nil && restored.Kind == checkpoint.RestoreFull
	// A restored result that sets another variable today (Resets), or a
	// start state that is not the one stored (a --var, a variable the spec
	// added), rewrites the session too, so that its state says what the
	// run starts from.
	if rec.j == nil && (!full || old != nil && old.JournalLeft || len(restored.Resets) > 0 ||
		old != nil && startsElsewhere(old, sess)) {
		if err := rec.begin(); err != nil {
			return nil, false, err
		}
	}
	if n > 0 {
		// The run goes on: say what the expansion made, nothing else anew.
		for _, tk := range team.Tasks {
			x := tk.Expanded()
			if x.ForeachOf != tk.Name || len(x.After) == 0 || p.ranBefore[tk.Name] {
				continue
			}
			if x.ExpandsWhen != "" {
				// Not expanded: its context is the foreach's, no
				// instance; the engine says so as it runs it (noListNote).
				continue
			}
			msg := fmt.Sprintf("foreach %s: %d instance(s) from the output of %s", tk.Name, len(tk.Context), x.After[0])
			rep.Observe(Event{Time: time.Now(), Type: RunInfo, Index: -1, Session: id, Message: msg})
		}
		return p.engine(ctx, set, state, sess, restored, rec, nil)
	}
	if active, aerr := project.Active(ctx); aerr != nil || active != id {
		if err := project.SetActive(ctx, id); err != nil {
			if !exists && n == 0 {
				// The session just begun, which the project cannot name,
				// goes (as startClaimed's does): left, every "run again"
				// after a full disk (which CheckWritable's empty file
				// passes) left one more that nothing resumes.
				rec.close()
				// Discard releases the lock: the scratch went with the
				// session, and the run's last sweep is not to be done.
				p.discarded = true
				if derr := store.Discard(context.WithoutCancel(ctx), lock); derr != nil && !errors.Is(derr, err) {
					err = errors.Join(err, derr)
				} else {
					err = &DiscardedError{Err: err}
				}
			}
			return nil, false, err
		}
	}
	p.named = true
	if res.Lost != nil && !exists && n == 0 {
		if err := res.Lost.Audit(ctx, project, "--session names it; not in this store: started again"); err != nil {
			return nil, false, err
		}
	}
	if err := project.Audit(ctx, checkpoint.AuditRecord{Event: audit, Session: id, Store: store.Location()}); err != nil {
		return nil, false, err
	}
	// A project kept in its folder gets a default config.yml; one kept in
	// a database leaves the folder as it is (it may be read-only).
	if _, inFolder := project.(interface{ CheckWritable() error }); inFolder && !p.haveConfig {
		if _, err := spec.EnsureConfig(spec.ConfigPath(filepath.Dir(p.specAbs))); err != nil {
			return nil, false, err
		}
	}

	// The header counts what the engine takes over: what the restore
	// took over after checking it against today's team (refuser). It
	// keeps only counts: the engine holds it for the whole run, and the
	// task definitions (1.8 MB at 10,000 tasks) would live that long.
	total, resumed, kind := len(defs), restored != nil, checkpoint.RestoreNone
	if resumed {
		kind = restored.Kind
	}
	begun := func(taken int) {
		start := Event{Time: time.Now(), Type: RunStarted, Index: -1, Session: id, Tasks: total}
		if !resumed {
			start.Message = fmt.Sprintf("session %s: new, %d tasks", id, total)
		} else {
			start.Message = fmt.Sprintf("session %s: resumed (%s restore), %d of %d tasks restored", id, kind, taken, total)
		}
		rep.Observe(start)
	}
	if info := res.Info; info != "" {
		rep.Observe(Event{Time: time.Now(), Type: RunInfo, Index: -1, Session: id, Message: info})
	}
	if old != nil {
		// Told once the tool loops the run resumes are known.
		notes = append(notes, paidAgainNotes(old, sess, set.Team)...)
		notes = append(notes, editKeptNotes(old, sess, set.Team, func(task string) string { return p.decideCommand(task, checkpoint.DecideRerun) })...)
	}
	for _, n := range notes {
		warn(n)
	}
	if restored != nil {
		for _, msg := range restored.Notes {
			rep.Observe(Event{Time: time.Now(), Type: RunInfo, Index: -1, Session: id, Message: msg})
		}
		for _, w := range restored.Warnings {
			warn(w)
		}
	}
	if n == 0 { // a later pass reloads the session this run began
		for _, w := range set.Warnings {
			warn(w)
		}
	}
	// A run that restores every task runs none: it ends with the loading.
	if o.Loaded != nil && restoredCount(restored) < len(defs) {
		o.Loaded()
	}
	return p.engine(ctx, set, state, sess, restored, rec, begun)
}

// startState makes sess's state the one a run of set starts from — the
// checkpoint's (outputs of earlier tasks included), the spec's variables
// where the checkpoint has none, and --var over everything, as the
// fingerprint saw it, but what a task taken over sets (setOver:
// Restored.SetOver), which a new run leaves over the --var too — with its
// initial state and agents, and returns it.
func startState(sess *checkpoint.Session, set *TaskSet, vars map[string]string, setOver map[string]any) map[string]any {
	state := make(map[string]any, len(set.State)+len(sess.Team.State))
	for k, v := range set.State {
		state[k] = v
	}
	for k, v := range sess.Team.State {
		if _, forced := vars[k]; !forced {
			state[k] = v
		}
	}
	maps.Copy(state, setOver)
	sess.Team.State = state
	sess.Team.InitialState = maps.Clone(set.State)
	sess.Team.Agents = agentRecords(set.Team, set.State)
	return state
}

// startsElsewhere reports whether sess, made from old for this run,
// starts from another shared state or initial state than old stored.
// Compared as JSON: a number read back from the file is the same value
// as the spec's, whatever Go type holds it.
func startsElsewhere(old, sess *checkpoint.Session) bool {
	same := func(a, b map[string]any) bool {
		if len(a) == 0 && len(b) == 0 {
			return true // the file leaves out an empty initial state
		}
		x, errA := json.Marshal(a)
		y, errB := json.Marshal(b)
		return errA == nil && errB == nil && bytes.Equal(x, y)
	}
	return !same(old.Team.State, sess.Team.State) || !same(old.Team.InitialState, sess.Team.InitialState)
}

// guardedFiles are what the built-in file tools and output_file never
// write, in the writer's folder dir: the spec being run, the project's
// .teamrun folder, the session store's folder (only its sessions when it
// holds dir) and the session's scratch (the file store's is in its
// folder; another store's is not). store and scratch may be unknown
// (nil, ""): validate and plan have no session.
func guardedFiles(specAbs, configPath string, store checkpoint.Backend, dir, scratch string) []tools.Guard {
	g := []tools.Guard{{Path: specAbs, What: "the spec being run"}}
	if abs, err := filepath.Abs(filepath.Dir(configPath)); err == nil && configPath != "" {
		g = append(g, tools.Guard{Path: abs, What: ownfiles.Project})
	}
	if h, ok := store.(interface{ Home() string }); ok {
		home := h.Home()
		if rel, err := filepath.Rel(home, dir); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			home = store.Location()
		}
		g = append(g, tools.Guard{Path: home, What: "the session store (" + home + ")"})
	}
	if scratch != "" {
		g = append(g, tools.Guard{Path: scratch, What: "the session's scratch folder"})
	}
	return g
}

// absOr is path made absolute, or as it is when it cannot be.
func absOr(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// restoredCount is how many completed tasks r gives back.
func restoredCount(r *checkpoint.Restored) int {
	if r == nil {
		return 0
	}
	return len(r.Reused)
}

// priorOf is each of defs' attempts and LLM usage as sess records them,
// for Engine.Attempts, PriorUsage and ResultFrom; nil for none: a new
// session's 10,000 tasks have none, where the two lists were 0.16 MB of
// its run.
func priorOf(sess *checkpoint.Session, defs []spec.TaskDef) (attempts []int, usage []*Usage, from []int) {
	for i, d := range defs {
		rec, ok := sess.Task(d.Name)
		if !ok {
			continue
		}
		if rec.Attempts != 0 {
			if attempts == nil {
				attempts = make([]int, len(defs))
			}
			attempts[i] = rec.Attempts
		}
		if rec.Usage != nil {
			if usage == nil {
				usage = make([]*Usage, len(defs))
			}
			usage[i] = rec.Usage
		}
		// A tool loop that a later attempt resumed and completed: its
		// result carries the turns of the attempts from the one that
		// began it.
		if l := sess.ToolLogs[d.Name]; l != nil && l.Ended == "completed" && l.Attempt > 0 && l.Attempt < rec.Attempts {
			if from == nil {
				from = make([]int, len(defs))
			}
			from[i] = l.Attempt
		}
	}
	return attempts, usage, from
}

// engine runs the engine on one pass's task set.
func (p *pass) engine(ctx context.Context, set *TaskSet, state map[string]any, sess *checkpoint.Session,
	restored *checkpoint.Restored, rec *journalRecorder, begun func(taken int)) (*Summary, bool, error) {
	o, store, id, rep := p.o, p.store, p.id, p.rep
	team, defs := set.Team, set.Defs
	// What the engine takes over from the checkpoint.
	e := &Engine{
		Session:        id,
		Started:        p.started,
		Team:           team,
		Render:         team.RenderTask,
		State:          state,
		Decisions:      map[string]string{},
		DroppedUsage:   sess.Team.DroppedUsage,
		MaxParallel:    o.MaxParallel,
		ResumeCommand:  resumeCommand(o, id, p.secrets),
		DecideCommand:  p.decideCommand,
		Observer:       saidSkips{Observer: logHints{Observer: verboseDeltas(rep, o.Verbose), kept: p.commands.Kept, session: id, store: o.Home}, before: p.skippedBefore},
		Regrow:         regrowOf(set),
		RanBefore:      p.ranBefore,
		CutBefore:      p.cutBefore,
		RestoredBefore: p.restoredBefore,
		UsedBefore:     p.usedBefore,
		Begun:          begun,
	}
	if restored == nil || restored.Kind != checkpoint.RestorePartial {
		// After a strict mismatch the shared state comes back whole (DESIGN
		// §4): what a task finds before any task it follows set a variable.
		e.Initial = set.State
	}
	if g, err := set.graph(); err == nil {
		e.Graph = g
	} else {
		e.Context = schedule.Contexts(team, defs) // setup says what is wrong
	}
	e.texts = p.texts
	e.Guarded = guardedFiles(p.specAbs, p.configPath, store, filepath.Dir(p.specAbs), p.commands.TempDir)
	e.Blobs = blobOpener(blobsOf(store), id)
	e.Held, e.Recorded = cutoffInputs(restored, defs, e.Blobs)
	if restored != nil {
		e.Kept = restored.Kept
	}
	for k, v := range sess.Checkpoint.Decisions {
		e.Decisions[k] = v
	}
	e.Attempts, e.PriorUsage, e.ResultFrom = priorOf(sess, defs)
	if restoredCount(restored) > 0 {
		e.Restored = func(i int) (Output, bool) {
			if i >= len(defs) {
				return Output{}, false
			}
			d := defs[i]
			rec, ok := sess.Task(d.Name)
			if !ok || rec.Status != checkpoint.StatusCompleted || !restored.Done(d.Name) {
				return Output{}, false
			}
			return Output{Description: d.Description, Raw: rec.Result, Agent: d.Agent, OutputFormat: "RAW"}.withBlob(rec.Blob, e.Blobs), true
		}
	}
	llms := &LLMs{Getenv: p.getenv, Render: team.Render, HTTP: o.HTTP, Live: o.Mode == ModeAuto && o.IO.IsTerminal(), Dir: team.ToolDir(p.specAbs)}
	llms.Guarded = guardedFiles(p.specAbs, p.configPath, store, llms.Dir, p.commands.TempDir)
	llms.Restore(turnsOf(sess.Memory))
	llms.RestoreTools(sess.ToolLogs)
	llms.Commands = p.commands
	llms.Retried = e.requestRetried
	e.Executor = Agents{Command: p.commands, LLM: llms}
	e.Memory = llms
	e.Recorder = rec
	if l, ok := p.lock.(Losable); ok {
		e.Lock = l
	}

	e.Finish = func() error {
		// A store that failed while the run recorded may have lost the
		// session (lostStore); one that fails only to fold the journal
		// in (a full disk) still holds it.
		p.lostStore = e.storeFailed()
		return rec.close()
	}
	sum, runErr := e.Run(ctx)

	cerr := rec.close()
	if e.Grew && runErr == nil && cerr == nil {
		for i, tk := range team.Tasks {
			if e.sched.Status(i) == schedule.Completed && !e.tasks[i].restored {
				p.ranBefore[tk.Name] = true
			}
			if e.sched.Status(i) == schedule.Completed && e.tasks[i].cutoff {
				p.cutBefore[tk.Name] = true
			}
			if e.tasks[i].restored {
				p.restoredBefore[tk.Name] = true
			}
			if e.sched.Status(i) == schedule.Skipped {
				p.skippedBefore[tk.Name] = true
			}
		}
		p.usedBefore = sum.Usage
		return sum, true, nil
	}
	if sum != nil {
		ev := map[Outcome]string{Succeeded: checkpoint.EventCompleted, Failed: checkpoint.EventFailed,
			Halted: checkpoint.EventHalted, Interrupted: "interrupted", StoreFailed: checkpoint.EventFailed}[sum.Outcome]
		if aerr := p.project.Audit(context.WithoutCancel(ctx), checkpoint.AuditRecord{Event: ev, Session: id, Store: store.Location()}); aerr != nil && runErr == nil {
			p.warn(fmt.Sprintf("audit log: %v", aerr))
		}
	}
	if runErr != nil {
		return sum, false, runErr
	}
	if cerr != nil {
		// Every record is durable in the journal; only the compaction failed.
		return sum, false, &StoreError{Err: cerr}
	}
	return sum, false, nil
}

// saidSkips shows the events of a pass but the skips of tasks an earlier
// pass of the run skipped and said so (before): the pass that expands
// again decides them again, as they were.
type saidSkips struct {
	Observer
	before map[string]bool
}

func (s saidSkips) Observe(ev Event) {
	if ev.Type == TaskSkipped && s.before[ev.Task] {
		return
	}
	s.Observer.Observe(ev)
}

// regrowOf is the Engine's Regrow for a pass of set: a foreach over a
// task's output_variable expands again when that task completes with
// another value than the one its instances were made from, or when there
// were none yet (the foreach was deferred); and when a route skips the
// task its instances were made from (its recorded output): a new run's
// foreach then has no list (joinResults), which the next pass, finding
// it skipped, defers to.
func regrowOf(set *TaskSet) func(int, any, bool) bool {
	if len(set.Dynamic) == 0 {
		return nil
	}
	return func(i int, value any, skipped bool) bool {
		tk := set.Team.Tasks[i]
		if !set.Dynamic[tk.OutputVariable] {
			return false
		}
		used, ok := set.Produced[tk.OutputVariable]
		if skipped {
			g, err := set.graph()
			if !ok || err != nil {
				return false
			}
			for j := range set.Team.Tasks {
				if g.NoInstance(j, func(p int) bool { return p == i }) {
					return true
				}
			}
			return false
		}
		return !ok || spec.FormatValue(used) != spec.FormatValue(value)
	}
}

// WaitInterruptedError is a run interrupted while it waited (--wait) for
// another run to release the session: nothing was changed. It unwraps to
// the context's error.
type WaitInterruptedError struct {
	Held *checkpoint.HeldError // who held the session when the wait began
	Err  error
}

func (e *WaitInterruptedError) Error() string {
	return fmt.Sprintf("interrupted while waiting for session %s held by %s; nothing was changed", e.Held.ID, holder(e.Held))
}

// ReadInterruptedError is a command interrupted while it read its input
// (a pipe, a FIFO), before it wrote anything. It unwraps to the context's
// error.
type ReadInterruptedError struct {
	Read string // what was being read
	Done string // what that means: "nothing was run"
	Err  error
}

func (e *ReadInterruptedError) Error() string {
	return fmt.Sprintf("interrupted while reading %s; %s", e.Read, e.Done)
}

func (e *ReadInterruptedError) Unwrap() error { return e.Err }

// holder names the run holding a session.
func holder(h *checkpoint.HeldError) string {
	if h.PID <= 0 {
		return "another run"
	}
	return fmt.Sprintf("pid %d on %s (started %s)", h.PID, h.Host, h.Started.Local().Format(time.RFC3339))
}

func (e *WaitInterruptedError) Unwrap() error { return e.Err }

// startClaimed starts res.ID, a new session this run holds (rec.lock), as
// rec has it, and makes it the project's active one in place of res.Prev:
// it begins the session's journal (its header) first, then claims it. won is false when an
// overlapping run claimed another first: then, as on an error, the
// session is discarded (lock released), nothing of it left. The project
// is checked writable first: a run that cannot record its session there
// writes none.
func startClaimed(ctx context.Context, store checkpoint.Backend, project checkpoint.ProjectState, rec *journalRecorder, res Resolution) (won bool, err error) {
	if p, ok := project.(interface{ CheckWritable() error }); ok {
		err = p.CheckWritable()
	}
	if err == nil {
		err = rec.begin()
	}
	if err == nil {
		var got string
		if got, err = project.ClaimActive(ctx, res.Prev, res.ID); err == nil && got == res.ID {
			return true, nil
		}
	}
	rec.close() // the journal, if begun, before its session goes
	// The id is this run's alone and will never be used.
	if derr := store.Discard(context.WithoutCancel(ctx), rec.lock); err == nil {
		err = derr
	}
	return false, err
}

// lockSession takes the session's lock, waiting up to wait when another
// run holds it. Interrupted while waiting, it says so plainly: the
// store's "context canceled" and its advice to rerun with --wait would
// read as nonsense to someone who just pressed Ctrl-C.
func lockSession(ctx context.Context, store checkpoint.Backend, id string, wait time.Duration, note func(string)) (checkpoint.Lock, error) {
	l, err := store.Lock(ctx, id, 0)
	var held *checkpoint.HeldError
	if wait <= 0 || !errors.As(err, &held) {
		return l, err
	}
	// A run that waits says for whom, or it looks hung.
	note(fmt.Sprintf("session %s is held by %s; waiting for it to finish (--wait)", id, holder(held)))
	l, err = store.Lock(ctx, id, wait)
	if err != nil && ctx.Err() != nil {
		return nil, &WaitInterruptedError{Held: held, Err: ctx.Err()}
	}
	return l, err
}

// PrefetchSession starts decoding, on another core while the spec is
// parsed, the session a --continue (or a plan) of specPath will most likely
// load: id, else the project's active one, when the store can (the file
// store's Load takes it only if the files it reads are the ones decoded).
func PrefetchSession(ctx context.Context, store checkpoint.Backend, specPath, id string) {
	p, ok := store.(interface{ Prefetch(id string) })
	if !ok {
		return
	}
	if id == "" {
		id, _ = store.Project(filepath.Dir(specPath)).Active(ctx)
	}
	p.Prefetch(id)
}

// lockFiles is a session lock that is a file, beside the session's
// journal (the file store's): a live run keeps its journal open, so the
// journal tells who runs the session should the lock file be removed or
// moved (liveHolder).
type lockFiles interface {
	Path() string
	JournalPath() string
}

// LiveRunError: the run that started a session's running tasks is alive
// on this host (it keeps the session's journal open: liveHolder), though
// its lock file was removed or moved (by hand) while it ran, which let
// this run take the lock. Its tasks are no leftovers: they were left
// running. It wraps ErrLocked (exit 4).
type LiveRunError struct {
	Session string
	PID     int
	Lock    string
}

func (e *LiveRunError) Error() string {
	return fmt.Sprintf("session %s is still being run by pid %d on this host: its lock file %s was removed or moved while that run held it (so this run could take the lock); its tasks were left running, not killed; that run stops by itself within seconds, saying it lost the session (exit 5): wait for it to end, then rerun with --continue",
		e.Session, e.PID, e.Lock)
}

func (e *LiveRunError) Unwrap() error { return checkpoint.ErrLocked }

// orphansNote tells what killOrphans did. lapses says the store's lock
// can lapse while its holder lives (PostgreSQL's, at the end of its
// lease): then the earlier run may be alive, stalled, not ended.
func orphansNote(id string, pids []int, lapses bool) string {
	list := make([]string, len(pids))
	for i, p := range pids {
		list[i] = strconv.Itoa(p)
	}
	what := "process " + list[0] + " (and its process group)"
	if len(pids) > 1 {
		what = "processes " + strings.Join(list, ", ") + " (and their process groups)"
	}
	if lapses {
		return fmt.Sprintf("killed %s left running by an earlier run of session %s, which no longer holds the session: it ended, or its lease expired or its connection broke while it ran (it may still be alive; it can no longer write to the session)", what, id)
	}
	return fmt.Sprintf("killed %s left running by an earlier run of session %s that ended without stopping its tasks", what, id)
}

// SpecProblems is what refuses team before anything runs, whatever the
// environment: LLM agents that some task uses and that have no model even
// after the project's config at configPath, models whose provider teamrun
// cannot send to, and dir: folders that do not exist. run, plan and
// validate all refuse a team on them (exit 2).
func SpecProblems(team *spec.Team, configPath string) []spec.Diagnostic {
	problems := append(team.WithoutModel(configPath), llm.UnservedModels(team)...)
	problems = append(problems, ownOutputFiles(team, guardedFiles(absOr(team.File), configPath, nil, filepath.Dir(team.File), ""))...)
	return append(problems, team.MissingDirs()...)
}

// checkLLMAgents refuses, before anything is written, a team with
// SpecProblems or whose LLM agents name a key variable that is not set.
func checkLLMAgents(team *spec.Team, configPath string, getenv func(string) string) error {
	var problems []string
	for _, d := range SpecProblems(team, configPath) {
		problems = append(problems, d.String())
	}
	for _, d := range MissingKeys(team, getenv) {
		problems = append(problems, d.String())
	}
	if len(problems) > 0 {
		return &UsageError{Err: errors.New(strings.Join(problems, "\n"))}
	}
	return nil
}

// MissingKeys are the LLM agents some task uses whose model's key (or
// another setting read from the environment) is missing here: run refuses
// the team on them (exit 2); plan, which calls no model, warns, as the
// environment of the run may differ. One per llm setting, at it.
func MissingKeys(team *spec.Team, getenv func(string) string) []spec.Diagnostic {
	var out []spec.Diagnostic
	seen := map[spec.Pos]bool{}
	for _, a := range usedLLMAgents(team) {
		_, err := llm.Resolve(a.LLM, getenv)
		if err == nil || errors.Is(err, llm.ErrUnserved) {
			continue
		}
		pos, path := a.LLM.Pos, a.KeyPath()+".llm"
		switch {
		case pos == (spec.Pos{}):
			pos, path = a.Pos, a.KeyPath()
		case seen[pos]:
			continue
		case team.LLM != nil && pos == team.LLM.Pos:
			path = "llm" // inherited: fix it there, said once
		}
		seen[pos] = true
		out = append(out, spec.Diagnostic{File: team.File, Line: pos.Line, Column: pos.Column, Path: path, Message: err.Error()})
	}
	return out
}

// existsError refuses a new session under an id the store has (DESIGN §5:
// nothing is overwritten).
func existsError(id, location string) error {
	return usagef("session %s already exists in %s: resume it with --continue, or name a new one with --session", id, location)
}

// teamSecret is a value a run redacts from everything it writes or prints,
// and the environment variable that holds it whole ("" when none does: an
// MCP header's value, a base URL's credential), which a printed command
// names in its place.
type teamSecret struct{ value, env string }

// secretStore is a store that connects with passwords (PostgreSQL's).
type secretStore interface{ Secrets() []string }

// teamSecrets are the secrets of the team's LLM agents, each once: their
// API keys, the credentials in their base URLs, and the MCP servers' URL
// credentials and header values (a token a server or a gateway may echo
// as a proxy echoes a key); and the store's passwords, which a task's
// environment holds (PGPASSWORD) and a command such as env prints.
func teamSecrets(team *spec.Team, store checkpoint.Backend, getenv func(string) string) []teamSecret {
	var out []teamSecret
	add := func(v, env string) {
		if v != "" && !slices.ContainsFunc(out, func(s teamSecret) bool { return s.value == v }) {
			out = append(out, teamSecret{value: v, env: env})
		}
	}
	// Every declared agent's, not only those with a task: a tool or a
	// command prints what is in its environment, a key an agent without
	// a task names included.
	for _, a := range team.Agents {
		if a.Kind != spec.LLMAgent || a.LLM == nil || a.LLM.Model == "" {
			continue
		}
		if ep, err := llm.Resolve(a.LLM, getenv); err == nil {
			env := ep.KeyVar
			if !spec.ShowsVarName(env) {
				env = "" // never printed in a resume command: it may be a key
			}
			add(ep.APIKey, env)
			for _, v := range llm.URLSecrets(ep.BaseURL) {
				add(v, "")
			}
		}
		for _, v := range tools.HeaderValues(a.MCP, getenv) {
			add(v, "")
		}
	}
	for _, v := range tools.HeaderValues(team.MCP, getenv) {
		add(v, "")
	}
	for _, m := range team.MCP {
		for _, v := range llm.URLSecrets(m.URL) {
			add(v, "")
		}
	}
	if s, ok := store.(secretStore); ok {
		for _, v := range s.Secrets() {
			add(v, "")
		}
	}
	return out
}

func secretValues(secrets []teamSecret) []string {
	keys := make([]string, 0, len(secrets))
	for _, s := range secrets {
		keys = append(keys, s.value)
	}
	return keys
}

// redactor is what a session's texts are stored through (Session.Redact):
// keys redacted as a task's result is; nil when there are none.
func redactor(keys []string) func(string) string {
	if !slices.ContainsFunc(keys, llm.Redactable) {
		return nil
	}
	return func(s string) string { return llm.RedactKeys(s, keys...) }
}

// usedLLMAgents are the LLM agents with a model that some task uses: those
// whose keys a run checks (it redacts every agent's: teamSecrets).
func usedLLMAgents(team *spec.Team) []*spec.Agent {
	used := team.UsedAgents()
	var out []*spec.Agent
	for _, a := range team.Agents {
		if a.Kind == spec.LLMAgent && a.LLM != nil && a.LLM.Model != "" && used[a.Name] {
			out = append(out, a)
		}
	}
	return out
}

func agentRecords(team *spec.Team, state map[string]any) []checkpoint.AgentRecord {
	recs := make([]checkpoint.AgentRecord, 0, len(team.Agents))
	for _, a := range team.Agents {
		recs = append(recs, checkpoint.AgentRecord{Name: a.Name, Kind: a.Kind.String(), Key: team.AgentKey(a.Name, state), Memory: a.Memory, Tools: team.ToolKeys(a.Name)})
	}
	return recs
}

// ResumeCommand is the command that continues session id of this run.
func ResumeCommand(o Options, id string) string { return resumeCommand(o, id, nil) }

// resumeCommand is ResumeCommand with the run's secrets kept out of its
// --var values (varArg).
func resumeCommand(o Options, id string, secrets []teamSecret) string {
	flags := append([]string{"--continue"}, shellcmd.Flag("--session", id)...)
	keys := o.VarOrder
	if len(keys) == 0 {
		for k := range o.Vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	for _, k := range keys {
		flags = append(flags, "--var", varArg(k, o.Vars[k], secrets))
	}
	if o.Reuse == checkpoint.ReuseUnchanged {
		flags = append(flags, "--reuse", "unchanged")
	}
	return shellcmd.Command("run", nil, []string{o.SpecPath}, append(flags, cmdline.Store(o.Home)...))
}

// varArg is --var's KEY=VALUE quoted for a shell. A secret in the value
// is named by the environment variable that holds it ('k='"$MY_KEY"), so
// that the pasted command gives the run the real value, or else redacted:
// a printed command never shows a key.
func varArg(k, v string, secrets []teamSecret) string {
	keys := secretValues(secrets)
	var b strings.Builder
	quoted := func(s string) {
		if s != "" {
			b.WriteString(shellcmd.Quote(llm.RedactKeys(s, keys...)))
		}
	}
	before := k + "="
	for {
		at, next := -1, teamSecret{}
		for _, s := range secrets {
			if s.env == "" || !llm.Redactable(s.value) {
				continue
			}
			if i := strings.Index(v, s.value); i >= 0 && (at < 0 || i < at || i == at && len(s.value) > len(next.value)) {
				at, next = i, s
			}
		}
		if at < 0 {
			quoted(before + v)
			return b.String()
		}
		quoted(before + v[:at])
		b.WriteString(`"$` + next.env + `"`)
		before, v = "", v[at+len(next.value):]
	}
}

// InterruptedError is the error recorded for a task a signal stopped: it
// tells an interrupted session from a failed one.
const InterruptedError = checkpoint.InterruptedError

// haltedPrefix begins the error recorded for a task halted in the middle
// (checkpoint.HaltedError).
const haltedPrefix = checkpoint.HaltedErrorPrefix

// haltedError is what a halt in the middle of a task records as its
// error: the tool call or the budget, and the command that settles it.
func haltedError(h *Halt) string {
	if h.Budget != "" {
		s := checkpoint.BudgetHaltPrefix + h.Budget
		if len(h.Commands) > 0 {
			s += "; raise it with " + h.Commands[0]
		}
		return s
	}
	if h.Loop != "" {
		return haltedPrefix + fmt.Sprintf("its tool loop ended on %s after calls of tools that were not idempotent; raise it, or start the loop afresh with %s", h.Loop, h.decideText())
	}
	s := haltedPrefix + fmt.Sprintf("tool %s was started with %s without a recorded result", h.Tool, h.Arguments)
	if c := h.decideText(); c != "" {
		s += "; settle it with " + c
	}
	return s
}

// decideText is the halt's decide command with its options in place of
// the VALUE placeholder: "teamrun session decide s1 work rerun|fail|unknown".
func (h *Halt) decideText() string { return cmdline.OneOf(h.Command, h.Options) }

// journalRecorder turns engine events into checkpoint records. It begins
// the session's journal when asked, or at its first record. It is safe for
// concurrent use: records of tasks running side by side meet in the
// journal, which syncs them together (group commit).
type journalRecorder struct {
	mu    sync.Mutex // guards j's beginning and staged
	ctx   context.Context
	store checkpoint.Backend
	lock  checkpoint.Lock
	sess  *checkpoint.Session
	j     checkpoint.Journal
	warn  func(string)
	done  bool
	// staged are records the next Record or Flush makes durable with its
	// own, in one sync (Stager).
	staged []checkpoint.Record
	// host and pgid go on every started record (checkpoint.Record).
	host string
	pgid int
	// prior are the tasks the session file records skipped, under a full
	// restore (nil otherwise); deferred are skips it already records,
	// written only if the journal begins.
	prior    map[string]bool
	deferred []checkpoint.Record
	// redact is what the session's texts are stored through (its Redact).
	redact func(string) string
}

func (r *journalRecorder) begin() error {
	r.sess.Redact = r.redact
	j, err := r.store.Begin(r.ctx, r.lock, r.sess)
	if err != nil {
		return err
	}
	r.j = j
	r.flushWarnings()
	return nil
}

func (r *journalRecorder) flushWarnings() {
	for _, w := range r.j.Warnings() {
		r.warn(w)
	}
}

// skippedBefore reports whether the session file has task skipped.
func (r *journalRecorder) skippedBefore(task string) bool { return r.prior[task] }

// skippedIn is the set of tasks sess records skipped (nil: none), each by
// its record Session.Task finds (a hand-edited file may repeat a name).
func skippedIn(sess *checkpoint.Session) map[string]bool {
	var out map[string]bool
	for i := range sess.Team.Tasks {
		t := &sess.Team.Tasks[i]
		if t.Status != checkpoint.StatusSkipped {
			continue
		}
		if first, _ := sess.Task(t.Name); first == t {
			if out == nil {
				out = map[string]bool{}
			}
			out[t.Name] = true
		}
	}
	return out
}

// close compacts the journal into the session file, once.
func (r *journalRecorder) close() error {
	if r.j == nil || r.done {
		return nil
	}
	r.done = true
	err := r.Flush() // the engine flushed already; this only guards
	if cerr := r.j.Close(); err == nil {
		err = cerr
	}
	r.flushWarnings()
	return err
}

// Stage keeps ev's records for the next Record or Flush.
func (r *journalRecorder) Stage(ev Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	recs, err := r.records(ev)
	r.staged = append(r.staged, recs...)
	return err
}

// Flush makes the staged records durable.
func (r *journalRecorder) Flush() error { return r.write(nil) }

func (r *journalRecorder) Record(ev Event) error { return r.write(&ev) }

// write makes the staged records and ev's durable together.
func (r *journalRecorder) write(ev *Event) error {
	r.mu.Lock()
	var recs []checkpoint.Record
	if ev != nil {
		var err error
		if recs, err = r.records(*ev); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	recs = append(r.staged, recs...)
	r.staged = nil
	j := r.j
	r.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	err := checkpoint.RecordAll(j, recs...)
	r.flushWarnings()
	return err
}

// records are ev's checkpoint records; they begin the journal if need be.
// r.mu is held.
func (r *journalRecorder) records(ev Event) ([]checkpoint.Record, error) {
	var recs []checkpoint.Record
	if r.j == nil {
		if ev.Type == TaskSkipped && r.skippedBefore(ev.Task) {
			// Routing skipped it again, as the file says: a finished
			// session's --continue writes nothing (README). Should the
			// journal begin after all, the skip goes first.
			r.deferred = append(r.deferred, checkpoint.Record{Kind: checkpoint.TaskSkipped, Task: ev.Task, At: ev.Time})
			return nil, nil
		}
		if err := r.begin(); err != nil {
			return nil, err
		}
		recs, r.deferred = r.deferred, nil
	}
	// A task's usage is everything its requests cost in the session,
	// a staged record of it included.
	prev, _ := r.j.Task(ev.Task)
	usage := prev.Usage
	for _, s := range r.staged {
		// A staged request's usage is its own, not the task's: the end
		// record sets it in place of them all (WithoutAttempt).
		if s.Task == ev.Task && s.Usage != nil && s.Kind != checkpoint.RequestPaid {
			usage = s.Usage
		}
	}
	if endsAttempt(ev.Type) {
		// It carries every request of the attempt, those its tool
		// loop's turns recorded as they went included.
		usage = usage.WithoutAttempt(ev.Attempt)
	}
	usage = usage.Plus(ev.Usage)
	switch ev.Type {
	case TaskStarted:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: ev.Task, Attempt: ev.Attempt, Host: r.host, PGID: r.pgid, Usage: ev.Unended, At: ev.Time})
	case TaskRetrying, TaskFailed:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: ev.Task, Error: ev.Error, RetryCount: ev.RetryCount, Usage: usage, At: ev.Time})
	case TaskInterrupted:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: ev.Task, Error: InterruptedError, RetryCount: ev.RetryCount, Usage: usage, At: ev.Time})
	case TaskHalted:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: ev.Task, Error: ev.Error, RetryCount: ev.RetryCount, Usage: usage, At: ev.Time})
	case TaskSkipped:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.TaskSkipped, Task: ev.Task, At: ev.Time})
	case TaskReused, TaskCompleted:
		// Whatever produced it (an LLM, a foreach's join): a result over
		// the threshold is stored out of line, durable before the record.
		if ev.ResultBlob == nil && len(ev.Result) > checkpoint.BlobThreshold {
			if bs := blobsOf(r.store); bs != nil {
				b, err := bs.PutBlob(r.ctx, r.sess.ID, strings.NewReader(ev.Result))
				if err != nil {
					return nil, err
				}
				ev.Result, ev.ResultBlob = "", &b
			}
		}
	}
	switch ev.Type {
	case TaskReused:
		rec := checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: ev.Task, Result: ev.Result, Blob: ev.ResultBlob, Usage: prev.Usage, At: ev.Time}
		if ev.OutputVariable != "" {
			rec.Variables = map[string]any{ev.OutputVariable: ev.OutputValue}
			if !ev.Overwritten {
				rec.State = rec.Variables
			}
		}
		recs = append(recs, rec)
	case TaskCompleted:
		rec := checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: ev.Task, Result: ev.Result, Blob: ev.ResultBlob, RetryCount: ev.RetryCount, Usage: usage, At: ev.Time}
		if ev.OutputVariable != "" {
			rec.Variables = map[string]any{ev.OutputVariable: ev.OutputValue}
			if !ev.Overwritten {
				rec.State = rec.Variables
			}
		}
		if len(ev.Memory) > 0 {
			// In the same record: a task never counts as completed while
			// its agent's turns are missing from the memory, and one
			// fdatasync covers both.
			rec.Agent, rec.Messages = ev.Agent, messagesOf(ev.Memory)
		}
		recs = append(recs, rec)
	case RunHalted:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.CurrentTask, Task: ev.Task, At: ev.Time})
	case ToolTurn, ToolStarted, ToolResult, ToolEnded, ToolResumed:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.RecordKind(ev.Type), Task: ev.Task, Attempt: ev.Attempt, Tool: ev.Tool, At: ev.Time})
	case RequestPaid:
		recs = append(recs, checkpoint.Record{Kind: checkpoint.RequestPaid, Task: ev.Task, Attempt: ev.Attempt, Usage: ev.Paid, At: ev.Time})
	}
	return recs, nil
}

// turnsOf and messagesOf convert an agent's conversation between the
// checkpoint's type and the engine's.
func turnsOf(memory map[string][]checkpoint.Message) map[string][]Turn {
	out := make(map[string][]Turn, len(memory))
	for agent, msgs := range memory {
		turns := make([]Turn, len(msgs))
		for i, m := range msgs {
			turns[i] = Turn{Role: m.Role, Content: m.Content, Task: m.Task}
		}
		out[agent] = turns
	}
	return out
}

func messagesOf(turns []Turn) []checkpoint.Message {
	out := make([]checkpoint.Message, len(turns))
	for i, t := range turns {
		out[i] = checkpoint.Message{Role: t.Role, Content: t.Content, Task: t.Task}
	}
	return out
}

// Interruptible is f's result, given up when ctx ends first: a read of a
// pipe or a FIFO whose writer never comes must not hold off Ctrl-C. f is
// left blocked; the process is on its way out.
func Interruptible[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
