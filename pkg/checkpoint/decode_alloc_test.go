package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Decoding completed tasks shares what they repeat: one empty map for
// their "variables": {} (0.47 MB at 10,000 tasks, where a fully restored
// rerun collects nothing), and a task that ran once keeps its attempt and
// the attempt's end in one allocation, its started_at and finished_at
// being that attempt's start and end (as apply shares them): 112 bytes a
// task where the history, its end and the two times took 96+24+24. The
// session encodes back byte for byte. Seen failing without the empty map
// shared (836 bytes a task, before the rest), without the attempt's block
// (its end apart), and without the times placed in it (not shared); 554
// bytes a task then. A task's context that names the task before it
// shares that task's name (scanner.lastName): 549 since (seen failing
// with a string of its own); 554 with the names' hashes a decoder sorts
// to refuse a name recorded twice (checkTasks).
func TestDecodeSharesEmptyVariablesAndTimes(t *testing.T) {
	const n = 2000
	sess, _, _ := completedSession(t, n, false)
	for i := range sess.Team.Tasks {
		r := &sess.Team.Tasks[i]
		end := r.StartedAt.Add(1500 * time.Millisecond) // as a real task's
		r.FinishedAt, r.History[0].End = &end, &end
	}
	data := encoded(t, sess)
	sess, per := decodePerTask(t, data, n)
	for _, i := range []int{0, 1, n - 1} {
		r := &sess.Team.Tasks[i]
		if r.Variables == nil || len(r.Variables) != 0 || len(r.History) != 1 || r.StartedAt != &r.History[0].Start ||
			r.FinishedAt != r.History[0].End || r.FinishedAt == nil || r.FinishedAt.Equal(*r.StartedAt) {
			t.Fatalf("task %d decoded as %+v", i, r)
		}
		if end := unsafe.Pointer(r.History[0].End); uintptr(end) != uintptr(unsafe.Pointer(&r.History[0]))+unsafe.Sizeof(Attempt{}) {
			t.Errorf("task %d: its attempt's end is not kept with the attempt", i)
		}
		if i > 0 && (len(r.Context) != 1 || unsafe.StringData(r.Context[0]) != unsafe.StringData(sess.Team.Tasks[i-1].Name)) {
			t.Errorf("task %d: its context %v is not the name of the task before it, shared", i, r.Context)
		}
	}
	allocatedAtMost(t, "decoding completed tasks", per, 560)
}

// A session's results mostly differ, and so do their digests: the decoder
// keeps no map of them (at 10,000 tasks the interner's map allocated 1.3
// MB beyond the digests' own 0.8), and shares only the empty result's and
// one the same as the digest before it. Seen failing with the interner
// (5 of 8 results differ here): 621 bytes a task (553 now), and the empty
// result's digest a string of its own.
func TestDecodeKeepsNoMapOfDigests(t *testing.T) {
	const n = 2000
	sess, _, _ := completedSession(t, n, false)
	for i := range sess.Team.Tasks {
		r := &sess.Team.Tasks[i]
		switch i % 8 {
		case 1:
			r.Result = ""
		case 2, 3:
			r.Result = "again"
		}
		r.History[0].Digest = Digest(r.Result)
	}
	data := encoded(t, sess)
	sess, per := decodePerTask(t, data, n)
	digest := func(i int) *byte { return unsafe.StringData(sess.Team.Tasks[i].History[0].Digest) }
	if digest(1) != unsafe.StringData(emptyDigest) || digest(9) != digest(1) || digest(3) != digest(2) || digest(0) == digest(4) {
		t.Errorf("digests shared as %p %p, %p %p, %p %p; want the empty result's one string, a repeat's the one before it, the others their own",
			digest(1), digest(9), digest(3), digest(2), digest(0), digest(4))
	}
	allocatedAtMost(t, "decoding completed tasks", per, 580)
}

// The room made for a session's records is guessed from the size of the
// tasks read so far, again (with a quarter more) whenever it is full:
// guessed from the first task alone, a first task some 17 times the size
// of the others left room for a seventeenth of them, and the list then
// grew by a quarter at a time, each copy kept where a fully restored rerun
// collects nothing. Seen failing with the first task's guess alone: 1,393
// bytes a task (616 now).
func TestDecodeGuessesRoomFromTheTasksRead(t *testing.T) {
	const n = 2000
	sess, _, _ := completedSession(t, n, false)
	first := &sess.Team.Tasks[0]
	first.Result = strings.Repeat("a long first result. ", 400)
	first.History[0].Digest = Digest(first.Result)
	data := encoded(t, sess)
	sess, per := decodePerTask(t, data, n)
	if len(sess.Team.Tasks) != n || cap(sess.Team.Tasks) > n*11/10 {
		t.Errorf("%d records in room for %d, want %d in about as many", len(sess.Team.Tasks), cap(sess.Team.Tasks), n)
	}
	allocatedAtMost(t, "decoding completed tasks", per, 800)
}

// A record keeps its previous result (few have one) behind one pointer:
// 312 bytes a record, not 328, in every session's list of records (a
// cold 10,000-task run keeps it to the end; a restore decodes it). Seen
// failing with a record 16 bytes larger, as it was: 323 bytes a task
// (307 now).
func TestRecordsKeepTheRarePreviousResultAside(t *testing.T) {
	const n = 2000
	defs := make([]spec.TaskDef, n)
	for i := range defs {
		defs[i] = spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "w"}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sess := NewSession("s", "team.yaml", "t", spec.Sequential, defs, "fp", time.Unix(0, 0))
	runtime.ReadMemStats(&after)
	if len(sess.Team.Tasks) != n || sess.Team.Tasks[n-1].Name != defs[n-1].Name {
		t.Fatalf("%d records, the last %q", len(sess.Team.Tasks), sess.Team.Tasks[len(sess.Team.Tasks)-1].Name)
	}
	allocatedAtMost(t, "a new session", (after.TotalAlloc-before.TotalAlloc)/n, 315)
}

// decodePerTask decodes data, a session of n tasks, checks that what it
// decoded encodes back byte for byte, and says how many bytes a task the
// decoding allocated.
func decodePerTask(t *testing.T, data []byte, n int) (*Session, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sess := decoded(t, data)
	runtime.ReadMemStats(&after)
	if got := encoded(t, sess); !bytes.Equal(got, data) {
		t.Errorf("the decoded session encodes differently:\n%.300s\nwant\n%.300s", got, data)
	}
	return sess, (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// allocatedAtMost fails t when what allocated more than most bytes a task
// (per). Under the race detector, whose own allocations are counted too,
// it checks nothing.
func allocatedAtMost(t *testing.T, what string, per, most uint64) {
	t.Helper()
	if testenv.Race {
		return
	}
	if per > most {
		t.Errorf("%s allocated %d bytes a task; want at most %d", what, per, most)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// DecodeSessionDropping tells its caller, a huge page at a time, what of
// the file it will not read again, so that a snapshot read outside the
// heap leaves the RSS as it is decoded: the session is the same when all
// of that is gone (zeroed here) as soon as it is told. A file the fast
// decoder gives up on after it told is an error, not read again by the
// other decoders from what is gone.
func TestDecodeDropsWhatItRead(t *testing.T) {
	_, _, data := completedSession(t, 12_000, true)
	if len(data) < 2*dropStep {
		t.Fatalf("the session is %d bytes: too small for the test", len(data))
	}
	want := decoded(t, data)
	var told []int
	work := bytes.Clone(data)
	got, err := DecodeSessionDropping("s", "s.json", work, func(upto int) {
		told = append(told, upto)
		clear(work[:upto])
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(told) < len(data)/dropStep-1 || !slices.IsSorted(told) {
		t.Errorf("told %v for a file of %d bytes; want one a %d bytes", told, len(data), dropStep)
	}
	if !reflect.DeepEqual(got.Clone(), want.Clone()) {
		t.Error("the session decoded while its file was let go of differs")
	}

	bad := bytes.Clone(data)
	// After the tasks, a spelling of "tasks" the fast decoder leaves to
	// encoding/json.
	at := bytes.LastIndex(bad, []byte(`"tasks_fingerprint":"fp"`))
	copy(bad[at:], `"Tasks":[              ]`)
	body := bad[:len(bad)-checksumLength]
	copy(bad[len(body)+len(checksumOpen):], fmt.Sprintf("%08x", Checksum(body)))
	if _, err := DecodeSession("s", "s.json", bytes.Clone(bad)); err != nil {
		t.Fatalf("the other decoders read it whole: %v", err)
	}
	if _, err := DecodeSessionDropping("s", "s.json", bad, func(upto int) { clear(bad[:upto]) }); !errors.Is(err, errDropped) {
		t.Errorf("a file given up on after it was let go of: %v; want errDropped", err)
	}
}
