package pgstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Journal records a session's transitions as rows of the transitions
// table, each committed (synchronous_commit=on) before Record returns.
type Journal struct {
	checkpoint.FoldedView
	store    *Store
	lock     *Lock
	seq      int64 // last acknowledged transition
	snapSeq  int64 // last transition folded into the snapshot
	snapSize int
	pending  int   // bytes of transitions since the snapshot
	done     int   // tasks completed, as the sessions row says
	err      error // set once a write failed: the journal's rows are unknown
	closed   bool

	// Group commit: batches that arrive while a write is in flight go
	// together in the next statement (writeGroup).
	commit checkpoint.GroupCommit
}

var _ checkpoint.BatchJournal = (*Journal)(nil)

// Begin makes sess the session's snapshot and opens its journal. l must
// hold sess's lock; a session not loaded from the store (no epoch) never
// replaces one that is there (checkpoint.ErrExists).
func (s *Store) Begin(ctx context.Context, cl checkpoint.Lock, sess *checkpoint.Session) (checkpoint.Journal, error) {
	if sess == nil {
		return nil, errors.New("pgstore: Begin without a session")
	}
	if err := checkpoint.ValidateID(sess.ID); err != nil {
		return nil, err
	}
	l, ok := cl.(*Lock)
	if !ok || l == nil || l.store != s || l.id != sess.ID {
		return nil, fmt.Errorf("pgstore: Begin on session %s without holding its lock in %s", sess.ID, s.cfg.location)
	}
	j := &Journal{FoldedView: checkpoint.FoldedView{Sess: sess}, store: s, lock: l}
	j.commit.Init(&j.FoldedView, j.writeGroup, j.maybeCompact)
	j.Warn(checkpoint.PrepareSnapshot(sess)...)
	fresh := sess.Epoch == ""
	epoch := sess.Epoch
	sess.Epoch = newEpoch()
	snap, err := checkpoint.EncodeSession(sess)
	if err != nil {
		sess.Epoch = epoch
		return nil, err
	}
	var (
		exists bool
		via    *pgx.Conn // the pool's connection the snapshot went through
	)
	// A long write: the snapshot of a session resumed is all of it. It is
	// not on the lock's connection, so it checks the lock is still this
	// run's (a session not written yet has no row to fence), and holds
	// the holders row until COMMIT: a run taking the session over waits.
	err = l.long(ctx, func(ctx context.Context, tx pgx.Tx) error {
		via = tx.Conn()
		var ours bool
		if err := tx.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {s}.holders WHERE session_id = $1 AND owner_generation = $2 FOR SHARE)`), sess.ID, l.gen).Scan(&ours); err != nil {
			return err
		}
		if !ours {
			return errFenced
		}
		var last int64
		err := tx.QueryRow(ctx, s.q(`SELECT last_seq FROM {s}.sessions WHERE id = $1 FOR UPDATE`), sess.ID).Scan(&last)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			last = 0
		case err != nil:
			return err
		case fresh:
			exists = true
			return nil
		}
		// The new snapshot holds everything: older transitions go.
		if _, err := tx.Exec(ctx, s.q(`DELETE FROM {s}.transitions WHERE session_id = $1`), sess.ID); err != nil {
			return err
		}
		// A session stays in the project it was started in; a row
		// an older teamrun wrote takes this run's.
		tag, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.sessions AS t (id, spec_path, team_name, created_at, updated_at,
				tasks_done, tasks_total, fingerprint, snapshot, snapshot_seq, last_seq, owner_generation, project_key, snapshot_digest)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, sha256($9))
			ON CONFLICT (id) DO UPDATE SET spec_path = excluded.spec_path, team_name = excluded.team_name,
				created_at = excluded.created_at, updated_at = excluded.updated_at, tasks_done = excluded.tasks_done,
				tasks_total = excluded.tasks_total, fingerprint = excluded.fingerprint, snapshot = excluded.snapshot,
				snapshot_seq = excluded.snapshot_seq, last_seq = excluded.last_seq, snapshot_digest = excluded.snapshot_digest,
				project_key = coalesce(t.project_key, excluded.project_key)
			WHERE t.owner_generation = excluded.owner_generation`),
			sess.ID, sess.SpecPath, sess.TeamName, sess.CreatedAt, sess.UpdatedAt, sess.Summary.Done, sess.Summary.Total,
			sess.Team.TasksFingerprint, snap, last, l.gen, projectOf(sess.SpecPath))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errFenced
		}
		j.seq, j.snapSeq = last, last
		return nil
	})
	if err != nil && via != nil && via.IsClosed() {
		err = s.begunAnyway(err, via.PgConn().PID(), l, sess, snap, fresh)
	}
	if err != nil {
		sess.Epoch = epoch
		return nil, err
	}
	if exists {
		sess.Epoch = epoch
		return nil, fmt.Errorf("%w: session %s is already in %s; nothing was overwritten (load it and continue it instead)", checkpoint.ErrExists, sess.ID, s.cfg.location)
	}
	j.snapSize, j.done = len(snap), sess.Summary.Done
	// The snapshot is committed: a blob it does not name is no task's result.
	// One left behind costs only space: say so and go on.
	if err := s.sweepBlobs(ctx, sess.ID, sess.Blobs()); err != nil {
		j.Warn(fmt.Sprintf("results no task names were left in place: %v", err))
	}
	return j, nil
}

// begunAnyway is Begin's err, a connection that broke with the snapshot's
// transaction under way (on its COMMIT, say), once the server was asked
// whether the snapshot is in (landed; backend ran it): nil when it is and
// the lock holds, so the run goes on. A session new to the store that may
// be in it is resumed, rather than run again as new (which the store
// would refuse, the session being there): the advice says so.
func (s *Store) begunAnyway(err error, backend uint32, l *Lock, sess *checkpoint.Session, snap []byte, fresh bool) error {
	digest := sha256.Sum256(snap)
	committed, known := s.landed(err, backend,
		`EXISTS (SELECT 1 FROM {s}.sessions WHERE id = $2 AND owner_generation = $3 AND snapshot_digest = $4)`, sess.ID, l.gen, digest[:])
	switch {
	case committed && l.LostErr() == nil:
		return nil
	case !fresh || known && !committed:
		return err
	}
	what := "may have been written"
	if committed {
		what = "was written"
	}
	return &Error{Location: s.cfg.location, Op: "write session " + sess.ID,
		Msg:    scrub(message(err, longWithin), s.cfg.secrets...) + "; the session's first snapshot " + what,
		Advice: "check the server and the network, then rerun with --continue --session " + sess.ID + " (it resumes the session if it is there, and starts it if not)",
		Err:    err}
}

func newEpoch() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Record commits one transition, fenced by the lock's owner generation:
// it returns once COMMIT has returned, or with an error wrapping
// checkpoint.ErrStore, after which the journal never writes again.
func (j *Journal) Record(r checkpoint.Record) error {
	return j.RecordBatch([]checkpoint.Record{r})
}

// RecordBatch commits rs in one statement, so in one transaction and one
// round trip: a sequential run pays one COMMIT per task, as the file store
// pays one fdatasync. Batches of concurrent callers that arrive while a
// write is in flight share the next statement (group commit). It returns
// once the COMMIT holding rs has returned; on an error none of rs is
// acknowledged and the journal never writes again (a record that cannot be
// encoded refuses its batch before anything is written).
func (j *Journal) RecordBatch(rs []checkpoint.Record) error {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed {
		return checkpoint.JournalClosed(j.Sess.ID)
	}
	if j.err != nil {
		return j.err
	}
	if len(rs) == 0 {
		return nil
	}
	b, err := j.Prepare(rs)
	if err != nil {
		return err
	}
	return j.commit.Commit(b)
}

// writeGroup commits recs (payloads are their encodings) in one statement,
// for commit, which holds the slot for it: Mu is held, and released
// during the round trip. After a failure the journal never writes again.
func (j *Journal) writeGroup(recs []checkpoint.Record, payloads [][]byte) error {
	if j.err != nil {
		return j.err
	}
	done := j.done + j.doneDelta(recs)
	first, last := j.seq+1, j.seq+int64(len(recs))
	at := recs[len(recs)-1].At.UTC()
	j.Mu.Unlock()
	err := j.write(first, last, at, done, payloads)
	j.Mu.Lock()
	var cl *committedLost
	if errors.As(err, &cl) {
		j.err, err = cl.lost, nil
	}
	if err != nil {
		j.err = err
		return err
	}
	j.seq, j.done = last, done
	for _, p := range payloads {
		j.pending += len(p)
	}
	return nil
}

// write inserts transitions first..last in one statement, so in its own
// transaction: the sessions row matches only while this run owns the
// session and no transition of it is missing, and the rows go in only
// with it.
func (j *Journal) write(first, last int64, at time.Time, done int, payloads [][]byte) error {
	ctx := context.Background()
	if j.store.beforeWrite != nil {
		j.store.beforeWrite()
	}
	sums := make([]int64, len(payloads))
	for i, p := range payloads {
		sums[i] = int64(checkpoint.Checksum(p))
	}
	var (
		backend uint32
		sent    error // the statement's own failure, the connection's included
	)
	err := j.lock.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		backend = c.PgConn().PID()
		tag, err := c.Exec(ctx, j.store.q(`WITH s AS (
				UPDATE {s}.sessions SET last_seq = $4, updated_at = $5, tasks_done = $6
				WHERE id = $1 AND owner_generation = $2 AND last_seq = $3 - 1 RETURNING id)
			INSERT INTO {s}.transitions (session_id, seq, owner_generation, record, checksum)
				SELECT s.id, $3 + u.n - 1, $2, u.record, u.checksum FROM s, unnest($7::bytea[], $8::bigint[]) WITH ORDINALITY AS u(record, checksum, n)`),
			j.Sess.ID, j.lock.gen, first, last, at, done, payloads, sums)
		if err != nil {
			sent = err
			return err
		}
		if tag.RowsAffected() != int64(len(payloads)) {
			return errFenced
		}
		return nil
	})
	if err == nil || sent == nil || !connLost(sent) {
		return err
	}
	// The connection broke with the statement sent: the lock is lost, but
	// the rows may be in, and what they record then happened for the
	// session (--continue restores it): say so, not "not written".
	committed, known := j.store.landed(sent, backend,
		`EXISTS (SELECT 1 FROM {s}.sessions WHERE id = $2 AND owner_generation = $3 AND last_seq >= $4)`, j.Sess.ID, j.lock.gen, last)
	switch {
	case committed:
		// Acknowledged; the journal writes no more (writeGroup).
		return &committedLost{err}
	case !known:
		return maybeWritten{err}
	}
	return err
}

// committedLost is a write that committed on a connection that broke
// before its answer came: its records are acknowledged, and lost is why
// the journal writes no more.
type committedLost struct{ lost error }

func (c *committedLost) Error() string { return "committed, then: " + c.lost.Error() }

// maybeCompact folds the transitions into the snapshot once they outgrow
// it. Mu is held. Only a lost lock fails the write; any other failure is
// a warning, and the compaction waits until the transitions doubled.
func (j *Journal) maybeCompact() error {
	if j.err != nil {
		return nil // a write committed as the lock was lost: no more writes
	}
	if j.pending <= j.snapSize || j.pending <= j.store.minCompact {
		return nil
	}
	if err := j.compact(context.Background()); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			j.err = err
			return err
		}
		j.Warn(fmt.Sprintf("compaction of session %s postponed: %v", j.Sess.ID, err))
		j.snapSize = j.pending * 2 // retry later, not on every record
	}
	return nil
}

// doneDelta is how rs, in order, change the count of completed tasks.
func (j *Journal) doneDelta(rs []checkpoint.Record) int {
	completed := map[string]bool{} // tasks rs changed so far
	delta := 0
	for _, r := range rs {
		switch r.Kind {
		case checkpoint.TaskStarted, checkpoint.TaskCompleted, checkpoint.TaskFailed, checkpoint.TaskSkipped:
		default:
			continue
		}
		was, seen := completed[r.Task]
		if !seen {
			if t, ok := j.Sess.Task(r.Task); ok {
				was = t.Status == checkpoint.StatusCompleted
			}
		}
		now := r.Kind == checkpoint.TaskCompleted
		completed[r.Task] = now
		switch {
		case now && !was:
			delta++
		case was && !now:
			delta--
		}
	}
	return delta
}

// compact folds the transitions into the snapshot in one transaction, a
// long one (Lock.long): the snapshot is the whole session.
func (j *Journal) compact(ctx context.Context) error {
	snap, err := checkpoint.EncodeSession(j.Sess)
	if err != nil {
		return err
	}
	seq := j.seq
	err = j.lock.long(ctx, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, j.store.q(`UPDATE {s}.sessions SET snapshot = $3, snapshot_digest = sha256($3), snapshot_seq = $4, tasks_done = $5,
				tasks_total = $6, updated_at = $7
			WHERE id = $1 AND owner_generation = $2 AND last_seq = $4`),
			j.Sess.ID, j.lock.gen, snap, seq, j.Sess.Summary.Done, j.Sess.Summary.Total, j.Sess.UpdatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errFenced
		}
		_, err = tx.Exec(ctx, j.store.q(`DELETE FROM {s}.transitions WHERE session_id = $1 AND seq <= $2`), j.Sess.ID, seq)
		return err
	})
	if err != nil {
		return err
	}
	j.snapSeq, j.snapSize, j.pending = seq, len(snap), 0
	j.done = j.Sess.Summary.Done
	return nil
}

// Close folds the transitions into the snapshot; the lock stays held. After
// a lost lock it writes nothing (the acknowledged rows are all there).
func (j *Journal) Close() error {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	for j.commit.Busy() {
		j.commit.Wait()
	}
	if j.err != nil {
		if errors.Is(j.err, checkpoint.ErrLost) {
			return j.err
		}
		return nil
	}
	if j.seq == j.snapSeq {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return j.compact(ctx)
}
