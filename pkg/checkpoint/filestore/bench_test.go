package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

var kib = strings.Repeat("x", 1023) + "\n"

// bigSession is a session of n completed tasks with 1 KiB results.
func bigSession(id string, n int) *checkpoint.Session {
	sess := checkpoint.NewSession(id, "/p/agents.yaml", "bench", spec.Sequential, bigDefs(n), "fp", t0)
	for i := range sess.Team.Tasks {
		t := &sess.Team.Tasks[i]
		t.Status, t.Result, t.Attempts = checkpoint.StatusCompleted, kib, 1
	}
	return sess
}

// bigDefs are bigSession's n tasks (its fingerprint is "fp").
func bigDefs(n int) []spec.TaskDef {
	ds := make([]spec.TaskDef, n)
	for i := range ds {
		ds[i] = spec.TaskDef{ID: i, Name: fmt.Sprintf("task-%05d", i), Agent: "writer", Description: "do it", Key: "k", AgentKey: "a"}
	}
	return ds
}

// BenchmarkRecord: one task transition (a completion with a 1 KiB result,
// appended and fdatasync'd) after 10, 1,000 and 10,000 earlier tasks. The
// cost per record includes the amortised compactions; p99-ms and worst-ms
// are the slowest records, where a compaction that stalled Record shows
// (run enough records for one: -benchtime 20000x).
func BenchmarkRecord(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("after=%d", n), func(b *testing.B) {
			s := newStore(b)
			l := mustLock(b, s, "bench")
			sess := bigSession("bench", n)
			j := mustBegin(b, s, l, sess)
			names := make([]string, n)
			for i := range names {
				names[i] = sess.Team.Tasks[i].Name
			}
			took := make([]time.Duration, b.N)
			b.SetBytes(int64(len(kib)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: names[i%n], Result: kib}); err != nil {
					b.Fatal(err)
				}
				took[i] = time.Since(t)
			}
			b.StopTimer()
			slices.Sort(took)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
			b.ReportMetric(ms(took[len(took)-1]), "worst-ms")
			j.Close()
		})
	}
}

// BenchmarkLoad10000: loading a 10,000-task session, compacted or with all
// its tasks still in the journal (a run killed before compaction).
func BenchmarkLoad10000(b *testing.B) {
	s := newStore(b)
	l := mustLock(b, s, "snap")
	j := mustBegin(b, s, l, bigSession("snap", 10000))
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	// The same tasks, recorded one by one into a journal that is not folded.
	s.compactMin = 1 << 40
	l2 := mustLock(b, s, "jour")
	sess := bigSession("jour", 10000)
	for i := range sess.Team.Tasks {
		sess.Team.Tasks[i].Status, sess.Team.Tasks[i].Result = checkpoint.StatusPending, ""
	}
	j2 := mustBegin(b, s, l2, sess)
	for _, t := range sess.Team.Tasks {
		if err := j2.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: t.Name, Result: kib}); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range []string{"snap", "jour"} {
		name := map[string]string{"snap": "snapshot", "jour": "journal"}[id]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sess, err := s.Load(bg, id)
				if err != nil || sess.Summary.Done != 10000 {
					b.Fatalf("%v %+v", err, sess.Summary)
				}
			}
		})
	}
}

// BenchmarkFdatasync: the floor under Record: append 1 KiB and fdatasync,
// on the same disk.
func BenchmarkFdatasync(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "f"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := []byte(kib)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList10000: session list over 10,000 small sessions.
func BenchmarkList10000(b *testing.B) {
	s := newStore(b)
	for i := 0; i < 10000; i++ {
		sess := bigSession(fmt.Sprintf("s-%05d", i), 3)
		data, err := checkpoint.EncodeSession(sess) // checksummed, as a run writes it
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(s.Path(sess.ID), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		list, err := s.List(bg)
		if err != nil || len(list) != 10000 || list[0].Done != 3 {
			b.Fatalf("%v %d", err, len(list))
		}
	}
}

// BenchmarkRecordParallel: 8 writers record completions (1 KiB results) at
// once, as a workflow's tasks do; group commit lets records that arrive
// during a sync share the next one. syncs/record is below 1 when they do.
func BenchmarkRecordParallel(b *testing.B) {
	s := newStore(b)
	var syncs atomic.Int64
	s.datasync = func(f *os.File) error { syncs.Add(1); return fdatasync(f) }
	l := mustLock(b, s, "bench")
	sess := bigSession("bench", 1000)
	j := mustBegin(b, s, l, sess)
	b.SetParallelism(8 / max(1, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: sess.Team.Tasks[i%1000].Name, Result: kib}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(syncs.Load())/float64(n.Load()), "syncs/record")
	j.Close()
}
