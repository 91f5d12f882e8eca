package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// AttemptLog gathers one stream ("stdout" or "stderr") of an attempt of
// the session l holds and writes it as one row of the logs table when
// Close is called, at the attempt's end: no statement per line on the
// run's hot path, and nothing for a silent stream. The caller caps what it
// writes (runner.LogCap). The write is fenced like every other: refused
// once another run owns the session. The row goes with the session (ON
// DELETE CASCADE).
func (s *Store) AttemptLog(ctx context.Context, l checkpoint.Lock, task string, attempt int, stream string) io.WriteCloser {
	r := &logRow{s: s, ctx: ctx, id: l.ID(), task: task, attempt: attempt, stream: stream, gen: -1}
	if g, ok := l.(interface{ Generation() int64 }); ok {
		r.gen = g.Generation()
	}
	return r
}

type logRow struct {
	s                *Store
	ctx              context.Context
	id, task, stream string
	attempt          int
	gen              int64 // the owner generation of the lock; -1: none (refused)
	buf              bytes.Buffer
	closed           bool
}

func (l *logRow) Write(p []byte) (int, error) { return l.buf.Write(p) }

func (l *logRow) Close() error {
	if l.closed || l.buf.Len() == 0 {
		return nil
	}
	l.closed = true
	// A log is a courtesy: a silent server must not hold the run.
	ctx, cancel := l.s.bounded(l.ctx)
	defer cancel()
	// Through the pool, not the lock's connection: a big log must not
	// hold up the transitions; the generation fences it all the same.
	tag, err := l.s.pool.Exec(ctx, l.s.q(`INSERT INTO {s}.logs (session_id, task, attempt, stream, bytes)
		SELECT id, $2, $3, $4, $5 FROM {s}.sessions WHERE id = $1 AND owner_generation = $6
		ON CONFLICT (session_id, task, attempt, stream) DO UPDATE SET bytes = excluded.bytes`),
		l.id, l.task, l.attempt, l.stream, l.buf.Bytes(), l.gen)
	l.buf = bytes.Buffer{}
	what := fmt.Sprintf("keep the %s of task %s, attempt %d, of session %s", l.stream, l.task, l.attempt, l.id)
	if err != nil {
		return l.s.cfg.fail(what, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("%w: %s: the session is gone, or another run owns it now", checkpoint.ErrStore, what)
	}
	return nil
}

// ReadLog is what was kept of one stream of an attempt; an error wrapping
// fs.ErrNotExist when nothing was.
func (s *Store) ReadLog(ctx context.Context, id, task string, attempt int, stream string) ([]byte, error) {
	var data []byte
	none, err := s.empty(ctx)
	if err != nil {
		return nil, err
	}
	if err = pgx.ErrNoRows; !none {
		err = s.pool.QueryRow(ctx, s.q(`SELECT bytes FROM {s}.logs WHERE session_id = $1 AND task = $2 AND attempt = $3 AND stream = $4`),
			id, task, attempt, stream).Scan(&data)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("no %s kept for task %s, attempt %d, of session %s: %w", stream, task, attempt, id, fs.ErrNotExist)
	}
	if err != nil {
		return nil, s.cfg.fail(fmt.Sprintf("read the %s of task %s, attempt %d, of session %s", stream, task, attempt, id), err)
	}
	return data, nil
}
