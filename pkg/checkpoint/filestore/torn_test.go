package filestore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// tornFixture records n transitions, each also setting state n=i, and
// returns the snapshot, the journal and the journal's size after each record.
func tornFixture(t testing.TB, s *Store, id string, n int) (snapshot, journal []byte, ends []int64) {
	l := mustLock(t, s, id)
	ds := chain12()
	j := mustBegin(t, s, l, checkpoint.NewSession(id, "a.yaml", "t", spec.Sequential, ds, fp(ds), t0))
	for i := 1; i <= n; i++ {
		task := ds[i%12].Name
		st := map[string]any{"n": i}
		var r checkpoint.Record
		switch i % 4 {
		case 0:
			r = checkpoint.Record{Kind: checkpoint.TaskStarted, Task: task, State: st}
		case 1:
			r = checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: task, Result: fmt.Sprintf("result %d \xff\n{\"json\": true}", i), Variables: map[string]any{"i": i}, State: st}
		case 2:
			r = checkpoint.Record{Kind: checkpoint.TaskFailed, Task: task, Error: "exit 1", RetryCount: i, State: st}
		case 3:
			r = checkpoint.Record{Kind: checkpoint.CurrentTask, Task: task, Agent: "writer", Messages: []checkpoint.Message{{Role: "assistant", Content: "turn\n" + task}}, State: st}
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
// holding exactly the records that were whole (a record cut only before its
// newline is whole); likewise with a tail of
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
			whole := whole
			if tail == nil && whole < len(ends) && ends[whole]-1 == cut {
				whole++ // a whole record that lost only its newline is on disk: kept
			}
			data := append(append([]byte{}, journal[:cut]...), tail...)
			if err := os.WriteFile(s.journalPath("torn"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(s.Path("torn"), snapshot, 0o600)
			sess, err := s.Load(bg, "torn")
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
	// A whole line with a bad checksum at the end is damage, not a torn
	// write: a write cut short has no newline yet ...
	bad := append(append([]byte{}, journal...), []byte("00000000 {\"k\":\"state\"}\n")...)
	os.WriteFile(s.journalPath("torn"), bad, 0o600)
	if _, err := s.Load(bg, "torn"); err == nil {
		t.Fatalf("bad last line: loaded")
	}
	// ... and so it is when valid records follow it.
	bad = append(append([]byte{}, journal[:ends[2]]...), []byte("00000000 x\n")...)
	bad = append(bad, journal[ends[2]:]...)
	os.WriteFile(s.journalPath("torn"), bad, 0o600)
	if _, err := s.Load(bg, "torn"); err == nil {
		t.Fatal("damage before valid records was ignored")
	}
}

// After a torn tail a new run begins cleanly and its records land.
func TestTornThenResume(t *testing.T) {
	s := newStore(t)
	_, journal, ends := tornFixture(t, s, "tr", 8)
	os.WriteFile(s.journalPath("tr"), journal[:ends[6]+5], 0o600)
	sess, err := s.Load(bg, "tr")
	if err != nil || sess.Team.State["n"] != int64(7) {
		t.Fatalf("%v %v", err, sess)
	}
	l := mustLock(t, s, "tr")
	j := mustBegin(t, s, l, sess)
	record(t, j, checkpoint.Record{Kind: checkpoint.CurrentTask, Task: "t01", State: map[string]any{"n": 100}})
	sess, err = s.Load(bg, "tr")
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
		append(headerLine("e", 0), frame([]byte(`{"k":"completed","task":"a","result":{"$base64":"AA=="},"variables":{"x":{"$base64":"!"}},"at":"2026-01-01T00:00:00Z"}`))...))
	f.Add([]byte(`{"format_version":1,"session_id":"fz","team":{"tasks":[{"name":"a"},{"name":"a"}],"state":{"n":1e999}}}`), []byte("00000000 \n"))
	// The reader without the file I/O, so inputs run fast enough to explore.
	f.Fuzz(func(t *testing.T, snap, jour []byte) {
		parseHead("fz", bytes.NewReader(snap))
		sess, err := decodeFiles("fz", "fz.json", snap, "fz.journal", jour, nil)
		if err != nil {
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a CorruptError: %v", err)
			}
			return
		}
		_ = checkpoint.Restore(sess, chain12(), "x", checkpoint.ReuseUnchanged)
		checkpoint.PrepareSnapshot(sess)
		data, err := checkpoint.EncodeSession(sess)
		if err != nil {
			t.Fatalf("a loaded session cannot be written: %v", err)
		}
		if _, err := checkpoint.DecodeSession("fz", "fz.json", data); err != nil {
			t.Fatalf("a written session cannot be read: %v\n%s", err, data)
		}
	})
}

// A journal that belongs neither to the snapshot nor to the journal it
// absorbed is exit-5 damage naming both files, never a silent restart that
// forgets acknowledged tasks (a flipped bit in an epoch did that).
func TestForeignJournalIsCorrupt(t *testing.T) {
	s := newStore(t)
	snapshot, journal, _ := tornFixture(t, s, "fj", 8)
	sess, err := s.Load(bg, "fj")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		journal []byte
	}{
		{"another epoch, intact frames", append(headerLine("0123456789abcdef", 1), journal[len(headerLine(sess.Epoch, 1)):]...)},
		{"a flipped bit in the header's epoch", flipIn(journal, sess.Epoch)},
	} {
		if err := os.WriteFile(s.journalPath("fj"), tc.journal, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.Load(bg, "fj")
		var ce *checkpoint.CorruptError
		if !errors.As(err, &ce) || ce.Path != s.journalPath("fj") {
			t.Fatalf("%s: err = %v, want a CorruptError of the journal", tc.name, err)
		}
		if strings.HasPrefix(tc.name, "another") && !strings.Contains(err.Error(), s.Path("fj")) {
			t.Errorf("%s: the error does not name the snapshot: %v", tc.name, err)
		}
		if got, _ := os.ReadFile(s.journalPath("fj")); !bytes.Equal(got, tc.journal) {
			t.Errorf("%s: the journal was changed", tc.name)
		}
	}
	// The snapshot's own epoch, flipped: its checksum says so.
	if err := os.WriteFile(s.journalPath("fj"), journal, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path("fj"), flipIn(snapshot, sess.Epoch), 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *checkpoint.CorruptError
	if _, err := s.Load(bg, "fj"); !errors.As(err, &ce) || ce.Path != s.Path("fj") {
		t.Fatalf("flipped snapshot epoch: err = %v, want a CorruptError of the snapshot", err)
	}
}

// flipIn flips one bit of the first occurrence of what in data.
func flipIn(data []byte, what string) []byte {
	out := bytes.Clone(data)
	i := bytes.Index(out, []byte(what))
	if i < 0 {
		panic("flipIn: " + what + " not found")
	}
	out[i+3] ^= 0x01
	return out
}

// Any changed byte of a journal of acknowledged records is damage (exit 5,
// the file named and left as it was), never records silently dropped: every
// complete line carries a checksum, and the only line a crash can leave
// incomplete is the last one, before its newline.
func TestJournalByteFlipsAreCorrupt(t *testing.T) {
	s := newStore(t)
	snapshot, journal, _ := tornFixture(t, s, "jf", 8)
	clean, err := s.Load(bg, "jf")
	if err != nil {
		t.Fatal(err)
	}
	want := clean.Team.State["n"]
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range journal {
		flipped := bytes.Clone(journal)
		flipped[i] ^= byte(1 + rng.IntN(255))
		os.WriteFile(s.Path("jf"), snapshot, 0o600)
		if err := os.WriteFile(s.journalPath("jf"), flipped, 0o600); err != nil {
			t.Fatal(err)
		}
		sess, err := s.Load(bg, "jf")
		var ce *checkpoint.CorruptError
		switch {
		case errors.As(err, &ce):
			if ce.Path != s.journalPath("jf") {
				t.Fatalf("byte %d: the error names %s, not the journal", i, ce.Path)
			}
		case err != nil:
			t.Fatalf("byte %d: %v, want a CorruptError", i, err)
		case i == len(journal)-1 && sess.Team.State["n"] == want:
			// The last newline: the whole last record is still on disk and kept.
		default:
			t.Fatalf("byte %d (%q) changed: loaded with n = %v (want %v or a CorruptError)", i, journal[i], sess.Team.State["n"], want)
		}
		if got, _ := os.ReadFile(s.journalPath("jf")); !bytes.Equal(got, flipped) {
			t.Fatalf("byte %d: the journal was changed by Load", i)
		}
	}
}

// A crash right after a compaction's snapshot leaves a journal of the epoch
// that snapshot absorbed; a crash inside the next run's Begin must not leave
// that journal two epochs behind, where it would read as a foreign journal
// (exit 5) though nothing is wrong. Begin puts the snapshot's own journal
// in its place first. (Found by the whole-binary crash loop.)
func TestStaleJournalAfterTwoCrashes(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "st")
	j := mustBegin(t, s, l, checkpoint.NewSession("st", "a.yaml", "t", spec.Sequential, seed(), fp(seed()), t0))
	record(t, j, complete(seed()[0].Name, "one")...)
	// Crash 1: a compaction's snapshot is renamed, its journal not restarted.
	if _, _, err := s.writeSnapshot(j.Sess, true); err != nil {
		t.Fatal(err)
	}
	l.Release()
	sess, err := s.Load(bg, "st")
	if err != nil {
		t.Fatalf("after crash 1: %v", err)
	}
	// Crash 2: the next run's Begin is killed at any of its steps.
	for step, img := range beginImages(t, s, sess) {
		back, err := img.Load(bg, "st")
		if err != nil {
			t.Fatalf("after crash 2 at %q: %v", step, err)
		}
		if tk, _ := back.Task(seed()[0].Name); tk.Result != "one" {
			t.Errorf("after crash 2 at %q: the acknowledged result is gone: %+v", step, tk)
		}
	}
}
