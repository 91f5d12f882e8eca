package filestore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Each journal line carries its own checksum, which finds a changed line
// but not a removed one: the records are numbered (the header's
// first_seq, each record's "seq"), and a record missing between two
// others, repeated or moved is damage (exit 5), never a completed task
// silently forgotten and run again. A missing last line is what a crash
// before the sync leaves, and a journal an older teamrun wrote has no
// numbers: both still load.
func TestJournalOrder(t *testing.T) {
	s := newStore(t)
	_, journal, _ := tornFixture(t, s, "order", 8)
	lines := bytes.SplitAfter(journal, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline: nothing
	if len(lines) != 9 {
		t.Fatalf("the journal has %d lines; want a header and 8 records", len(lines))
	}
	at := func(i int) int { return len(bytes.Join(lines[:i], nil)) } // byte offset of line i
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	without := func(from, to int) []byte { // lines[from:to] removed
		return join(join(lines[:from]...), join(lines[to:]...))
	}
	// unnumbered is the journal as an older teamrun wrote it: no
	// first_seq, no "seq" in its records.
	unnumbered := func(ls [][]byte) []byte {
		var h journalHeader
		payload, _ := unframe(bytes.TrimSuffix(ls[0], []byte("\n")))
		if err := jsonUnmarshal(payload, &h); err != nil {
			t.Fatal(err)
		}
		out := headerLine(h.Epoch, 0)
		for _, l := range ls[1:] {
			p, ok := unframe(bytes.TrimSuffix(l, []byte("\n")))
			if !ok {
				t.Fatal("a damaged line in the fixture")
			}
			_, rest, _ := bytes.Cut(p, []byte(","))
			out = append(out, frame(append([]byte("{"), rest...))...)
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		journal []byte
		want    string // "": it loads
		records int    // records applied when it loads
	}{
		{"whole", journal, "", 8},
		{"a middle line removed", without(4, 5),
			fmt.Sprintf("record at byte %d is number 5, where 4 was expected: record 4 is missing (a line was removed)", at(4)), 0},
		{"the first record removed", without(1, 2),
			fmt.Sprintf("record at byte %d is number 2, where 1 was expected: record 1 is missing (a line was removed)", at(1)), 0},
		{"three lines removed", without(3, 6),
			fmt.Sprintf("record at byte %d is number 6, where 3 was expected: records 3 to 5 are missing (lines were removed)", at(3)), 0},
		{"a line repeated", join(join(lines[:4]...), lines[3], join(lines[4:]...)),
			fmt.Sprintf("record at byte %d is number 3, where 4 was expected: a line was repeated or moved", at(4)), 0},
		{"a record without its number", join(join(lines[:2]...), frame(bytes.Replace(bytes.TrimSuffix(lines[2][9:], []byte("\n")), []byte(`"seq":2,`), nil, 1)), join(lines[3:]...)),
			fmt.Sprintf("record at byte %d has no number, where every record of this journal has one (it was changed)", at(2)), 0},
		{"the last line removed (a crash before its sync)", without(8, 9), "", 7},
		{"the last line torn", journal[:len(journal)-7], "", 7},
		{"an older teamrun's journal", unnumbered(lines), "", 8},
		{"an older teamrun's journal, a middle line removed", unnumbered(append(append([][]byte{}, lines[:4]...), lines[5:]...)), "", 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(s.journalPath("order"), tt.journal, 0o600); err != nil {
				t.Fatal(err)
			}
			sess, err := s.Load(bg, "order")
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if n, err := foldJournal(snapshotOf(t, s, "order"), tt.journal); n != tt.records || err != nil {
					t.Errorf("%d records applied, %v; want %d", n, err, tt.records)
				}
				if sess.ID != "order" {
					t.Errorf("Load = session %q", sess.ID)
				}
				return
			}
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "session order: "+s.journalPath("order")+" is corrupt: "+tt.want) {
				t.Fatalf("Load = %v; want corrupt: %s", err, tt.want)
			}
		})
	}
}

// snapshotOf is session id's snapshot, decoded, its journal not applied.
func snapshotOf(t *testing.T, s *Store, id string) *checkpoint.Session {
	t.Helper()
	data, err := os.ReadFile(s.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := checkpoint.DecodeSession(id, s.Path(id), data)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// A compaction moves the records written beside it into the new journal
// with their numbers, which its header's first_seq follows: the journal
// after it loads, and a record removed from it is still found.
func TestJournalOrderAfterCompaction(t *testing.T) {
	s := newStore(t)
	s.compactMin = 1
	held := make(chan struct{})
	var once sync.Once
	s.testStep = func(step string) {
		if step == "staged" {
			once.Do(func() { close(held) })
		}
	}
	j, names := compactTeam(t, s, "comp")
	want := map[string]string{}
	n := recordUntil(t, j, names, held, want)
	waitCompacted(j)
	for i := n; i < n+3; i++ {
		res := fmt.Sprintf("after %d", i)
		record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: names[i%len(names)], Result: res})
		want[names[i%len(names)]] = res
	}
	data, err := os.ReadFile(s.journalPath("comp"))
	if err != nil {
		t.Fatal(err)
	}
	h, payloads, err := journalRecords(data)
	if err != nil || h.First <= 1 || len(payloads) < 4 {
		t.Fatalf("the journal after the compaction: first_seq %d, %d records, %v; want numbers past 1 and 3 records or more", h.First, len(payloads)-1, err)
	}
	sess, err := s.Load(bg, "comp")
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, sess, want)
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := len(lines) - 3 // the second of the last three records
	removed := append(bytes.Join(lines[:cut], nil), bytes.Join(lines[cut+1:], nil)...)
	if err := os.WriteFile(s.journalPath("comp"), removed, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := h.First + int64(cut) - 1
	_, err = s.Load(bg, "comp")
	var ce *checkpoint.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), fmt.Sprintf("where %d was expected: record %d is missing", missing, missing)) {
		t.Fatalf("Load with record %d removed: %v; want it corrupt", missing, err)
	}
	j.Close()
}
