package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Lock is a session lock: an advisory lock on a connection of its own, so
// it dies with the connection (kill -9, OOM, node loss,
// pg_terminate_backend). The server drops a connection silent for longer
// than the lease (idle_session_timeout, TCP keepalives), and a heartbeat
// keeps a live run's connection well inside it. Every write of the run goes
// through this connection and carries the owner generation taken with the
// lock.
type Lock struct {
	store  *Store
	id     string
	holder checkpoint.Holder
	gen    int64

	mu   sync.Mutex // one statement at a time on conn
	conn *pgx.Conn
	lost error // set once: why the lock is gone
	busy time.Time
	// gone is closed when lost is set, so that the run notices a lost lock
	// at once (Lost), not at its next write.
	gone chan struct{}

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

var _ checkpoint.Lock = (*Lock)(nil)

// ID is the locked session's id.
func (l *Lock) ID() string { return l.id }

// Holder says who holds the lock: this run.
func (l *Lock) Holder() checkpoint.Holder { return l.holder }

// Generation is the owner generation the lock took.
func (l *Lock) Generation() int64 { return l.gen }

// Lease is how long the lock outlives a holder that stops answering: it
// lapses then, its holder perhaps alive, stalled.
func (l *Lock) Lease() time.Duration { return l.store.cfg.lease }

// Lock takes the session's lock. With wait 0 it fails at once with a
// *checkpoint.HeldError naming the holder; otherwise it polls until wait
// has passed or ctx is done.
func (s *Store) Lock(ctx context.Context, id string, wait time.Duration) (checkpoint.Lock, error) {
	l, err := s.lock(ctx, id, wait)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (s *Store) lock(ctx context.Context, id string, wait time.Duration) (*Lock, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	conn, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	delay := 10 * time.Millisecond
	// A server that goes away while the lock is waited for (a restart, a
	// failover) ends no wait: it goes on with a new connection for as
	// long as the wait lasts, and the holder, whose connection went too,
	// has lost the lock.
	redial := func(cause error) error {
		conn.Close(context.Background())
		for wait > 0 && connLost(cause) && !refused(cause) && time.Since(start) < wait {
			t := time.NewTimer(250 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("waiting for session %s: %w", id, ctx.Err())
			case <-t.C:
			}
			c, err := s.dial(ctx)
			if err == nil {
				// The pool's connections went with the server's: the
				// session is read through it next.
				s.pool.Reset()
				conn = c
				return nil
			}
			cause = err
		}
		return cause
	}
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, s.key("session", id)).Scan(&ok); err != nil {
			if err := redial(s.cfg.fail("lock session "+id, err)); err != nil {
				return nil, err
			}
			continue
		}
		if ok {
			l, err := s.claim(ctx, conn, id)
			if err != nil {
				conn.Close(context.Background())
				return nil, err
			}
			return l, nil
		}
		held, err := s.holder(ctx, id, true)
		if err != nil {
			if err := redial(err); err != nil {
				return nil, err
			}
			continue
		}
		if held == nil {
			continue // released meanwhile: try again at once
		}
		left := wait - time.Since(start)
		if left <= 0 && time.Since(start) < deadHolderGrace && deadHere(held) {
			// The holder died on this host a moment ago: the server drops
			// its backend, and so the lock, as soon as it sees the socket
			// close. Let it, rather than report a dead run as the holder.
			left = deadHolderGrace - time.Since(start)
		}
		if err := checkpoint.WaitTurn(ctx, held, checkpoint.Turn{Wait: wait, Left: left, Pause: delay}); err != nil {
			conn.Close(context.Background())
			return nil, err
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
}

// deadHolderGrace bounds how long Lock gives the server to notice that a
// holder on this host died.
const deadHolderGrace = 5 * time.Second

// dial opens a lock connection: its own, with the lease as the server's
// idle_session_timeout and as the TCP keepalive budget on both ends.
func (s *Store) dial(ctx context.Context) (*pgx.Conn, error) {
	cc := s.cfg.conn.Copy()
	lease := s.cfg.lease
	secs := func(d time.Duration) string { return strconv.Itoa(max(1, int(d/time.Second))) }
	cc.RuntimeParams["idle_session_timeout"] = strconv.FormatInt(lease.Milliseconds(), 10)
	cc.RuntimeParams["tcp_keepalives_idle"] = secs(lease / 3)
	cc.RuntimeParams["tcp_keepalives_interval"] = secs(lease / 6)
	cc.RuntimeParams["tcp_keepalives_count"] = "3"
	cc.RuntimeParams["tcp_user_timeout"] = strconv.FormatInt(lease.Milliseconds(), 10)
	d := &net.Dialer{Timeout: cc.ConnectTimeout, KeepAlive: lease / 3}
	cc.DialFunc = answerChecked(d.DialContext)
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, s.cfg.fail("connect", err)
	}
	if err := preferLZ4(ctx, conn); err != nil {
		conn.Close(context.Background())
		return nil, s.cfg.fail("connect", err)
	}
	return conn, nil
}

// preferLZ4 asks conn's server for lz4 TOAST compression. A compaction
// rewrites the whole snapshot (on a connection of the pool), and pglz, the
// default, costs about as much as the rest of the run's writes together;
// lz4 compresses several times faster. A server without it (built without
// lz4, or older than 14) refuses, and pglz it stays: only a connection
// that broke is an error.
func preferLZ4(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SET default_toast_compression = lz4`)
	var pe *pgconn.PgError
	if err != nil && (!errors.As(err, &pe) || conn.IsClosed()) {
		return err
	}
	return nil
}

// claim records the new holder and moves the session's owner generation to
// a fresh one: from now on writes of any earlier holder are refused.
func (s *Store) claim(ctx context.Context, conn *pgx.Conn, id string) (*Lock, error) {
	host, _ := os.Hostname()
	h := checkpoint.Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)}
	var gen int64
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, s.q(`SELECT nextval('{s}.generations')`)).Scan(&gen); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.holders (session_id, owner_generation, host, pid, started, backend_pid)
			VALUES ($1, $2, $3, $4, $5, pg_backend_pid())
			ON CONFLICT (session_id) DO UPDATE SET owner_generation = excluded.owner_generation, host = excluded.host,
				pid = excluded.pid, started = excluded.started, backend_pid = excluded.backend_pid`),
			id, gen, h.Host, h.PID, h.Started); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q(`UPDATE {s}.sessions SET owner_generation = $2 WHERE id = $1`), id, gen)
		return err
	})
	if err != nil {
		return nil, s.cfg.fail("lock session "+id, err)
	}
	l := &Lock{store: s, id: id, holder: h, gen: gen, conn: conn, busy: time.Now(),
		gone: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.heartbeat()
	return l, nil
}

// Lost is closed once the lock is lost: the heartbeat failed, the
// connection broke, or another run took the session over. The run then
// stops its tasks; LostErr says why.
func (l *Lock) Lost() <-chan struct{} { return l.gone }

// LostErr is why the lock was lost (it wraps checkpoint.ErrLost), nil while it holds.
func (l *Lock) LostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// heartbeat keeps the connection inside the lease and checks that the
// session is still this run's: a run whose connection was terminated, or
// whose session another run owns now, learns it within a third of the
// lease (two thirds when the server stops answering: a tick after a recent
// write is skipped, and the check's timeout is a third) even while no task
// ends. When the check fails the lock is lost and every
// later write is refused.
func (l *Lock) heartbeat() {
	defer close(l.done)
	every := l.store.cfg.lease / 6
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if l.conn == nil || l.lost != nil {
			l.mu.Unlock()
			return
		}
		if time.Since(l.busy) >= every {
			ctx, cancel := context.WithTimeout(context.Background(), 2*every)
			var ours bool
			// Ours while the holders row is of this generation and the
			// session, once written, too.
			err := l.conn.QueryRow(ctx, l.store.q(`SELECT EXISTS (SELECT 1 FROM {s}.holders WHERE session_id = $1 AND owner_generation = $2)
				AND NOT EXISTS (SELECT 1 FROM {s}.sessions WHERE id = $1 AND owner_generation <> $2)`), l.id, l.gen).Scan(&ours)
			cancel()
			switch {
			case err != nil:
				l.loseLocked(err)
			case !ours:
				l.takenOverLocked()
			default:
				l.busy = time.Now()
			}
		}
		l.mu.Unlock()
	}
}

// loseLocked marks the lock lost because of err and closes its
// connection (the server drops the advisory lock with it). l.mu is held.
func (l *Lock) loseLocked(err error) {
	if l.lost != nil {
		return
	}
	l.setLostLocked(&Error{Location: l.store.cfg.location, Op: "session " + l.id,
		Msg:    "the connection holding the session's lock was lost (" + scrub(message(err, l.store.cfg.lease/2), l.store.cfg.secrets...) + ")",
		Advice: "this run stops writing; another run may take the session over",
		Then:   true,
		Err:    errors.Join(checkpoint.ErrLost, err)})
}

// takenOverLocked marks the lock lost because another run owns the
// session now. l.mu is held.
func (l *Lock) takenOverLocked() error {
	if l.lost == nil {
		l.setLostLocked(&Error{Location: l.store.cfg.location, Op: "session " + l.id,
			Msg:    fmt.Sprintf("the session was taken over by another run (this run's owner generation %d is no longer the session's)", l.gen),
			Advice: "this run stops writing",
			Show:   l.id,
			Err:    checkpoint.ErrLost})
	}
	return l.lost
}

// setLostLocked records why the lock is gone, closes its connection and
// tells Lost's readers. l.mu is held.
func (l *Lock) setLostLocked(err error) {
	l.lost = err
	if l.conn != nil {
		l.conn.Close(context.Background())
	}
	close(l.gone)
}

// do runs f on the lock's connection, unless the lock is lost; a failure of
// the connection loses the lock.
func (l *Lock) do(ctx context.Context, f func(context.Context, *pgx.Conn) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if l.conn == nil {
		return fmt.Errorf("%w: session %s: its lock was released", checkpoint.ErrStore, l.id)
	}
	// A server that stops answering must not hold the run (nor, through
	// l.mu, the heartbeat) past half the lease: then the write fails, the
	// connection closes and the lock is lost, before another run can take
	// the session over while this one's tasks still run.
	ctx, cancel := context.WithTimeout(ctx, l.store.cfg.lease/2)
	defer cancel()
	err := f(ctx, l.conn)
	switch {
	case err == nil:
	case errors.Is(err, errFenced):
		return l.takenOverLocked()
	case l.conn.IsClosed() || connLost(err):
		l.loseLocked(err)
		return l.lost
	default:
		return l.store.cfg.fail("write session "+l.id, err)
	}
	l.busy = time.Now()
	return nil
}

// long runs f in a transaction that may take the server long while it
// answers (a snapshot of many megabytes on a busy machine): on a
// connection of the pool, not the lock's, whose heartbeat goes on and so
// keeps the session meanwhile. Through the lock's connection, with do's
// deadline of half the lease, a slow one lost the lock with a healthy
// server. The transaction first checks that the lock's connection still
// holds the lock (a server restart ends it, and the holders row stays);
// f's writes are fenced by the owner generation as the lock's are
// (errFenced). f is cut off once the lock is lost (the heartbeat found
// the server silent, or another run took the session) or after
// longWithin.
func (l *Lock) long(ctx context.Context, f func(context.Context, pgx.Tx) error) error {
	l.mu.Lock()
	if l.lost != nil || l.conn == nil {
		defer l.mu.Unlock()
		if l.lost != nil {
			return l.lost
		}
		return fmt.Errorf("%w: session %s: its lock was released", checkpoint.ErrStore, l.id)
	}
	backend := l.conn.PgConn().PID()
	l.mu.Unlock()
	within := max(longWithin, l.store.cfg.lease/2)
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	go func() {
		select {
		case <-l.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	hi, lo := l.store.lockKey(l.id)
	err := pgx.BeginFunc(ctx, l.store.pool, func(tx pgx.Tx) error {
		var held bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l WHERE `+sessionLock+` AND l.pid = $1)`, backend, hi, lo).Scan(&held); err != nil {
			return err
		}
		if !held {
			return errNotHeld
		}
		return f(ctx, tx)
	})
	if err == nil {
		return nil
	}
	if connLost(err) && !errors.Is(err, errFenced) && !errors.Is(err, errNotHeld) {
		// The pool's connection broke (a server restart ends them all):
		// whether the lock went with it is for the lock's own connection
		// to say, by do's rule, as a write through it would have.
		if lost := l.do(parent, func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "SELECT 1")
			return err
		}); lost != nil {
			return lost
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lost != nil:
		return l.lost
	case errors.Is(err, errFenced):
		return l.takenOverLocked()
	case errors.Is(err, errNotHeld):
		l.loseLocked(err)
		return l.lost
	}
	return l.store.cfg.failWithin("write session "+l.id, err, within)
}

// errNotHeld: the server no longer holds the session's advisory lock for
// the lock's connection.
var errNotHeld = errors.New("the server no longer holds the session's lock for it (it restarted, or ended the connection)")

// longWithin bounds a long write (Lock.long) while the lock holds.
const longWithin = 30 * time.Second

// connLost says err ended the connection: anything but an SQL error the
// server sent and survived.
func connLost(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true
	}
	return pe.Severity == "FATAL" || pe.Severity == "PANIC" || strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08")
}

// refused says the server refused teamrun (a wrong password, a missing
// database): waiting does not mend that.
func refused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "28") || strings.HasPrefix(pe.Code, "3D"))
}

// errFenced: a write matched no row of this run's generation.
var errFenced = errors.New("fenced")

// Release drops the lock and closes its connection; twice is harmless.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	l.once.Do(func() { close(l.stop) })
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	conn := l.conn
	l.conn = nil
	if l.lost == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(ctx, l.store.q(`DELETE FROM {s}.holders WHERE session_id = $1 AND owner_generation = $2`), l.id, l.gen)
		// Unlock before closing: the server ends a closed connection's
		// backend, and so its locks, a moment later, and a Held or Lock
		// right after Release must see the session free.
		_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.store.key("session", l.id))
		_ = conn.Close(ctx)
	}
	return nil
}

// sessionLock are the rows of pg_locks l that are a session's advisory
// lock, granted: $2 and $3 are the halves of its key (lockKey).
const sessionLock = `l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND l.classid::bigint = $2 AND l.objid::bigint = $3`

// lockKey is session id's advisory lock key as pg_locks shows it, in two
// halves.
func (s *Store) lockKey(id string) (hi, lo int64) {
	k := uint64(s.key("session", id))
	return int64(k >> 32), int64(k & 0xffffffff)
}

// Held reports who holds the session without taking or creating anything:
// nil when no run does. It reads pg_locks, so a probe never makes a run
// starting at that instant fail.
func (s *Store) Held(ctx context.Context, id string) (*checkpoint.HeldError, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	if none, err := s.empty(ctx); none || err != nil {
		return nil, err // no run has held a session here: none does
	}
	return s.holder(ctx, id, false)
}

// holder is who holds id's advisory lock. A holder that has just taken the
// lock may not have written its row yet: with settle, look again briefly.
func (s *Store) holder(ctx context.Context, id string, settle bool) (*checkpoint.HeldError, error) {
	hi, lo := s.lockKey(id)
	for i := 0; ; i++ {
		var backend int32
		var host *string
		var pid *int32
		var started *time.Time
		err := s.pool.QueryRow(ctx, s.q(`SELECT l.pid, h.host, h.pid, h.started
			FROM pg_locks l LEFT JOIN {s}.holders h ON h.session_id = $1 AND h.backend_pid = l.pid
			WHERE `+sessionLock+` LIMIT 1`), id, hi, lo).Scan(&backend, &host, &pid, &started)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, s.cfg.fail("read who holds session "+id, err)
		}
		if host != nil {
			return &checkpoint.HeldError{ID: id, PID: int(*pid), Host: *host, Started: started.UTC()}, nil
		}
		if !settle || i >= 20 {
			return &checkpoint.HeldError{ID: id}, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// landed says whether a write that failed after it was sent committed
// (its connection was cut before the answer came: pg_terminate_backend,
// a failover, a network cut): known is false when that cannot be told.
// The server is asked, on a connection of the pool, only once backend, the
// process that ran the write, is gone, so that the write is done or undone
// for good; did is the query (on $2…) that finds the write's effect, run
// as the second column. A server that stopped answering (a timeout) is
// not asked: that would hold the run's end as long again. (Nor does
// pgconn.SafeToRetry tell: a transaction's COMMIT cut short is followed
// by a ROLLBACK on the closed connection, which is "safe to retry".)
func (s *Store) landed(cause error, backend uint32, did string, args ...any) (committed, known bool) {
	if pgconn.Timeout(cause) || errors.Is(cause, context.DeadlineExceeded) {
		return false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), landedWithin)
	defer cancel()
	for {
		var alive, done bool
		err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1), `+did),
			append([]any{int32(backend)}, args...)...).Scan(&alive, &done)
		switch {
		case err == nil && done:
			return true, true
		case err == nil && !alive:
			return false, true
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, false
		case <-t.C:
		}
	}
}

// landedWithin bounds how long landed waits for the server to end the
// backend of a cut connection (it sees the socket close at once, unless
// the network dropped it silently: then it is a lease's matter).
const landedWithin = 3 * time.Second

// maybeWritten is a lost lock's error for a write whose fate is unknown
// (landed): it reads the same, and is also checkpoint.ErrMaybeWritten.
type maybeWritten struct{ error }

func (m maybeWritten) Unwrap() []error { return []error{m.error, checkpoint.ErrMaybeWritten} }
