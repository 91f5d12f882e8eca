package runner

// Task output beyond the result: each attempt's stdout and stderr kept
// beside the session (capped), and, with --verbose, every line as it comes.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// LogCap is how much of each stream of an attempt is kept; the rest is cut
// and the log says so on its last line.
const LogCap = 1 << 20

// logCutNote ends a log that reached LogCap.
var logCutNote = fmt.Sprintf("\n[teamrun: cut here: a log keeps the first %d bytes (1 MiB) of each stream]\n", LogCap)

// LogsRoot is the folder the attempts' logs of a store's sessions go in:
// the file store's own folder, beside the session files; "" for a store
// that is no local folder (no logs are kept).
func LogsRoot(store checkpoint.Backend) string {
	if d, ok := store.(interface{ Dir() string }); ok {
		return d.Dir()
	}
	return ""
}

// LogsDir is the folder beside a session's file holding its attempts' logs:
// <store>/<id>.logs/<task>/<attempt>.stdout and .stderr.
func LogsDir(storeDir, id string) string { return filepath.Join(storeDir, id+".logs") }

// LogPath is the file of one stream ("stdout" or "stderr") of an attempt.
func LogPath(storeDir, id, task string, attempt int, stream string) string {
	return filepath.Join(LogsDir(storeDir, id), fileName(task), strconv.Itoa(attempt)+"."+stream)
}

// attemptLog writes one stream of an attempt to its file, up to LogCap.
// The file is made at the first byte: a silent command costs no file.
type attemptLog struct {
	path string
	f    *os.File
	n    int
	cut  bool
	werr error
}

func (l *attemptLog) Write(p []byte) (int, error) {
	if l.cut || l.werr != nil || len(p) == 0 {
		return len(p), nil // the command's output is never blocked by its log
	}
	if l.f == nil {
		if l.werr = os.MkdirAll(filepath.Dir(l.path), 0o700); l.werr != nil {
			return len(p), nil
		}
		// Attempt numbers never recur (a crashed attempt's successor has
		// the next one), so a file of the same name is a leftover.
		if l.f, l.werr = os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o600); l.werr != nil {
			return len(p), nil
		}
	}
	keep := p
	if room := LogCap - l.n; len(keep) > room {
		keep, l.cut = keep[:room], true
	}
	if _, err := l.f.Write(keep); err != nil {
		l.werr = err
		return len(p), nil
	}
	l.n += len(keep)
	if l.cut {
		_, l.werr = io.WriteString(l.f, logCutNote)
	}
	return len(p), nil
}

func (l *attemptLog) Close() error {
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	if l.werr != nil {
		return l.werr
	}
	return err
}

// lineWriter hands each complete line written to it to emit, without its
// newline; a last line without one comes at Close. A line longer than
// maxLine is handed over in pieces.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(line string)
}

const maxLine = 8 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		switch {
		case i >= 0 && i <= maxLine:
			w.emit(string(bytes.TrimSuffix(w.buf[:i], []byte("\r"))))
			w.buf = w.buf[i+1:]
			continue
		case len(w.buf) >= maxLine:
			w.emit(string(w.buf[:maxLine]))
			w.buf = w.buf[maxLine:]
			continue
		}
		break
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a big chunk's array go
	}
	return len(p), nil
}

func (w *lineWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
	return nil
}

// outputSinks are where an attempt's stdout and stderr go besides teamrun's
// own reading of them; close ends them all.
type outputSinks struct {
	stdout, stderr io.Writer
	closers        []io.Closer
}

func (s *outputSinks) add(stdout, stderr io.Writer, closers ...io.Closer) {
	s.stdout = multi(s.stdout, stdout)
	s.stderr = multi(s.stderr, stderr)
	s.closers = append(s.closers, closers...)
}

func multi(a, b io.Writer) io.Writer {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return io.MultiWriter(a, b)
}

func (s *outputSinks) close() error {
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// logHints tells, on a failed attempt, the command that shows its kept
// output, when it kept any.
type logHints struct {
	Observer
	root, session string // root: LogsRoot; "" keeps none
}

func (h logHints) Observe(ev Event) {
	if ev.Type == TaskFailed && ev.Attempt > 0 && h.root != "" {
		for _, stream := range []string{"stderr", "stdout"} {
			if _, err := os.Stat(LogPath(h.root, h.session, ev.Task, ev.Attempt, stream)); err == nil {
				ev.Logs = fmt.Sprintf("teamrun session logs %s %s --attempt %d", ShellQuote(h.session), ShellQuote(ev.Task), ev.Attempt)
				break
			}
		}
	}
	h.Observer.Observe(ev)
}

// verboseDeltas is rep, showing streamed answers line by line when verbose.
func verboseDeltas(rep Observer, verbose bool) Observer {
	if !verbose {
		return rep
	}
	return &deltaLines{Observer: rep}
}

// deltaLines shows, for --verbose, a streamed LLM answer as a command's
// output is shown: line by line, prefixed with the task's name. The
// pieces still reach the reporter (the live preview, --stream-json).
type deltaLines struct {
	Observer
	mu    sync.Mutex
	lines map[string]*lineWriter
}

func (d *deltaLines) Observe(ev Event) {
	switch ev.Type {
	case TaskDelta:
		d.writer(ev).Write([]byte(ev.Delta))
	case TaskRetrying, TaskCompleted, TaskFailed, TaskInterrupted, TaskHalted:
		// An attempt's last line without a newline comes when it ends.
		d.mu.Lock()
		w := d.lines[ev.Task]
		delete(d.lines, ev.Task)
		d.mu.Unlock()
		if w != nil {
			w.Close()
		}
	}
	d.Observer.Observe(ev)
}

func (d *deltaLines) writer(ev Event) *lineWriter {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lines == nil {
		d.lines = map[string]*lineWriter{}
	}
	w := d.lines[ev.Task]
	if w == nil {
		task, session := ev.Task, ev.Session
		w = &lineWriter{emit: func(l string) {
			d.Observer.Observe(Event{Time: time.Now(), Type: TaskLine, Session: session, Index: -1, Task: task, Stream: "stdout", Message: l})
		}}
		d.lines[ev.Task] = w
	}
	return w
}
