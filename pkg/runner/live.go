package runner

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// liveReporter keeps a block at the bottom of the terminal — an "N/M done"
// line and one line per running task with its elapsed time — and prints
// finished steps above it. Every line of the block is cut to the terminal's
// width, so nothing wraps and the block is redrawn in place without stale
// lines.
type liveReporter struct {
	mu       sync.Mutex
	errMu    sync.Mutex // held, under mu or alone, while writing ErrOut when it is not Out
	io       *iostreams.IOStreams
	st       style
	errSt    style // for ErrOut, which may be a file where Out is the terminal (2> err.log)
	total    int
	finished int // done: completed, skipped, restored or reused
	failed   int
	running  map[string]time.Time
	preview  map[string]string // a streaming task's latest line of text
	order    []string
	lines    int // lines of the block now on screen; the cursor ends its last
	stop     chan struct{}
	done     chan struct{}
}

// maxRunningLines bounds the block on small terminals and in wide workflows.
const maxRunningLines = 8

func newLiveReporter(s *iostreams.IOStreams) *liveReporter {
	r := &liveReporter{io: s, st: style{on: s.ColorEnabled()}, errSt: style{on: s.ErrColorEnabled()}, running: map[string]time.Time{}, preview: map[string]string{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.tick()
	return r
}

func (r *liveReporter) tick() {
	defer close(r.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			r.clear()
			r.draw()
			r.mu.Unlock()
		}
	}
}

// clear erases the block: back to the start of its first line, then to the
// end of the screen.
func (r *liveReporter) clear() {
	if r.lines == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("\r")
	for range r.lines - 1 {
		b.WriteString("\x1b[1A")
	}
	b.WriteString("\x1b[J")
	fmt.Fprint(r.io.Out, b.String())
	r.lines = 0
}

// blockLine is a line of the block: its text, then a running task's
// elapsed time (dimmed), "" on the other lines.
type blockLine struct{ text, elapsed string }

// blockLines are the block's lines, plain text, each at most width-1
// columns (a line filling the last column would wrap on some terminals).
func (r *liveReporter) blockLines(now time.Time, width int) []blockLine {
	// On a terminal narrower than the block (a split pane, stty cols 10)
	// a line would wrap onto two rows and the redraw clear only one: no
	// block there, the steps' lines alone.
	const minWidth = 20
	if len(r.order) == 0 || width < minWidth {
		return nil
	}
	width = max(width-1, minWidth)
	head := fmt.Sprintf("%d/%d done", r.finished, r.total)
	if r.failed > 0 {
		head += fmt.Sprintf(", %d failed", r.failed)
	}
	lines := []blockLine{{text: fit(fmt.Sprintf("%s, %d running", head, len(r.order)), width)}}
	shown := r.order
	if len(shown) > maxRunningLines {
		shown = shown[:maxRunningLines-1]
	}
	for _, name := range shown {
		el := fmtDuration(now.Sub(r.running[name]).Truncate(100 * time.Millisecond))
		room := width - len("  ") - 1 - iostreams.DisplayWidth(el)
		lines = append(lines, blockLine{text: "  " + shorten(name, room) + " ", elapsed: el})
		if p := r.preview[name]; p != "" {
			lines = append(lines, blockLine{text: fitTail("    "+p, width)})
		}
	}
	if len(shown) < len(r.order) {
		lines = append(lines, blockLine{text: fit(fmt.Sprintf("  … and %d more", len(r.order)-len(shown)), width)})
	}
	return lines
}

func (r *liveReporter) draw() {
	lines := r.blockLines(time.Now(), r.io.Width())
	if len(lines) == 0 {
		return
	}
	drawn := make([]string, len(lines))
	for k, l := range lines {
		if k == 0 {
			drawn[k] = r.st.bold(l.text)
		} else if l.elapsed != "" {
			drawn[k] = l.text + r.st.dim(l.elapsed)
		} else {
			drawn[k] = l.text
		}
	}
	fmt.Fprint(r.io.Out, strings.Join(drawn, "\n"))
	r.lines = len(lines)
}

func (r *liveReporter) Observe(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Type == TaskDelta {
		// Shown under the task's line at the next tick: redrawing per
		// token would only flicker.
		r.preview[ev.Task] = lastLine(r.preview[ev.Task] + ev.Delta)
		return
	}
	if ev.Type == TaskStreamDiscarded {
		delete(r.preview, ev.Task) // the retried request's text starts afresh
		return
	}
	r.clear()
	switch ev.Type {
	case RunStarted:
		r.total = ev.Tasks
	case TaskStarted:
		if _, ok := r.running[ev.Task]; !ok {
			r.order = append(r.order, ev.Task)
		}
		r.running[ev.Task] = time.Now()
		delete(r.preview, ev.Task) // a new attempt's text starts afresh
	case TaskCompleted, TaskFailed, TaskInterrupted, TaskHalted, TaskSkipped, TaskRestored, TaskReused:
		switch ev.Type {
		case TaskFailed:
			r.failed++ // a failed task is not done: the run ends unsuccessful
		case TaskInterrupted, TaskHalted:
		default:
			r.finished++
		}
		delete(r.running, ev.Task)
		delete(r.preview, ev.Task)
		r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == ev.Task })
	}
	switch ev.Type {
	case TaskLine:
		if ev.Stream == "stderr" {
			r.errMu.Lock()
			writeLine(r.io, ev, r.errSt)
			r.errMu.Unlock()
		} else {
			writeLine(r.io, ev, r.st)
		}
	case RunWarning:
		r.errMu.Lock()
		fmt.Fprintln(r.io.ErrOut, warningLine(r.errSt, ev.Message))
		r.errMu.Unlock()
	case RunHalted:
		writeHalt(r.io.Out, ev.Halt, "")
	case RunFinished:
		writeSummary(r.io, ev.Summary, r.st)
	case TaskStarted:
		// shown in the block
	default:
		r.printStep(ev)
	}
	r.draw()
}

// printStep prints a finished step on one line that fits the width: a long
// task name is shortened in the middle so that what happened to it stays
// readable; an error, and the command that shows a failed task's output,
// follow in full on their own lines.
func (r *liveReporter) printStep(ev Event) {
	width := max(r.io.Width()-1, 20)
	var msg string
	if ev.Type == TaskFailed {
		msg, ev.Error = ev.Error, ""
	}
	plain := describe(ev, style{})
	if plain == "" {
		return
	}
	if over := iostreams.DisplayWidth(plain) - width; over > 0 {
		ev.Task = shorten(ev.Task, max(iostreams.DisplayWidth(ev.Task)-over, 9))
	}
	line := strings.TrimSuffix(describe(ev, r.st), ": ")
	if ev.Type == TaskRetrying || ev.Type == RequestRetrying {
		line = fit(describe(ev, style{}), width) // its reason inline, cut: the last attempt's error is printed in full
	}
	fmt.Fprintln(r.io.Out, line)
	if msg = strings.TrimSpace(msg); msg != "" {
		fmt.Fprintf(r.io.Out, "  %s\n", strings.ReplaceAll(iostreams.Printable(msg), "\n", "\n  "))
	}
	if ev.Type == TaskFailed && ev.Logs != "" {
		// A command printed for pasting is never cut: it may wrap, as the
		// resume line does; it is above the block, which alone must fit.
		fmt.Fprintf(r.io.Out, "  %s\n", r.st.dim("its output: "+ev.Logs))
	}
}

// Notice prints msg on a line of its own above the block (a Ctrl-C notice
// must not end up glued to a progress line). On a stderr that is not the
// terminal (2>log) it has no block to keep clear, and does not wait for
// the terminal either: the notice of a signal must not wait behind an
// output paused with Ctrl-S.
func (r *liveReporter) Notice(msg string) {
	if !r.io.ErrSameAsOut() {
		r.errMu.Lock()
		defer r.errMu.Unlock()
		fmt.Fprintln(r.io.ErrOut, msg)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clear()
	fmt.Fprintln(r.io.ErrOut, msg)
	r.draw()
}

func (r *liveReporter) Close() {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clear()
}

// lastLine is the text after s's last line break, without control
// characters, bounded: the part of a streamed answer worth showing.
func lastLine(s string) string {
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' || iostreams.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 512 {
		s = string(r[len(r)-512:])
	}
	return s
}

// fitTail cuts s to width columns keeping its end, where a stream's newest
// text is.
func fitTail(s string, width int) string {
	if iostreams.DisplayWidth(s) <= width {
		return s
	}
	return "    …" + iostreams.CutWidthEnd(s, max(width-5, 0))
}

// fit cuts s to width columns.
func fit(s string, width int) string {
	if iostreams.DisplayWidth(s) <= width {
		return s
	}
	return iostreams.CutWidth(s, max(width-1, 0)) + "…"
}

// shorten cuts a task name to width columns keeping its start and its end:
// names that differ only at the end ("fetch-report-eu", "fetch-report-us")
// stay distinct when cut, which cutting the end alone would lose.
func shorten(name string, width int) string {
	if iostreams.DisplayWidth(name) <= width {
		return name
	}
	if width < 5 {
		return fit(name, width)
	}
	tail := (width - 1) / 2
	head := width - 1 - tail
	return iostreams.CutWidth(name, head) + "…" + iostreams.CutWidthEnd(name, tail)
}
