package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

// tornFixture records n transitions, each also setting state n=i, and
// returns the snapshot, the journal and the journal's size after each record.
func tornFixture(t testing.TB, s *Store, id string, n int) (snapshot, journal []byte, ends []int64) {
	l := mustLock(t, s, id)
	ds := chain12()
	j := mustBegin(t, s, l, NewSession(id, "a.yaml", "t", spec.Sequential, ds, fp(ds), t0))
	for i := 1; i <= n; i++ {
		task := ds[i%12].Name
		st := map[string]any{"n": i}
		var r Record
		switch i % 4 {
		case 0:
			r = Record{Kind: TaskStarted, Task: task, State: st}
		case 1:
			r = Record{Kind: TaskCompleted, Task: task, Result: fmt.Sprintf("result %d \xff\n{\"json\": true}", i), Variables: map[string]any{"i": i}, State: st}
		case 2:
			r = Record{Kind: TaskFailed, Task: task, Error: "exit 1", RetryCount: i, State: st}
		case 3:
			r = Record{Kind: MemoryAppended, Agent: "writer", Messages: []Message{{Role: "assistant", Content: "turn\n" + task}}, State: st}
		}
		record(t, j, r)
		fi, err := os.Stat(s.journalPath(id))
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, fi.Size())
	}
	snapshot, _ = os.ReadFile(s.Path(id))
	journal, _ = os.ReadFile(s.journalPath(id))
	if int64(len(journal)) != ends[n-1] {
		t.Fatalf("journal %d bytes, last record ends at %d", len(journal), ends[n-1])
	}
	l.Release()
	return snapshot, journal, ends
}

// The journal cut at every byte offset of its last records loads cleanly,
// holding exactly the records that were whole; likewise with a tail of
// zeros or garbage (what a file system may leave after a crash).
func TestTornJournal(t *testing.T) {
	s := newStore(t)
	const n, last = 24, 4
	snapshot, journal, ends := tornFixture(t, s, "torn", n)
	from := ends[n-last-1]
	tails := map[string][]byte{"": nil, "zeros": make([]byte, 100), "garbage": []byte("\x01\x02{\"k\":\"state\""), "bad line no newline": []byte("deadbeef {}")}
	checks := 0
	for cut := from; cut <= int64(len(journal)); cut++ {
		whole := 0
		for i, e := range ends {
			if e <= cut {
				whole = i + 1
			}
		}
		for name, tail := range tails {
			data := append(append([]byte{}, journal[:cut]...), tail...)
			if err := os.WriteFile(s.journalPath("torn"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(s.Path("torn"), snapshot, 0o600)
			sess, err := s.Load("torn")
			if err != nil {
				t.Fatalf("cut at %d with tail %q: %v", cut, name, err)
			}
			if got := sess.Team.State["n"]; got != int64(whole) {
				t.Fatalf("cut at %d with tail %q: state n = %v, want %d whole records", cut, name, got, whole)
			}
			checks++
		}
	}
	t.Logf("%d cuts checked over %d bytes", checks, int64(len(journal))-from)
	// A whole line with a bad checksum at the end is a torn write too ...
	bad := append(append([]byte{}, journal...), []byte("00000000 {\"k\":\"state\"}\n")...)
	os.WriteFile(s.journalPath("torn"), bad, 0o600)
	if sess, err := s.Load("torn"); err != nil || sess.Team.State["n"] != int64(n) {
		t.Fatalf("bad last line: %v", err)
	}
	// ... but not when valid records follow it: that is corruption.
	bad = append(append([]byte{}, journal[:ends[2]]...), []byte("00000000 x\n")...)
	bad = append(bad, journal[ends[2]:]...)
	os.WriteFile(s.journalPath("torn"), bad, 0o600)
	if _, err := s.Load("torn"); err == nil {
		t.Fatal("damage before valid records was ignored")
	}
}

// After a torn tail a new run begins cleanly and its records land.
func TestTornThenResume(t *testing.T) {
	s := newStore(t)
	_, journal, ends := tornFixture(t, s, "tr", 8)
	os.WriteFile(s.journalPath("tr"), journal[:ends[6]+5], 0o600)
	sess, err := s.Load("tr")
	if err != nil || sess.Team.State["n"] != int64(7) {
		t.Fatalf("%v %v", err, sess)
	}
	l := mustLock(t, s, "tr")
	j := mustBegin(t, s, l, sess)
	record(t, j, Record{Kind: StateChanged, State: map[string]any{"n": 100}})
	sess, err = s.Load("tr")
	if err != nil || sess.Team.State["n"] != int64(100) {
		t.Fatalf("%v %v", err, sess.Team.State)
	}
	j.Close()
}

// FuzzLoad: no snapshot or journal makes the reader panic, and whatever
// loads can be written back and read again.
func FuzzLoad(f *testing.F) {
	s := newStore(f)
	snapshot, journal, ends := tornFixture(f, s, "fz", 8)
	f.Add(snapshot, journal)
	f.Add(snapshot, journal[:ends[3]+7])
	f.Add(snapshot, []byte{})
	f.Add([]byte(`{"format_version":1,"session_id":"fz","journal_epoch":"e","team":{"tasks":[{"name":"a","result":{"$base64":"/w=="}}]}}`),
		append(headerLine("e"), frame([]byte(`{"k":"completed","task":"a","result":{"$base64":"AA=="},"variables":{"x":{"$base64":"!"}},"at":"2026-01-01T00:00:00Z"}`))...))
	f.Add([]byte(`{"format_version":1,"session_id":"fz","team":{"tasks":[{"name":"a"},{"name":"a"}],"state":{"n":1e999}}}`), []byte("00000000 \n"))
	// The reader without the file I/O, so inputs run fast enough to explore.
	f.Fuzz(func(t *testing.T, snap, jour []byte) {
		parseHead("fz", snap)
		sess, err := decodeFiles("fz", "fz.json", snap, "fz.journal", jour)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a CorruptError: %v", err)
			}
			return
		}
		_ = Restore(sess, chain12(), "x", ReuseUnchanged)
		sess.sanitize()
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(sess); err != nil {
			t.Fatalf("a loaded session cannot be written: %v", err)
		}
		if _, err := decodeSession(buf.Bytes()); err != nil {
			t.Fatalf("a written session cannot be read: %v\n%s", err, buf.Bytes())
		}
	})
}
