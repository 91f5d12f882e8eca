package pgstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m, openForTest) }

// openForTest opens a store as a run does; TEAMRUN_PG_COMPACT lowers the
// transitions' size that triggers a compaction, so the crash test also
// kills mid-compaction.
func openForTest(location string) (checkpoint.Backend, error) {
	s, err := Open(context.Background(), location)
	if err != nil {
		return nil, err
	}
	if n, err := strconv.Atoi(os.Getenv("TEAMRUN_PG_COMPACT")); err == nil {
		s.minCompact = n
	}
	return s, nil
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New:      func(t *testing.T) checkpoint.Backend { return openStore(t, testStoreURL(t)) },
		Shared:   func(t *testing.T) string { return testStoreURL(t) },
		Open:     openForTest,
		ChildEnv: []string{"TEAMRUN_PG_COMPACT=8192"},
		DamageBlob: func(t *testing.T, b checkpoint.Backend, id string, blob checkpoint.Blob) {
			s := b.(*Store)
			tag, err := s.pool.Exec(context.Background(), s.q(`UPDATE {s}.blobs SET data = overlay(data placing '\x00'::bytea from 10) WHERE session_id = $1 AND digest = $2 AND chunk = 0`), id, blob.Hex())
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("damaging blob %s: %v (%d rows)", blob.Digest, err, tag.RowsAffected())
			}
		},
		DamageSnapshot: func(t *testing.T, b checkpoint.Backend, id string) {
			s := b.(*Store)
			tag, err := s.pool.Exec(context.Background(), s.q(`UPDATE {s}.sessions
				SET snapshot = convert_to(replace(convert_from(snapshot, 'UTF8'), 'result of t01', 'result of X01'), 'UTF8') WHERE id = $1`), id)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("damaging the snapshot of %s: %v (%d rows)", id, err, tag.RowsAffected())
			}
		},
		DropTransition: func(t *testing.T, b checkpoint.Backend, id string, n int) {
			s := b.(*Store)
			tag, err := s.pool.Exec(context.Background(), s.q(`DELETE FROM {s}.transitions
				WHERE session_id = $1 AND seq = (SELECT snapshot_seq FROM {s}.sessions WHERE id = $1) + $2`), id, n)
			if err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("removing transition %d of %s: %v (%d rows)", n, id, err, tag.RowsAffected())
			}
		},
		Logs: true,
		// The rows of every table keyed by session.
		Leftovers: func(t *testing.T, b checkpoint.Backend, id string) []string {
			s := b.(*Store)
			var left []string
			for _, table := range []string{"sessions", "transitions", "holders", "blobs", "logs"} {
				col := "session_id"
				if table == "sessions" {
					col = "id"
				}
				var n int
				if err := s.pool.QueryRow(context.Background(), s.q(`SELECT count(*) FROM {s}.`+table+` WHERE `+col+` = $1`), id).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					left = append(left, fmt.Sprintf("%d row(s) of %s", n, table))
				}
			}
			return left
		},
	})
}
