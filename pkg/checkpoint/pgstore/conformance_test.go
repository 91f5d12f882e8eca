package pgstore

import (
	"context"
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
		Logs: true,
	})
}
