package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

type logKey struct {
	task    string
	attempt int
	stream  string
}

// AttemptLog gathers one stream of an attempt of the session l holds and
// keeps it with the session at Close (nothing for a silent stream),
// refused when l no longer holds it or the session is gone.
func (s *Store) AttemptLog(_ context.Context, l checkpoint.Lock, task string, attempt int, stream string) io.WriteCloser {
	ml, _ := l.(*lock)
	return &logBuf{s: s, l: ml, key: logKey{task, attempt, stream}}
}

type logBuf struct {
	s   *Store
	l   *lock
	key logKey
	buf bytes.Buffer
}

func (b *logBuf) Write(p []byte) (int, error) { return b.buf.Write(p) }

func (b *logBuf) Close() error {
	if b.buf.Len() == 0 {
		return nil
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if b.l == nil || b.s.locks[b.l.id] != b.l || b.s.sessions[b.l.id] == nil {
		return fmt.Errorf("%w: memstore: a log of a session this lock does not hold, or that is gone", checkpoint.ErrStore)
	}
	e := b.s.sessions[b.l.id]
	if e.logs == nil {
		e.logs = map[logKey][]byte{}
	}
	e.logs[b.key] = bytes.Clone(b.buf.Bytes())
	b.buf = bytes.Buffer{}
	return nil
}

// ReadLog is what was kept of one stream of an attempt; an error wrapping
// fs.ErrNotExist when nothing was.
func (s *Store) ReadLog(_ context.Context, id, task string, attempt int, stream string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.sessions[id]; e != nil {
		if data, ok := e.logs[logKey{task, attempt, stream}]; ok {
			return bytes.Clone(data), nil
		}
	}
	return nil, fmt.Errorf("no %s kept for task %s, attempt %d, of session %s: %w", stream, task, attempt, id, fs.ErrNotExist)
}
