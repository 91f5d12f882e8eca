// Package memstore is a session store in memory, for tests: the same codec
// and the same conformance suite as the stores that persist, nothing on
// disk. Locks are per store value: they do not outlive the process.
package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Store is an in-memory session store. The zero value is not usable: call New.
type Store struct {
	mu       sync.Mutex
	sessions map[string]*session
	locks    map[string]*lock
	projects map[string]*Project
	blobs    map[string]map[string][]byte // session -> sha256 hex -> bytes
	wake     chan struct{}                // closed and replaced when a lock is released
}

type session struct {
	snapshot []byte   // checkpoint.EncodeSession
	records  [][]byte // checkpoint.EncodeRecord, since the snapshot
	touched  time.Time
	logs     map[logKey][]byte // the attempts' output (logs.go)
}

var _ checkpoint.Backend = (*Store)(nil)

// New is an empty store.
func New() *Store {
	return &Store{sessions: map[string]*session{}, locks: map[string]*lock{}, projects: map[string]*Project{}, blobs: map[string]map[string][]byte{}, wake: make(chan struct{})}
}

// Location names the store in messages.
func (s *Store) Location() string { return fmt.Sprintf("memory:%p", s) }

// Close releases nothing: the sessions live as long as the value.
func (s *Store) Close() error { return nil }

func (s *Store) notFound(id string) error {
	return fmt.Errorf("%w: no session %q in %s", checkpoint.ErrNotFound, id, s.Location())
}

// Lock takes the session's lock, retrying until wait or ctx ends.
func (s *Store) Lock(ctx context.Context, id string, wait time.Duration) (checkpoint.Lock, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		held := s.locks[id]
		if held == nil {
			host, _ := os.Hostname()
			l := &lock{store: s, id: id, holder: checkpoint.Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second)}}
			s.locks[id] = l
			s.mu.Unlock()
			return l, nil
		}
		wake := s.wake
		s.mu.Unlock()
		he := &checkpoint.HeldError{ID: id, PID: held.holder.PID, Host: held.holder.Host, Started: held.holder.Started}
		left := time.Until(deadline)
		if err := checkpoint.WaitTurn(ctx, he, checkpoint.Turn{Wait: wait, Left: left, Pause: left, Wake: wake}); err != nil {
			return nil, err
		}
	}
}

// Held says who holds the session.
func (s *Store) Held(_ context.Context, id string) (*checkpoint.HeldError, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.locks[id]; l != nil {
		return &checkpoint.HeldError{ID: id, PID: l.holder.PID, Host: l.holder.Host, Started: l.holder.Started}, nil
	}
	return nil, nil
}

// Exists reports whether the store has the session.
func (s *Store) Exists(_ context.Context, id string) (bool, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id] != nil, nil
}

// Load decodes the snapshot and folds the records in.
func (s *Store) Load(_ context.Context, id string) (*checkpoint.Session, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	e := s.sessions[id]
	var snap []byte
	var recs [][]byte
	if e != nil {
		snap, recs = e.snapshot, append([][]byte(nil), e.records...)
	}
	s.mu.Unlock()
	if e == nil {
		return nil, s.notFound(id)
	}
	return decode(id, s.Location(), snap, recs)
}

func decode(id, where string, snap []byte, recs [][]byte) (*checkpoint.Session, error) {
	sess, err := checkpoint.DecodeSession(id, where, snap)
	if err != nil {
		return nil, err
	}
	for i, p := range recs {
		r, err := checkpoint.DecodeRecord(p)
		if err != nil {
			return nil, checkpoint.Undecodable(id, where, fmt.Errorf("record %d: %w", i+1, err))
		}
		sess.Apply(r)
	}
	sess.Summarize()
	return sess, nil
}

// Head is the session's entry.
func (s *Store) Head(ctx context.Context, id string) (checkpoint.Entry, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return checkpoint.Entry{}, err
	}
	s.mu.Lock()
	e := s.sessions[id]
	s.mu.Unlock()
	if e == nil {
		return checkpoint.Entry{}, s.notFound(id)
	}
	return s.entry(ctx, id), nil
}

func (s *Store) entry(ctx context.Context, id string) checkpoint.Entry {
	s.mu.Lock()
	touched := time.Time{}
	if e := s.sessions[id]; e != nil {
		touched = e.touched
	}
	s.mu.Unlock()
	en := checkpoint.Entry{Summary: checkpoint.Summary{ID: id, Path: s.Location()}, Touched: touched}
	sess, err := s.Load(ctx, id)
	if err != nil {
		en.Err = err
		return en
	}
	en.SpecPath, en.TeamName = sess.SpecPath, sess.TeamName
	en.CreatedAt, en.UpdatedAt = sess.CreatedAt, sess.UpdatedAt
	en.Done, en.Total = sess.Summary.Done, sess.Summary.Total
	return en
}

// List summarises every session, sorted by id.
func (s *Store) List(ctx context.Context) ([]checkpoint.Entry, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	sort.Strings(ids)
	out := make([]checkpoint.Entry, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.entry(ctx, id))
	}
	return out, nil
}

// OrphanLocks lists the locks of sessions the store lacks. A lock lives
// only while held, in this process: every one listed is a run's that is
// starting (a killed run takes the whole store with it).
func (s *Store) OrphanLocks(context.Context) ([]checkpoint.OrphanLock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []checkpoint.OrphanLock
	for id, l := range s.locks {
		if s.sessions[id] == nil {
			out = append(out, checkpoint.OrphanLock{ID: id, Touched: l.holder.Started})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete removes a session unless a run holds it.
func (s *Store) Delete(_ context.Context, id string) error {
	if err := checkpoint.ValidateID(id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.locks[id]; l != nil {
		return &checkpoint.HeldError{ID: id, PID: l.holder.PID, Host: l.holder.Host, Started: l.holder.Started}
	}
	if s.sessions[id] == nil {
		return s.notFound(id)
	}
	delete(s.sessions, id)
	delete(s.blobs, id)
	return nil
}

// Discard removes the session cl holds, if it was written, and releases cl.
func (s *Store) Discard(_ context.Context, cl checkpoint.Lock) error {
	l, _ := cl.(*lock)
	s.mu.Lock()
	if l == nil || l.store != s || s.locks[l.id] != l {
		s.mu.Unlock()
		return fmt.Errorf("memstore: Discard without holding the session's lock")
	}
	delete(s.sessions, l.id)
	delete(s.blobs, l.id)
	s.mu.Unlock()
	return l.Release()
}

// Begin stores sess as the snapshot and opens its journal.
func (s *Store) Begin(_ context.Context, cl checkpoint.Lock, sess *checkpoint.Session) (checkpoint.Journal, error) {
	if sess == nil {
		return nil, errors.New("memstore: Begin without a session")
	}
	l, _ := cl.(*lock)
	s.mu.Lock()
	defer s.mu.Unlock()
	if l == nil || l.store != s || l.id != sess.ID || s.locks[sess.ID] != l {
		return nil, fmt.Errorf("memstore: Begin on session %s without holding its lock", sess.ID)
	}
	// Epoch marks a session loaded from a store: only such a session may
	// replace the one stored under its id.
	if sess.Epoch == "" && s.sessions[sess.ID] != nil {
		return nil, fmt.Errorf("%w: session %s is already in %s; nothing was overwritten", checkpoint.ErrExists, sess.ID, s.Location())
	}
	j := &journal{FoldedView: checkpoint.FoldedView{Sess: sess}, store: s, lock: l}
	j.commit.Init(&j.FoldedView, j.writeGroup, nil)
	j.Warn(checkpoint.PrepareSnapshot(sess)...)
	if err := j.snapshot(); err != nil {
		return nil, err
	}
	// As the file store: a blob the new snapshot does not name is no
	// task's result.
	keep := sess.Blobs()
	for h := range s.blobs[sess.ID] {
		if _, ok := keep["sha256:"+h]; !ok {
			delete(s.blobs[sess.ID], h)
		}
	}
	return j, nil
}

// Project is the in-memory state of the project of spec folder dir.
func (s *Store) Project(dir string) checkpoint.ProjectState {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[dir]
	if p == nil {
		p = &Project{dir: dir}
		s.projects[dir] = p
	}
	return p
}

type lock struct {
	store  *Store
	id     string
	holder checkpoint.Holder
	once   sync.Once
}

func (l *lock) ID() string                { return l.id }
func (l *lock) Holder() checkpoint.Holder { return l.holder }

func (l *lock) Release() error {
	l.once.Do(func() {
		s := l.store
		s.mu.Lock()
		if s.locks[l.id] == l {
			delete(s.locks, l.id)
		}
		close(s.wake)
		s.wake = make(chan struct{})
		s.mu.Unlock()
	})
	return nil
}

type journal struct {
	checkpoint.FoldedView
	store  *Store
	lock   *lock
	closed bool
	// Mu is held through a batch's write: the batches never group, but
	// they are written, applied and acknowledged as the other stores' are.
	commit checkpoint.GroupCommit
}

// snapshot replaces the stored session with j.Sess; store.mu is held.
func (j *journal) snapshot() error {
	j.Sess.Epoch = checkpoint.RandHex(8)
	data, err := checkpoint.EncodeSession(j.Sess)
	if err != nil {
		return err
	}
	var logs map[logKey][]byte // a new snapshot of the session keeps its logs
	if old := j.store.sessions[j.Sess.ID]; old != nil {
		logs = old.logs
	}
	j.store.sessions[j.Sess.ID] = &session{snapshot: data, touched: time.Now(), logs: logs}
	return nil
}

func (j *journal) Record(r checkpoint.Record) error {
	return j.RecordBatch([]checkpoint.Record{r})
}

// RecordBatch keeps rs together: all of them or, on an error, none.
func (j *journal) RecordBatch(rs []checkpoint.Record) error {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed {
		return checkpoint.JournalClosed(j.Sess.ID)
	}
	b, err := j.Prepare(rs)
	if err != nil {
		return err
	}
	return j.commit.Commit(b)
}

// writeGroup appends the payloads to the stored session, unless another
// run took it over or it was deleted (Mu held).
func (j *journal) writeGroup(_ []checkpoint.Record, payloads [][]byte) error {
	s := j.store
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.sessions[j.Sess.ID]
	if e == nil || s.locks[j.Sess.ID] != j.lock {
		return fmt.Errorf("%w: session %s was deleted or taken over", checkpoint.ErrStore, j.Sess.ID)
	}
	e.records = append(e.records, payloads...)
	e.touched = time.Now()
	return nil
}

func (j *journal) Close() error {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	j.store.mu.Lock()
	defer j.store.mu.Unlock()
	return j.snapshot()
}

// Project is a project's active session and audit log, in memory.
type Project struct {
	mu     sync.Mutex
	dir    string
	active string
	audit  []checkpoint.AuditRecord
}

func (p *Project) Dir() string   { return p.dir }
func (p *Project) Where() string { return "the memory store's state of " + p.dir }

func (p *Project) Active(context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active, nil
}

func (p *Project) SetActive(_ context.Context, id string) error {
	if err := checkpoint.ValidateID(id); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active = id
	return nil
}

func (p *Project) ClaimActive(_ context.Context, prev, id string) (string, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active == prev {
		p.active = id
	}
	return p.active, nil
}

func (p *Project) Audit(_ context.Context, rec checkpoint.AuditRecord) error {
	rec.Fill()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.audit = append(p.audit, rec)
	return nil
}

func (p *Project) AuditRecords(context.Context) ([]checkpoint.AuditRecord, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]checkpoint.AuditRecord(nil), p.audit...), nil
}

var _ checkpoint.BlobStore = (*Store)(nil)

// PutBlob keeps what r yields as a blob of session id.
func (s *Store) PutBlob(_ context.Context, id string, r io.Reader) (checkpoint.Blob, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return checkpoint.Blob{}, err
	}
	var buf bytes.Buffer
	w := checkpoint.NewBlobWriter()
	if _, err := io.Copy(io.MultiWriter(&buf, w), r); err != nil {
		return checkpoint.Blob{}, fmt.Errorf("%w: a blob of session %s: %w", checkpoint.ErrStore, id, err)
	}
	b := w.Blob()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blobs[id] == nil {
		s.blobs[id] = map[string][]byte{}
	}
	s.blobs[id][b.Hex()] = buf.Bytes()
	return b, nil
}

// OpenBlob reads blob b of session id, checked as it is read.
func (s *Store) OpenBlob(_ context.Context, id string, b checkpoint.Blob) (io.ReadCloser, error) {
	where := s.BlobWhere(id, b)
	s.mu.Lock()
	data, ok := s.blobs[id][b.Hex()]
	s.mu.Unlock()
	if !ok {
		return nil, &checkpoint.CorruptError{ID: id, Path: where, Err: errors.New("a result stored out of line is missing")}
	}
	return io.NopCloser(checkpoint.VerifyBlob(bytes.NewReader(data), b, id, where)), nil
}

// BlobWhere names blob b of session id in messages.
func (s *Store) BlobWhere(id string, b checkpoint.Blob) string {
	return fmt.Sprintf("%s: blob %s of session %s", s.Location(), b.Hex(), id)
}

// DamageBlob flips a byte of a stored blob, for tests of damage.
func (s *Store) DamageBlob(id string, b checkpoint.Blob) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.blobs[id][b.Hex()]
	if !ok || len(data) == 0 {
		return false
	}
	c := bytes.Clone(data)
	c[len(c)/2] ^= 1
	s.blobs[id][b.Hex()] = c
	return true
}
