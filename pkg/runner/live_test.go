package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// block is the block's lines as plain text.
func (r *liveReporter) block(now time.Time, width int) []string {
	var lines []string
	for _, l := range r.blockLines(now, width) {
		lines = append(lines, l.text+l.elapsed)
	}
	return lines
}

func TestShorten(t *testing.T) {
	tests := []struct {
		name  string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"fetch-the-quarterly-report-eu", 15, "fetch-t…port-eu"},
		{"fetch-the-quarterly-report-us", 15, "fetch-t…port-us"},
		{"abcdef", 4, "abc…"},
		{"ünïcödé-name-here", 9, "ünïc…here"},
		{"四半期報告書を翻訳する", 9, "四半…する"},
		{"四半期報告書を翻訳する", 10, "四半…する"},
		{"四半期報告書", 12, "四半期報告書"},
	}
	for _, tt := range tests {
		got := shorten(tt.name, tt.width)
		if got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.name, tt.width, got, tt.want)
		}
		if n := iostreams.DisplayWidth(got); n > tt.width {
			t.Errorf("shorten(%q, %d) is %d wide", tt.name, tt.width, n)
		}
	}
}

// The preview is the answer's last line with every control character a
// space (README, Output): an escape sequence in a model's answer never
// reaches the terminal through it.
func TestLastLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"first\nsecond", "second"},
		{"a\r\nb", "b"},
		{"progress\rdone", "done"},
		{"x\x1b[2J\x1b]0;T\x07y", "x [2J ]0;T y"},
		{"c1\u009bq\tt", "c1 q t"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := lastLine(tt.in); got != tt.want {
			t.Errorf("lastLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := lastLine(strings.Repeat("é", 600)); got != strings.Repeat("é", 512) {
		t.Errorf("lastLine of 600 runes kept %d runes, want the last 512", len([]rune(got)))
	}
}

// The live block on an 80-column terminal: long names never wrap a line,
// every redraw replaces the block in place, and the final screen shows each
// task once, with no progress line left over.
// Names in CJK take two columns a character: cut by rune count, they
// wrapped.
func TestLiveBlockFitsTheWidth(t *testing.T) {
	for _, tt := range []struct {
		width int
		names []string
	}{
		{80, []string{
			strings.Repeat("a-very-long-task-name-", 3) + "one",
			strings.Repeat("a-very-long-task-name-", 3) + "two",
			strings.Repeat("a-very-long-task-name-", 3) + "three",
		}},
		{72, []string{
			strings.Repeat("a-very-long-task-name-", 3) + "one",
			strings.Repeat("a-very-long-task-name-", 3) + "two",
			strings.Repeat("a-very-long-task-name-", 3) + "three",
		}},
		{80, []string{
			strings.Repeat("四半期報告書を翻訳する", 4) + "一",
			strings.Repeat("四半期報告書を翻訳する", 4) + "二",
			strings.Repeat("四半期報告書を翻訳する", 4) + "三",
		}},
	} {
		width, names := tt.width, tt.names
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			screen := &iostreams.Screen{Width: width}
			ios := iostreams.Test(nil, screen, screen)
			ios.SetTerminal(width, true)
			r := newLiveReporter(ios)
			r.Observe(Event{Type: RunStarted, Message: "session s: new, 3 tasks", Tasks: len(names)})
			for _, n := range names {
				r.Observe(Event{Type: TaskStarted, Task: n, Attempt: 1})
			}
			r.mu.Lock()
			block := r.block(time.Now(), width)
			r.mu.Unlock()
			seen := map[string]bool{}
			for _, l := range block {
				if n := iostreams.DisplayWidth(l); n >= width {
					t.Errorf("block line %q is %d wide on a %d-column terminal", l, n, width)
				}
				if seen[l] {
					t.Errorf("two block lines read %q: cut names must stay distinct", l)
				}
				seen[l] = true
			}
			for range 5 { // what the ticker does
				r.mu.Lock()
				r.clear()
				r.draw()
				r.mu.Unlock()
			}
			r.Notice("teamrun: interrupted (SIGINT): stopping the running tasks")
			for _, n := range names {
				r.Observe(Event{Type: TaskCompleted, Task: n, Elapsed: millis(time.Second)})
			}
			r.Observe(Event{Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Succeeded, Total: 3, Ran: 3}})
			r.Close()
			if screen.Wrapped > 0 {
				t.Errorf("%d lines wrapped", screen.Wrapped)
			}
			lines := screen.Lines()
			text := strings.Join(lines, "\n")
			for _, n := range names {
				tail := iostreams.CutWidthEnd(n, 3) + " in 1s"
				c := 0
				for _, l := range lines {
					if strings.HasPrefix(l, "completed ") && strings.HasSuffix(l, tail) {
						c++
					}
				}
				if c != 1 {
					t.Errorf("%q completed %d times on the final screen:\n%s", n, c, text)
				}
			}
			if strings.Contains(text, " done, ") {
				t.Errorf("a progress line was left on the screen:\n%s", text)
			}
			if lines[1] != "teamrun: interrupted (SIGINT): stopping the running tasks" {
				t.Errorf("the notice does not start a line of its own:\n%s", text)
			}
		})
	}
}

// A terminal narrower than the live block (stty cols 10, a split pane):
// a block line would wrap onto two rows, the redraw would clear one, and
// the rest would pile up on the screen. There is no block there: each
// step's line alone, which may wrap, as any long line does.
func TestLiveBlockNarrowTerminal(t *testing.T) {
	for _, width := range []int{1, 10, 20} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			screen := &iostreams.Screen{Width: width}
			ios := iostreams.Test(nil, screen, screen)
			ios.SetTerminal(width, false)
			r := newLiveReporter(ios)
			r.Observe(Event{Type: RunStarted, Message: "session s: new, 2 tasks", Tasks: 2})
			r.Observe(Event{Type: TaskStarted, Task: "first", Attempt: 1})
			for range 3 { // what the ticker does
				r.mu.Lock()
				r.clear()
				r.draw()
				r.mu.Unlock()
			}
			r.Observe(Event{Type: TaskCompleted, Task: "first", Elapsed: millis(time.Second)})
			r.Observe(Event{Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Succeeded, Total: 2, Ran: 1}})
			r.Close()
			text := strings.Join(screen.Lines(), "\n")
			if flat := strings.ReplaceAll(text, "\n", ""); strings.Contains(flat, "/2 done") || strings.Contains(flat, "running") {
				t.Errorf("a progress line was left on a %d-column screen:\n%s", width, text)
			}
		})
	}
}

// The block's first line counts a failed task apart from the done ones:
// "1/2 done" after a failure read as if a task had finished well.
func TestLiveBlockCountsFailuresApart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ended []EventType // what happened to the tasks before "last", which runs on
		want  string
	}{
		{"nothing ended", nil, "0/3 done, 1 running"},
		{"one failed", []EventType{TaskFailed}, "0/3 done, 1 failed, 1 running"},
		{"one done, one failed", []EventType{TaskCompleted, TaskFailed}, "1/3 done, 1 failed, 1 running"},
		{"skipped and restored are done", []EventType{TaskSkipped, TaskRestored}, "2/3 done, 1 running"},
		{"halted is neither", []EventType{TaskHalted, TaskFailed}, "0/3 done, 1 failed, 1 running"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios := iostreams.Test(nil, &strings.Builder{}, &strings.Builder{})
			ios.SetTerminal(80, false)
			r := newLiveReporter(ios)
			defer r.Close()
			r.Observe(Event{Type: RunStarted, Message: "session s: new, 3 tasks", Tasks: 3})
			r.Observe(Event{Type: TaskStarted, Task: "last", Attempt: 1})
			for i, typ := range tt.ended {
				task := fmt.Sprintf("t%d", i)
				r.Observe(Event{Type: TaskStarted, Task: task, Attempt: 1})
				r.Observe(Event{Type: typ, Task: task, Attempt: 1, Error: "exit status 1", Elapsed: millis(time.Second)})
			}
			r.mu.Lock()
			block := r.block(time.Now(), 80)
			r.mu.Unlock()
			if len(block) == 0 || block[0] != tt.want {
				t.Errorf("block = %q, want its first line %q", block, tt.want)
			}
		})
	}
}

// A failed task's "its output:" command is printed for pasting: whole, at
// any width, where it was cut with "…" to fit the terminal.
func TestLiveFailedTaskLogsCommandWhole(t *testing.T) {
	logs := "teamrun session logs nightly-release-notes-20261207-054741-d2d0 fetch-changelog --attempt 1"
	for _, width := range []int{40, 80, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			screen := &iostreams.Screen{Width: width}
			ios := iostreams.Test(nil, screen, screen)
			ios.SetTerminal(width, false)
			r := newLiveReporter(ios)
			r.Observe(Event{Type: RunStarted, Message: "session s: new, 2 tasks", Tasks: 2})
			r.Observe(Event{Type: TaskStarted, Task: "other", Attempt: 1})
			r.Observe(Event{Type: TaskStarted, Task: "fetch-changelog", Attempt: 1})
			r.Observe(Event{Type: TaskFailed, Task: "fetch-changelog", Attempt: 1, Error: "exit status 1", Logs: logs, Elapsed: millis(time.Second)})
			r.Observe(Event{Type: TaskCompleted, Task: "other", Elapsed: millis(time.Second)})
			r.Close()
			flat := strings.Join(screen.Lines(), "")
			if !strings.Contains(flat, "its output: "+logs) {
				t.Errorf("the whole command %q is not on a %d-column screen:\n%s", logs, width, strings.Join(screen.Lines(), "\n"))
			}
		})
	}
}

// Only a running task's elapsed time is dimmed: the last word of a
// streamed answer's preview line and of "… and N more" was dimmed too.
func TestLiveBlockDimsOnlyElapsed(t *testing.T) {
	var out strings.Builder
	ios := iostreams.Test(nil, &out, &out)
	ios.SetTerminal(80, true)
	r := newLiveReporter(ios)
	defer r.Close()
	r.mu.Lock()
	r.total = maxRunningLines + 1
	for i := range maxRunningLines + 1 {
		name := fmt.Sprintf("t%d", i)
		r.order = append(r.order, name)
		r.running[name] = time.Now()
	}
	r.preview["t0"] = "Hello from the tiny test model."
	r.draw() // the first: nothing to clear before it
	lines := strings.Split(out.String(), "\n")
	r.mu.Unlock()
	var preview, more, running string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "Hello from"):
			preview = l
		case strings.Contains(l, "more"):
			more = l
		case strings.HasPrefix(l, "  t0 "):
			running = l
		}
	}
	if preview != "    Hello from the tiny test model." {
		t.Errorf("preview line %q, want it plain", preview)
	}
	if more != "  … and 2 more" {
		t.Errorf("more line %q, want it plain", more)
	}
	if !strings.HasPrefix(running, "  t0 \x1b[2m") || !strings.HasSuffix(running, "\x1b[0m") {
		t.Errorf("running line %q, want its elapsed time dimmed", running)
	}
}
