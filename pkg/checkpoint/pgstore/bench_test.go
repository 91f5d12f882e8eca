package pgstore

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// BenchmarkRecord is one durable transition (a COMMIT with
// synchronous_commit=on) on the test server, in a 1,000-task session: with
// an empty result, and with a 1 KiB one (NUL bytes, 6 KiB of JSON, so the
// compactions it brings on cost their share).
func BenchmarkRecord(b *testing.B) {
	for _, size := range []int{0, 1024} {
		b.Run(fmt.Sprintf("result=%dB", size), func(b *testing.B) {
			s := openStore(b, testStoreURL(b))
			_, j := begin(b, s, "bench", 1000)
			result := string(make([]byte, size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				task := fmt.Sprintf("t%03d", i%1000+1)
				if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: task, Result: result}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoad1000 loads a 1,000-task session, half of it in transitions.
func BenchmarkLoad1000(b *testing.B) {
	s := openStore(b, testStoreURL(b))
	_, j := begin(b, s, "bench", 1000)
	for i := 1; i <= 1000; i++ {
		if err := complete(j, fmt.Sprintf("t%03d", i), "done"); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Load(context.Background(), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareCommit is the floor BenchmarkRecord is measured against: one
// autocommitted one-row INSERT (a COMMIT that flushes its WAL,
// synchronous_commit=on) on one connection to the same server.
func BenchmarkBareCommit(b *testing.B) {
	ctx := context.Background()
	c, err := admin(ctx, serverURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	table := randomName("floor_")
	if _, err := c.Exec(ctx, `CREATE TABLE `+table+` (n bigint, b bytea)`); err != nil {
		b.Fatal(err)
	}
	defer c.Exec(ctx, `DROP TABLE `+table) //nolint:errcheck // best effort
	if _, err := c.Exec(ctx, `SET synchronous_commit = on`); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Exec(ctx, `INSERT INTO `+table+` VALUES ($1, $2)`, i, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordParallel is 8 writers recording at once in a 1,000-task
// session: with group commit they share COMMITs (commits/record < 1).
func BenchmarkRecordParallel(b *testing.B) {
	s := openStore(b, testStoreURL(b))
	_, j := begin(b, s, "bench", 1000)
	var writes, n atomic.Int64
	s.beforeWrite = func() { writes.Add(1) }
	b.SetParallelism(8 / max(1, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: fmt.Sprintf("t%03d", i%1000+1), Result: "ok"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(writes.Load())/float64(n.Load()), "commits/record")
}
