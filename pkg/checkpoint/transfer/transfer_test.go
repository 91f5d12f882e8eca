package transfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/filestore"
	"github.com/teamrun/teamrun/pkg/checkpoint/memstore"
	"github.com/teamrun/teamrun/pkg/checkpoint/pgstore"
	"github.com/teamrun/teamrun/pkg/spec"
)

// pgBackend is a PostgreSQL store in a schema of its own, dropped at the
// end; skipped without TEAMRUN_TEST_PG_URL except under CI=true.
func pgBackend(t *testing.T) checkpoint.Backend {
	t.Helper()
	s, _, _ := pgBackendIn(t)
	return s
}

// pgBackendIn is pgBackend with the server's URL and the schema's name,
// for what a test does behind the store's back.
func pgBackendIn(t *testing.T) (s *pgstore.Store, raw, schema string) {
	t.Helper()
	raw = testenv.PostgresURL(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema = "x_" + hex.EncodeToString(b)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	ctx := context.Background()
	s, err = pgstore.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if c, err := pgx.Connect(ctx, raw); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	return s, raw, schema
}

func seed(t *testing.T, b checkpoint.Backend, id string) {
	t.Helper()
	ctx := context.Background()
	defs := []spec.TaskDef{{ID: 0, Name: "draft", Agent: "w", Key: "k1"}, {ID: 1, Name: "polish", Agent: "w", Key: "k2"}}
	l, err := b.Lock(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	j, err := b.Begin(ctx, l, checkpoint.NewSession(id, "/s/agents.yaml", "team", spec.Sequential, defs, "fp", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []checkpoint.Record{
		{Kind: checkpoint.TaskStarted, Task: "draft"},
		{Kind: checkpoint.TaskCompleted, Task: "draft", Result: "bytes \xff kept", Variables: map[string]any{"n": int64(3)}},
		{Kind: checkpoint.DecisionRecorded, Task: "polish", Value: "approve"},
	} {
		if err := j.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	// The journal stays open: Export folds what was acknowledged.
}

func fileBackend(t *testing.T) checkpoint.Backend {
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExportImport(t *testing.T) {
	for _, tt := range []struct {
		name     string
		from, to func(*testing.T) checkpoint.Backend
	}{
		{"file to file", fileBackend, fileBackend},
		{"file to PostgreSQL", fileBackend, pgBackend},
		{"PostgreSQL to file", pgBackend, fileBackend},
		{"PostgreSQL to PostgreSQL", pgBackend, pgBackend},
	} {
		t.Run(tt.name, func(t *testing.T) { exportImport(t, tt.from(t), tt.to(t)) })
	}
}

func exportImport(t *testing.T, from, to checkpoint.Backend) {
	ctx := context.Background()
	seed(t, from, "night-1")
	doc, err := Export(ctx, from, "night-1")
	if err != nil {
		t.Fatal(err)
	}
	id, err := Import(ctx, to, "night-1.json", doc)
	if err != nil || id != "night-1" {
		t.Fatalf("Import = %q, %v", id, err)
	}
	got, err := to.Load(ctx, "night-1")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := got.Task("draft")
	if d.Status != checkpoint.StatusCompleted || d.Result != "bytes \xff kept" || d.Variables["n"] != int64(3) ||
		got.Checkpoint.Decisions["polish"] != "approve" || got.Summary.Done != 1 {
		t.Errorf("imported %+v, decisions %v, summary %+v", d, got.Checkpoint.Decisions, got.Summary)
	}
	again, err := Export(ctx, to, "night-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, to, "night-1.json", again); !errors.Is(err, checkpoint.ErrExists) || !strings.Contains(err.Error(), "teamrun session delete night-1") {
		t.Errorf("importing over a stored session = %v, want ErrExists saying what to do", err)
	}
}

func TestImportRefuses(t *testing.T) {
	ctx := context.Background()
	to := pgBackend(t)
	seed(t, to, "held")
	held, err := to.Lock(ctx, "held2", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	tests := []struct {
		name, doc, want string
	}{
		{"not json", "hello", "f.json is not a session that teamrun session export wrote"},
		{"bad id", `{"session_id":"../evil"}`, "f.json: session_id:"},
		{"damaged", `{"format_version":2,"session_id":"x","checksum":"crc32c-00000000"}` + "\n", "f.json is damaged: its checksum does not match its content"},
		{"held", `{"format_version":1,"session_id":"held2","spec_path":"a","team":{"tasks":[]}}`, "held by another run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(ctx, to, "f.json", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Import = %v, want %q", err, tt.want)
			}
			var de *DocumentError
			if bad := tt.name != "held"; errors.As(err, &de) != bad {
				t.Errorf("Import = %v: a DocumentError is %v, want %v", err, !bad, bad)
			}
		})
	}
}

// A result stored out of line travels in the document and is stored out
// of line again by a store that can; one that cannot keeps it in line.
func TestExportImportBlobs(t *testing.T) {
	big := strings.Repeat("large output\n", checkpoint.BlobThreshold/13+1) + "\xff"
	for _, tt := range []struct {
		name     string
		from, to func(*testing.T) checkpoint.Backend
	}{
		{"file to memory", fileBackend, memBackend},
		{"memory to file", memBackend, fileBackend},
		{"file to PostgreSQL", fileBackend, pgBackend},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			from, to := tt.from(t), tt.to(t)
			bs := from.(checkpoint.BlobStore)
			l, err := from.Lock(ctx, "big", 0)
			if err != nil {
				t.Fatal(err)
			}
			defs := []spec.TaskDef{{ID: 0, Name: "out", Agent: "w", Key: "k1"}}
			j, err := from.Begin(ctx, l, checkpoint.NewSession("big", "/s/agents.yaml", "team", spec.Sequential, defs, "fp", time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			b, err := bs.PutBlob(ctx, "big", strings.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			if err := checkpoint.RecordAll(j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "out"}, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "out", Blob: &b}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			l.Release()
			doc, err := Export(ctx, from, "big")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Import(ctx, to, "big.json", doc); err != nil {
				t.Fatal(err)
			}
			got, err := to.Load(ctx, "big")
			if err != nil {
				t.Fatal(err)
			}
			tk, _ := got.Task("out")
			text := tk.Result
			if tbs, ok := to.(checkpoint.BlobStore); ok {
				if tk.Blob == nil || *tk.Blob != b || tk.Result != "" {
					t.Fatalf("imported into a store with blobs: blob %+v, %d bytes in line; want %+v", tk.Blob, len(tk.Result), b)
				}
				text, err = checkpoint.ReadBlob(ctx, tbs, "big", b)
				if err != nil {
					t.Fatal(err)
				}
			}
			if text != big {
				t.Fatalf("imported result: %d bytes, want the %d exported", len(text), len(big))
			}
		})
	}
}

func memBackend(*testing.T) checkpoint.Backend { return memstore.New() }

// An import whose Begin fails (the server refuses the session's row) after
// it stored the session's results out of line leaves none of them behind:
// nothing would name them, list them or remove them. Imported again once
// the server takes it, the session is whole.
func TestImportFailedLeavesNoResults(t *testing.T) {
	ctx := context.Background()
	from := fileBackend(t)
	to, raw, schema := pgBackendIn(t)
	big := strings.Repeat("large output\n", checkpoint.BlobThreshold/13+1)
	l, err := from.Lock(ctx, "big", 0)
	if err != nil {
		t.Fatal(err)
	}
	defs := []spec.TaskDef{{ID: 0, Name: "out", Agent: "w", Key: "k1"}}
	j, err := from.Begin(ctx, l, checkpoint.NewSession("big", "/s/agents.yaml", "team", spec.Sequential, defs, "fp", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.RecordAll(j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "out"}, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "out", Result: big}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	l.Release()
	doc, err := Export(ctx, from, "big")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	sql := func(q string) {
		t.Helper()
		if _, err := admin.Exec(ctx, strings.ReplaceAll(q, "{s}", schema)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The store's tables, made by its first write: a lock taken and let go.
	setup, err := to.Lock(ctx, "setup", 0)
	if err != nil {
		t.Fatal(err)
	}
	setup.Release()
	sql(`CREATE FUNCTION {s}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no new sessions today'; END $$`)
	sql(`CREATE TRIGGER refuse BEFORE INSERT ON {s}.sessions FOR EACH ROW EXECUTE FUNCTION {s}.refuse()`)
	if _, err := Import(ctx, to, "big.json", doc); err == nil || !strings.Contains(err.Error(), "no new sessions today") {
		t.Fatalf("Import with the session's row refused = %v, want the server's error", err)
	}
	var rows int
	if err := admin.QueryRow(ctx, strings.ReplaceAll(`SELECT (SELECT count(*) FROM {s}.blobs) + (SELECT count(*) FROM {s}.holders)`, "{s}", schema)).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("a failed import left %d blobs and holders rows (%v)", rows, err)
	}
	sql(`DROP TRIGGER refuse ON {s}.sessions`)
	if _, err := Import(ctx, to, "big.json", doc); err != nil {
		t.Fatal(err)
	}
	got, err := to.Load(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := got.Task("out")
	if tk.Blob == nil {
		t.Fatalf("imported result not stored out of line: %+v", tk)
	}
	if text, err := checkpoint.ReadBlob(ctx, to, "big", *tk.Blob); err != nil || text != big {
		t.Fatalf("imported result: %d bytes, %v; want the %d exported", len(text), err, len(big))
	}
}
