package checkpoint

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/teamrun/teamrun/internal/testenv"
)

// Decoding completed tasks shares what they repeat: one empty map for
// their "variables": {}, and one time for a task's finished_at and its
// last attempt's end (0.47 and 0.23 MB at 10,000 tasks, where a fully
// restored rerun collects nothing). The session encodes back byte for
// byte. Seen failing without the sharing: 836 bytes a task (732 now).
func TestDecodeSharesEmptyVariablesAndEndTimes(t *testing.T) {
	const n = 2000
	_, _, data := completedSession(t, n, false)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sess := decoded(t, data)
	runtime.ReadMemStats(&after)
	if got := encoded(t, sess); !bytes.Equal(got, data) {
		t.Errorf("the decoded session encodes differently:\n%.300s\nwant\n%.300s", got, data)
	}
	for _, i := range []int{0, 1, n - 1} {
		r := &sess.Team.Tasks[i]
		if r.Variables == nil || len(r.Variables) != 0 || r.FinishedAt == nil || len(r.History) != 1 || !r.History[0].End.Equal(*r.FinishedAt) {
			t.Fatalf("task %d decoded as %+v", i, r)
		}
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 780 {
		t.Errorf("decoding %d completed tasks allocated %d bytes a task; want at most 780", n, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// A task that ran once keeps its attempt and the attempt's end in one
// allocation, and its started_at and finished_at are that attempt's start
// and end (as apply shares them): 112 bytes a task where the history, its
// end and the two times took 96+24+24 (0.32 MB at 10,000 tasks, where a
// fully restored rerun collects nothing). The session encodes back byte
// for byte. Seen failing without it: 764 bytes a task
// (732 now).
func TestDecodeKeepsAnAttemptWithItsTimes(t *testing.T) {
	const n = 2000
	sess, _, _ := completedSession(t, n, false)
	for i := range sess.Team.Tasks {
		r := &sess.Team.Tasks[i]
		end := r.StartedAt.Add(1500 * time.Millisecond)
		r.FinishedAt, r.History[0].End = &end, &end
	}
	data := encoded(t, sess)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sess = decoded(t, data)
	runtime.ReadMemStats(&after)
	if got := encoded(t, sess); !bytes.Equal(got, data) {
		t.Errorf("the decoded session encodes differently:\n%.300s\nwant\n%.300s", got, data)
	}
	for _, i := range []int{0, 1, n - 1} {
		r := &sess.Team.Tasks[i]
		if len(r.History) != 1 || r.StartedAt != &r.History[0].Start || r.FinishedAt != r.History[0].End || r.FinishedAt == nil || r.FinishedAt.Equal(*r.StartedAt) {
			t.Fatalf("task %d decoded as %+v", i, r)
		}
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 745 {
		t.Errorf("decoding %d completed tasks allocated %d bytes a task; want at most 745", n, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}
