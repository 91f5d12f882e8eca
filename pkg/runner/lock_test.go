package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
)

// TestLockSessionInterrupted: an interrupt while waiting for a held
// session ends with a plain message naming the holder (F15: was
// "context canceled" and advice to rerun with --wait).
func TestLockSessionInterrupted(t *testing.T) {
	store, err := stores.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	held, err := store.Lock(context.Background(), "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	tests := []struct {
		name    string
		wait    time.Duration
		want    string
		waiting bool // says it waits
		is      error
	}{
		{"no --wait", 0, "rerun with --wait", false, checkpoint.ErrLocked},
		{"--wait, interrupted", time.Hour, "interrupted while waiting for session s1 held by pid ", true, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var warnings []string
			warn := func(m string) {
				warnings = append(warnings, m)
				cancel() // Ctrl-C once the wait has begun
			}
			l, err := lockSession(ctx, store, "s1", tt.wait, warn)
			cancel()
			if l != nil {
				t.Fatal("got the lock")
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want %q (errors.Is %v)", err, tt.want, tt.is)
			}
			if strings.Contains(err.Error(), "context canceled") {
				t.Fatalf("error %q speaks Go", err)
			}
			if got := len(warnings) == 1 && strings.Contains(warnings[0], "waiting for it to finish"); got != tt.waiting {
				t.Fatalf("warnings %q", warnings)
			}
		})
	}
}
