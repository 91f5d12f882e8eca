package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A schema at version 1 (before blobs) is migrated: its sessions stay,
// and results can be stored out of line.
func TestMigrateToBlobs(t *testing.T) {
	raw := testStoreURL(t)
	ctx := context.Background()
	s := openStore(t, raw)
	begin(t, s, "old", 2)
	sch := pgx.Identifier{s.cfg.schema}.Sanitize()
	adminExec(t, raw, `DROP TABLE `+sch+`.blobs`)
	adminExec(t, raw, `UPDATE `+sch+`.schema_version SET version = 1`)
	s.Close()

	s = openStore(t, raw)
	var v int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT version FROM {s}.schema_version`)).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("after migration: version %d, %v; want %d", v, err, SchemaVersion)
	}
	if ok, err := s.Exists(ctx, "old"); !ok || err != nil {
		t.Fatalf("the session of version 1: %v, %v", ok, err)
	}
	big := strings.Repeat("b", 3*blobChunk+17) // several chunks and a short one
	b, err := s.PutBlob(ctx, "old", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	got, err := checkpoint.ReadBlob(ctx, s, "old", b)
	if err != nil || got != big {
		t.Fatalf("read back %d bytes, %v; want %d", len(got), err, len(big))
	}
	var rows int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.blobs WHERE session_id = 'old'`)).Scan(&rows); err != nil || rows != 4 {
		t.Fatalf("%d rows, %v; want 4 chunks", rows, err)
	}
}
