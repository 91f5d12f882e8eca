package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
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

// watched is output that tells, once, when it first holds want.
type watched struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestWaitedSessionDiscarded: a --continue --wait that waited for the
// project's session until its holder discarded it (a run that wrote it,
// then lost the claim of the project's active session) resolves again
// rather than start a session of its own under that id: here it finds the
// session missing, says so, and starts another.
func TestWaitedSessionDiscarded(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	specPath := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(specPath, []byte("name: w\nagents:\n  a: {shell: echo ok}\ntasks:\n  t: {description: d, agent: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := stores.Open(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	held, err := store.Lock(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	sess := checkpoint.NewSession("s1", specPath, "w", spec.Sequential, nil, "", time.Now())
	j, err := store.Begin(ctx, held, sess)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if err := store.Project(dir).SetActive(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	out := &watched{want: "waiting for it to finish", seen: make(chan struct{})}
	type result struct {
		sum *Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(ctx, Options{SpecPath: specPath, Continue: true, Wait: time.Minute, Mode: ModeJSON, Home: home,
			IO: iostreams.Test(nil, out, out), Getenv: func(string) string { return "" }})
		done <- result{sum, err}
	}()
	select {
	case <-out.seen:
	case r := <-done:
		t.Fatalf("the run did not wait: %+v, %v\n%s", r.sum, r.err, out)
	}
	if err := store.Discard(ctx, held); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.sum == nil || r.sum.Outcome != Succeeded {
		t.Fatalf("run: %+v, %v\n%s", r.sum, r.err, out)
	}
	if r.sum.Session == "s1" || !strings.Contains(out.String(), "names the active session s1, which is missing") {
		t.Errorf("ran session %s; want a new one, said after s1 went missing:\n%s", r.sum.Session, out)
	}
}
