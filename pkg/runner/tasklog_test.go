package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
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

func TestAttemptLog(t *testing.T) {
	dir := t.TempDir()
	silent := &attemptLog{path: filepath.Join(dir, "s", "1.stdout")}
	silent.Write(nil)
	if err := silent.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(silent.path); !os.IsNotExist(err) {
		t.Errorf("a silent stream made a file: %v", err)
	}

	big := &attemptLog{path: filepath.Join(dir, "b", "1.stdout")}
	chunk := bytes.Repeat([]byte("y"), 300<<10)
	for range 5 { // 1.5 MiB
		if n, err := big.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v: a log never stops the command", n, err)
		}
	}
	if err := big.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(big.path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != LogCap+len(logCutNote) || !bytes.HasSuffix(data, []byte(logCutNote)) {
		t.Errorf("log of %d bytes, want the first %d and the cut note", len(data), LogCap)
	}
	fi, _ := os.Stat(filepath.Dir(big.path))
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("logs folder mode %v, want 0700", fi.Mode().Perm())
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

func TestAttemptLogNoSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "logs", "1.stdout")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	l := &attemptLog{path: path}
	if n, err := l.Write([]byte("output")); n != 6 || err != nil {
		t.Fatalf("Write = %d, %v: a log never stops the command", n, err)
	}
	if err := l.Close(); err == nil {
		t.Error("a log path that is a symbolic link was written without an error")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
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
