package pgstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A schema at version 1 (before the logs table) keeps its sessions when a
// newer teamrun opens it, and gets the logs table.
func TestMigrateToLogs(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	l, j := begin(t, s, "old", 2)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
	s.Close()
	adminExec(t, raw, `DROP TABLE `+s.cfg.schema+`.logs; UPDATE `+s.cfg.schema+`.schema_version SET version = 1`)

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
