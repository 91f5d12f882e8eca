package runner

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// blockedWriter is a stdout whose reader does not read: every write waits
// until release is closed; entered is closed at the first.
type blockedWriter struct {
	entered, release chan struct{}
	once             sync.Once
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// lockedBuffer is a stderr written while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// What a reporter writes to stderr does not wait behind a stdout whose
// reader does not read (a paused pager, a stalled ssh): above all the
// notice of a signal, which says how to exit at once. Before, the plain
// reporter wrote both under one lock, held by the write that waited, and
// the notice came only once the reader read again.
func TestStderrNotBehindBlockedStdout(t *testing.T) {
	sum := &Summary{Outcome: Interrupted, Session: "s1", Resume: "teamrun run team.yaml --continue --session s1", Total: 2}
	for _, tc := range []struct {
		name     string
		terminal bool
		mode     Mode
		say      func(Reporter)
		want     string
	}{
		{"plain: a signal's notice", false, ModeAuto, func(r Reporter) { r.Notice("teamrun: interrupted (SIGINT): stopping") }, "stopping"},
		{"plain: a warning", false, ModeAuto, func(r Reporter) {
			r.Observe(Event{Type: RunWarning, Index: -1, Message: "a warning"})
		}, "warning: a warning"},
		{"plain: a task's stderr line", false, ModeAuto, func(r Reporter) {
			r.Observe(Event{Type: TaskLine, Index: -1, Task: "a", Stream: "stderr", Message: "oops"})
		}, "a | oops"},
		{"plain: a failed task", false, ModeAuto, func(r Reporter) {
			r.Observe(Event{Type: TaskFailed, Index: 0, Task: "a", Error: "exit status 1"})
		}, "task a failed"},
		{"plain: the summary of an interrupted run", false, ModeAuto, func(r Reporter) {
			r.Observe(Event{Type: RunFinished, Index: -1, Summary: sum})
		}, "resume:  teamrun run team.yaml --continue --session s1"},
		{"quiet: a signal's notice", false, ModeQuiet, func(r Reporter) { r.Notice("teamrun: interrupted (SIGINT): stopping") }, "stopping"},
		{"live: a signal's notice", true, ModeAuto, func(r Reporter) { r.Notice("teamrun: interrupted (SIGINT): stopping") }, "stopping"},
		{"json: a signal's notice", false, ModeJSON, func(r Reporter) { r.Notice("teamrun: interrupted (SIGINT): stopping") }, "stopping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &blockedWriter{entered: make(chan struct{}), release: make(chan struct{})}
			errOut := &lockedBuffer{}
			ios := iostreams.Test(nil, out, errOut)
			if tc.terminal {
				ios.SetTerminal(80, false)
			}
			rep := NewReporter(ios, tc.mode)
			defer func() {
				close(out.release)
				rep.Close()
			}()
			// A task's line (-v) that the reader does not take.
			blocked := Event{Type: TaskLine, Index: -1, Task: "a", Stream: "stdout", Message: "x"}
			go rep.Observe(blocked)
			<-out.entered
			// What also goes to stdout (a failure, the summary) waits
			// there once its stderr part is written.
			go tc.say(rep)
			// Not a timer on speed: it is written at once, or never.
			for deadline := time.Now().Add(time.Minute); !strings.Contains(errOut.String(), tc.want); {
				if time.Now().After(deadline) {
					t.Fatalf("stderr %q a minute later, want %q in it: it waits for stdout", errOut.String(), tc.want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
