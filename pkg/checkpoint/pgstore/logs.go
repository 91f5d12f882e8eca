package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
)

// logWriteTimeout bounds the write of one stream at an attempt's end: a
// log is a courtesy, and an unreachable server must not hold the run.
const logWriteTimeout = 30 * time.Second

// AttemptLog gathers one stream ("stdout" or "stderr") of an attempt and
// writes it as one row of the logs table when Close is called, at the
// attempt's end: no statement per line on the run's hot path, and nothing
// for a silent stream. The caller caps what it writes (runner.LogCap).
// The row goes with the session (ON DELETE CASCADE).
func (s *Store) AttemptLog(ctx context.Context, id, task string, attempt int, stream string) io.WriteCloser {
	return &logRow{s: s, ctx: ctx, id: id, task: task, attempt: attempt, stream: stream}
}

type logRow struct {
	s                *Store
	ctx              context.Context
	id, task, stream string
	attempt          int
	buf              bytes.Buffer
	closed           bool
}

func (l *logRow) Write(p []byte) (int, error) { return l.buf.Write(p) }

func (l *logRow) Close() error {
	if l.closed || l.buf.Len() == 0 {
		return nil
	}
	l.closed = true
	ctx, cancel := context.WithTimeout(l.ctx, logWriteTimeout)
	defer cancel()
	_, err := l.s.pool.Exec(ctx, l.s.q(`INSERT INTO {s}.logs (session_id, task, attempt, stream, bytes) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (session_id, task, attempt, stream) DO UPDATE SET bytes = excluded.bytes`),
		l.id, l.task, l.attempt, l.stream, l.buf.Bytes())
	l.buf = bytes.Buffer{}
	if err != nil {
		return l.s.cfg.fail(fmt.Sprintf("keep the %s of task %s, attempt %d, of session %s", l.stream, l.task, l.attempt, l.id), err)
	}
	return nil
}

// ReadLog is what was kept of one stream of an attempt; an error wrapping
// fs.ErrNotExist when nothing was.
func (s *Store) ReadLog(ctx context.Context, id, task string, attempt int, stream string) ([]byte, error) {
	var data []byte
	err := s.pool.QueryRow(ctx, s.q(`SELECT bytes FROM {s}.logs WHERE session_id = $1 AND task = $2 AND attempt = $3 AND stream = $4`),
		id, task, attempt, stream).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("no %s kept for task %s, attempt %d, of session %s: %w", stream, task, attempt, id, fs.ErrNotExist)
	}
	if err != nil {
		return nil, s.cfg.fail(fmt.Sprintf("read the %s of task %s, attempt %d, of session %s", stream, task, attempt, id), err)
	}
	return data, nil
}
