package checkpoint

// Store administration for the session commands (list, show, prune, decide)
// and the active-session fallback shared by run --continue, plan and show.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/spec"
)

// EventDecided: a decision was recorded for a human task.
const EventDecided = "decided"

// Active is how a project's active session was resolved.
type Active struct {
	// ID is the session to use: the active one (which a run may be
	// starting: held, not yet in the store), or the one adopted in its
	// place; "" when there is none (a run then starts a new session).
	ID string
	// Named is what state.json names, "" when nothing.
	Named string
	// Pending: ID is held by a run that claimed it and is starting it; it
	// is not in the store yet.
	Pending bool
	// Missing: state.json names a session this store lacks; Notes say
	// so. ResolveActive audited the fact (EventMissing), FindActive not.
	Missing bool
	// Adopted: ID is the most recently updated session of the same spec,
	// taken in place of the missing one.
	Adopted bool
	// Notes are the warnings to print on stderr, in order.
	Notes []string
	// lost and detail are the EventMissing record of a Missing session,
	// which ResolveActive writes.
	lost   Missing
	detail string
}

// ResolveActive is FindActive for a run, which acts on the fallback: when
// state.json names a session absent from the store, it writes an
// EventMissing audit record before it falls back (DESIGN §5).
func ResolveActive(ctx context.Context, s Backend, p ProjectState, specPath string) (Active, error) {
	a, err := FindActive(ctx, s, p, specPath)
	if err != nil || !a.Missing {
		return a, err
	}
	if err := a.lost.Audit(ctx, p, a.detail); err != nil {
		return Active{}, err
	}
	return a, nil
}

// FindActive finds the project's active session in s (DESIGN §5) and
// writes nothing: plan and session show only look. When state.json names
// a session absent from the store it warns (Notes) and falls back to the
// most recently updated session of specPath in this store, or to none.
// specPath is the spec's absolute path; "" (commands without a spec)
// accepts any spec in the project's folder.
func FindActive(ctx context.Context, s Backend, p ProjectState, specPath string) (Active, error) {
	named, err := p.Active(ctx)
	if err != nil {
		return Active{}, err
	}
	a := Active{Named: named}
	if named == "" {
		return a, nil
	}
	ok, err := s.Exists(ctx, named)
	if err != nil {
		return Active{}, err
	}
	if !ok {
		// A run writes the session it starts before it claims it as the
		// active one; earlier teamruns claimed it first, holding its lock,
		// and a store may be shared with one: while a run holds it, it is
		// being started, not missing. Asked in this order, a run
		// that ends in between has written it by then.
		held, err := s.Held(ctx, named)
		if err != nil {
			return Active{}, err
		}
		if held != nil {
			a.ID, a.Pending = named, true
			return a, nil
		}
		if ok, err = s.Exists(ctx, named); err != nil {
			return Active{}, err
		}
	}
	if ok {
		// Two specs in one folder share state.json: the other spec's
		// session is not this one's to take over.
		head, err := s.Head(ctx, named)
		if err != nil || specPath == "" || head.SpecPath == "" || SameSpec(p, head.SpecPath, specPath) {
			a.ID = named
			return a, nil
		}
		a.Notes = append(a.Notes, fmt.Sprintf("the active session %s belongs to %s, not to this spec", named, head.SpecPath))
		best, err := latestOf(ctx, s, p, specPath)
		if err != nil {
			return Active{}, err
		}
		if best != nil {
			a.ID, a.Adopted = best.ID, true
			a.Notes = append(a.Notes, fmt.Sprintf("continuing %s, the most recently updated session of %s in this store", best.ID, specPath))
		}
		return a, nil
	}
	a.Missing = true
	m, err := FindMissing(ctx, s, p, named)
	if err != nil {
		return Active{}, err
	}
	if m.Damage != nil {
		a.Notes = append(a.Notes, m.Damage.Error())
	}
	a.Notes = append(a.Notes, m.Note(fmt.Sprintf("%s names the active session %s, which is", p.Where(), named)))
	detail := "state.json names it; not in this store"
	best, err := latestOf(ctx, s, p, specPath)
	if err != nil {
		return Active{}, err
	}
	what := specPath
	if what == "" {
		what = "a spec in " + p.Dir()
	}
	if best != nil {
		a.ID, a.Adopted = best.ID, true
		a.Notes = append(a.Notes, fmt.Sprintf("falling back to %s, the most recently updated session of %s in this store", best.ID, what))
		detail += "; fell back to " + best.ID
	} else {
		a.Notes = append(a.Notes, fmt.Sprintf("no other session of %s in this store", what))
		detail += "; no other session of the spec in this store"
	}
	a.lost, a.detail = m, detail
	return a, nil
}

// SameSpec reports whether the specs at a and b are one spec of project
// p: the same file (SamePath), or, in a project named apart from its
// folder (TEAMRUN_PROJECT, a database store: one project over the
// checkouts of several machines, its spec in another folder on each), the
// same file name.
func SameSpec(p ProjectState, a, b string) bool { return ownerOf(p, b).sameSpec(a) }

// owner decides which sessions are project p's (ofProject) and which of
// those are of its spec (sameSpec), for a loop over a store's sessions:
// each distinct path is looked up once.
type owner struct {
	key  string // the project's key; "" for a store without keys (files)
	dir  *pathMatch
	spec *pathMatch
}

func ownerOf(p ProjectState, specPath string) *owner {
	o := &owner{dir: matchPath(p.Dir()), spec: matchPath(specPath)}
	if named, ok := p.(interface{ Key() string }); ok {
		o.key = named.Key()
	}
	return o
}

func (o *owner) sameSpec(specPath string) bool {
	return o.spec.same(specPath) || o.key != "" && o.key != o.dir.path && filepath.Base(specPath) == filepath.Base(o.spec.path)
}

// ofProject reports whether session e is the project's: the project the
// store recorded it was started in, or, where it recorded none, the
// project of its spec's folder. A project named apart from its folder
// (TEAMRUN_PROJECT) shares the store, and the spec folder's path, with
// others: the session one of them started is not another's. A key is a
// path unless TEAMRUN_PROJECT named it, and one written on another
// machine compares by its text (SamePath).
func (o *owner) ofProject(e Summary) bool {
	if o.key != "" && e.Project != "" {
		return SamePath(e.Project, o.key)
	}
	return o.dir.same(filepath.Dir(filepath.Clean(e.SpecPath)))
}

// latestOf is the most recently updated readable session of project p and
// of specPath (sameSpec), or, for "", of any spec of p.
func latestOf(ctx context.Context, s Backend, p ProjectState, specPath string) (*Entry, error) {
	list, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	o := ownerOf(p, specPath)
	var best *Entry
	for i := range list {
		sum := &list[i]
		if sum.Err != nil || !o.ofProject(sum.Summary) {
			continue
		}
		if specPath != "" && !o.sameSpec(sum.SpecPath) {
			continue
		}
		if best == nil || sum.UpdatedAt.After(best.UpdatedAt) {
			best = sum
		}
	}
	return best, nil
}

// Entry is a session as list and prune see it.
type Entry struct {
	Summary
	// Touched is when the session's files (snapshot or journal) were last
	// written: its last update as the file system knows it, and what
	// prune's age counts. Every checkpoint write moves it, and `touch`
	// can keep a session from being pruned.
	Touched time.Time
}

// Absent is a session the project's audit log names but this store lacks.
type Absent struct {
	ID string `json:"id"`
	// Created is the record that created it (or, when that was not kept,
	// the first record naming it).
	Created AuditRecord `json:"created"`
	// Last is the latest record naming it.
	Last AuditRecord `json:"last"`
}

// Describe says where the session was made, for "missing from" messages.
func (a Absent) Describe() string {
	r := a.Created
	return fmt.Sprintf("audit.log: %s %s at %s in %s by %s (pid %d)",
		r.Event, a.ID, r.Time.UTC().Format(time.RFC3339), r.Store, r.User, r.PID)
}

// AbsentSessions lists, in first-seen order, the sessions the audit
// records name that have no file in s. Sessions removed (deleted, pruned)
// and not created again since are gone on purpose and are left out — a
// later record of another kind ("missing": state.json still naming one;
// the end of a run that had lost its lock) does not bring them back;
// records that name no valid id are ignored.
//
// have, when not nil, is the set of ids known to be in s (from Entries), which
// spares a look-up per id.
func AbsentSessions(ctx context.Context, s Backend, recs []AuditRecord, have map[string]bool) ([]Absent, error) {
	byID := map[string]*Absent{}
	removed := map[string]bool{} // its latest record, "missing" ones aside, is its removal
	var order []string
	for _, r := range recs {
		if ValidateID(r.Session) != nil {
			continue
		}
		a, ok := byID[r.Session]
		if !ok {
			a = &Absent{ID: r.Session, Created: r}
			byID[r.Session] = a
			order = append(order, r.Session)
		} else if r.Event == EventCreated && (a.Created.Event != EventCreated || removed[r.Session]) {
			a.Created = r
		}
		a.Last = r
		// A removal is final until the id is created anew: a run that
		// lost its lock may end (and say so) after its session was
		// deleted or pruned.
		switch r.Event {
		case EventDeleted, EventPruned:
			removed[r.Session] = true
		case EventCreated:
			removed[r.Session] = false
		}
	}
	var out []Absent
	for _, id := range order {
		a := byID[id]
		if removed[id] {
			continue
		}
		ok := have[id]
		if have == nil {
			var err error
			if ok, err = s.Exists(ctx, id); err != nil {
				return nil, err
			}
		}
		if !ok {
			out = append(out, *a)
		}
	}
	return out, nil
}

// FindAbsent is the audit knowledge of one id this store lacks; ok is
// false when the audit log never named it or it was removed on purpose.
func FindAbsent(ctx context.Context, s Backend, recs []AuditRecord, id string) (Absent, bool, error) {
	var mine []AuditRecord
	for _, r := range recs {
		if r.Session == id {
			mine = append(mine, r)
		}
	}
	list, err := AbsentSessions(ctx, s, mine, nil)
	if err != nil || len(list) == 0 {
		return Absent{}, false, err
	}
	return list[0], true, nil
}

// Stale is the outcome of Prune for one session older than the cut-off,
// or for one orphan lock (Backend.OrphanLocks).
type Stale struct {
	Entry
	// Lock: not a session but a lock with no session (only ID and Touched
	// are set): a run killed after it took the lock and before it wrote
	// the session left it. Left says what else was left with it
	// (OrphanLock.Left): then it is more than a lock.
	Lock    bool
	Left    []string
	Removed bool   // removed (or, in a dry run, would be)
	Reason  string // why it was kept; "" when removed
}

// PruneOptions say what Prune removes.
type PruneOptions struct {
	Before time.Time // sessions whose files were last written before this are stale
	Active string    // the project's active session: always kept
	DryRun bool      // report, remove nothing
	// Store is the --store words of the commands its reasons tell
	// (NameStore).
	Store []string
}

// Prune removes the sessions whose files were last written before opts.Before, except the
// active session and those a run holds, and audits every removal in p. It
// returns every stale session (removed or kept, with the reason) in id
// order, then every old orphan lock (pruneOrphan), and how many newer
// sessions it kept. An unreadable session is kept: nothing corrupt is
// removed on its own.
func Prune(ctx context.Context, s Backend, p ProjectState, opts PruneOptions) (stale []Stale, newer int, err error) {
	list, err := s.List(ctx)
	if err != nil {
		return nil, 0, err
	}
	removed := &removals{s: s, p: p}
	here := matchPath(p.Dir())
	var actives map[string]string
	if ai, ok := s.(ActiveIndex); ok {
		if actives, err = ai.ActiveSessions(ctx); err != nil {
			return nil, 0, err
		}
	}
	for _, sum := range list {
		if !sum.Touched.Before(opts.Before) {
			newer++
			continue
		}
		if sum.Err != nil {
			stale = append(stale, Stale{Entry: sum, Reason: unreadable(sum.ID, sum.Err, opts.Store)})
			continue
		}
		st := Stale{Entry: sum}
		if sum.ID == opts.Active {
			st.Reason = "the project's active session"
			stale = append(stale, st)
			continue
		}
		// One store serves every project (~/.teamrun by default): another
		// project's active session is kept too, so a prune here never takes
		// the session another folder's --continue would resume. A store
		// that indexes them names its project; else it is looked for in the
		// project its spec lives in.
		if key, ok := actives[sum.ID]; ok {
			st.Reason = "the active session of project " + key
			stale = append(stale, st)
			continue
		}
		if dir := filepath.Dir(filepath.Clean(sum.SpecPath)); actives == nil && sum.SpecPath != "" && !here.same(dir) {
			// A state.json that cannot be read may name this session: not
			// knowing keeps it, as a prune in that project refuses. (A
			// project with no state.json has no active session: no error.)
			other, err := s.Project(dir).Active(ctx)
			if err != nil {
				st.Reason = fmt.Sprintf("maybe the active session of the project in %s; its state.json cannot be read: %v", dir, err)
				stale = append(stale, st)
				continue
			}
			if other == sum.ID {
				st.Reason = "the active session of the project in " + dir
				stale = append(stale, st)
				continue
			}
		}
		// Listing a big store takes a while: a run may have resumed and
		// finished the session since. Look again right before removing.
		if now, err := s.Head(ctx, sum.ID); err == nil && !now.Touched.Before(opts.Before) {
			newer++
			continue
		}
		// The list read heads only: a session damaged past its head is
		// found by loading it, and kept.
		if _, err := s.Load(ctx, sum.ID); err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // removed meanwhile by someone else
			}
			st.Reason = unreadable(sum.ID, err, opts.Store)
			stale = append(stale, st)
			continue
		}
		var held *HeldError
		if opts.DryRun {
			if held, err = s.Held(ctx, sum.ID); err != nil {
				return stale, newer, err
			}
		} else if err := s.Delete(ctx, sum.ID); err != nil {
			if !errors.As(err, &held) {
				if errors.Is(err, ErrNotFound) {
					continue // removed meanwhile by someone else
				}
				return stale, newer, err
			}
		}
		if held != nil {
			st.Reason = heldReason(held)
		} else {
			st.Removed = true
			if !opts.DryRun {
				detail := fmt.Sprintf("last updated %s, before %s", sum.Touched.UTC().Format(time.RFC3339), opts.Before.UTC().Format(time.RFC3339))
				if err := removed.audit(ctx, sum.SpecPath, AuditRecord{Event: EventPruned, Session: sum.ID, Store: s.Location(), Detail: detail}); err != nil {
					return append(stale, st), newer, err
				}
			}
		}
		stale = append(stale, st)
	}
	orphans, err := s.OrphanLocks(ctx)
	if err != nil {
		return stale, newer, err
	}
	for _, o := range orphans {
		st, report, err := pruneOrphan(ctx, s, p, o, opts)
		if report {
			stale = append(stale, st)
		}
		if err != nil {
			return stale, newer, err
		}
	}
	return stale, newer, nil
}

// unreadable is why prune keeps session id, which err says it cannot
// read; store is the --store words of the commands it tells. Something
// teamrun never puts there (a folder named <id>.json) is not the
// session's to delete: its error says to move it out; nor is a session a
// newer teamrun wrote: its error says to upgrade.
func unreadable(id string, err error, store []string) string {
	NameStore(err, store)
	var newer *NewerError
	if errors.Is(err, ErrNotRegular) || errors.As(err, &newer) {
		return fmt.Sprintf("unreadable (%v)", err)
	}
	return fmt.Sprintf("unreadable (%v): inspect it, then `%s`", err, shellcmd.Command("session delete", nil, []string{id}, store))
}

// pruneOrphan removes the orphan lock o (and what else is left with it)
// when it is debris: taken before
// the cut-off, and held by no run. A run takes a new session's lock just
// before it writes the session: a lock taken since the cut-off may be such
// a run's and is left alone, unreported. The lock is removed by taking it
// (at once, never waiting), so one a run holds is never removed and a run
// that holds it is never disturbed; under it the session is looked for
// again, for a run that wrote it and ended since the store was listed.
// report is false when o is not reported: too young, or a session now.
func pruneOrphan(ctx context.Context, s Backend, p ProjectState, o OrphanLock, opts PruneOptions) (st Stale, report bool, err error) {
	st = Stale{Entry: Entry{Summary: Summary{ID: o.ID}, Touched: o.Touched}, Lock: true, Left: o.Left}
	if !o.Touched.Before(opts.Before) {
		return st, false, nil
	}
	if opts.DryRun {
		held, err := s.Held(ctx, o.ID)
		if err != nil {
			return st, false, err
		}
		if held != nil {
			st.Reason = heldReason(held)
		} else {
			st.Removed = true
		}
		return st, true, nil
	}
	removed, err := discardOrphan(ctx, s, o.ID)
	var held *HeldError
	if errors.As(err, &held) {
		st.Reason = heldReason(held)
		return st, true, nil
	}
	if err != nil || !removed {
		return st, false, err
	}
	st.Removed = true
	detail := fmt.Sprintf("a lock with no session (its run ended before it wrote the session), last taken %s, before %s",
		o.Touched.UTC().Format(time.RFC3339), opts.Before.UTC().Format(time.RFC3339))
	if what := Leftovers(o.Left); what != "" {
		detail = fmt.Sprintf("%s of a session whose file is gone (a run or a delete cut short), last written %s, before %s",
			what, o.Touched.UTC().Format(time.RFC3339), opts.Before.UTC().Format(time.RFC3339))
	}
	return st, true, p.Audit(ctx, AuditRecord{Event: EventPruned, Session: o.ID, Store: s.Location(), Detail: detail})
}

// discardOrphan removes what s keeps of session id, which has no session
// file (OrphanLocks), lock last. The lock is taken at once, never waiting:
// one a run holds is a *HeldError, and that run is never disturbed. Under
// it the session is looked for again: removed is false when a run wrote it
// since, and nothing is removed.
func discardOrphan(ctx context.Context, s Backend, id string) (removed bool, err error) {
	l, err := s.Lock(ctx, id, 0)
	if err != nil {
		return false, err
	}
	if ok, err := s.Exists(ctx, id); err != nil || ok {
		l.Release()
		return false, err
	}
	if err := s.Discard(ctx, l); err != nil {
		return false, Own(err)
	}
	return true, nil
}

// DeleteLeft removes what s keeps of session id when its session file is
// gone: what a delete cut short (kill -9 between its removals) or a run
// killed before it wrote the session left, as prune removes it, but now
// and whatever its age. It returns what that was, in Leftovers' words
// ("lock" for a lock alone); nil when nothing is left of id, which is then
// missing from s. A run that holds the lock is a *HeldError.
func DeleteLeft(ctx context.Context, s Backend, id string) ([]string, error) {
	orphans, err := s.OrphanLocks(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(orphans, func(o OrphanLock) bool { return o.ID == id })
	if i < 0 {
		return nil, nil
	}
	removed, err := discardOrphan(ctx, s, id)
	if err != nil {
		return nil, err
	}
	if !removed {
		return nil, fmt.Errorf("session %s was written by a run while its leftovers were being removed: run `session delete %s` again", id, id)
	}
	if left := orphans[i].Left; left != nil {
		return left, nil
	}
	return []string{"lock"}, nil
}

// AuditRemoval records rec, the removal of a session whose spec is at
// specPath, in the audit log that names the session: its own project's
// (the spec's folder, whatever folder the command runs in), so that its
// `session list` does not show it "missing"; in p's when that log names
// it, or the session's project is p, or no log names it.
func AuditRemoval(ctx context.Context, s Backend, p ProjectState, specPath string, rec AuditRecord) error {
	return (&removals{s: s, p: p}).audit(ctx, specPath, rec)
}

// removals is AuditRemoval for many sessions (a prune): each project's
// audit log is read once, not once a session.
type removals struct {
	s     Backend
	p     ProjectState
	named map[string]map[string]bool // project folder -> the sessions its log names
}

func (a *removals) audit(ctx context.Context, specPath string, rec AuditRecord) error {
	if specPath != "" {
		if dir := filepath.Dir(filepath.Clean(specPath)); !SamePath(dir, a.p.Dir()) {
			own := a.s.Project(dir)
			if a.named == nil {
				a.named = map[string]map[string]bool{}
			}
			ids, ok := a.named[dir]
			if !ok {
				// Only a log that names it: the spec's folder may be gone,
				// or never have been this store's project.
				ids = map[string]bool{}
				// A damaged line is skipped: the others still count.
				recs, _ := own.AuditRecords(ctx)
				for _, r := range recs {
					ids[r.Session] = true
				}
				a.named[dir] = ids
			}
			if ids[rec.Session] {
				return own.Audit(ctx, rec)
			}
		}
	}
	return a.p.Audit(ctx, rec)
}

func heldReason(h *HeldError) string {
	if h.PID > 0 {
		return fmt.Sprintf("held by a run (pid %d on %s, started %s)", h.PID, h.Host, h.Started.UTC().Format(time.RFC3339))
	}
	return "held by a run"
}

// HumanTask checks that task is a human task of sess, for decide.
func HumanTask(sess *Session, task string) error {
	t, ok := sess.Task(task)
	if !ok {
		names := make([]string, 0, len(sess.Team.Tasks))
		for _, t := range sess.Team.Tasks {
			if t.Agent == spec.HumanAgent {
				names = append(names, t.Name)
			}
		}
		slices.Sort(names)
		if len(names) == 0 {
			return fmt.Errorf("session %s has no task %q, and no human task at all", sess.ID, task)
		}
		msg := fmt.Sprintf("session %s has no task %q; its human tasks: %s", sess.ID, task, strings.Join(names, ", "))
		if m := spec.Closest(task, names); m != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		return errors.New(msg)
	}
	if t.Agent != spec.HumanAgent {
		for _, a := range sess.Team.Agents {
			if a.Name == t.Agent && len(a.Tools) > 0 {
				// Reached only when no call of its tools waits for a
				// decision (WaitingToolCall), the other thing decide settles.
				return fmt.Errorf("task %q of session %s is done by agent %q, not by a human, and no call of its tools waits for a decision: decide takes a human task's value, or rerun, fail or unknown for a tool call that a crash or a timeout left without its result while its tool was not idempotent (one of an idempotent tool runs again by itself)", task, sess.ID, t.Agent)
			}
		}
		return fmt.Errorf("task %q of session %s is done by agent %q, not by a human: only human tasks take decisions", task, sess.ID, t.Agent)
	}
	return nil
}

// Decide records checkpoint.decisions[task] = value under the session's
// lock, through the session's journal like any transition. It fails at once
// (ErrLocked) while a run holds the session.
func Decide(ctx context.Context, s Backend, id, task, value string) error {
	return RecordOne(ctx, s, id, Record{Kind: DecisionRecorded, Task: task, Value: value}, func(sess *Session) error {
		if _, ok := sess.Task(task); !ok {
			return fmt.Errorf("session %s has no task %q", id, task)
		}
		return nil
	})
}

// RecordOne records one transition in a session no run holds: it takes the
// lock at once (ErrLocked when a run holds it), loads the session, lets
// check refuse (check may be nil), records r and folds it in. A session
// that is not there is ErrNotFound, and nothing is created for it.
func RecordOne(ctx context.Context, s Backend, id string, r Record, check func(*Session) error) error {
	// Looked up before locking: a lock takes a file in some stores.
	if _, err := s.Head(ctx, id); err != nil {
		return err
	}
	l, err := s.Lock(ctx, id, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	sess, err := s.Load(ctx, id)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(sess); err != nil {
			return err
		}
	}
	j, err := s.Begin(ctx, l, sess)
	if err != nil {
		return err
	}
	if err := j.Record(r); err != nil {
		j.Close()
		return err
	}
	return j.Close()
}
