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
		got := load(t, s, "hd")
		var names []string
		if got.Hold != nil {
			names = slices.Sorted(maps.Keys(got.Hold.Tasks))
		}
		if !slices.Equal(names, want) {
			t.Fatalf("%s: the session holds %v, want %v", when, names, want)
		}
		return got
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
