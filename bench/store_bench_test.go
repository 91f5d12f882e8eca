package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgURL is the test cluster with a schema of this benchmark's own, dropped
// at the end; the benchmark skips without TEAMRUN_TEST_PG_URL.
func pgURL(b *testing.B) string {
	b.Helper()
	raw := os.Getenv("TEAMRUN_TEST_PG_URL")
	if raw == "" {
		b.Skip("no PostgreSQL: set TEAMRUN_TEST_PG_URL (eval \"$(.ci/pg.sh start)\")")
	}
	r := make([]byte, 6)
	_, _ = rand.Read(r)
	schema := "bench_" + hex.EncodeToString(r)
	b.Cleanup(func() {
		ctx := context.Background()
		if c, err := pgx.Connect(ctx, raw); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// commandTeam is 1,000 `command: [true]` tasks (an argv, no shell).
func commandTeam(b *testing.B, dir string) string {
	b.Helper()
	var s strings.Builder
	s.WriteString("name: bench\nagents:\n  t:\n    command: [\"true\"]\ntasks:\n")
	for i := range tasks {
		fmt.Fprintf(&s, "  t%d:\n    description: task %d\n    agent: t\n", i, i)
	}
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkStores alternates a cold 1,000-task run on the file store and on
// PostgreSQL (loopback, synchronous_commit=on), so both see the same load,
// and reports the medians per task; then a restored run on PostgreSQL.
func BenchmarkStores(b *testing.B) {
	dir := b.TempDir()
	bin := build(b, dir)
	spec := commandTeam(b, dir)
	home := filepath.Join(dir, "home")
	pg := pgURL(b)
	var files, pgs, over []float64
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("cold-%d", i)
		t0 := time.Now()
		teamrun(b, bin, home, "run", spec, "--quiet", "--session", id)
		t1 := time.Now()
		teamrun(b, bin, home, "run", spec, "--quiet", "--session", id, "--store", pg)
		t2 := time.Now()
		files, pgs = append(files, float64(t1.Sub(t0))), append(pgs, float64(t2.Sub(t1)))
		over = append(over, float64(t2.Sub(t1)-t1.Sub(t0)))
	}
	b.StopTimer()
	var restored []float64
	for range 3 {
		t0 := time.Now()
		teamrun(b, bin, home, "run", spec, "--quiet", "--continue", "--session", "cold-0", "--store", pg)
		restored = append(restored, float64(time.Since(t0)))
	}
	b.ReportMetric(median(files)/tasks, "file-ns/task")
	b.ReportMetric(median(pgs)/tasks, "pg-ns/task")
	// What PostgreSQL costs over the file store, per task, in the same
	// round: a sequential run commits once per task (a completion rides
	// with the next start), where the file store syncs once.
	b.ReportMetric(median(over)/tasks, "pg-over-file-ns/task")
	b.ReportMetric(median(restored)/1e6, "pg-restored-ms")
}
