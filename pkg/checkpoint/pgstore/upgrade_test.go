package pgstore

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A rolling upgrade: a run of a teamrun of schema 3 (before checksums)
// holds its session while a newer teamrun migrates the schema. Its next
// transition is refused, so that it stops there (exit 5, that write not
// acknowledged) instead of writing rows without a checksum, for which the
// session was corrupt once it died; the tasks it finished are restored.
// The old run's statements are those of its source (e363086:
// pkg/checkpoint/pgstore, claim, Begin and write), on a connection of its
// own; the schema it opened is migrations[:3], as that teamrun made it.
func TestMigrationRefusesUncheckedWriters(t *testing.T) {
	raw := testStoreURL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("schema")
	q := func(sql string) string { return strings.ReplaceAll(sql, "{s}", pgx.Identifier{schema}.Sanitize()) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	old, err := admin(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := old.Exec(ctx, q(sql), args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE SCHEMA {s}`)
	exec(`CREATE TABLE {s}.schema_version (version integer NOT NULL)`)
	for _, m := range migrations[:3] {
		exec(m)
	}
	exec(`INSERT INTO {s}.schema_version (version) VALUES (3)`)

	// The old run claims and begins its session.
	const id = "rolling"
	var gen int64
	if err := old.QueryRow(ctx, q(`SELECT nextval('{s}.generations')`)).Scan(&gen); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO {s}.holders (session_id, owner_generation, host, pid, started, backend_pid)
			VALUES ($1, $2, $3, $4, $5, pg_backend_pid())
			ON CONFLICT (session_id) DO UPDATE SET owner_generation = excluded.owner_generation, host = excluded.host,
				pid = excluded.pid, started = excluded.started, backend_pid = excluded.backend_pid`,
		id, gen, "old-host", 4242, time.Now().UTC().Truncate(time.Second))
	sess := newSession(id, 3)
	sess.Epoch = "00112233aabbccdd"
	snap, err := checkpoint.EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO {s}.sessions AS t (id, spec_path, team_name, created_at, updated_at,
					tasks_done, tasks_total, fingerprint, snapshot, snapshot_seq, last_seq, owner_generation)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
				ON CONFLICT (id) DO UPDATE SET spec_path = excluded.spec_path, team_name = excluded.team_name,
					created_at = excluded.created_at, updated_at = excluded.updated_at, tasks_done = excluded.tasks_done,
					tasks_total = excluded.tasks_total, fingerprint = excluded.fingerprint, snapshot = excluded.snapshot,
					snapshot_seq = excluded.snapshot_seq, last_seq = excluded.last_seq
				WHERE t.owner_generation = excluded.owner_generation`,
		sess.ID, sess.SpecPath, sess.TeamName, sess.CreatedAt, sess.UpdatedAt, sess.Summary.Done, sess.Summary.Total,
		sess.Team.TasksFingerprint, snap, int64(0), gen)

	// write is the old run's Journal.write of rs, after which done of
	// its tasks are done.
	seq := int64(0)
	write := func(done int, rs ...checkpoint.Record) error {
		payloads := make([][]byte, len(rs))
		for i, r := range rs {
			p, err := checkpoint.EncodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			payloads[i] = p
		}
		first, last := seq+1, seq+int64(len(rs))
		tag, err := old.Exec(ctx, q(`WITH s AS (
				UPDATE {s}.sessions SET last_seq = $4, updated_at = $5, tasks_done = $6
				WHERE id = $1 AND owner_generation = $2 AND last_seq = $3 - 1 RETURNING id)
			INSERT INTO {s}.transitions (session_id, seq, owner_generation, record)
				SELECT s.id, $3 + u.n - 1, $2, u.record FROM s, unnest($7::bytea[]) WITH ORDINALITY AS u(record, n)`),
			id, gen, first, last, time.Now().UTC(), done, payloads)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != int64(len(rs)) {
			t.Fatalf("the old run's write of %d..%d was fenced (%d rows)", first, last, tag.RowsAffected())
		}
		seq = last
		return nil
	}
	started := func(task string) checkpoint.Record {
		return checkpoint.Record{Kind: checkpoint.TaskStarted, Task: task}
	}
	completed := func(task string) checkpoint.Record {
		return checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: task, Result: "done " + task}
	}
	if err := write(0, started("t001")); err != nil {
		t.Fatal(err)
	}
	if err := write(1, completed("t001"), started("t002")); err != nil {
		t.Fatal(err)
	}

	// A newer teamrun opens the store (any command): it migrates 3 -> 7.
	s := openStore(t, raw)
	var v int
	if err := old.QueryRow(ctx, q(`SELECT version FROM {s}.schema_version`)).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, SchemaVersion)
	}

	// The old run goes on: t002 completes, and t003 starts.
	err = write(2, completed("t002"), started("t003"))
	if err == nil {
		t.Fatalf("the old run wrote transitions %d..%d without a checksum after the migration; want them refused", seq-1, seq)
	}
	for _, want := range []string{"schema " + schema + " was migrated", "upgrade teamrun", "--continue"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the old run's refused write says %q; want it to say %q", err, want)
		}
	}
	// It stops there and dies (its holder row stays, as a kill -9 leaves
	// it): --continue restores t001, the last task it had acknowledged.
	got, err := s.Load(ctx, id)
	if err != nil {
		t.Fatalf("Load after the old run died: %v; want its acknowledged tasks", err)
	}
	if got.Summary.Done != 1 {
		t.Errorf("%d tasks done, want 1 (t001)", got.Summary.Done)
	}
	if tr, _ := got.Task("t001"); tr.Status != checkpoint.StatusCompleted || tr.Result != "done t001" {
		t.Errorf("t001 restored as %s %q, want completed %q", tr.Status, tr.Result, "done t001")
	}
	if entries, err := s.List(ctx); err != nil || len(entries) != 1 || entries[0].Err != nil {
		t.Errorf("session list: %+v, %v; want the session, not corrupt", entries, err)
	}
}
