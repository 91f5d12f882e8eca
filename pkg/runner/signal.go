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
	mu     sync.Mutex
	sig    os.Signal
	ch     chan os.Signal
	done   chan struct{}
	cancel context.CancelFunc
}

// WatchInterrupts returns a context that ends at the first SIGINT, SIGTERM
// or SIGHUP (a closed terminal or SSH connection must stop the run as
// orderly as Ctrl-C, not kill teamrun and leave its tasks running). It ignores the parent's cancellation by signal (main's own
// handler) so that it alone decides; exit is called on a second signal.
func WatchInterrupts(parent context.Context, groups *Groups, stderr io.Writer, exit func(code int)) (context.Context, *Interrupts) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	in := &Interrupts{ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel}
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
		in.mu.Unlock()
		fmt.Fprintf(stderr, "teamrun: %s: stopping the running tasks and writing the checkpoint (again to exit at once)\n", signalName(first))
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
