package runner

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Interrupts is the one place that handles SIGINT, SIGTERM, SIGHUP and
// SIGQUIT during a run. The first signal cancels the run's context: the
// run stops starting tasks, stops the running ones and writes its
// checkpoint. A second signal also kills every running command's process
// group at once, so that nothing the run waits for can keep it alive; the
// run still returns through its ordinary path (the checkpoint closed,
// scratch folders removed) and the command exits with the first signal's
// code. Nothing here exits the process: Forced tells the command that the
// user asked for it.
type Interrupts struct {
	groups *Groups

	mu      sync.Mutex
	sig     os.Signal
	started bool // the run holds its session: there are tasks to stop
	say     func(string)
	ch      chan os.Signal
	done    chan struct{}
	cancel  context.CancelFunc
	forced  chan struct{} // closed at the second signal
	// saying orders the notices: each is printed by a goroutine of its
	// own, which a blocked output (a pager that does not read, a
	// terminal paused with Ctrl-S) may keep forever.
	saying sync.Mutex
}

// WatchInterrupts returns a context that ends at the first SIGINT,
// SIGTERM, SIGHUP or SIGQUIT (a closed terminal or SSH connection, or
// Ctrl-\, must stop the run as orderly as Ctrl-C, not kill teamrun and
// leave its tasks running). The command calls it first thing, before it
// reads its flags: a signal that comes while it starts is the run's
// first, not lost between two handlers. Notices are said once Say gives
// the way to say them.
func WatchInterrupts(parent context.Context) (context.Context, *Interrupts) {
	ctx, cancel := context.WithCancel(parent)
	in := &Interrupts{groups: &Groups{}, ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel, forced: make(chan struct{})}
	signal.Notify(in.ch, interruptSignals()...)
	go in.watch()
	return ctx, in
}

// interruptSignals are the signals that stop a run in order: SIGQUIT
// too, unless QuitDumps. A SIGHUP teamrun was started ignoring (nohup's)
// stays ignored, as in any program: Notify would undo that, and `nohup
// teamrun run` would stop at the closed terminal. SIGINT is caught even
// so: sh starts a script's background job with it ignored, and that
// script's `kill -INT` must still stop the run in order.
func interruptSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	if !QuitDumps() {
		sigs = append(sigs, syscall.SIGQUIT)
	}
	return sigs
}

// QuitDumps reports whether SIGQUIT keeps Go's own meaning, a dump of
// every goroutine on stderr and then a crash: only when GOTRACEBACK=crash
// asks for it, to see where a teamrun that hangs is stuck. Otherwise
// Ctrl-\ stops a run as Ctrl-C does (exit 131), and ends a command that
// writes nothing at once.
func QuitDumps() bool { return os.Getenv("GOTRACEBACK") == "crash" }

func (in *Interrupts) watch() {
	var first os.Signal
	select {
	case first = <-in.ch:
	case <-in.done:
		return
	}
	in.mu.Lock()
	in.sig = first
	tell := in.started
	in.mu.Unlock()
	// What a signal does is done before it is said: saying it may block.
	in.cancel()
	if tell {
		in.stopping(first)
	}
	select {
	case s := <-in.ch:
		in.groups.KillAll()
		close(in.forced)
		in.Notice(fmt.Sprintf("teamrun: %s again: exiting now; the checkpoint is valid, --continue resumes", signalName(s)))
	case <-in.done:
	}
}

// noticeWait is how long the watcher waits for a notice to be printed
// before it goes on: long enough to keep notices before the lines a run
// prints after them, short enough that a blocked output never holds back
// a second signal.
const noticeWait = 200 * time.Millisecond

// Notice prints msg, in order with the notices before it, and returns once
// it is printed or noticeWait has passed: an output that does not take it
// never holds up the caller.
func (in *Interrupts) Notice(msg string) {
	in.mu.Lock()
	say := in.say
	in.mu.Unlock()
	if say == nil {
		return
	}
	printed := make(chan struct{})
	go func() {
		in.saying.Lock()
		defer in.saying.Unlock()
		say(msg)
		close(printed)
	}()
	select {
	case <-printed:
	case <-time.After(noticeWait):
	}
}

// stopping says what the first signal, sig, does to a run under way.
func (in *Interrupts) stopping(sig os.Signal) {
	in.Notice(fmt.Sprintf("teamrun: %s: stopping the running tasks and writing the checkpoint (again to exit at once)", signalName(sig)))
}

// Forced is closed at a second signal: the running commands are killed,
// and the run is to end at once, its checkpoint as it is (valid at any
// instant). The command exits if the run has not ended soon after, as
// when its output is blocked.
func (in *Interrupts) Forced() <-chan struct{} { return in.forced }

// Groups are the process groups of the run's commands, which a second
// signal kills.
func (in *Interrupts) Groups() *Groups { return in.groups }

// Say makes say the way notices reach the user from now on.
func (in *Interrupts) Say(say func(string)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.say = say
}

// Started marks the run as under way: it holds its session. Before, a
// signal has no tasks to stop and no checkpoint to write (the run ends
// with its own message, such as while waiting for a lock); a signal that
// came before the run got under way is told now.
func (in *Interrupts) Started() {
	in.mu.Lock()
	sig := in.sig
	tell := !in.started && sig != nil
	in.started = true
	in.mu.Unlock()
	if tell {
		in.stopping(sig)
	}
}

// Signal is the first signal received, or nil.
func (in *Interrupts) Signal() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sig
}

// Stop unregisters the handler.
func (in *Interrupts) Stop() {
	signal.Stop(in.ch)
	close(in.done)
	in.cancel()
}

// ExitCodeOf is 128 + the signal's number: 130 for SIGINT, 143 for
// SIGTERM, 129 for SIGHUP, 131 for SIGQUIT.
func ExitCodeOf(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	case syscall.SIGQUIT:
		return "quit (SIGQUIT)"
	}
	return s.String()
}
