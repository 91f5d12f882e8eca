package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
)

// TestRunExit: a signal's code promises a written checkpoint (DESIGN §3),
// so a store failure that came with a signal still exits 5; a store error
// the signal itself caused (a connect or a wait cut short) is the
// signal's.
func TestRunExit(t *testing.T) {
	lost := fmt.Errorf("%w: session s1: the connection holding the session's lock was lost", checkpoint.ErrStore)
	interrupted := &runner.Summary{Outcome: runner.Interrupted}
	storeFailed := &runner.Summary{Outcome: runner.StoreFailed}
	for _, tc := range []struct {
		name string
		sum  *runner.Summary
		err  error
		sig  os.Signal
		want int
	}{
		{"interrupted, checkpoint written, SIGTERM", interrupted, nil, syscall.SIGTERM, 143},
		{"interrupted, checkpoint written, SIGINT", interrupted, nil, syscall.SIGINT, 130},
		{"record failed, then SIGTERM", storeFailed, &runner.StoreError{Err: lost}, syscall.SIGTERM, exitStore},
		{"record failed, then SIGINT", storeFailed, &runner.StoreError{Err: lost}, syscall.SIGINT, exitStore},
		{"record failed, no signal", storeFailed, &runner.StoreError{Err: lost}, nil, exitStore},
		{"store failed before the run, then SIGTERM", nil, lost, syscall.SIGTERM, exitStore},
		{"connect cut short by SIGINT", nil, fmt.Errorf("%w: connect: %w", checkpoint.ErrStore, context.Canceled), syscall.SIGINT, 130},
		{"wait for the lock cut short by SIGTERM", nil, &runner.WaitInterruptedError{Held: &checkpoint.HeldError{ID: "s1"}, Err: context.Canceled}, syscall.SIGTERM, 143},
		{"held", nil, fmt.Errorf("%w: session s1", checkpoint.ErrLocked), nil, exitLocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := 0
			var ee *exitError
			if err := runExit(tc.sum, tc.err, tc.sig); errors.As(err, &ee) {
				got = ee.code
			} else if err != nil {
				t.Fatalf("runExit: %v, no exit code", err)
			}
			if got != tc.want {
				t.Errorf("exit %d, want %d", got, tc.want)
			}
		})
	}
}
