package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// groupWriter is a store's write for the tests: it notes each group it is
// given, can hold a write in flight (Mu released, as a store's I/O is)
// and can fail one.
type groupWriter struct {
	v        *FoldedView
	groups   [][]string            // the tasks of each write, in order
	hold     map[int]chan struct{} // write n waits for its channel
	fail     map[int]error         // write n fails so
	returned int                   // writes that returned
	written  int                   // afterWrite calls
}

func (w *groupWriter) writeGroup(records []Record, payloads [][]byte) error {
	if len(payloads) != len(records) {
		return fmt.Errorf("%d payloads for %d records", len(payloads), len(records))
	}
	n := len(w.groups) + 1
	var tasks []string
	for _, r := range records {
		tasks = append(tasks, r.Task)
	}
	w.groups = append(w.groups, tasks)
	if h := w.hold[n]; h != nil {
		w.v.Mu.Unlock()
		<-h
		w.v.Mu.Lock()
	}
	w.returned++
	return w.fail[n]
}

func (w *groupWriter) afterWrite() error {
	w.written++
	return nil
}

// groupFixture is a view of a session of tasks t0..t(n-1), all pending,
// whose writes w does.
func groupFixture(n int) (*FoldedView, *GroupCommit, *groupWriter) {
	var defs []spec.TaskDef
	for i := range n {
		defs = append(defs, spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "sh", Key: fmt.Sprintf("k%d", i)})
	}
	v := &FoldedView{Sess: NewSession("g", "/x/team.yaml", "team", spec.Workflow, defs, "fp", time.Unix(0, 0))}
	w := &groupWriter{v: v, hold: map[int]chan struct{}{}, fail: map[int]error{}}
	g := &GroupCommit{}
	g.Init(v, w.writeGroup, w.afterWrite)
	return v, g, w
}

// acked is what one Commit call returned, and how many writes had
// returned when it did.
type acked struct {
	task     string
	err      error
	returned int
}

// commit starts a Commit of task's start (degraded, with a warning, when
// warn is set) and, when it is to wait behind a write, returns once it
// queued (else once its write began), so that the calls queue in the
// order they are made.
func commit(t *testing.T, v *FoldedView, g *GroupCommit, w *groupWriter, task string, warn bool, out chan<- acked) {
	t.Helper()
	v.Mu.Lock()
	queued, busy, writes := g.Queued(), g.busy, len(w.groups)
	v.Mu.Unlock()
	go func() {
		r := Record{Kind: TaskStarted, Task: task}
		if warn {
			r.State = map[string]any{"inf": math.Inf(1)}
		}
		v.Mu.Lock()
		defer v.Mu.Unlock()
		b, err := v.Prepare([]Record{r})
		if err == nil {
			err = g.Commit(b)
		}
		out <- acked{task: task, err: err, returned: w.returned}
	}()
	if busy {
		waitUntil(t, v, func() bool { return g.Queued() == queued+1 })
	} else {
		waitUntil(t, v, func() bool { return len(w.groups) > writes })
	}
}

// waitUntil polls cond under Mu: the goroutines it waits for block on
// channels, so there is nothing to be told by; it gives up after a minute.
func waitUntil(t *testing.T, v *FoldedView, cond func() bool) {
	t.Helper()
	for range 60000 {
		v.Mu.Lock()
		ok := cond()
		v.Mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never held")
}

func status(v *FoldedView, task string) Status {
	v.Mu.Lock()
	defer v.Mu.Unlock()
	t, _ := v.Sess.Task(task)
	return t.Status
}

// Batches that arrive while a write is in flight share the next one, in
// the order they came; none is acknowledged, applied to the view or has
// its warnings kept before the write holding it returned.
func TestGroupCommitGroups(t *testing.T) {
	const n = 6
	v, g, w := groupFixture(n)
	release := make(chan struct{})
	w.hold[1] = release
	out := make(chan acked, n)
	for i := range n {
		commit(t, v, g, w, fmt.Sprintf("t%d", i), i == 3, out)
	}
	select {
	case a := <-out:
		t.Fatalf("%s was acknowledged (%v) while the first write was in flight", a.task, a.err)
	default:
	}
	for i := range n {
		if s := status(v, fmt.Sprintf("t%d", i)); s != StatusPending {
			t.Errorf("t%d is %s in the view before its write returned", i, s)
		}
	}
	if warnings := v.Warnings(); len(warnings) != 0 {
		t.Errorf("warnings before the write returned: %q", warnings)
	}
	close(release)
	for range n {
		a := <-out
		if a.err != nil {
			t.Errorf("%s: %v", a.task, a.err)
		}
		if want := 1 + min(1, int(a.task[1]-'0')); a.returned < want {
			t.Errorf("%s was acknowledged after %d writes returned, want %d", a.task, a.returned, want)
		}
	}
	want := [][]string{{"t0"}, {"t1", "t2", "t3", "t4", "t5"}}
	if !slices.EqualFunc(w.groups, want, slices.Equal) {
		t.Errorf("writes %q, want %q", w.groups, want)
	}
	if w.written != 2 {
		t.Errorf("written called %d times, want 2", w.written)
	}
	for i := range n {
		if s := status(v, fmt.Sprintf("t%d", i)); s != StatusRunning {
			t.Errorf("t%d is %s after its write", i, s)
		}
	}
	if warnings := v.Warnings(); len(warnings) != 1 {
		t.Errorf("warnings after the write: %q, want t3's one", warnings)
	}
	if g.Busy() {
		t.Error("the slot is still taken")
	}
}

// A write that fails fails every batch it holds: none is applied, none
// keeps its warnings, written does not run; the next write is the
// store's to allow.
func TestGroupCommitFailure(t *testing.T) {
	v, g, w := groupFixture(4)
	release := make(chan struct{})
	w.hold[1] = release
	boom := errors.New("disk on fire")
	w.fail[2] = boom
	out := make(chan acked, 4)
	for i := range 3 {
		commit(t, v, g, w, fmt.Sprintf("t%d", i), i == 2, out)
	}
	close(release)
	got := map[string]error{}
	for range 3 {
		a := <-out
		got[a.task] = a.err
	}
	if got["t0"] != nil || !errors.Is(got["t1"], boom) || !errors.Is(got["t2"], boom) {
		t.Errorf("results %v: want t0 written, t1 and t2 failed", got)
	}
	if s1, s2 := status(v, "t1"), status(v, "t2"); s1 != StatusPending || s2 != StatusPending {
		t.Errorf("failed batches applied: t1 %s, t2 %s", s1, s2)
	}
	if warnings := v.Warnings(); len(warnings) != 0 {
		t.Errorf("a failed batch left warnings: %q", warnings)
	}
	if w.written != 1 {
		t.Errorf("written called %d times, want 1", w.written)
	}
	commit(t, v, g, w, "t3", false, out)
	if a := <-out; a.err != nil || status(v, "t3") != StatusRunning {
		t.Errorf("t3 after a failed write: %v, %s", a.err, status(v, "t3"))
	}
}

// Hold takes the slot after the write in flight and ahead of the batches
// queued behind it, and no write runs until Release.
func TestGroupCommitHold(t *testing.T) {
	v, g, w := groupFixture(2)
	release := make(chan struct{})
	w.hold[1] = release
	out := make(chan acked, 2)
	commit(t, v, g, w, "t0", false, out)
	commit(t, v, g, w, "t1", false, out)
	held := make(chan int)
	unhold := make(chan struct{})
	go func() {
		v.Mu.Lock()
		defer v.Mu.Unlock()
		g.Hold()
		held <- len(w.groups)
		v.Mu.Unlock()
		<-unhold
		v.Mu.Lock()
		g.Release()
	}()
	waitUntil(t, v, func() bool { return g.wanted != nil })
	close(release)
	if writes := <-held; writes != 1 {
		t.Errorf("Hold took the slot after %d writes, want 1 (the one in flight)", writes)
	}
	if a := <-out; a.task != "t0" || a.err != nil {
		t.Fatalf("got %+v, want t0 written", a)
	}
	select {
	case a := <-out:
		t.Fatalf("%s was written while the slot was held (%v)", a.task, a.err)
	default:
	}
	close(unhold)
	if a := <-out; a.task != "t1" || a.err != nil {
		t.Fatalf("got %+v, want t1 written", a)
	}
	if len(w.groups) != 2 || g.Busy() {
		t.Errorf("writes %q, busy %v: want 2 writes and the slot free", w.groups, g.Busy())
	}
}
