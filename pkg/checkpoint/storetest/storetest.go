// Package storetest is the conformance suite every session store passes
// (restic style: one suite, every backend): transitions and restore, lock
// exclusivity and release, list/prune/delete, payloads JSON cannot hold
// as they are, and, for stores other processes can open, real SIGKILLs of
// a process mid-journal and lock races between processes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Harness is how the suite gets stores of one backend.
type Harness struct {
	// New is an empty store.
	New func(t *testing.T) checkpoint.Backend
	// Shared, when set, is an empty store's location that other processes
	// open too (with Open, from the test binary run again: see Main); the
	// cross-process tests run only then.
	Shared func(t *testing.T) string
	// Open opens a Shared location, in this process or a child.
	Open func(location string) (checkpoint.Backend, error)
	// ChildEnv is added to the environment of the child processes.
	ChildEnv []string
	// DamageBlob, when set, changes a byte of a stored blob (the Blobs
	// case then checks that it is found).
	DamageBlob func(t *testing.T, s checkpoint.Backend, id string, b checkpoint.Blob)
	// DamageSnapshot, when set, changes the text "result of t01" in
	// session id's snapshot (past its head), as an edit or a bad disk
	// would; the DamagedPastHead case then checks that List and Head find
	// it.
	DamageSnapshot func(t *testing.T, s checkpoint.Backend, id string)
	// DropTransition, when set, removes the n-th (from 1) of the
	// transitions session id recorded since its snapshot — a journal
	// line, a row — as a hand edit would; the TransitionRemoved case then
	// checks that Load, List and Head find it.
	DropTransition func(t *testing.T, s checkpoint.Backend, id string, n int)
	// Logs says the store keeps the attempts' output (AttemptLog,
	// ReadLog); the Logs case fails when it does not.
	Logs bool
	// Leftovers, when set, lists what s keeps of session id, whatever its
	// kind (files, rows, entries): the Discard and ClaimRace cases check
	// that a discarded session leaves nothing.
	Leftovers func(t *testing.T, s checkpoint.Backend, id string) []string
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s checkpoint.Backend)
	}{
		{"Absent", testAbsent},
		{"BadIDs", testBadIDs},
		{"Transitions", testTransitions},
		{"Batch", testBatch},
		{"Restore", testRestore},
		{"Hold", testHold},
		{"HoldKept", testHoldKept},
		{"BeginNeverOverwrites", testBeginNeverOverwrites},
		{"LockExclusive", testLockExclusive},
		{"LockWait", testLockWait},
		{"ConcurrentRecords", testConcurrentRecords},
		{"ReadBesideRun", testReadBesideRun},
		{"Payloads", testPayloads},
		{"ListDelete", testListDelete},
		{"Prune", testPrune},
		{"PruneStartingRun", testPruneStartingRun},
		{"Decide", testDecide},
		{"Project", testProject},
		{"ClaimActive", testClaimActive},
		{"ActiveBeingStarted", testActiveBeingStarted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := h.New(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
	t.Run("Discard", func(t *testing.T) { testDiscard(t, h) })
	t.Run("Blobs", func(t *testing.T) { testBlobs(t, h) })
	t.Run("BlobsAtOnce", func(t *testing.T) { testBlobsAtOnce(t, h) })
	t.Run("DamagedPastHead", func(t *testing.T) { testDamagedPastHead(t, h) })
	t.Run("TransitionRemoved", func(t *testing.T) { testTransitionRemoved(t, h) })
	if h.Logs {
		t.Run("Logs", func(t *testing.T) {
			s := h.New(t)
			t.Cleanup(func() { s.Close() })
			testLogs(t, s)
		})
	}
	if h.Shared != nil && h.Open != nil {
		t.Run("CrashKill", func(t *testing.T) { testCrashKill(t, h) })
		t.Run("LockRace", func(t *testing.T) { testLockRace(t, h) })
		t.Run("KilledHolderLeavesNoLock", func(t *testing.T) { testKilledHolder(t, h) })
		t.Run("ClaimRace", func(t *testing.T) { testClaimRace(t, h) })
		t.Run("PruneKilledBeforeWrite", func(t *testing.T) { testPruneKilledBeforeWrite(t, h) })
	}
}

var bg = context.Background()

// specPath is where the sessions' spec would be; nothing is written there.
const specPath = "/nonexistent/teamrun-storetest/agents.yaml"

func defs(n int) []spec.TaskDef {
	out := make([]spec.TaskDef, n)
	for i := range out {
		name := fmt.Sprintf("t%02d", i)
		out[i] = spec.TaskDef{ID: i, Name: name, Agent: "sh", Description: "step " + name, Key: "k" + name}
		if i > 0 {
			out[i].Context = []string{out[i-1].Name}
		}
	}
	return out
}

func newSession(id string, ds []spec.TaskDef) *checkpoint.Session {
	return checkpoint.NewSession(id, specPath, "team", spec.Sequential, ds, spec.FingerprintOf(ds), time.Now())
}

func lock(t *testing.T, s checkpoint.Backend, id string) checkpoint.Lock {
	t.Helper()
	l, err := s.Lock(bg, id, 0)
	if err != nil {
		t.Fatalf("Lock(%s): %v", id, err)
	}
	t.Cleanup(func() { l.Release() })
	return l
}

func begin(t *testing.T, s checkpoint.Backend, l checkpoint.Lock, sess *checkpoint.Session) checkpoint.Journal {
	t.Helper()
	j, err := s.Begin(bg, l, sess)
	if err != nil {
		t.Fatalf("Begin(%s): %v", sess.ID, err)
	}
	return j
}

func record(t *testing.T, j checkpoint.Journal, recs ...checkpoint.Record) {
	t.Helper()
	for _, r := range recs {
		if err := j.Record(r); err != nil {
			t.Fatalf("Record(%s %s): %v", r.Kind, r.Task, err)
		}
	}
}

func complete(task, result string) []checkpoint.Record {
	return []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: task}, {Kind: checkpoint.TaskCompleted, Task: task, Result: result}}
}

// finished stores a session of n tasks whose first done tasks completed.
func finished(t *testing.T, s checkpoint.Backend, id string, n, done int) {
	t.Helper()
	l := lock(t, s, id)
	ds := defs(n)
	j := begin(t, s, l, newSession(id, ds))
	for _, d := range ds[:done] {
		record(t, j, complete(d.Name, "result of "+d.Name)...)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
}

// testDamagedPastHead: a done session whose snapshot was changed past its
// head is listed (and its Head is) with the error its Load meets, a
// *CorruptError, not as done: `session list` shows it corrupt in every
// store (the file store reads the whole file for its checksum).
func testDamagedPastHead(t *testing.T, h Harness) {
	if h.DamageSnapshot == nil {
		t.Skip("no way to damage a snapshot given")
	}
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	finished(t, s, "dmg", 3, 3)
	finished(t, s, "fine", 3, 3)
	h.DamageSnapshot(t, s, "dmg")
	var corrupt *checkpoint.CorruptError
	if _, err := s.Load(bg, "dmg"); !errors.As(err, &corrupt) {
		t.Fatalf("Load of the damaged session: %v; want a *CorruptError (the damage did not take)", err)
	}
	list, err := s.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	for _, e := range list {
		got[e.ID] = e.Err
	}
	if len(list) != 2 || !errors.As(got["dmg"], &corrupt) || got["fine"] != nil {
		t.Errorf("List: %d entries, dmg %v, fine %v; want dmg with a *CorruptError and fine with none", len(list), got["dmg"], got["fine"])
	}
	if e, err := s.Head(bg, "dmg"); err != nil || !errors.As(e.Err, &corrupt) {
		t.Errorf("Head(dmg) = Err %v, %v; want a *CorruptError in its Err", e.Err, err)
	}
	if e, err := s.Head(bg, "fine"); err != nil || e.Err != nil || e.Done != 3 {
		t.Errorf("Head(fine) = %+v, %v", e, err)
	}
}

// testTransitionRemoved: a transition removed between two others (a
// task's completion) makes the session corrupt in every store, never a
// session that forgot the task and runs it again.
func testTransitionRemoved(t *testing.T, h Harness) {
	if h.DropTransition == nil {
		t.Skip("no way to remove a transition given")
	}
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	l := lock(t, s, "gap")
	ds := defs(3)
	j := begin(t, s, l, newSession("gap", ds))
	for _, d := range ds {
		record(t, j, complete(d.Name, "result of "+d.Name)...)
	}
	// A run killed now leaves the six transitions unfolded.
	if sess := load(t, s, "gap"); sess.Summary.Done != 3 {
		t.Fatalf("before the removal: %d done; want 3", sess.Summary.Done)
	}
	h.DropTransition(t, s, "gap", 4) // t02's completion
	var corrupt *checkpoint.CorruptError
	if sess, err := s.Load(bg, "gap"); !errors.As(err, &corrupt) || !strings.Contains(err.Error(), "session gap: ") {
		done := -1
		if sess != nil {
			done = sess.Summary.Done
		}
		t.Fatalf("Load with a transition removed: %v (%d done); want a *CorruptError naming the session", err, done)
	}
	if e, err := s.Head(bg, "gap"); err != nil || !errors.As(e.Err, &corrupt) {
		t.Errorf("Head = Err %v, %v; want a *CorruptError in its Err", e.Err, err)
	}
	list, err := s.List(bg)
	if err != nil || len(list) != 1 || !errors.As(list[0].Err, &corrupt) {
		t.Errorf("List = %+v, %v; want gap with a *CorruptError", list, err)
	}
	l.Release()
}

func load(t *testing.T, s checkpoint.Backend, id string) *checkpoint.Session {
	t.Helper()
	sess, err := s.Load(bg, id)
	if err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	return sess
}

func testAbsent(t *testing.T, s checkpoint.Backend) {
	if ok, err := s.Exists(bg, "nope"); ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	if _, err := s.Load(bg, "nope"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Load: %v, want ErrNotFound", err)
	}
	if _, err := s.Head(bg, "nope"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Head: %v, want ErrNotFound", err)
	}
	if h, err := s.Held(bg, "nope"); h != nil || err != nil {
		t.Errorf("Held = %v, %v", h, err)
	}
	if err := s.Delete(bg, "nope"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Delete: %v, want ErrNotFound", err)
	}
	if list, err := s.List(bg); len(list) != 0 || err != nil {
		t.Errorf("List = %v, %v", list, err)
	}
}

func testBadIDs(t *testing.T, s checkpoint.Backend) {
	for _, id := range []string{"", "../x", ".hidden", "a/b", strings.Repeat("x", 129)} {
		if _, err := s.Lock(bg, id, 0); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Lock(%q): %v", id, err)
		}
		if _, err := s.Load(bg, id); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Load(%q): %v", id, err)
		}
		if _, err := s.Exists(bg, id); !errors.Is(err, checkpoint.ErrBadID) {
			t.Errorf("Exists(%q): %v", id, err)
		}
	}
}

func testTransitions(t *testing.T, s checkpoint.Backend) {
	ds := defs(4)
	l := lock(t, s, "tr")
	if l.ID() != "tr" || l.Holder().PID == 0 {
		t.Errorf("lock %q holder %+v", l.ID(), l.Holder())
	}
	j := begin(t, s, l, newSession("tr", ds))
	record(t, j, complete("t00", "first")...)
	record(t, j,
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t01"},
		checkpoint.Record{Kind: checkpoint.TaskFailed, Task: "t01", Error: "exit 1", RetryCount: 1},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t01"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t01", Result: "second", Variables: map[string]any{"v": "x"}, State: map[string]any{"v": "x"},
			Agent: "writer", Messages: []checkpoint.Message{{Role: "assistant", Content: "second", Task: "t01"}}},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t02"},
	)
	// Every acknowledged record is in a Load while the journal is open ...
	check := func(when string, sess *checkpoint.Session) {
		t.Helper()
		t0, _ := sess.Task("t00")
		t1, _ := sess.Task("t01")
		t2, _ := sess.Task("t02")
		if t0.Status != checkpoint.StatusCompleted || t0.Result != "first" || t1.Status != checkpoint.StatusCompleted || t1.Result != "second" ||
			t1.RetryCount != 1 || t2.Status != checkpoint.StatusRunning || sess.Team.State["v"] != "x" || len(sess.Memory["writer"]) != 1 {
			t.Fatalf("%s: t00 %+v\nt01 %+v\nt02 %+v\nstate %v memory %v", when, t0, t1, t2, sess.Team.State, sess.Memory)
		}
		if sess.Summary.Done != 2 || sess.Summary.Total != 4 {
			t.Errorf("%s: summary %+v", when, sess.Summary)
		}
	}
	check("open journal", load(t, s, "tr"))
	check("the journal's view", j.Session())
	if tk, ok := j.Task("t01"); !ok || tk.Result != "second" {
		t.Errorf("Task(t01) = %+v, %v", tk, ok)
	}
	// ... and after Close, which folds them into the snapshot.
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed", load(t, s, "tr"))
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskSkipped, Task: "t03"}); !errors.Is(err, checkpoint.ErrClosed) {
		t.Errorf("Record after Close: %v, want ErrClosed", err)
	}
	// A continuation keeps everything and records on.
	l.Release()
	l = lock(t, s, "tr")
	j = begin(t, s, l, load(t, s, "tr"))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskSkipped, Task: "t03"})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	sess := load(t, s, "tr")
	check("continued", sess)
	if tk, _ := sess.Task("t03"); tk.Status != checkpoint.StatusSkipped {
		t.Errorf("t03 %+v", tk)
	}
	if err := j.Record(checkpoint.Record{Kind: "bogus", Task: "t03"}); err == nil {
		t.Error("a bogus record was accepted")
	}
}

// testBatch: RecordAll makes a batch durable as a whole; a batch with a bad
// record, or one the store refuses (its lock released), is refused whole,
// nothing of it acknowledged, no warning about its records left.
func testBatch(t *testing.T, s checkpoint.Backend) {
	ds := defs(3)
	l := lock(t, s, "batch")
	j := begin(t, s, l, newSession("batch", ds))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t00"})
	if err := checkpoint.RecordAll(j,
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t00", Result: "first"},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t01"}); err != nil {
		t.Fatal(err)
	}
	j.Warnings()
	// The refused batch's first record degrades (an Inf stored as {}): its
	// warning goes with it, as the record does.
	err := checkpoint.RecordAll(j,
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t01", Result: "second", State: map[string]any{"inf": math.Inf(1)}},
		checkpoint.Record{Kind: "bogus", Task: "t02"})
	if err == nil {
		t.Fatal("a batch with a bogus record was accepted")
	}
	if w := j.Warnings(); len(w) != 0 {
		t.Errorf("a refused batch left warnings about its records: %q", w)
	}
	checkBatch := func(when string, sess *checkpoint.Session) {
		t.Helper()
		t0, _ := sess.Task("t00")
		t1, _ := sess.Task("t01")
		if t0.Status != checkpoint.StatusCompleted || t0.Result != "first" || t1.Status != checkpoint.StatusRunning {
			t.Errorf("%s: t00 %+v\nt01 %+v", when, t0, t1)
		}
	}
	checkBatch("view", j.Session())
	checkBatch("load", load(t, s, "batch"))
	// A batch the store refuses once it is ready to write (the session is
	// no longer this run's: its lock was released) leaves no warning
	// either, and nothing of it is acknowledged.
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	err = checkpoint.RecordAll(j,
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t01", Result: "second", State: map[string]any{"inf": math.Inf(1)}},
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t02"})
	if err == nil {
		t.Fatal("a batch after the lock was released was accepted")
	}
	if w := j.Warnings(); len(w) != 0 {
		t.Errorf("a batch refused after the lock was released left warnings about its records: %q", w)
	}
	checkBatch("view after the refused batch", j.Session())
	checkBatch("load after the refused batch", load(t, s, "batch"))
	j.Close() // the lock is gone: whether Close may write is the store's
}

func testRestore(t *testing.T, s checkpoint.Backend) {
	finished(t, s, "rs", 6, 4)
	old := load(t, s, "rs")
	ds := defs(6)
	r := checkpoint.Restore(old, ds, spec.FingerprintOf(ds), checkpoint.ReuseStrict)
	if r.Kind != checkpoint.RestoreFull {
		t.Fatalf("same task set: restore %v, want full", r.Kind)
	}
	sess := checkpoint.Continue(old, r, spec.Sequential, ds, spec.FingerprintOf(ds), time.Now())
	if tk, _ := sess.Task("t03"); tk.Status != checkpoint.StatusCompleted || tk.Result != "result of t03" {
		t.Errorf("restored t03 %+v", tk)
	}
	if tk, _ := sess.Task("t04"); tk.Status == checkpoint.StatusCompleted {
		t.Errorf("t04 was never done: %+v", tk)
	}
	changed := defs(6)
	changed[2].Description = "another text"
	changed[2].Key = "changed"
	r = checkpoint.Restore(old, changed, spec.FingerprintOf(changed), checkpoint.ReuseUnchanged)
	sess = checkpoint.Continue(old, r, spec.Sequential, changed, spec.FingerprintOf(changed), time.Now())
	if tk, _ := sess.Task("t02"); tk.Status == checkpoint.StatusCompleted {
		t.Errorf("a changed task's result was reused: %+v", tk)
	}
	if tk, _ := sess.Task("t01"); tk.Status != checkpoint.StatusCompleted {
		t.Errorf("an unchanged task was not reused: %+v", tk)
	}
	l := lock(t, s, "rs")
	j := begin(t, s, l, sess)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if tk, _ := load(t, s, "rs").Task("t02"); tk.Status == checkpoint.StatusCompleted {
		t.Errorf("after Begin of the continuation: %+v", tk)
	}
}

func testBeginNeverOverwrites(t *testing.T, s checkpoint.Backend) {
	finished(t, s, "ex", 2, 2)
	l := lock(t, s, "ex")
	if _, err := s.Begin(bg, l, newSession("ex", defs(2))); !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("a new session over a stored one: %v, want ErrExists", err)
	}
	if sess := load(t, s, "ex"); sess.Summary.Done != 2 {
		t.Errorf("the stored session changed: %+v", sess.Summary)
	}
	other := lock(t, s, "other")
	if _, err := s.Begin(bg, other, newSession("ex", defs(2))); err == nil {
		t.Error("Begin with another session's lock succeeded")
	}
}

func testLockExclusive(t *testing.T, s checkpoint.Backend) {
	l := lock(t, s, "lk")
	_, err := s.Lock(bg, "lk", 0)
	var he *checkpoint.HeldError
	if !errors.As(err, &he) || !errors.Is(err, checkpoint.ErrLocked) || he.PID != l.Holder().PID {
		t.Fatalf("second Lock: %v", err)
	}
	if h, err := s.Held(bg, "lk"); err != nil || h == nil || h.PID != l.Holder().PID {
		t.Errorf("Held = %v, %v", h, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if h, err := s.Held(bg, "lk"); h != nil || err != nil {
		t.Errorf("after Release, Held = %v, %v", h, err)
	}
	lock(t, s, "lk")
}

func testLockWait(t *testing.T, s checkpoint.Backend) {
	l := lock(t, s, "w")
	ctx, cancel := context.WithCancel(bg)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := s.Lock(ctx, "w", time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock interrupted while waiting: %v", err)
	}
	_, err := s.Lock(bg, "w", 30*time.Millisecond)
	var he *checkpoint.HeldError
	if !errors.As(err, &he) || he.Waited != 30*time.Millisecond {
		t.Errorf("Lock with a short wait: %v", err)
	}
	go func() { time.Sleep(50 * time.Millisecond); l.Release() }()
	l2, err := s.Lock(bg, "w", time.Minute)
	if err != nil {
		t.Fatalf("Lock waiting for a release: %v", err)
	}
	l2.Release()
}

func testConcurrentRecords(t *testing.T, s checkpoint.Backend) {
	ds := defs(40)
	l := lock(t, s, "par")
	j := begin(t, s, l, newSession("par", ds))
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range complete(d.Name, "r"+d.Name) {
				if err := j.Record(r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := load(t, s, "par").Summary.Done; got != 40 {
		t.Errorf("%d done, want 40", got)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if got := load(t, s, "par").Summary.Done; got != 40 {
		t.Errorf("after Close %d done, want 40", got)
	}
}

// testReadBesideRun: a reader (session show, session list) beside a live
// run that records enough to compact several times never sees the session
// as damaged, and always sees at least what was acknowledged before it
// started reading.
func testReadBesideRun(t *testing.T, s checkpoint.Backend) {
	const tasks, records = 20, 400
	ds := defs(tasks)
	l := lock(t, s, "live")
	j := begin(t, s, l, newSession("live", ds))
	pad := strings.Repeat("x", 4<<10)
	var acked atomic.Int64
	acked.Store(-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range records {
			r := checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: ds[i%tasks].Name, Result: fmt.Sprintf("%06d %s", i, pad)}
			if err := j.Record(r); err != nil {
				t.Error(err)
				return
			}
			acked.Store(int64(i))
		}
	}()
	reads := 0
	for running := true; running && !t.Failed(); reads++ {
		select {
		case <-done:
			running = false // one more read after the last record
		default:
		}
		readBeside(t, s, "live", reads, acked.Load(), func(i int64) string { return ds[i%tasks].Name })
	}
	<-done
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads beside %d records", reads, records)
}

// readBeside is one read of testReadBesideRun: Load and List must not
// fail, and the task of record acked (the last one acknowledged before the
// read began; -1 for none) holds that record or a later one.
func readBeside(t *testing.T, s checkpoint.Backend, id string, n int, acked int64, task func(int64) string) {
	t.Helper()
	sess, err := s.Load(bg, id)
	if err != nil {
		t.Errorf("read %d, beside the run: %v", n, err)
		return
	}
	if acked >= 0 {
		tk, _ := sess.Task(task(acked))
		var got int64 = -1
		fmt.Sscanf(tk.Result, "%d", &got)
		if got < acked {
			t.Errorf("read %d: %s holds record %d, but record %d was acknowledged before the read", n, task(acked), got, acked)
		}
	}
	list, err := s.List(bg)
	if err != nil {
		t.Errorf("list %d, beside the run: %v", n, err)
		return
	}
	for _, e := range list {
		if e.Err != nil {
			t.Errorf("list %d, beside the run: %s: %v", n, e.ID, e.Err)
		}
	}
}

// testPayloads: bytes that are not UTF-8 come back byte for byte, values
// JSON cannot hold are stored as {} with a warning (DESIGN §4), and user
// values shaped like the store's markers are never read as markers.
func testPayloads(t *testing.T, s checkpoint.Backend) {
	l := lock(t, s, "pl")
	j := begin(t, s, l, newSession("pl", defs(3)))
	raw := "bytes \xff\xfe\x00 and \u2028 <&>"
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t00"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t00", Result: raw, Variables: map[string]any{"v": raw, "m": map[string]any{"$base64": "aGk="}},
			State: map[string]any{"v": raw, "m": map[string]any{"$base64": "aGk="}}})
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t01"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t01", Result: "ok", Variables: map[string]any{"nan": math.NaN()}, State: map[string]any{"inf": math.Inf(1), "fine": int64(3)}})
	warns := strings.Join(j.Warnings(), "\n")
	if !strings.Contains(warns, `"t01"`) || !strings.Contains(warns, `"inf"`) {
		t.Errorf("warnings do not name what degraded: %q", warns)
	}
	for _, when := range []string{"open", "closed"} {
		if when == "closed" {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		}
		sess := load(t, s, "pl")
		t0, _ := sess.Task("t00")
		if t0.Result != raw || t0.Variables["v"] != raw || sess.Team.State["v"] != raw {
			t.Errorf("%s: raw bytes changed: %q %q %q", when, t0.Result, t0.Variables["v"], sess.Team.State["v"])
		}
		if want := map[string]any{"$base64": "aGk="}; !reflect.DeepEqual(t0.Variables["m"], want) || !reflect.DeepEqual(sess.Team.State["m"], want) {
			t.Errorf("%s: a marker-shaped user value came back as %#v / %#v", when, t0.Variables["m"], sess.Team.State["m"])
		}
		t1, _ := sess.Task("t01")
		if !reflect.DeepEqual(t1.Variables, map[string]any{}) || !reflect.DeepEqual(sess.Team.State["inf"], map[string]any{}) || sess.Team.State["fine"] != int64(3) {
			t.Errorf("%s: NaN variables %#v, state %#v", when, t1.Variables, sess.Team.State)
		}
	}
}

func testListDelete(t *testing.T, s checkpoint.Backend) {
	finished(t, s, "b", 3, 3)
	finished(t, s, "a", 3, 1)
	finished(t, s, "c", 2, 0)
	list, err := s.List(bg)
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %v, %v", list, err)
	}
	for i, want := range []struct {
		id          string
		done, total int
	}{{"a", 1, 3}, {"b", 3, 3}, {"c", 0, 2}} {
		e := list[i]
		if e.ID != want.id || e.Done != want.done || e.Total != want.total || e.SpecPath != specPath || e.Err != nil || e.Touched.IsZero() {
			t.Errorf("List[%d] = %+v, want %s %d/%d", i, e, want.id, want.done, want.total)
		}
		if h, err := s.Head(bg, e.ID); err != nil || h.ID != e.ID || h.Done != e.Done || h.Total != e.Total {
			t.Errorf("Head(%s) = %+v, %v", e.ID, h, err)
		}
	}
	l := lock(t, s, "b")
	if err := s.Delete(bg, "b"); !errors.Is(err, checkpoint.ErrLocked) {
		t.Errorf("Delete while held: %v", err)
	}
	l.Release()
	if err := s.Delete(bg, "b"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Exists(bg, "b"); ok {
		t.Error("deleted session still exists")
	}
	if list, _ := s.List(bg); len(list) != 2 {
		t.Errorf("after Delete: %v", list)
	}
	// An id can be used again after a delete.
	finished(t, s, "b", 1, 1)
}

func testPrune(t *testing.T, s checkpoint.Backend) {
	for _, id := range []string{"old1", "old2", "active", "held"} {
		finished(t, s, id, 1, 1)
	}
	p := s.Project(t.TempDir())
	l := lock(t, s, "held")
	cut := time.Now().Add(time.Hour) // everything is older than this
	stale, newer, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: cut, Active: "active", DryRun: true})
	if err != nil || newer != 0 || len(stale) != 4 {
		t.Fatalf("dry run: %v %d %v", stale, newer, err)
	}
	if list, _ := s.List(bg); len(list) != 4 {
		t.Fatalf("a dry run removed sessions: %v", list)
	}
	stale, _, err = checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: cut, Active: "active"})
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, st := range stale {
		removed[st.ID] = st.Removed
	}
	if !removed["old1"] || !removed["old2"] || removed["active"] || removed["held"] {
		t.Errorf("prune removed %v", removed)
	}
	l.Release()
	for id, want := range map[string]bool{"old1": false, "old2": false, "active": true, "held": true} {
		if ok, _ := s.Exists(bg, id); ok != want {
			t.Errorf("%s exists: %v, want %v", id, ok, want)
		}
	}
	recs, _ := p.AuditRecords(bg)
	pruned := 0
	for _, r := range recs {
		if r.Event == checkpoint.EventPruned {
			pruned++
		}
	}
	if pruned != 2 {
		t.Errorf("%d prune audit records, want 2: %v", pruned, recs)
	}
	// Nothing older than the cut-off: nothing goes.
	if stale, newer, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: time.Now().Add(-time.Hour)}); len(stale) != 0 || newer != 2 || err != nil {
		t.Errorf("prune of fresh sessions: %v %d %v", stale, newer, err)
	}
}

// lockStale is what Prune said of the orphan lock id, if anything.
func lockStale(stale []checkpoint.Stale, id string) (checkpoint.Stale, bool) {
	for _, st := range stale {
		if st.Lock && st.ID == id {
			return st, true
		}
	}
	return checkpoint.Stale{}, false
}

// testPruneStartingRun: a run has taken a new session's lock and is about
// to write the session. Its lock is an orphan (no session yet), but prune
// never removes it, old as it may look: it says a run holds it, the lock
// stays exclusive, and the run then writes its session as if no prune had
// run. Nor is the lock of a session an orphan.
func testPruneStartingRun(t *testing.T, s checkpoint.Backend) {
	finished(t, s, "done", 1, 1)
	p := s.Project(t.TempDir())
	l := lock(t, s, "starting")
	orphans, err := s.OrphanLocks(bg)
	if err != nil || len(orphans) != 1 || orphans[0].ID != "starting" || orphans[0].Touched.IsZero() {
		t.Fatalf("OrphanLocks = %+v, %v; want the starting run's lock only", orphans, err)
	}
	// Taken after the cut-off: a run may be starting; not even reported.
	stale, _, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: time.Now().Add(-time.Hour)})
	if _, ok := lockStale(stale, "starting"); ok || err != nil {
		t.Errorf("prune before the lock was taken: %+v, %v", stale, err)
	}
	for _, dry := range []bool{true, false} {
		stale, _, err := checkpoint.Prune(bg, s, p, checkpoint.PruneOptions{Before: time.Now().Add(time.Hour), Active: "done", DryRun: dry})
		if err != nil {
			t.Fatalf("prune (dry run %v): %v", dry, err)
		}
		st, ok := lockStale(stale, "starting")
		if !ok || st.Removed || !strings.HasPrefix(st.Reason, "held by a run") {
			t.Errorf("prune (dry run %v) of a lock a run holds: %+v", dry, stale)
		}
		if _, ok := lockStale(stale, "done"); ok {
			t.Errorf("prune (dry run %v) took a session's lock for an orphan: %+v", dry, stale)
		}
	}
	if _, err := s.Lock(bg, "starting", 0); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("after prune, another run could take the starting run's lock: %v", err)
	}
	j := begin(t, s, l, newSession("starting", defs(1)))
	record(t, j, complete("t00", "r")...)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
	if sess := load(t, s, "starting"); sess.Summary.Done != 1 {
		t.Errorf("the run's session after prune: %+v", sess.Summary)
	}
	if orphans, err := s.OrphanLocks(bg); len(orphans) != 0 || err != nil {
		t.Errorf("OrphanLocks once the session is written = %+v, %v", orphans, err)
	}
	if recs, _ := p.AuditRecords(bg); len(recs) != 0 {
		t.Errorf("prune removed nothing but audited %+v", recs)
	}
}

func testDecide(t *testing.T, s checkpoint.Backend) {
	ds := defs(2)
	ds[1].Agent = spec.HumanAgent
	l := lock(t, s, "dec")
	j := begin(t, s, l, newSession("dec", ds))
	record(t, j, complete("t00", "draft")...)
	if err := checkpoint.Decide(bg, s, "dec", "t01", "approve"); !errors.Is(err, checkpoint.ErrLocked) {
		t.Fatalf("Decide during a run: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
	if err := checkpoint.Decide(bg, s, "dec", "t01", "approve"); err != nil {
		t.Fatal(err)
	}
	sess := load(t, s, "dec")
	if sess.Checkpoint.Decisions["t01"] != "approve" || sess.Summary.Done != 1 {
		t.Errorf("decisions %v, summary %+v", sess.Checkpoint.Decisions, sess.Summary)
	}
	if err := checkpoint.Decide(bg, s, "dec", "nope", "x"); err == nil {
		t.Error("a decision for an unknown task was accepted")
	}
	if err := checkpoint.Decide(bg, s, "missing", "t01", "x"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Decide on a missing session: %v", err)
	}
	if ok, _ := s.Exists(bg, "missing"); ok {
		t.Error("Decide on a missing session created it")
	}
}

func testProject(t *testing.T, s checkpoint.Backend) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	p := s.Project(dir)
	if p.Dir() != dir || p.Where() == "" {
		t.Errorf("Dir %q Where %q", p.Dir(), p.Where())
	}
	if id, err := p.Active(bg); id != "" || err != nil {
		t.Errorf("fresh project: %q %v", id, err)
	}
	if err := p.SetActive(bg, "s1"); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Project(dir).Active(bg); id != "s1" || err != nil {
		t.Errorf("Active = %q, %v", id, err)
	}
	if id, _ := s.Project(elsewhere).Active(bg); id != "" {
		t.Errorf("another project sees %q", id)
	}
	for _, ev := range []string{checkpoint.EventCreated, checkpoint.EventCompleted} {
		if err := p.Audit(bg, checkpoint.AuditRecord{Event: ev, Session: "s1", Store: s.Location()}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := p.AuditRecords(bg)
	if err != nil || len(recs) != 2 || recs[0].Event != checkpoint.EventCreated || recs[1].Event != checkpoint.EventCompleted ||
		recs[0].PID == 0 || recs[0].User == "" || recs[0].Time.IsZero() {
		t.Errorf("AuditRecords = %+v, %v", recs, err)
	}
}

// testClaimActive: of claims made at once on a project with no active
// session, exactly one sets it and every one returns that one; a claim
// whose prev is stale sets nothing.
func testClaimActive(t *testing.T, s checkpoint.Backend) {
	dir := t.TempDir()
	const n = 8
	got := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := s.Project(dir) // each its own handle, as separate runs have
			<-start
			got[i], errs[i] = p.ClaimActive(bg, "", fmt.Sprintf("c%d", i))
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		if got[i] != got[0] {
			t.Errorf("claims disagree: %q", got)
		}
		if got[i] == fmt.Sprintf("c%d", i) {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d claims won: %q", winners, got)
	}
	p := s.Project(dir)
	if id, err := p.Active(bg); id != got[0] || err != nil {
		t.Errorf("Active = %q, %v; the claims returned %q", id, err, got[0])
	}
	// A claim that saw an older active session loses to the one there.
	if id, err := p.ClaimActive(bg, "old", "late"); id != got[0] || err != nil {
		t.Errorf("stale claim = %q, %v; want %q", id, err, got[0])
	}
	// A claim that saw the one there replaces it (a missing session's
	// fallback); SetActive still sets whatever is there.
	if id, err := p.ClaimActive(bg, got[0], "next"); id != "next" || err != nil {
		t.Errorf("claim over %q = %q, %v", got[0], id, err)
	}
	if err := p.SetActive(bg, "set"); err != nil {
		t.Fatal(err)
	}
	if id, err := p.ClaimActive(bg, "", "late"); id != "set" || err != nil {
		t.Errorf("claim over a set one = %q, %v", id, err)
	}
	if _, err := p.ClaimActive(bg, "set", "../bad"); err == nil {
		t.Error("a bad id was claimed")
	}
	if id, _ := s.Project(t.TempDir()).Active(bg); id != "" {
		t.Errorf("another project sees %q", id)
	}
}

// testActiveBeingStarted: an active session the store lacks while a run
// holds its lock is being started by that run (it claimed it before
// creating it), not missing: ResolveActive names it, warns of nothing and
// audits nothing. Once nobody holds it, it is missing.
func testActiveBeingStarted(t *testing.T, s checkpoint.Backend) {
	dir := t.TempDir()
	p := s.Project(dir)
	l, err := s.Lock(bg, "starting", 0)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := p.ClaimActive(bg, "", "starting"); id != "starting" || err != nil {
		t.Fatalf("claim = %q, %v", id, err)
	}
	a, err := checkpoint.ResolveActive(bg, s, p, specPath)
	if err != nil || a.ID != "starting" || a.Missing || len(a.Notes) > 0 {
		t.Errorf("while held: %+v, %v", a, err)
	}
	if recs, _ := p.AuditRecords(bg); len(recs) != 0 {
		t.Errorf("audited %+v", recs)
	}
	l.Release()
	a, err = checkpoint.ResolveActive(bg, s, p, specPath)
	if err != nil || a.ID != "" || !a.Missing {
		t.Errorf("after release: %+v, %v", a, err)
	}
}

// logKeeper is a store that keeps the attempts' output.
type logKeeper interface {
	AttemptLog(ctx context.Context, l checkpoint.Lock, task string, attempt int, stream string) io.WriteCloser
	ReadLog(ctx context.Context, id, task string, attempt int, stream string) ([]byte, error)
}

// testLogs: each stream of each attempt is kept as written, whatever its
// bytes; a silent stream keeps nothing; the logs go with their session and
// only with it.
func testLogs(t *testing.T, s checkpoint.Backend) {
	lk, ok := s.(logKeeper)
	if !ok {
		t.Fatalf("%T keeps no attempts' output (no AttemptLog/ReadLog)", s)
	}
	finished(t, s, "lg", 2, 1)
	finished(t, s, "other", 1, 1)
	locks := map[string]checkpoint.Lock{"lg": lock(t, s, "lg"), "other": lock(t, s, "other")}
	keep := func(id, task string, attempt int, stream string, chunks ...string) {
		t.Helper()
		w := lk.AttemptLog(bg, locks[id], task, attempt, stream)
		for _, c := range chunks {
			if _, err := io.WriteString(w, c); err != nil {
				t.Fatalf("write the %s of %s/%s/%d: %v", stream, id, task, attempt, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("keep the %s of %s/%s/%d: %v", stream, id, task, attempt, err)
		}
	}
	binary := "not \xff UTF-8 \x00 and a NUL\n"
	keep("lg", "t00", 1, "stdout", "hello\n", "no newline")
	keep("lg", "t00", 1, "stderr", "a warning\n")
	keep("lg", "t00", 2, "stdout", binary)
	keep("lg", "t01", 1, "stdout")     // silent: nothing kept
	keep("lg", "t01", 1, "stderr", "") // an empty write too
	keep("other", "t00", 1, "stdout", "other's")
	// The session goes on (a resumed run, a new snapshot): its logs stay.
	j := begin(t, s, locks["lg"], load(t, s, "lg"))
	record(t, j, complete("t01", "done")...)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, task string
		attempt  int
		stream   string
		want     string // "" : none kept
	}{
		{"lg", "t00", 1, "stdout", "hello\nno newline"},
		{"lg", "t00", 1, "stderr", "a warning\n"},
		{"lg", "t00", 2, "stdout", binary},
		{"lg", "t00", 2, "stderr", ""},
		{"lg", "t00", 3, "stdout", ""},
		{"lg", "t01", 1, "stdout", ""},
		{"lg", "t01", 1, "stderr", ""},
		{"lg", "nope", 1, "stdout", ""},
		{"other", "t00", 1, "stdout", "other's"},
	} {
		got, err := lk.ReadLog(bg, tt.id, tt.task, tt.attempt, tt.stream)
		switch {
		case tt.want == "" && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("ReadLog(%s %s %d %s) = %q, %v; want fs.ErrNotExist", tt.id, tt.task, tt.attempt, tt.stream, got, err)
		case tt.want != "" && (err != nil || string(got) != tt.want):
			t.Errorf("ReadLog(%s %s %d %s) = %q, %v; want %q", tt.id, tt.task, tt.attempt, tt.stream, got, err, tt.want)
		}
	}
	locks["lg"].Release()
	if err := s.Delete(bg, "lg"); err != nil {
		t.Fatal(err)
	}
	if got, err := lk.ReadLog(bg, "lg", "t00", 1, "stdout"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Delete: ReadLog = %q, %v", got, err)
	}
	// A new session of the same id starts without the old one's logs.
	finished(t, s, "lg", 1, 0)
	if got, err := lk.ReadLog(bg, "lg", "t00", 2, "stdout"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a new session lg: ReadLog = %q, %v", got, err)
	}
	if got, err := lk.ReadLog(bg, "other", "t00", 1, "stdout"); err != nil || string(got) != "other's" {
		t.Errorf("another session's log after Delete: %q, %v", got, err)
	}
}

// testDiscard: a session discarded by the run that holds it is gone, with
// everything kept beside it, whether it was never written (a run that lost
// the claim of the project's active session before writing it) or was
// begun with a result out of line; its lock is released; and Discard
// needs the session's lock.
func testDiscard(t *testing.T, h Harness) {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	l := lock(t, s, "never-written")
	if err := s.Discard(bg, l); err != nil {
		t.Fatalf("Discard of a session never written: %v", err)
	}
	checkDiscarded(t, h, s, "never-written")

	l = lock(t, s, "begun")
	j := begin(t, s, l, newSession("begun", defs(2)))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t00", Attempt: 1, At: time.Now()})
	if bs, ok := s.(checkpoint.BlobStore); ok {
		if _, err := bs.PutBlob(bg, "begun", strings.NewReader("a result kept out of line")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Discard(bg, l); err != nil {
		t.Fatalf("Discard of a begun session: %v", err)
	}
	checkDiscarded(t, h, s, "begun")
	if list, err := s.List(bg); err != nil || len(list) != 0 {
		t.Errorf("List after Discard = %+v, %v", list, err)
	}

	// Another run's session is not discarded through a released lock.
	l = lock(t, s, "kept")
	begin(t, s, l, newSession("kept", defs(1))).Close()
	l.Release()
	if err := s.Discard(bg, l); err == nil {
		t.Error("Discard through a released lock succeeded")
	}
	if ok, err := s.Exists(bg, "kept"); !ok || err != nil {
		t.Errorf("Exists(kept) after a refused Discard = %v, %v", ok, err)
	}
}

// checkDiscarded checks that session id is gone from s, held by nobody,
// lockable again, and, when h can tell, that nothing of it is left.
func checkDiscarded(t *testing.T, h Harness, s checkpoint.Backend, id string) {
	t.Helper()
	if ok, err := s.Exists(bg, id); ok || err != nil {
		t.Errorf("Exists(%s) after Discard = %v, %v", id, ok, err)
	}
	if held, err := s.Held(bg, id); held != nil || err != nil {
		t.Errorf("Held(%s) after Discard = %v, %v", id, held, err)
	}
	if h.Leftovers != nil {
		if left := h.Leftovers(t, s, id); len(left) > 0 {
			t.Errorf("Discard of %s left %q", id, left)
		}
	}
	l, err := s.Lock(bg, id, 0)
	if err != nil {
		t.Fatalf("Lock(%s) after Discard: %v", id, err)
	}
	// Taking the lock may leave its traces (a lock file): discarded again.
	if err := s.Discard(bg, l); err != nil {
		t.Errorf("Discard(%s) again: %v", id, err)
	}
}
