package main

// A session's status, for `session list`: the session file has no status
// field (DESIGN §5), so it is read from the tasks' records and the lock.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The statuses `session list` shows and --status takes.
const (
	statusDone        = "done"        // every task completed
	statusPartial     = "partial"     // finished, and routing skipped some tasks
	statusFailed      = "failed"      // a task failed after its retries
	statusHalted      = "halted"      // waiting for a human decision
	statusRunning     = "running"     // a run holds it now
	statusInterrupted = "interrupted" // stopped before the end: a signal, a kill -9, a crash
	statusCorrupt     = "corrupt"     // its record cannot be decoded
	statusUnreadable  = "unreadable"  // its record cannot be read (permissions, a special file, the server)
)

var statuses = []string{statusDone, statusPartial, statusFailed, statusHalted, statusRunning, statusInterrupted, statusCorrupt, statusUnreadable}

// brokenStatus is the status of a session that err keeps from being read:
// corrupt only when what was read cannot be decoded — a file teamrun may
// not open, or a server that went away, is not a damaged session.
func brokenStatus(err error) string {
	var ce *checkpoint.CorruptError
	if errors.As(err, &ce) {
		return statusCorrupt
	}
	return statusUnreadable
}

// sessionStatus reads how a session stands. held: a run holds it now.
func sessionStatus(s *checkpoint.Session, held bool) string {
	if held {
		return statusRunning
	}
	var failed, interrupted, skipped, open, toolHalt bool
	kept := s.KeptRecords() // a waiting foreach's instances: no tasks of the run
	for _, t := range s.Team.Tasks {
		if kept[t.Name] {
			continue
		}
		switch t.Status {
		case checkpoint.StatusRunning:
			interrupted = true // recorded as running, and nobody runs it: its run died
		case checkpoint.StatusFailed:
			switch {
			case t.Error == runner.InterruptedError:
				interrupted = true
			case checkpoint.HaltedError(t.Error):
				toolHalt = true // waits at a tool call for a decision
			default:
				failed = true
			}
		case checkpoint.StatusSkipped:
			skipped = true
		case checkpoint.StatusCompleted:
		default:
			open = true
		}
	}
	switch {
	case interrupted:
		return statusInterrupted
	case failed:
		return statusFailed
	}
	// A halt is recorded as the current task; a task started after it
	// would have moved it. Only a halt makes a task current that has not
	// started: a human task, or an LLM task the budget held back.
	t, ok := s.Task(s.Checkpoint.CurrentTask)
	if toolHalt || ok && (t.Agent == spec.HumanAgent && t.Status != checkpoint.StatusCompleted || t.Status == checkpoint.StatusPending) {
		return statusHalted
	}
	switch {
	case open:
		return statusInterrupted
	case skipped:
		return statusPartial
	}
	return statusDone
}

// parseStatuses reads --status: one status or several, comma-separated.
func parseStatuses(s string) (map[string]bool, error) {
	want := map[string]bool{}
	for _, st := range strings.Split(s, ",") {
		st = strings.TrimSpace(st)
		if !slices.Contains(statuses, st) {
			return nil, fmt.Errorf("--status: want one of %s (or several, comma-separated), got %s", strings.Join(statuses, ", "), spec.ShownValue(st))
		}
		want[st] = true
	}
	return want, nil
}

// statusOf fills in the status of each entry (and its error, for a session
// whose file cannot be decoded in full), several at a time: an unfinished
// session is a full load and a look at its lock.
func statusOf(ctx context.Context, store checkpoint.Backend, list []listEntry) {
	var wg sync.WaitGroup
	next := make(chan int)
	// As the file store's List: opening files, not decoding, is the cost.
	for range min(8, len(list)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				e := &list[i]
				if e.err != nil {
					e.Status = brokenStatus(e.err)
					continue
				}
				if e.TasksTotal > 0 && e.TasksDone == e.TasksTotal {
					// The head says so: no load and no look at the lock
					// (most of a store is done). A run that goes on with a
					// done session rewrites its head at once unless a full
					// restore leaves it nothing to do.
					e.Status = statusDone
					continue
				}
				sess, err := store.Load(ctx, e.ID)
				if err != nil {
					e.Status, e.Error, e.err = brokenStatus(err), err.Error(), err
					continue
				}
				held, _ := store.Held(ctx, e.ID)
				e.Status = sessionStatus(sess, held != nil)
			}
		}()
	}
	for i := range list {
		next <- i
	}
	close(next)
	wg.Wait()
}

// oneLineText is s with its line breaks and runs of blanks as one space.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// resultCut cuts s to n runes, marking the cut with "…".
func resultCut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
