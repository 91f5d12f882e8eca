package storetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// testHold: the early cut-off a run leaves undecided is durable. A
// --rerun t01 holds t02 and t03 (each reads the one before); the run
// records t01's result again and cuts t02 off, then stops without
// closing its journal, as a kill -9 leaves it. The stored session still
// holds t03, against the results it was made from, so the next restore
// holds it again; once it starts, nothing is held any more, in the journal
// and in the compacted snapshot alike.
func testHold(t *testing.T, s checkpoint.Backend) {
	finished(t, s, "hd", 4, 4)
	ds := defs(4)
	for i := range ds {
		ds[i].OwnKey = "own " + ds[i].Name
	}
	fp := spec.FingerprintOf(ds)
	r := checkpoint.RestoreChoice(load(t, s, "hd"), ds, fp, checkpoint.Choice{Rerun: []string{"t01"}})
	if len(r.Held) != 2 {
		t.Fatalf("--rerun t01 holds %v, want t02 and t03", slices.Sorted(maps.Keys(r.Held)))
	}
	sess := checkpoint.Continue(load(t, s, "hd"), r, spec.Sequential, ds, fp, time.Now())
	l := lock(t, s, "hd")
	j := begin(t, s, l, sess)
	record(t, j, complete("t01", "result of t01")...)
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t02", Result: "result of t02"})
	l.Release() // killed: the journal is never closed

	heldNow := func(when string, want ...string) *checkpoint.Session {
		t.Helper()
		return holdsNow(t, s, "hd", heldTasks, "holds", when, want)
	}
	after := heldNow("after the kill", "t03")
	r = checkpoint.RestoreChoice(after, ds, fp, checkpoint.Choice{})
	if h, ok := r.Held["t03"]; !ok || h.Result != "result of t03" {
		t.Fatalf("the next restore holds %v, want t03 with its recorded result", r.Held)
	}
	if v, ok := r.Recorded["t02"]; !ok || !v.Same(checkpoint.Outcome{Text: "result of t02"}) {
		t.Errorf("t03 is compared with %+v, want t02's recorded result", v)
	}
	if r.Done("t03") {
		t.Error("the held t03 is restored as done")
	}
	// The next run holds it again (Continue), and decides it.
	l = lock(t, s, "hd")
	j = begin(t, s, l, checkpoint.Continue(after, r, spec.Sequential, ds, fp, time.Now()))
	heldNow("begun again", "t03")
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t03"})
	heldNow("t03 started")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	heldNow("compacted")
	l.Release()
}

// testHoldKept: what --keep pins while a task it reads runs again is
// durable too. --rerun t01 --keep t02: the run is killed before t01
// ends (its attempt started, failed), so the stored session still says
// what t02 was made from, and the next restore, not pinning it, holds t02
// as any reader. Once t01 completes, in the journal and in the compacted
// snapshot alike, nothing waits for it: the kept result is adopted.
func testHoldKept(t *testing.T, s checkpoint.Backend) {
	finished(t, s, "hk", 3, 3)
	ds := defs(3)
	for i := range ds {
		ds[i].OwnKey = "own " + ds[i].Name
	}
	fp := spec.FingerprintOf(ds)
	r := checkpoint.RestoreChoice(load(t, s, "hk"), ds, fp, checkpoint.Choice{Rerun: []string{"t01"}, Keep: []string{"t02"}})
	if !r.Done("t02") {
		t.Fatalf("--keep t02 does not restore it (held %v)", slices.Sorted(maps.Keys(r.Held)))
	}
	l := lock(t, s, "hk")
	j := begin(t, s, l, checkpoint.Continue(load(t, s, "hk"), r, spec.Sequential, ds, fp, time.Now()))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t01"}, checkpoint.Record{Kind: checkpoint.TaskFailed, Task: "t01", Error: "exit status 1"})
	l.Release() // killed: the journal is never closed

	keptNow := func(when string, want ...string) *checkpoint.Session {
		t.Helper()
		return holdsNow(t, s, "hk", keptTasks, "keeps as pinned over what it reads", when, want)
	}
	after := keptNow("after the kill", "t02")
	r = checkpoint.RestoreChoice(after, ds, fp, checkpoint.Choice{})
	if _, ok := r.Held["t02"]; !ok || r.Done("t02") {
		t.Fatalf("the next restore holds %v (t02 done: %v), want t02 held", slices.Sorted(maps.Keys(r.Held)), r.Done("t02"))
	}
	if v, ok := r.Recorded["t01"]; !ok || !v.Same(checkpoint.Outcome{Text: "result of t01"}) {
		t.Errorf("t02 is compared with %+v, want t01's result before the --rerun", v)
	}

	// Given --keep again, t01 completing in that run adopts t02's result.
	r = checkpoint.RestoreChoice(after, ds, fp, checkpoint.Choice{Keep: []string{"t02"}})
	l = lock(t, s, "hk")
	j = begin(t, s, l, checkpoint.Continue(after, r, spec.Sequential, ds, fp, time.Now()))
	keptNow("begun again", "t02")
	record(t, j, complete("t01", "result of t01, again")...)
	keptNow("t01 completed")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	keptNow("compacted")
	l.Release()
}

// heldTasks and keptTasks are the names a session's hold holds, and keeps
// pinned over what they read.
func heldTasks(h *checkpoint.Hold) []string { return slices.Sorted(maps.Keys(h.Tasks)) }
func keptTasks(h *checkpoint.Hold) []string { return slices.Sorted(maps.Keys(h.Kept)) }

// holdsNow loads session id from s and fails unless names of its hold
// (none without one) are want; does says what they are, when when.
func holdsNow(t *testing.T, s checkpoint.Backend, id string, names func(*checkpoint.Hold) []string, does, when string, want []string) *checkpoint.Session {
	t.Helper()
	got := load(t, s, id)
	var have []string
	if got.Hold != nil {
		have = names(got.Hold)
	}
	if !slices.Equal(have, want) {
		t.Fatalf("%s: the session %s %v, want %v", when, does, have, want)
	}
	return got
}
