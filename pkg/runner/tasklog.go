package runner

// Task output beyond the result: each attempt's stdout and stderr kept
// beside the session (capped), and, with --verbose, every line as it comes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/llm"
)

// LogCap is how much of each stream of an attempt is kept; the rest is cut
// and the log says so on its last line.
const LogCap = 1 << 20

// logCutNote ends a log that reached LogCap.
var logCutNote = fmt.Sprintf("\n[teamrun: cut here: a log keeps the first %d bytes (1 MiB) of each stream]\n", LogCap)

// logStore is a store that keeps the attempts' output: the file store in
// files beside the session, PostgreSQL in its logs table. A store without
// it keeps none.
type logStore interface {
	// AttemptLog is where one stream ("stdout" or "stderr") of an attempt
	// of a task of the session l holds goes; it is kept when Close returns
	// nil, and refused once another run owns the session. It gets at most
	// LogCap bytes and the cut note (attemptLog caps).
	AttemptLog(ctx context.Context, l checkpoint.Lock, task string, attempt int, stream string) io.WriteCloser
}

// logsOf is store's log keeping; nil: none.
func logsOf(store checkpoint.Backend) logStore {
	if l, ok := store.(logStore); ok {
		return l
	}
	return nil
}

// redacting is w with what is written of keys redacted (llm.RedactKeys);
// w itself when there are none it redacts.
func redacting(w io.WriteCloser, keys []string) io.WriteCloser {
	ks := llm.NewKeyStream(keys...)
	if !ks.Redacts() {
		return w
	}
	return &redactingWriter{w: w, keys: ks}
}

// redactingWriter passes on what of the redacted stream can no longer
// change (llm.KeyStream): a key, or a piece of one, written a byte at a
// time (a command's flushes, a stream's one-character deltas) or cut
// anywhere is caught whole, and what w gets, put together, is what
// RedactKeys makes of the whole stream.
type redactingWriter struct {
	w     io.WriteCloser
	keys  *llm.KeyStream
	wrote error
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	r.emit(r.keys.Next(string(p)))
	return len(p), r.wrote
}

func (r *redactingWriter) emit(s string) {
	if s != "" && r.wrote == nil {
		_, r.wrote = io.WriteString(r.w, s)
	}
}

func (r *redactingWriter) Close() error {
	r.emit(r.keys.End())
	return errors.Join(r.wrote, r.w.Close())
}

// attemptLog caps one stream of an attempt at LogCap on its way to the
// store, which gets nothing for a silent stream; a stream cut there ends
// with logCutNote. kept, when set, is told of a log kept.
type attemptLog struct {
	w    io.WriteCloser
	n    int
	cut  bool
	werr error
	kept func()
}

func (l *attemptLog) Write(p []byte) (int, error) {
	if l.cut || l.werr != nil || len(p) == 0 {
		return len(p), nil // the command's output is never blocked by its log
	}
	keep := p
	if room := LogCap - l.n; len(keep) > room {
		keep, l.cut = keep[:room], true
	}
	if _, err := l.w.Write(keep); err != nil {
		l.werr = err
		return len(p), nil
	}
	l.n += len(keep)
	if l.cut {
		_, l.werr = io.WriteString(l.w, logCutNote)
	}
	return len(p), nil
}

func (l *attemptLog) Close() error {
	err := l.w.Close()
	if l.werr != nil {
		return l.werr
	}
	if err == nil && l.n > 0 && l.kept != nil {
		l.kept()
	}
	return err
}

// keptLogs are the attempts whose output was kept, for logHints.
type keptLogs struct {
	mu sync.Mutex
	m  map[keptKey]bool
}

type keptKey struct {
	task    string
	attempt int
}

func (k *keptLogs) add(task string, attempt int) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[keptKey]bool{}
	}
	k.m[keptKey{task, attempt}] = true
}

func (k *keptLogs) has(task string, attempt int) bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.m[keptKey{task, attempt}]
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

// close closes every sink, and returns the error of each that failed: a
// stream whose log was not kept is told on its own.
func (s *outputSinks) close() []error {
	var errs []error
	for _, c := range s.closers {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// logHints tells, on a failed attempt, the command that shows its kept
// output, when it kept any.
type logHints struct {
	Observer
	kept    *keptLogs
	session string
	store   string // --store, for cmdline.Logs
}

func (h logHints) Observe(ev Event) {
	if ev.Type == TaskFailed && ev.Attempt > 0 && h.kept.has(ev.Task, ev.Attempt) {
		ev.Logs = cmdline.Logs(h.store, h.session, ev.Task, ev.Attempt)
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
	case TaskStreamDiscarded:
		// The partial line ends here, and a line says it is dropped: the
		// retried request's text would otherwise run on from it.
		d.endLine(ev.Task)
		d.Observer.Observe(Event{Time: time.Now(), Type: TaskLine, Session: ev.Session, Index: -1, Task: ev.Task, Stream: "stdout",
			Message: "[teamrun: the answer above was dropped (" + ev.Message + "); the request is sent again]"})
	case TaskRetrying, TaskCompleted, TaskFailed, TaskInterrupted, TaskHalted:
		// An attempt's last line without a newline comes when it ends.
		d.endLine(ev.Task)
	}
	d.Observer.Observe(ev)
}

// endLine shows what a task's stream holds of a line not yet ended.
func (d *deltaLines) endLine(task string) {
	d.mu.Lock()
	w := d.lines[task]
	delete(d.lines, task)
	d.mu.Unlock()
	if w != nil {
		w.Close()
	}
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
