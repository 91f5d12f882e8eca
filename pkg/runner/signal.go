package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupts turns SIGINT, SIGTERM and SIGHUP into a cancelled context, so that a
// run stops starting tasks, stops the running ones and writes its
// checkpoint. A second signal kills the running commands' process groups
// and calls exit at once: the checkpoint is valid at every instant.
type Interrupts struct {
	mu      sync.Mutex
	sig     os.Signal
	started bool // the run holds its session: there are tasks to stop
	stderr  io.Writer
	ch      chan os.Signal
	done    chan struct{}
	cancel  context.CancelFunc
}

// WatchInterrupts returns a context that ends at the first SIGINT, SIGTERM
// or SIGHUP (a closed terminal or SSH connection must stop the run as
// orderly as Ctrl-C, not kill teamrun and leave its tasks running). It ignores the parent's cancellation by signal (main's own
// handler) so that it alone decides; exit is called on a second signal.
func WatchInterrupts(parent context.Context, groups *Groups, stderr io.Writer, exit func(code int)) (context.Context, *Interrupts) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	in := &Interrupts{ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel, stderr: stderr}
	signal.Notify(in.ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		var first os.Signal
		select {
		case first = <-in.ch:
		case <-in.done:
			return
		}
		in.mu.Lock()
		in.sig = first
		if in.started {
			in.stopping()
		}
		in.mu.Unlock()
		cancel()
		select {
		case s := <-in.ch:
			groups.KillAll()
			fmt.Fprintf(stderr, "teamrun: %s again: exiting now; the checkpoint is valid, --continue resumes\n", signalName(s))
			exit(ExitCodeOf(s))
		case <-in.done:
		}
	}()
	return ctx, in
}

// stopping says what the first signal does to a run under way. in.mu is
// held.
func (in *Interrupts) stopping() {
	fmt.Fprintf(in.stderr, "teamrun: %s: stopping the running tasks and writing the checkpoint (again to exit at once)\n", signalName(in.sig))
}

// Started marks the run as under way: it holds its session. Before, a
// signal has no tasks to stop and no checkpoint to write (the run ends
// with its own message, such as while waiting for a lock); a signal that
// came before the run got under way is told now.
func (in *Interrupts) Started() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.started && in.sig != nil {
		in.stopping()
	}
	in.started = true
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
// SIGTERM, 129 for SIGHUP.
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
	}
	return s.String()
}
