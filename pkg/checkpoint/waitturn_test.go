package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A Lock's turn: out of time it is the holder (with how long it waited,
// when it was to wait), an interruption wraps ctx's error and names the
// holder, and a wake or the pause ends in another try.
func TestWaitTurn(t *testing.T) {
	held := func() *HeldError { return &HeldError{ID: "s1", PID: 42, Host: "h"} }
	woken := make(chan struct{})
	close(woken)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		turn   Turn
		waited time.Duration // of the HeldError returned; -1: nil returned
		is     error
	}{
		{"no wait", context.Background(), Turn{Pause: time.Hour}, 0, ErrLocked},
		{"waited in vain", context.Background(), Turn{Wait: time.Minute, Left: -time.Millisecond, Pause: time.Hour}, time.Minute, ErrLocked},
		{"woken", context.Background(), Turn{Wait: time.Hour, Left: time.Hour, Pause: time.Hour, Wake: woken}, -1, nil},
		{"paused", context.Background(), Turn{Wait: time.Hour, Left: time.Hour, Pause: time.Nanosecond}, -1, nil},
		{"left is shorter than the pause", context.Background(), Turn{Wait: time.Hour, Left: time.Nanosecond, Pause: time.Hour}, -1, nil},
		{"interrupted", cancelled, Turn{Wait: time.Hour, Left: time.Hour, Pause: time.Hour}, 0, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WaitTurn(tt.ctx, held(), tt.turn)
			if tt.waited < 0 {
				if err != nil {
					t.Fatalf("got %v, want another try (nil)", err)
				}
				return
			}
			if !errors.Is(err, tt.is) {
				t.Fatalf("got %v, want one that is %v", err, tt.is)
			}
			var he *HeldError
			if errors.As(err, &he) && he.Waited != tt.waited {
				t.Errorf("Waited = %v, want %v", he.Waited, tt.waited)
			}
			if tt.is == context.Canceled && !strings.HasPrefix(err.Error(), "waiting for session s1: context canceled (session s1 is held by another run (pid 42 on h") {
				t.Errorf("interrupted: %v", err)
			}
		})
	}
}
