package pgstore

import (
	"context"
	"io"
	"strings"
	"testing"
)

// A schema at version 1 (before the logs table) keeps its sessions when a
// newer teamrun opens it, and gets the logs table.
func TestMigrateToLogs(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	_, j := begin(t, s, "old", 2)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
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
	w := s.AttemptLog(ctx, "old", "t001", 1, "stdout")
	io.WriteString(w, "kept")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadLog(ctx, "old", "t001", 1, "stdout"); err != nil || string(got) != "kept" {
		t.Errorf("ReadLog = %q, %v", got, err)
	}
}

// The log of a session the store does not hold is refused with an error
// naming it, never a panic or a row without its session.
func TestLogOfNoSession(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	w := s.AttemptLog(context.Background(), "ghost", "t", 1, "stderr")
	io.WriteString(w, "x")
	err := w.Close()
	if err == nil {
		t.Fatal("a log of no session was kept")
	}
	if want := "session ghost"; !strings.Contains(err.Error(), want) {
		t.Errorf("%v does not name %q", err, want)
	}
}
