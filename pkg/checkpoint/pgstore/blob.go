package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// blobChunk is the size of one row of a blob: a blob goes to and comes
// from the database one chunk at a time, never whole in memory.
const blobChunk = 1 << 20

var _ checkpoint.BlobStore = (*Store)(nil)

// BlobWhere names blob b of session id in messages.
func (s *Store) BlobWhere(id string, b checkpoint.Blob) string {
	return fmt.Sprintf("%s (%s.blobs, session %s, blob %s)", s.cfg.location, s.cfg.schema, id, b.Hex())
}

// PutBlob copies r into the blobs table in chunks, hashing it, under a
// name of its own; the same transaction then names the rows by their
// sha256 (replacing a copy already there), so a blob is there whole or
// not at all once COMMIT returns. Tasks that end with the same result
// store it at once: a lock on the digest makes the second wait for the
// first's COMMIT, so its DELETE sees the rows it would else collide with.
func (s *Store) PutBlob(ctx context.Context, id string, r io.Reader) (checkpoint.Blob, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return checkpoint.Blob{}, err
	}
	if err := s.ready(ctx); err != nil {
		return checkpoint.Blob{}, err
	}
	var b checkpoint.Blob
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tmp := "tmp-" + newEpoch()
		w := checkpoint.NewBlobWriter()
		buf := make([]byte, blobChunk)
		for n := 0; ; n++ {
			k, rerr := io.ReadFull(r, buf)
			if k > 0 {
				w.Write(buf[:k])
				if _, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.blobs (session_id, digest, chunk, data) VALUES ($1, $2, $3, $4)`), id, tmp, n, buf[:k]); err != nil {
					return err
				}
			}
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
				break
			}
			if rerr != nil {
				return fmt.Errorf("%w: reading the result to store: %w", checkpoint.ErrStore, rerr)
			}
		}
		b = w.Blob()
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.key("blob", id+"\x00"+b.Hex())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q(`DELETE FROM {s}.blobs WHERE session_id = $1 AND digest = $2`), id, b.Hex()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q(`UPDATE {s}.blobs SET digest = $3 WHERE session_id = $1 AND digest = $2`), id, tmp, b.Hex())
		return err
	})
	if err != nil {
		return checkpoint.Blob{}, s.cfg.fail("store a result of session "+id, err)
	}
	return b, nil
}

// OpenBlob reads blob b of session id a chunk at a time, checked as it is
// read.
func (s *Store) OpenBlob(ctx context.Context, id string, b checkpoint.Blob) (io.ReadCloser, error) {
	where := s.BlobWhere(id, b)
	if err := b.Valid(); err != nil {
		return nil, &checkpoint.CorruptError{ID: id, Path: s.where(id), Err: err}
	}
	none, err := s.empty(ctx)
	if err != nil {
		return nil, err
	}
	var ok bool
	if !none {
		if err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {s}.blobs WHERE session_id = $1 AND digest = $2)`), id, b.Hex()).Scan(&ok); err != nil {
			return nil, s.cfg.fail("read "+where, err)
		}
	}
	if !ok {
		return nil, &checkpoint.CorruptError{ID: id, Path: where, Err: errors.New("a result stored out of line is missing")}
	}
	cr := &chunkReader{ctx: ctx, s: s, id: id, hex: b.Hex(), where: where}
	return io.NopCloser(checkpoint.VerifyBlob(cr, b, id, where)), nil
}

// chunkReader reads a blob's rows in order.
type chunkReader struct {
	ctx     context.Context
	s       *Store
	id, hex string
	where   string
	next    int
	buf     []byte
	done    bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		err := c.s.pool.QueryRow(c.ctx, c.s.q(`SELECT data FROM {s}.blobs WHERE session_id = $1 AND digest = $2 AND chunk = $3`), c.id, c.hex, c.next).Scan(&c.buf)
		if errors.Is(err, pgx.ErrNoRows) {
			c.done = true
			continue
		}
		if err != nil {
			return 0, c.s.cfg.fail("read "+c.where, err)
		}
		c.next++
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// sweepBlobs removes the blobs of session id that keep does not name.
func (s *Store) sweepBlobs(ctx context.Context, id string, keep map[string]checkpoint.Blob) error {
	names := make([]string, 0, len(keep))
	for _, b := range keep {
		names = append(names, b.Hex())
	}
	if _, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.blobs WHERE session_id = $1 AND NOT (digest = ANY($2))`), id, names); err != nil {
		return s.cfg.fail("remove the unused results of session "+id, err)
	}
	return nil
}
