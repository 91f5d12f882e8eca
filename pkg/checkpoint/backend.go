package checkpoint

import (
	"context"
	"strings"
	"time"
)

// Backend is where sessions live: their snapshots, their transitions and
// their locks. It is the one interface the application layer uses; the
// file store is the default implementation, an in-memory one serves tests,
// and every implementation passes the same conformance suite.
//
// Errors: ErrNotFound for an id the store lacks, a *CorruptError or a
// *NewerError for a session that cannot be read (never changed by the store
// on its own), a *HeldError (wrapping ErrLocked) for a session another run
// holds, and anything wrapping ErrStore when the store cannot be read or
// written.
type Backend interface {
	// Location names the store in messages and audit records: a folder,
	// or a URL without its password.
	Location() string
	// Lock takes the session's exclusive lock: one run per session. With
	// wait 0 it fails at once with a *HeldError naming the holder;
	// otherwise it retries until wait has passed or ctx is done. The lock
	// dies with its holder (process death leaves nothing stale).
	Lock(ctx context.Context, id string, wait time.Duration) (Lock, error)
	// Held reports who holds the session without taking it: nil when no
	// run does. It creates nothing.
	Held(ctx context.Context, id string) (*HeldError, error)
	// Head is the session's entry without its tasks (what List shows of it).
	Head(ctx context.Context, id string) (Entry, error)
	// Exists reports whether the store has the session.
	Exists(ctx context.Context, id string) (bool, error)
	// Load reads a session with every acknowledged transition folded in.
	Load(ctx context.Context, id string) (*Session, error)
	// Begin makes sess the session's snapshot and opens its journal for
	// transitions. l must hold sess's lock. A session that was not loaded
	// from the store must not replace one that is there (ErrExists).
	Begin(ctx context.Context, l Lock, sess *Session) (Journal, error)
	// List summarises every session, sorted by id; an unreadable one is
	// listed with Err set rather than failing List.
	List(ctx context.Context) ([]Entry, error)
	// Delete removes a session and everything kept beside it. It refuses
	// (ErrLocked) while a run holds the session.
	Delete(ctx context.Context, id string) error
	// Discard removes the session l holds — what was written of it, if
	// anything, and everything kept beside it, its lock's traces too — and
	// releases l: a run that started a session it will not use (it lost
	// ProjectState.ClaimActive to an overlapping run) leaves nothing behind.
	Discard(ctx context.Context, l Lock) error
	// OrphanLocks lists, sorted by id, the session locks the store keeps
	// for sessions it does not have. A run takes a session's lock before
	// it writes the session: one killed in between leaves its lock behind
	// (a file, a row) with no session. Some may be held: a run that is
	// starting. Prune decides which go; it removes one by taking its lock
	// and discarding it.
	OrphanLocks(ctx context.Context) ([]OrphanLock, error)
	// Project is the state of the project whose spec folder is dir: its
	// active session and audit log. Nothing is created until written.
	Project(dir string) ProjectState
	// Close releases what the store holds open (connections); sessions
	// and locks taken through it stay as they are until released.
	Close() error
}

// OrphanLock is a session lock a store keeps for a session it lacks, or
// what else it keeps of one (Left).
type OrphanLock struct {
	ID string
	// Touched is when the lock was last taken or released (or what is
	// left was last written): what prune's age counts.
	Touched time.Time
	// Left names what the store keeps of the session besides a lock, in
	// the words of Leftovers ("journal", "stored results", …): a journal
	// whose session file is gone (a delete cut short between its two
	// removals). nil: a lock alone.
	Left []string
}

// Leftovers says what left is, lock included ("the journal and lock");
// "" for a lock alone.
func Leftovers(left []string) string {
	if len(left) == 0 || len(left) == 1 && left[0] == "lock" {
		return ""
	}
	if len(left) == 1 {
		return "the " + left[0]
	}
	return "the " + strings.Join(left[:len(left)-1], ", ") + " and " + left[len(left)-1]
}

// Lock is a held session lock.
type Lock interface {
	ID() string
	Holder() Holder
	// Release drops the lock; releasing twice is harmless.
	Release() error
}

// Journal records a session's transitions. It is safe for concurrent use.
type Journal interface {
	// Record returns once the transition is durable: a task counts as
	// done only then.
	Record(r Record) error
	// Session is a copy of the folded view: the snapshot plus every
	// acknowledged record.
	Session() *Session
	// Task is the current record of one task.
	Task(name string) (TaskRecord, bool)
	// Warnings returns, and forgets, what degraded since the last call.
	Warnings() []string
	// Close folds the transitions into the snapshot. The lock stays held.
	Close() error
}

// ActiveIndex is a store that keeps every project's active session in one
// place (a database table), where the file store keeps each in its own
// project's folder. A project named by TEAMRUN_PROJECT is not found from
// its sessions' spec folders: prune asks the index instead.
type ActiveIndex interface {
	// ActiveSessions maps each project's active session to the project's
	// key.
	ActiveSessions(ctx context.Context) (map[string]string, error)
}

// ProjectState is a project's own state: the session `--continue` resumes
// and the audit log of what happened to its sessions (DESIGN §5).
type ProjectState interface {
	// Dir is the project's spec folder.
	Dir() string
	// Where names the active-session record in messages (a state.json path).
	Where() string
	Active(ctx context.Context) (string, error)
	SetActive(ctx context.Context, id string) error
	// ClaimActive makes id the active session if the active one is still
	// prev ("" for none), in one step no other ClaimActive or SetActive of
	// the project in this store can come between, and returns the active
	// session after it: id when it was set, else the one another run set
	// first. Overlapping --continue runs of a project that has no session
	// yet start one session between them, not one each.
	ClaimActive(ctx context.Context, prev, id string) (string, error)
	// Audit appends rec, its time, pid and user filled in when zero.
	Audit(ctx context.Context, rec AuditRecord) error
	// AuditRecords reads the project's audit records. With an error it
	// may still return records: those of a log with lines it skipped
	// (damaged), which the error names.
	AuditRecords(ctx context.Context) ([]AuditRecord, error)
}

// BatchJournal is a Journal that makes several transitions durable together,
// with one write and one sync: a sequential run records task N's completion
// and task N+1's start at once. It is optional; RecordAll falls back to one
// Record each.
type BatchJournal interface {
	Journal
	// RecordBatch returns once every record of rs is durable, in order. On
	// an error none of them is acknowledged (a crash may still leave a
	// prefix of them on disk, as it may leave one unacknowledged record).
	RecordBatch(rs []Record) error
}

// RecordAll makes rs durable, with one sync when j is a BatchJournal.
func RecordAll(j Journal, rs ...Record) error {
	if b, ok := j.(BatchJournal); ok && len(rs) > 1 {
		return b.RecordBatch(rs)
	}
	// One at a time, the batch is still refused whole: every record is
	// checked before the first is written.
	for _, r := range rs {
		if _, _, err := PrepareRecord(r); err != nil {
			return err
		}
	}
	for _, r := range rs {
		if err := j.Record(r); err != nil {
			return err
		}
	}
	return nil
}
