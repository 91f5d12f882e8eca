// Package pgstore is the PostgreSQL session store: sessions, transitions,
// locks, the project's active session and its audit in one database, so any
// host can resume a session and one run per session holds across hosts.
//
// The lock is an advisory lock on the run's own connection (it dies with
// the connection); every write carries the owner generation taken with the
// lock and is refused once another run has taken the session over.
package pgstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// SchemaVersion is the newest schema this teamrun knows.
const SchemaVersion = 7

// migrations[i] brings the schema from version i to i+1. {s} is the schema.
var migrations = []string{
	`CREATE SEQUENCE {s}.generations;
	CREATE TABLE {s}.sessions (
		id text PRIMARY KEY,
		spec_path text NOT NULL,
		team_name text NOT NULL,
		created_at timestamptz NOT NULL,
		updated_at timestamptz NOT NULL,
		tasks_done integer NOT NULL,
		tasks_total integer NOT NULL,
		fingerprint text NOT NULL,
		snapshot bytea NOT NULL,
		snapshot_seq bigint NOT NULL,
		last_seq bigint NOT NULL,
		owner_generation bigint NOT NULL
	);
	CREATE TABLE {s}.transitions (
		session_id text NOT NULL REFERENCES {s}.sessions (id) ON DELETE CASCADE,
		seq bigint NOT NULL,
		owner_generation bigint NOT NULL,
		record bytea NOT NULL,
		PRIMARY KEY (session_id, seq)
	);
	CREATE TABLE {s}.holders (
		session_id text PRIMARY KEY,
		owner_generation bigint NOT NULL,
		host text NOT NULL,
		pid integer NOT NULL,
		started timestamptz NOT NULL,
		backend_pid integer NOT NULL
	);
	CREATE TABLE {s}.projects (
		project_key text PRIMARY KEY,
		active_session text NOT NULL,
		updated_at timestamptz NOT NULL
	);
	CREATE TABLE {s}.audit (
		id bigserial PRIMARY KEY,
		project_key text NOT NULL,
		at timestamptz NOT NULL,
		event text NOT NULL,
		session_id text NOT NULL,
		store text NOT NULL,
		pid integer NOT NULL,
		username text NOT NULL,
		detail text NOT NULL
	);
	CREATE INDEX ON {s}.audit (project_key, id);`,
	// 2: results stored out of line (blob.go), a row per chunk. Not
	// tied to sessions: a blob is written before the record naming it,
	// and an import stores its blobs before its session.
	`CREATE TABLE IF NOT EXISTS {s}.blobs (
		session_id text NOT NULL,
		digest text NOT NULL,
		chunk integer NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY (session_id, digest, chunk)
	);`,
	// 3: the attempts' output (logs.go), gone with the session.
	`CREATE TABLE IF NOT EXISTS {s}.logs (
		session_id text NOT NULL REFERENCES {s}.sessions (id) ON DELETE CASCADE,
		task text NOT NULL,
		attempt integer NOT NULL,
		stream text NOT NULL CHECK (stream IN ('stdout', 'stderr')),
		bytes bytea NOT NULL,
		PRIMARY KEY (session_id, task, attempt, stream)
	);`,
	// 4: each transition's CRC-32C over its record (checkpoint.Checksum),
	// as the file store's journal lines carry one; NULL in the rows an
	// older teamrun wrote, which are read unchecked.
	`ALTER TABLE {s}.transitions ADD COLUMN IF NOT EXISTS checksum bigint;`,
	// 5: the key of the project each session was started in (projectOf),
	// so that --continue's fallback takes only its own project's: projects
	// named by TEAMRUN_PROJECT share the spec folder's path. An older row
	// takes it from the audit record of its creation; one with none keeps
	// NULL, and counts as the project of its spec's folder.
	`ALTER TABLE {s}.sessions ADD COLUMN IF NOT EXISTS project_key text;
	UPDATE {s}.sessions AS t SET project_key = a.project_key
		FROM (SELECT DISTINCT ON (session_id) session_id, project_key FROM {s}.audit
			WHERE event = 'created' ORDER BY session_id, id) AS a
		WHERE a.session_id = t.id AND t.project_key IS NULL;`,
	// 6: the SHA-256 of each snapshot as written, so that List and Head
	// tell a snapshot changed since (damaged past its head) from the
	// server's own digest of it, without reading it here (scanEntry). An
	// older row takes the digest of what it holds now.
	`ALTER TABLE {s}.sessions ADD COLUMN IF NOT EXISTS snapshot_digest bytea;
	UPDATE {s}.sessions SET snapshot_digest = sha256(snapshot) WHERE snapshot_digest IS NULL;`,
	// 7: the last transition of each session written without a checksum
	// (before schema 4), so that Load reads only those unchecked: a row
	// whose checksum was set to NULL since is changed, not old. Every row
	// written from now on has one. An older teamrun refuses this schema
	// as it opens it, but a run of one that opened it before (a rolling
	// upgrade) goes on writing: the trigger refuses its rows without a
	// checksum, which would make the session corrupt once it died, so
	// that it stops at that write (exit 5, the write not acknowledged).
	// Only inserts: an older row altered since is still corrupt when read.
	// It goes in before unchecked_seq is read, and holds the table
	// against inserts until the migration commits.
	`ALTER TABLE {s}.sessions ADD COLUMN IF NOT EXISTS unchecked_seq bigint NOT NULL DEFAULT 0;
	CREATE OR REPLACE FUNCTION {s}.refuse_unchecked() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		RAISE EXCEPTION 'schema % was migrated to version 7 by a newer teamrun, which reads a transition without a checksum as changed: this teamrun writes none; upgrade teamrun on this host and run again with --continue (nothing acknowledged is lost)', TG_TABLE_SCHEMA
			USING ERRCODE = 'object_not_in_prerequisite_state';
	END $$;
	DROP TRIGGER IF EXISTS checksummed ON {s}.transitions;
	CREATE TRIGGER checksummed BEFORE INSERT ON {s}.transitions
		FOR EACH ROW WHEN (NEW.checksum IS NULL) EXECUTE PROCEDURE {s}.refuse_unchecked();
	UPDATE {s}.sessions AS t SET unchecked_seq = u.upto
		FROM (SELECT session_id, max(seq) AS upto FROM {s}.transitions WHERE checksum IS NULL GROUP BY session_id) AS u
		WHERE u.session_id = t.id;`,
}

// migrationsUsed keeps the list and the constant together.
var _ = [1]struct{}{}[len(migrations)-SchemaVersion]

// Store is a PostgreSQL session store. It implements checkpoint.Backend.
type Store struct {
	cfg  *config
	pool *pgxpool.Pool
	// minCompact is the transitions' size below which Record never
	// compacts; tests lower it.
	minCompact int
	// beforeWrite, when set, runs before each journal write and each
	// removal; tests hold a write in flight, or break its connection,
	// with it.
	beforeWrite func()
	// absent: Open found no tables of teamrun's in the schema (or no
	// schema). The store reads as empty, and the first write makes them
	// (ready), so a command that only reads makes nothing.
	absent  atomic.Bool
	readyMu sync.Mutex
}

var _ checkpoint.Backend = (*Store)(nil)

// Open connects to the store at rawURL (postgres:// or postgresql://) and
// migrates its schema when it is older. A schema that is not there, or
// holds no tables of teamrun's, is made by the first write (ready): plan,
// session list and show read it as empty, and a mistyped schema= left an
// empty schema behind. Standard PG* variables and ~/.pgpass fill in what
// the URL leaves out.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	cfg, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	pcfg := cfg.pool.Copy()
	pcfg.ConnConfig = cfg.conn.Copy()
	pcfg.MaxConns = 4
	pcfg.AfterConnect = preferLZ4
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, cfg.fail("connect", err)
	}
	s := &Store{cfg: cfg, pool: pool, minCompact: 256 << 10}
	absent, err := s.look(ctx)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.absent.Store(absent)
	return s, nil
}

// Location is the store's URL without its password.
func (s *Store) Location() string { return s.cfg.location }

// Secrets are the passwords the store connects with (config.credentials):
// a task may print them (PGPASSWORD is in its environment, for a nested
// teamrun), and a run redacts them as it does the agents' keys.
func (s *Store) Secrets() []string { return s.cfg.credentials() }

// Schema is the schema holding the store's tables.
func (s *Store) Schema() string { return s.cfg.schema }

// Lease is how long a silent run keeps its lock.
func (s *Store) Lease() time.Duration { return s.cfg.lease }

// Close closes the store's pool. Locks live on their own connections.
// It waits for the pool at most half the lease: pgx ends a connection
// whose statement was cut off by asking the server to cancel it, and waits
// up to 15 s for a server that stopped answering; the process that exits
// next closes those sockets anyway.
func (s *Store) Close() error {
	closed := make(chan struct{})
	go func() {
		s.pool.Close()
		close(closed)
	}()
	t := time.NewTimer(s.cfg.lease / 2)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
	}
	return nil
}

// bounded is ctx with the deadline of a statement the run makes beside
// its lock's writes (the audit, a log, the active session): half the
// lease, as for the lock's own, so that a server that stops answering
// does not keep the run, or its exit, waiting past the lease.
func (s *Store) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.lease/2)
}

// q fills the schema into a statement.
func (s *Store) q(sql string) string {
	return strings.ReplaceAll(sql, "{s}", pgx.Identifier{s.cfg.schema}.Sanitize())
}

// key is the advisory lock key of a name in this store's schema: 64 bits
// of SHA-256, so two sessions never share a lock in practice.
func (s *Store) key(kind, name string) int64 {
	h := sha256.Sum256([]byte("teamrun\x00" + kind + "\x00" + s.cfg.schema + "\x00" + name))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// look reads the schema's version, and migrates a schema that is older.
// absent: it holds no tables of teamrun's, or is not there.
func (s *Store) look(ctx context.Context) (absent bool, err error) {
	var v int
	err = s.pool.QueryRow(ctx, s.q(`SELECT version FROM {s}.schema_version`)).Scan(&v)
	switch {
	case err == nil && v == SchemaVersion:
		return false, nil
	case err == nil && v > SchemaVersion:
		return false, s.newer(v)
	case isUndefinedTable(err):
		return true, nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		if bad := s.cfg.refusedParameter(err); bad != nil {
			return false, bad
		}
		return false, s.cfg.fail("connect", err)
	}
	return false, s.migrate(ctx)
}

// empty reports whether the store has no tables yet, and so reads as
// empty. Open found none; another run may have made them since, so while
// there were none each read looks again (one query, only then).
func (s *Store) empty(ctx context.Context) (bool, error) {
	if !s.absent.Load() {
		return false, nil
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if !s.absent.Load() {
		return false, nil
	}
	absent, err := s.look(ctx)
	if err != nil || absent {
		return absent, err
	}
	s.absent.Store(false)
	return false, nil
}

// ready makes the schema and its tables before the first write, when
// Open found none.
func (s *Store) ready(ctx context.Context) error {
	if !s.absent.Load() {
		return nil
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if !s.absent.Load() {
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.absent.Store(false)
	return nil
}

// migrate creates or upgrades the schema under an advisory lock, so two
// runs starting at once on a fresh database do not race.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.cfg.fail("connect", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.key("migrate", "")); err != nil {
		return s.cfg.fail("lock the schema for migration", err)
	}
	// CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when
	// the schema is there: a user given a schema of its own has not.
	var have bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s.cfg.schema).Scan(&have); err != nil {
		return s.cfg.fail("read the schemas", err)
	}
	if !have {
		if _, err := tx.Exec(ctx, s.q(`CREATE SCHEMA {s}`)); err != nil {
			return s.cfg.fail("create schema "+s.cfg.schema, err)
		}
	}
	if _, err := tx.Exec(ctx, s.q(`CREATE TABLE IF NOT EXISTS {s}.schema_version (version integer NOT NULL)`)); err != nil {
		return s.cfg.fail("create "+s.cfg.schema+".schema_version", err)
	}
	v := 0
	err = tx.QueryRow(ctx, s.q(`SELECT version FROM {s}.schema_version`)).Scan(&v)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return s.cfg.fail("read the schema version", err)
	}
	if v > SchemaVersion {
		return s.newer(v)
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := tx.Exec(ctx, s.q(migrations[i])); err != nil {
			return s.cfg.fail(fmt.Sprintf("migrate schema %s from version %d to %d", s.cfg.schema, i, i+1), err)
		}
	}
	if _, err := tx.Exec(ctx, s.q(`DELETE FROM {s}.schema_version`)); err != nil {
		return s.cfg.fail("write the schema version", err)
	}
	if _, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.schema_version (version) VALUES ($1)`), SchemaVersion); err != nil {
		return s.cfg.fail("write the schema version", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return s.cfg.fail("migrate schema "+s.cfg.schema, err)
	}
	return nil
}

func (s *Store) newer(v int) error {
	return &Error{Location: s.cfg.location, Op: "open",
		Msg:    fmt.Sprintf("schema %s is at version %d, newer than this teamrun knows (%d)", s.cfg.schema, v, SchemaVersion),
		Advice: "upgrade teamrun on this host; nothing was changed", Err: errNewerSchema}
}

var errNewerSchema = errors.New("newer schema")

func isUndefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000")
}

func (s *Store) notFound(id string) error {
	return fmt.Errorf("%w: no session %q in %s", checkpoint.ErrNotFound, id, s.cfg.location)
}

// where names a session's row in messages.
func (s *Store) where(id string) string {
	return fmt.Sprintf("%s (%s.sessions, id %s)", s.cfg.location, s.cfg.schema, id)
}

// Exists reports whether the store has the session.
func (s *Store) Exists(ctx context.Context, id string) (bool, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return false, err
	}
	if none, err := s.empty(ctx); none || err != nil {
		return false, err
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {s}.sessions WHERE id = $1)`), id).Scan(&ok); err != nil {
		return false, s.cfg.fail("read session "+id, err)
	}
	return ok, nil
}

// Load reads a session with every acknowledged transition folded in, in
// one snapshot of the database (a compaction cannot fall between the two).
func (s *Store) Load(ctx context.Context, id string) (*checkpoint.Session, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	if none, err := s.empty(ctx); none || err != nil {
		return nil, cmp.Or(err, s.notFound(id))
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, s.cfg.fail("read session "+id, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	var snap []byte
	var from, last, unchecked int64
	err = tx.QueryRow(ctx, s.q(`SELECT snapshot, snapshot_seq, last_seq, unchecked_seq FROM {s}.sessions WHERE id = $1`), id).Scan(&snap, &from, &last, &unchecked)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, s.notFound(id)
	}
	if err != nil {
		return nil, s.cfg.fail("read session "+id, err)
	}
	sess, err := checkpoint.DecodeSession(id, s.where(id), snap)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, s.q(`SELECT seq, record, checksum FROM {s}.transitions WHERE session_id = $1 AND seq > $2 ORDER BY seq`), id, from)
	if err != nil {
		return nil, s.cfg.fail("read session "+id, err)
	}
	defer rows.Close()
	// The transitions after the snapshot are from+1 … last, each there:
	// a write inserts its rows and moves last_seq in one statement, and a
	// compaction deletes only what its snapshot holds. A row missing was
	// removed, and with it a task a run acknowledged.
	want := from + 1
	for rows.Next() {
		var seq int64
		var rec []byte
		var sum *int64
		if err := rows.Scan(&seq, &rec, &sum); err != nil {
			return nil, s.cfg.fail("read session "+id, err)
		}
		where := s.transition(seq)
		switch {
		case seq > last:
			return nil, &checkpoint.CorruptError{ID: id, Path: where, Err: fmt.Errorf("it is past the session's last transition (%d, last_seq in %s.sessions): no run wrote it", last, s.cfg.schema)}
		case seq != want:
			return nil, s.missing(id, want, seq, last)
		case sum == nil && seq > unchecked:
			// Only rows from before schema 4 have none (unchecked_seq).
			return nil, &checkpoint.CorruptError{ID: id, Path: where, Err: errors.New("the record has no checksum, which every transition written since schema 4 has (it was changed after it was written)")}
		case sum != nil && *sum != int64(checkpoint.Checksum(rec)):
			return nil, &checkpoint.CorruptError{ID: id, Path: where, Err: errors.New("the record fails its checksum (it was changed after it was written)")}
		}
		want++
		r, err := checkpoint.DecodeRecord(rec)
		if err != nil {
			return nil, checkpoint.Undecodable(id, where, err)
		}
		sess.Apply(r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.cfg.fail("read session "+id, err)
	}
	if want <= last {
		return nil, s.missing(id, want, last+1, last)
	}
	sess.Summarize()
	return sess, nil
}

// transition names transition seq's row in messages.
func (s *Store) transition(seq int64) string {
	return fmt.Sprintf("transition %d in %s (%s.transitions)", seq, s.cfg.location, s.cfg.schema)
}

// missing is the error of session id whose transitions first … next-1
// are not there, last being its last (the sessions row's last_seq).
func (s *Store) missing(id string, first, next, last int64) error {
	what := "it is missing"
	if n := next - first; n > 1 {
		what = fmt.Sprintf("it is missing, and so are the %d after it", n-1)
	}
	return &checkpoint.CorruptError{ID: id, Path: s.transition(first),
		Err: fmt.Errorf("%s (the session's transitions run to %d, last_seq in %s.sessions): a transition a run acknowledged was removed", what, last, s.cfg.schema)}
}

// entryColumns are what List and Head read: the sessions row, and whether
// its snapshot is still the one written (its digest, on the server) and
// its transitions still those written (each there, none without its
// checksum, none past the last: Load's rules, but for the checksums
// themselves), not the snapshot itself.
const entryColumns = `id, spec_path, team_name, created_at, updated_at, tasks_done, tasks_total, coalesce(project_key, ''),
	coalesce(sha256(snapshot) <> snapshot_digest, false) OR
	(SELECT count(*) FILTER (WHERE t.seq <= sessions.last_seq AND (t.checksum IS NOT NULL OR t.seq <= sessions.unchecked_seq)) <> sessions.last_seq - sessions.snapshot_seq
		OR count(*) <> sessions.last_seq - sessions.snapshot_seq
		FROM {s}.transitions t WHERE t.session_id = sessions.id AND t.seq > sessions.snapshot_seq)`

// scanEntry reads an entry; changed says its snapshot or its transitions
// are not those written (checkEntry).
func (s *Store) scanEntry(row pgx.Row) (e checkpoint.Entry, changed bool, err error) {
	if err := row.Scan(&e.ID, &e.SpecPath, &e.TeamName, &e.CreatedAt, &e.UpdatedAt, &e.Done, &e.Total, &e.Project, &changed); err != nil {
		return e, false, err
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	e.Path = s.where(e.ID)
	e.Touched = e.UpdatedAt
	return e, changed, nil
}

// checkEntry gives e, whose snapshot or transitions were changed since they
// were written, the error its Load meets, as the file store's list reads a
// session file whole and so finds it corrupt, not done. ok is false when
// it is gone meanwhile.
func (s *Store) checkEntry(ctx context.Context, e *checkpoint.Entry) (ok bool) {
	_, err := s.Load(ctx, e.ID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return false
	}
	e.Err = err // nil: rewritten whole since, by a run
	return true
}

// List summarises every session from the sessions table, sorted by id;
// only a session whose snapshot was changed since it was written is read.
func (s *Store) List(ctx context.Context) ([]checkpoint.Entry, error) {
	if none, err := s.empty(ctx); none || err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+entryColumns+` FROM {s}.sessions ORDER BY id`))
	if err != nil {
		return nil, s.cfg.fail("list sessions", err)
	}
	var changed []bool
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkpoint.Entry, error) {
		e, ch, err := s.scanEntry(r)
		changed = append(changed, ch)
		return e, err
	})
	if err != nil {
		return nil, s.cfg.fail("list sessions", err)
	}
	kept := out[:0]
	for i := range out {
		if !changed[i] || s.checkEntry(ctx, &out[i]) {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}

// Head is the session's entry, from its sessions row.
func (s *Store) Head(ctx context.Context, id string) (checkpoint.Entry, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return checkpoint.Entry{}, err
	}
	if none, err := s.empty(ctx); none || err != nil {
		return checkpoint.Entry{}, cmp.Or(err, s.notFound(id))
	}
	e, changed, err := s.scanEntry(s.pool.QueryRow(ctx, s.q(`SELECT `+entryColumns+` FROM {s}.sessions WHERE id = $1`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.Entry{}, s.notFound(id)
	}
	if err != nil {
		return checkpoint.Entry{}, s.cfg.fail("read session "+id, err)
	}
	if changed && !s.checkEntry(ctx, &e) {
		return checkpoint.Entry{}, s.notFound(id)
	}
	return e, nil
}

// OrphanLocks lists the holders rows of sessions the store has no row of,
// each dated by its holder's start: a run's claim writes the row, its
// release deletes it, and a run killed before it wrote its session
// leaves it.
func (s *Store) OrphanLocks(ctx context.Context) ([]checkpoint.OrphanLock, error) {
	if none, err := s.empty(ctx); none || err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT h.session_id, h.started FROM {s}.holders h
		WHERE NOT EXISTS (SELECT 1 FROM {s}.sessions s WHERE s.id = h.session_id) ORDER BY h.session_id`))
	if err != nil {
		return nil, s.cfg.fail("list the session locks", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkpoint.OrphanLock, error) {
		var o checkpoint.OrphanLock
		err := r.Scan(&o.ID, &o.Touched)
		o.Touched = o.Touched.UTC()
		return o, err
	})
	if err != nil {
		return nil, s.cfg.fail("list the session locks", err)
	}
	return out, nil
}

// Delete removes a session and its transitions under its lock: it refuses
// (a *HeldError) while a run holds the session.
func (s *Store) Delete(ctx context.Context, id string) error {
	if none, err := s.empty(ctx); none || err != nil {
		return cmp.Or(err, checkpoint.ValidateID(id), s.notFound(id))
	}
	l, err := s.lock(ctx, id, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	n, err := s.remove(ctx, l)
	if err != nil {
		return s.unfinished(err, "delete session "+id, "")
	}
	if n == 0 {
		return s.notFound(id)
	}
	return nil
}

// Discard removes the session cl holds, if it was written, and releases
// cl, which deletes its holder row.
func (s *Store) Discard(ctx context.Context, cl checkpoint.Lock) error {
	l, _ := cl.(*Lock)
	if l == nil || l.store != s {
		return fmt.Errorf("checkpoint: Discard without holding the session's lock")
	}
	defer l.Release()
	_, err := s.remove(ctx, l)
	return s.unfinished(err, "remove session "+l.id+" and its lock",
		"what is left of it is a session no run uses, or a lock with no session")
}

// unfinished is err, from a removal under a lock whose connection was
// lost, as a *checkpoint.UnfinishedError (with leftover, if any): the
// lock's own advice is a run's (this run stops writing). Any other error
// is returned as it is.
func (s *Store) unfinished(err error, op, leftover string) error {
	var lost *Error
	if !errors.Is(err, checkpoint.ErrLost) || !errors.As(err, &lost) {
		return err
	}
	return &checkpoint.UnfinishedError{Store: "PostgreSQL store " + s.cfg.location, Op: op, Cause: lost.Msg, Leftover: leftover, Err: err}
}

// remove deletes the session l holds (its transitions and logs go with
// it) and its blobs; n is the sessions deleted.
func (s *Store) remove(ctx context.Context, l *Lock) (n int64, err error) {
	err = l.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		if s.beforeWrite != nil {
			s.beforeWrite()
		}
		tag, err := c.Exec(ctx, s.q(`DELETE FROM {s}.sessions WHERE id = $1 AND owner_generation = $2`), l.id, l.gen)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, s.sweepBlobs(ctx, l.id, nil)
}
