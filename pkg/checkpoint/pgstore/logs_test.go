package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A schema from before the logs table keeps its sessions when a newer
// teamrun opens it, and gets the logs table.
func TestMigrateToLogs(t *testing.T) {
	before := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "{s}.logs (") })
	if before < 0 {
		t.Fatal("no migration creates the logs table")
	}
	raw := testStoreURL(t)
	s := openStore(t, raw)
	l, j := begin(t, s, "old", 2)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
	s.Close()
	// Undo the migrations from the logs table's on (the schema as an older
	// teamrun left it); those undone here must be all of them.
	if before != len(migrations)-5 {
		t.Fatalf("the logs table's migration is %d of %d: undo the later ones here too", before+1, len(migrations))
	}
	adminExec(t, raw, fmt.Sprintf(`DROP TRIGGER checksummed ON %[1]s.transitions; DROP FUNCTION %[1]s.refuse_unchecked();
		ALTER TABLE %[1]s.sessions DROP COLUMN unchecked_seq, DROP COLUMN snapshot_digest, DROP COLUMN project_key; ALTER TABLE %[1]s.transitions DROP COLUMN checksum;
		DROP TABLE %[1]s.logs; UPDATE %[1]s.schema_version SET version = %[2]d`, s.cfg.schema, before))

	s = openStore(t, raw)
	ctx := context.Background()
	if _, err := s.Load(ctx, "old"); err != nil {
		t.Fatalf("the session of the version 1 schema: %v", err)
	}
	var v int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT version FROM {s}.schema_version`)).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, SchemaVersion)
	}
	cl, err := s.Lock(ctx, "old", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Release()
	w := s.AttemptLog(ctx, cl, "t001", 1, "stdout")
	io.WriteString(w, "kept")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadLog(ctx, "old", "t001", 1, "stdout"); err != nil || string(got) != "kept" {
		t.Errorf("ReadLog = %q, %v", got, err)
	}
}

// A log is fenced like every write: refused, naming the session, when the
// store holds no such session or another run owns it now; never a row
// without its session.
func TestLogFenced(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	ghost, err := s.Lock(ctx, "ghost", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ghost.Release()
	l, _ := begin(t, s, "taken", 1)
	adminExec(t, raw, `UPDATE `+s.cfg.schema+`.sessions SET owner_generation = owner_generation + 1 WHERE id = 'taken'`)
	for _, tt := range []struct {
		lock checkpoint.Lock
		id   string
	}{{ghost, "ghost"}, {l, "taken"}} {
		w := s.AttemptLog(ctx, tt.lock, "t", 1, "stderr")
		io.WriteString(w, "x")
		err := w.Close()
		if err == nil {
			t.Fatalf("a log of session %s was kept", tt.id)
		}
		if want := "session " + tt.id; !strings.Contains(err.Error(), want) || !errors.Is(err, checkpoint.ErrStore) {
			t.Errorf("%v does not name %q or wrap ErrStore", err, want)
		}
		if _, err := s.ReadLog(ctx, tt.id, "t", 1, "stderr"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadLog(%s) after the refusal: %v", tt.id, err)
		}
	}
}
