package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// encodeWhole is the snapshot encoded as one value, as EncodeSession did
// before it wrote a task record at a time: WriteSession must give the same
// bytes.
func encodeWhole(t *testing.T, sess *Session) []byte {
	t.Helper()
	sess.FormatVersion = formatOf(sess)
	sess.Summary = sess.counts()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sess); err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	body = body[:len(body)-1]
	return fmt.Appendf(append(body, checksumOpen...), "%08x"+checksumClose, Checksum(body))
}

func TestWriteSessionMatchesWholeEncoding(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ds := []spec.TaskDef{{ID: 0, Name: "a", Agent: "w", Key: "k0"}, {ID: 1, Name: "b<&>", Agent: "w", Key: "k1", Context: []string{"a"}},
		{ID: 2, Name: "c", Agent: "w", Key: "k2"}}
	full := func() *Session {
		s := NewSession("s1", "/p/agents.yaml", "team", spec.Sequential, ds, "fp<1>", at)
		// Values that look like the marker's surroundings, and HTML.
		s.Team.State = map[string]any{"tasks": []any{}, "tasks_fingerprint": "fp", "h": "<b>&</b>", "n": json.Number("12345678901234567890")}
		s.Apply(Record{Kind: TaskStarted, Task: "a", At: at})
		s.Apply(Record{Kind: TaskCompleted, Task: "a", Result: "r\xff\n\"q\" <x> \u2028 \"tasks\":[],", Agent: "w",
			Variables: map[string]any{"v": json.Number("1.5")}, Messages: []Message{{Role: "assistant", Content: "hi <there>"}}, At: at})
		s.Apply(Record{Kind: TaskStarted, Task: "c", At: at})
		s.Apply(Record{Kind: TaskCompleted, Task: "c", Blob: &Blob{Digest: Digest("big"), Size: 3}, At: at})
		s.Apply(Record{Kind: DecisionRecorded, Task: "b<&>", Value: "yes"})
		return s
	}
	for name, sess := range map[string]*Session{
		"tasks and a blob": full(),
		"no tasks":         NewSession("s2", "/p/agents.yaml", "team", spec.Sequential, nil, "fp", at),
		"tasks nil":        {ID: "s3", Team: TeamState{Process: "sequential"}},
	} {
		t.Run(name, func(t *testing.T) {
			want := encodeWhole(t, sess)
			var got bytes.Buffer
			n, err := WriteSession(&got, sess)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) || n != int64(len(want)) {
				t.Fatalf("WriteSession wrote %d bytes:\n%s\nwant:\n%s", n, got.Bytes(), want)
			}
			if _, err := DecodeSession(sess.ID, "file", got.Bytes()); err != nil {
				t.Fatalf("its output does not decode: %v", err)
			}
		})
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

func TestWriteSessionReportsAWriteError(t *testing.T) {
	ds := []spec.TaskDef{{Name: "a", Agent: "w", Key: "k"}, {Name: "b", Agent: "w", Key: "k2"}}
	sess := NewSession("s1", "/p/agents.yaml", "team", spec.Sequential, ds, "fp", time.Now())
	for after := range 6 {
		if _, err := WriteSession(&failingWriter{after: after}, sess); err == nil {
			t.Errorf("a writer failing after %d writes: no error", after)
		}
	}
}

// BenchmarkWriteSession10000 is the snapshot of a finished 10,000-task
// session (what Begin, a compaction and a run's end write): its allocations
// are the garbage a large run makes at those moments.
//
//	go test ./pkg/checkpoint -run '^$' -bench WriteSession -benchmem
func BenchmarkWriteSession10000(b *testing.B) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	defs := make([]spec.TaskDef, 10000)
	for i := range defs {
		defs[i] = spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "t", Description: fmt.Sprintf("task %d", i), Key: fmt.Sprintf("%016x", i)}
	}
	sess := NewSession("bench", "/p/agents.yaml", "bench", spec.Sequential, defs, "fp", at)
	for _, d := range defs {
		sess.Apply(Record{Kind: TaskStarted, Task: d.Name, At: at})
		sess.Apply(Record{Kind: TaskCompleted, Task: d.Name, Agent: "t", At: at})
	}
	var n int64
	for b.Loop() {
		var err error
		if n, err = WriteSession(io.Discard, sess); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(n)
}

// Blank lines after a good snapshot's checksum are refused as a change,
// not as a checksum gone missing (which sent one looking for a cut); a
// file cut short still says it is.
func TestSnapshotTrailer(t *testing.T) {
	data, err := EncodeSession(NewSession("s1", "a.yaml", "t", "sequential", nil, "", time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want string // "" when it decodes
	}{
		{"as written", data, ""},
		{"a blank line after", append(bytes.Clone(data), '\n'), "blank space (1 bytes) follows its checksum, which teamrun writes last: it was changed"},
		{"blank space after", append(bytes.Clone(data), " \r\n\n"...), "blank space (4 bytes) follows its checksum"},
		{"cut short", data[:len(data)-20], "the file is cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeSession("s1", "s1.json", tt.data)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
