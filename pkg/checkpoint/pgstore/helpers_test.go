package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// serverURL is the test cluster's URL (.ci/pg.sh start prints it). Without
// it the test skips, except under CI=true, where it fails.
func serverURL(t testing.TB) string {
	t.Helper()
	return testenv.PostgresURL(t)
}

// ownCluster starts a cluster of this test's own with .ci/pg.sh, for a test
// that restarts its server: the shared one keeps serving other packages'
// tests meanwhile. It returns the cluster's URL and pg_ctl command line.
func ownCluster(t testing.TB) (url, ctl string) {
	t.Helper()
	serverURL(t) // the same skip rule: no PostgreSQL here, no test
	out, err := exec.Command("bash", "../../../.ci/pg.sh", "start").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf(".ci/pg.sh start: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf(".ci/pg.sh start: %v", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if ok {
			env[k] = v
		}
	}
	unquote := func(v string) string {
		out, err := exec.Command("bash", "-c", "printf %s "+v).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	dir := unquote(env["TEAMRUN_TEST_PG_DIR"])
	t.Cleanup(func() {
		if out, err := exec.Command("bash", "../../../.ci/pg.sh", "stop", dir).CombinedOutput(); err != nil {
			t.Logf(".ci/pg.sh stop: %v\n%s", err, out)
		}
	})
	return unquote(env["TEAMRUN_TEST_PG_URL"]), unquote(env["TEAMRUN_TEST_PG_CTL"])
}

// withParams is raw with query parameters set.
func withParams(t testing.TB, raw string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// testStoreURL is the server URL with a schema of its own for this test,
// dropped at the end, so tests never see each other's sessions.
func testStoreURL(t testing.TB, kv ...string) string {
	t.Helper()
	raw := serverURL(t)
	schema := randomName("t_")
	t.Cleanup(func() { dropSchema(t, raw, schema) })
	return withParams(t, raw, append([]string{"schema", schema}, kv...)...)
}

func dropSchema(t testing.TB, raw, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := admin(ctx, raw)
	if err != nil {
		t.Logf("drop schema %s: %v", schema, err)
		return
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
		t.Logf("drop schema %s: %v", schema, err)
	}
}

// admin is a plain connection to the test server, for what the tests do
// behind the store's back (terminate a backend, age the schema).
func admin(ctx context.Context, raw string) (*pgx.Conn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Del("schema")
	q.Del("lease")
	u.RawQuery = q.Encode()
	return pgx.Connect(ctx, u.String())
}

func adminExec(t testing.TB, raw, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := admin(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// terminate ends the server's backend pid (pg_terminate_backend) and
// waits until it is gone. pg_terminate_backend only signals it: the
// client sees its connection cut before the backend has exited and let go
// of its locks, so a Lock right after (a prune done again) could find the
// session held, by a holder of this test's own live pid, which Lock does
// not wait for as it does for a dead one (deadHere). The deadline is a
// safety net only.
func terminate(t testing.TB, raw string, pid uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := admin(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)); err != nil {
		t.Fatalf("terminate backend %d: %v", pid, err)
	}
	for {
		var there bool
		if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)
			OR EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1)`, int32(pid)).Scan(&there); err != nil {
			t.Fatalf("waiting for backend %d to end: %v", pid, err)
		}
		if !there {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holderBackend is the backend of session id's holders row: the
// connection of the lock that wrote it.
func holderBackend(t testing.TB, s *Store, id string) uint32 {
	t.Helper()
	var pid int32
	if err := s.pool.QueryRow(context.Background(), s.q(`SELECT backend_pid FROM {s}.holders WHERE session_id = $1`), id).Scan(&pid); err != nil {
		t.Fatalf("the holders row of session %s: %v", id, err)
	}
	return uint32(pid)
}

func openStore(t testing.TB, raw string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func taskDefs(n int) []spec.TaskDef {
	out := make([]spec.TaskDef, n)
	for i := range out {
		name := fmt.Sprintf("t%03d", i+1)
		out[i] = spec.TaskDef{ID: i, Name: name, Agent: "writer", Description: "step " + name,
			ExpectedOutput: "text", AgentKey: "a1", Key: "k-" + name}
	}
	return out
}

func newSession(id string, n int) *checkpoint.Session {
	return checkpoint.NewSession(id, "/specs/agents.yaml", "team", spec.Sequential, taskDefs(n), "fp1",
		time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
}

// begin locks id in s and begins a fresh n-task session there.
func begin(t testing.TB, s *Store, id string, n int) (*Lock, checkpoint.Journal) {
	t.Helper()
	ctx := context.Background()
	cl, err := s.Lock(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	l := cl.(*Lock)
	t.Cleanup(func() { l.Release() })
	j, err := s.Begin(ctx, l, newSession(id, n))
	if err != nil {
		t.Fatal(err)
	}
	return l, j
}

func complete(j checkpoint.Journal, task, result string) error {
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: task}); err != nil {
		return err
	}
	return j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: task, Result: result,
		Variables: map[string]any{"n": task}})
}

// backendPID is the server process serving l's connection.
func backendPID(t testing.TB, l *Lock) uint32 {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn.PgConn().PID()
}

// noPassword fails when msg shows the password of raw.
func noPassword(t testing.TB, raw, msg string) {
	t.Helper()
	u, _, err := splitURL(raw) // a socket's folder as the host is no URL of net/url's
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := u.User.Password(); ok && p != "" && strings.Contains(msg, p) {
		t.Errorf("the message shows the password: %s", msg)
	}
}

// shell runs a command line (the cluster's pg_ctl) through sh.
func shell(t testing.TB, line string) {
	t.Helper()
	out, err := exec.Command("sh", "-c", line).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}
