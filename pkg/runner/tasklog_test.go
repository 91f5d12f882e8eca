package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

func TestLineWriter(t *testing.T) {
	tests := []struct {
		writes []string
		want   []string
	}{
		{[]string{"one\ntwo\n"}, []string{"one", "two"}},
		{[]string{"par", "tial\nrest"}, []string{"partial", "rest"}},
		{[]string{"crlf\r\n", "\n"}, []string{"crlf", ""}},
		{[]string{strings.Repeat("x", maxLine+5) + "\n"}, []string{strings.Repeat("x", maxLine), "xxxxx"}},
		{nil, nil},
	}
	for _, tt := range tests {
		var got []string
		w := &lineWriter{emit: func(l string) { got = append(got, l) }}
		for _, s := range tt.writes {
			w.Write([]byte(s))
		}
		w.Close()
		if !slices.Equal(got, tt.want) {
			t.Errorf("writes %.60q: %d lines %.60q, want %d %.60q", tt.writes, len(got), got, len(tt.want), tt.want)
		}
	}
}

// bufLog is a store's log: what it got, and whether it was closed.
type bufLog struct {
	bytes.Buffer
	closed bool
}

func (b *bufLog) Close() error { b.closed = true; return nil }

// attemptLog hands a store at most LogCap bytes of a stream and the cut
// note, never blocks the command, and says a log was kept only when the
// stream had output.
func TestAttemptLog(t *testing.T) {
	tests := []struct {
		name   string
		writes int // of 300 KiB each
		want   int // bytes the store gets
		cut    bool
	}{
		{"silent", 0, 0, false},
		{"small", 1, 300 << 10, false},
		{"exactly the cap", 0, LogCap, false},
		{"over the cap", 5, LogCap + len(logCutNote), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &bufLog{}
			kept := false
			l := &attemptLog{w: store, kept: func() { kept = true }}
			chunks := slices.Repeat([][]byte{bytes.Repeat([]byte("y"), 300<<10)}, tt.writes)
			if tt.name == "exactly the cap" {
				chunks = [][]byte{bytes.Repeat([]byte("y"), LogCap)}
			}
			for _, c := range chunks {
				if n, err := l.Write(c); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v: a log never stops the command", n, err)
				}
			}
			l.Write(nil)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got := store.Bytes()
			if len(got) != tt.want || bytes.HasSuffix(got, []byte(logCutNote)) != tt.cut || !store.closed {
				t.Errorf("the store got %d bytes (cut note %v, closed %v), want %d (cut note %v)", len(got), bytes.HasSuffix(got, []byte(logCutNote)), store.closed, tt.want, tt.cut)
			}
			if kept != (tt.want > 0) {
				t.Errorf("kept = %v for %d bytes", kept, len(got))
			}
		})
	}
}

func TestReportLines(t *testing.T) {
	line := Event{Type: TaskLine, Task: "fetch", Stream: "stdout", Message: "got 3 rows"}
	errLine := Event{Type: TaskLine, Task: "fetch", Stream: "stderr", Message: "slow"}
	t.Run("plain", func(t *testing.T) {
		var out, errw bytes.Buffer
		r := NewReporter(iostreams.Test(nil, &out, &errw), ModeAuto)
		r.Observe(line)
		r.Observe(errLine)
		r.Close()
		if out.String() != "fetch | got 3 rows\n" || errw.String() != "fetch | slow\n" {
			t.Errorf("plain: %q / %q", out.String(), errw.String())
		}
	})
	t.Run("live", func(t *testing.T) {
		var out bytes.Buffer
		ios := iostreams.Test(nil, &out, &out)
		ios.SetTerminal(40, false)
		r := NewReporter(ios, ModeAuto)
		r.Observe(Event{Type: RunStarted, Tasks: 1})
		r.Observe(Event{Type: TaskStarted, Task: "fetch", Attempt: 1})
		r.Observe(line)
		r.Close()
		screen := &iostreams.Screen{Width: 40}
		screen.Write(out.Bytes())
		if got := screen.Lines(); !slices.Contains(got, "fetch | got 3 rows") {
			t.Errorf("live screen %q lacks the line", got)
		}
	})
}

type recordingObserver struct{ evs []Event }

func (r *recordingObserver) Observe(ev Event) { r.evs = append(r.evs, ev) }

func TestVerboseDeltas(t *testing.T) {
	rec := &recordingObserver{}
	if verboseDeltas(rec, false) != Observer(rec) {
		t.Fatal("without --verbose the reporter is left as it is")
	}
	o := verboseDeltas(rec, true)
	for _, ev := range []Event{
		{Type: TaskDelta, Task: "write", Delta: "Hello, "},
		{Type: TaskDelta, Task: "sum", Delta: "4"},
		{Type: TaskDelta, Task: "write", Delta: "world.\nSecond"},
		{Type: TaskDelta, Task: "write", Delta: " line"},
		{Type: TaskCompleted, Task: "write"},
		{Type: TaskFailed, Task: "sum"},
	} {
		o.Observe(ev)
	}
	var got []string
	deltas := 0
	for _, ev := range rec.evs {
		switch ev.Type {
		case TaskLine:
			got = append(got, ev.Task+" | "+ev.Message)
		case TaskDelta:
			deltas++
		}
	}
	want := []string{"write | Hello, world.", "write | Second line", "sum | 4"}
	if !slices.Equal(got, want) || deltas != 4 {
		t.Errorf("lines %q (want %q), %d deltas passed on (want 4)", got, want, deltas)
	}
}

// onFirst calls f at the first byte written to it.
type onFirst struct {
	buf  bytes.Buffer
	f    func()
	seen bool
}

func (o *onFirst) Write(p []byte) (int, error) {
	if !o.seen && len(p) > 0 {
		o.seen = true
		o.f()
	}
	return o.buf.Write(p)
}

// A command's stdout goes to its spool file; its copy (logs, --verbose)
// still comes while the command runs: the command here writes "b" only
// once the copy has seen its "a".
func TestStdoutCopyIsLive(t *testing.T) {
	dir := t.TempDir()
	goFile := filepath.Join(dir, "go")
	sink := &onFirst{f: func() { os.WriteFile(goFile, nil, 0o600) }}
	script := `printf a; i=0; while [ ! -e "$GO" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; if [ -e "$GO" ]; then printf b; else printf late; fi`
	out, err := RunCommand(context.Background(), nil, CommandSpec{Shell: script, Env: []string{"GO=" + goFile}, Spool: dir, Stdout: sink})
	if err != nil {
		t.Fatal(err)
	}
	if out != "ab" || sink.buf.String() != "ab" {
		t.Errorf("result %q, copy %q; want both \"ab\" (the copy saw nothing while the command ran?)", out, sink.buf.String())
	}
}

type closingBuffer struct{ bytes.Buffer }

func (*closingBuffer) Close() error { return nil }

// A key a command writes in pieces is redacted in its log all the same.
func TestRedactingWriterAcrossWrites(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	for _, pieces := range [][]string{
		{"key=" + key + "\n"},
		{"key=sk-test-01", "23456789abcdef\n"},
		{"k", "ey=sk-", "test-0123456789abcde", "f", "\n"},
	} {
		var b closingBuffer
		w := redacting(&b, []string{key})
		for _, p := range pieces {
			if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
				t.Fatalf("write %q: %d, %v", p, n, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if b.String() != "key=[REDACTED]\n" {
			t.Errorf("%q logged %q", pieces, b.String())
		}
	}
	// Without keys the log's own writer is used, nothing in between.
	if b := (&closingBuffer{}); redacting(b, nil) != io.WriteCloser(b) {
		t.Error("a redacting writer without keys to redact")
	}
}

// chunks is a writer that keeps each write apart, as the events a
// stream's deltas become are.
type chunks struct{ got []string }

func (c *chunks) Write(p []byte) (int, error) { c.got = append(c.got, string(p)); return len(p), nil }
func (*chunks) Close() error                  { return nil }

// A key, or a piece of 8 or more of its characters from anywhere in it,
// written a byte at a time (a command's per-character flushes, a stream's
// one-character deltas) is redacted as the whole text would be.
func TestRedactingWriterBytewise(t *testing.T) {
	const key, other = "sk-SECRETKEY-0123456789abcdef", "QSECRET-zyxwvut9876"
	for _, text := range []string{
		"token " + key[2:14] + "\n",
		"piece: " + key[5:20] + " / " + other[3:12] + " end",
		"whole " + key + " and " + other + "\n",
		"start" + key[:8] + "mid" + key[len(key)-9:],
		"short " + key[4:10] + " stays\n",
		"sk-sk-sk-SECRETKEY-0sk-",
		"no key here at all\n",
	} {
		want := llm.RedactKeys(text, key, other)
		for _, size := range []int{1, 2, 3, 7} {
			c := &chunks{}
			w := redacting(c, []string{key, "", "short", other})
			for i := 0; i < len(text); i += size {
				w.Write([]byte(text[i:min(i+size, len(text))]))
			}
			w.Close()
			if got := strings.Join(c.got, ""); got != want {
				t.Errorf("%q in writes of %d: got %q, want %q", text, size, got, want)
			}
		}
	}
}

// lostLogs is a store whose every log fails (a full disk): each stream's
// with its own path, or all with one cause (a link at <id>.logs).
type lostLogs struct{ shared bool }

func (s lostLogs) AttemptLog(_ context.Context, _ checkpoint.Lock, task string, attempt int, stream string) io.WriteCloser {
	if s.shared {
		return failingLog{errors.New("cannot create /s/s1.logs: it is a symbolic link")}
	}
	return failingLog{fmt.Errorf("cannot write /s/s1.logs/%s/%d.%s: no space left on device", task, attempt, stream)}
}

type failingLog struct{ err error }

func (f failingLog) Write([]byte) (int, error) { return 0, f.err }
func (f failingLog) Close() error              { return nil }

type heldLock struct{}

func (heldLock) ID() string                { return "s1" }
func (heldLock) Holder() checkpoint.Holder { return checkpoint.Holder{} }
func (heldLock) Release() error            { return nil }

// Each log that cannot be kept is told, both streams of an attempt and
// each attempt's (a full disk loses each on its own); a cause they share
// is told once. Only the first of the run was, so the stderr a full disk
// cut was never named.
func TestLogsNotKeptWarned(t *testing.T) {
	for _, tt := range []struct {
		name string
		logs lostLogs
		want []string
	}{
		{"each its own", lostLogs{}, []string{"/s/s1.logs/a/1.stdout", "/s/s1.logs/a/1.stderr", "/s/s1.logs/b/1.stdout", "/s/s1.logs/b/1.stderr"}},
		{"one cause", lostLogs{shared: true}, []string{"/s/s1.logs: it is a symbolic link"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, job, warned := shellJob(t, "echo out; echo err >&2", nil)
			c.Logs, c.Lock = tt.logs, heldLock{}
			for _, task := range []string{"a", "b"} {
				job.Task = &spec.Task{Name: task}
				if _, err := c.Execute(context.Background(), job); err != nil {
					t.Fatal(err)
				}
			}
			if len(*warned) != len(tt.want) {
				t.Fatalf("%d warnings, want %d:\n%s", len(*warned), len(tt.want), strings.Join(*warned, "\n"))
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(*warned, func(m string) bool { return strings.Contains(m, w) && strings.Contains(m, "(the run goes on)") }) {
					t.Errorf("no warning names %s:\n%s", w, strings.Join(*warned, "\n"))
				}
			}
		})
	}
}
