package checkpoint

import (
	"strings"
	"testing"
)

// TestStartedCarriesHost: a started record keeps its host and process group
// through the wire and the snapshot while the task runs, and drops them when
// it ends; a record of an older teamrun (no host) reads as before.
func TestStartedCarriesHost(t *testing.T) {
	s := toolSession(t)
	wire := func(r Record) Record {
		t.Helper()
		p, err := EncodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRecord(p)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	steps := []struct {
		rec        Record
		host       string
		pgid       int
		wireHasKey bool
	}{
		{Record{Kind: TaskStarted, Task: "work", Host: "node-a", PGID: 4242}, "node-a", 4242, true},
		{Record{Kind: TaskFailed, Task: "work", Error: "boom"}, "", 0, false},
		{Record{Kind: TaskStarted, Task: "work"}, "", 0, false}, // an older teamrun's
		{Record{Kind: TaskStarted, Task: "work", Host: "node-b", PGID: 7}, "node-b", 7, true},
	}
	for i, st := range steps {
		p, err := EncodeRecord(st.rec)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(p), `"host"`); got != st.wireHasKey {
			t.Errorf("step %d: host in the record's bytes = %v: %s", i, got, p)
		}
		s.Apply(wire(st.rec))
		tr, _ := s.Task("work")
		if tr.Host != st.host || tr.PGID != st.pgid {
			t.Errorf("step %d: task on %q pgid %d, want %q %d", i, tr.Host, tr.PGID, st.host, st.pgid)
		}
	}
	b, err := EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSession("s1", "a test", b)
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := back.Task("work"); tr.Host != "node-b" || tr.PGID != 7 {
		t.Errorf("the snapshot lost the host: %+v", tr)
	}
	if _, err := EncodeRecord(Record{Kind: TaskStarted, Task: "work", PGID: -1}); err == nil {
		t.Error("a negative process group was accepted")
	}
}
