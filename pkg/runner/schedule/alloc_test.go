package schedule

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The graph of a sequential team of plain tasks, and its context lists,
// make no index of the tasks by name: each task reads the one before it,
// found where it is looked for first (two maps, 0.43 MB each at 10,000
// tasks, where a fully restored rerun collects nothing). Seen failing
// before taskNames: 174 bytes a task; before Deps cut a sequential
// team's lists from one list of indices, 65; while the graph was made
// from the defs' Contexts, a list of lists, 44 (NewOf).
func TestGraphOfPlainTasksMakesNoIndex(t *testing.T) {
	const n = 2000
	tm := plainTeam(t, n)
	defs := tm.TaskDefs(tm.InitialState(nil))
	var g *Graph
	var err error
	bytes := testenv.Allocated(3, func() { g, err = NewOf(tm, defs) })
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 7, n - 1} {
		if got := g.Context(i); len(got) != 1 || got[0] != i-1 {
			t.Errorf("task %d reads %v; want [%d]", i, got, i-1)
		}
		if got := g.Deps(i); len(got) != 1 || got[0] != i-1 {
			t.Errorf("task %d waits for %v; want [%d]", i, got, i-1)
		}
	}
	if got := g.Deps(0); len(got) != 0 {
		t.Errorf("the first task waits for %v; want nothing", got)
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	// Left: where each task's reads start (4 bytes a task) and the list
	// of indices what each reads and waits for is cut from (8); the lists
	// of what each reads were 32 more, a list each of what it waits for
	// 32 more again.
	if per := bytes / n; per > 16 {
		t.Errorf("the graph of %d tasks allocated %d bytes a task; want at most 16", n, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// plainTeam is a sequential team of n plain command tasks.
func plainTeam(t *testing.T, n int) *spec.Team {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: bench\nprocess: sequential\nagents:\n  w:\n    command: [\"true\"]\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: t%d\n    agent: w\n    description: task %d\n", i, i)
	}
	tm, err := spec.Parse("agents.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// A restore's check of results that are all taken over keeps no list of
// them beside the refuser's own, and makes no list of n empty problems
// (0.16 and 0.24 MB at 10,000 tasks, where a fully restored rerun
// collects nothing). Seen failing before: 77 bytes a task; 36 while the
// refuser kept a list of the results and the check one of its reasons
// (16 bytes a task each), 3 since.
func TestRefuserOfResultsAllTakenOver(t *testing.T) {
	const n = 2000
	tm := plainTeam(t, n)
	g, err := New(tm, Contexts(tm, tm.TaskDefs(tm.InitialState(nil))))
	if err != nil {
		t.Fatal(err)
	}
	results := make(map[string]string, n)
	for _, tk := range tm.Tasks {
		results[tk.Name] = "ok"
	}
	r := restoredOf(tm, results)
	refuse := g.Refuser(func(_ int, t checkpoint.TaskRecord) string { return t.Result })
	var got []checkpoint.Refusal
	bytes := testenv.Allocated(3, func() { got = refuse(r) })
	if got != nil {
		t.Fatalf("refusals %+v; want none", got[:3])
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	// Left: the check's flags (a byte a task each).
	if per := bytes / n; per > 8 {
		t.Errorf("checking %d restored results allocated %d bytes a task; want at most 8", n, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// A context that names tasks out of order finds them by the map made at
// the first miss.
func TestContextsFindTasksOutOfOrder(t *testing.T) {
	tm, err := spec.Parse("agents.yaml", []byte(`name: w
agents:
  w:
    command: ["true"]
tasks:
  - name: a
    agent: w
    description: a
  - name: b
    agent: w
    description: b
  - name: c
    agent: w
    description: c
    context: [b, a]
  - name: d
    agent: w
    description: d
    context: [a]
`))
	if err != nil {
		t.Fatal(err)
	}
	defs := tm.TaskDefs(tm.InitialState(nil))
	got := Contexts(tm, defs)
	if fmt.Sprint(got) != "[[] [0] [1 0] [0]]" {
		t.Errorf("Contexts = %v; want [[] [0] [1 0] [0]]", got)
	}
	// NewOf reads the same, without the list of lists.
	of, err := NewOf(tm, defs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range got {
		if c := of.Context(i); !slices.Equal(c, want) || len(c) != cap(c) {
			t.Errorf("NewOf: Context(%d) = %v (room for %d); want %v", i, c, cap(c), want)
		}
	}
	// The graph keeps them cut from one list, as they were.
	g, err := New(tm, got)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range got {
		if c := g.Context(i); !slices.Equal(c, want) || (c == nil) != (len(want) == 0) {
			t.Errorf("Context(%d) = %v; want %v", i, c, want)
		}
	}
	if c := g.Context(1); len(c) != cap(c) {
		t.Errorf("Context(1) has room for %d; want none (an append copies)", cap(c))
	}
}

// A run keeps its State to the end: a status is a byte, not 8 (0.07 MB of
// a 10,000-task run's live heap), and a team without conditions or
// repeats keeps no results (0.16 MB). Seen failing with Status an int (25
// bytes a task), then with every result kept (18.4).
func TestNewStateSize(t *testing.T) {
	const n = 2000
	tm := plainTeam(t, n)
	g, err := New(tm, Contexts(tm, tm.TaskDefs(tm.InitialState(nil))))
	if err != nil {
		t.Fatal(err)
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	var s *State
	bytes := testenv.Allocated(3, func() { s = g.NewState() })
	if s.Status(n-1) != Pending {
		t.Fatalf("the last task is %v; want pending", s.Status(n-1))
	}
	// Left: a status and a flag a task.
	if per := float64(bytes) / n; per > 2.5 {
		t.Errorf("the state of %d tasks is %.1f bytes a task; want at most 2.5", n, per)
	} else {
		t.Logf("%.1f bytes a task", per)
	}
}

// The graph lives through the run: what each task reads is kept cut from
// one list, and a sequential team's is the list of indices its waits are
// cut from. Seen failing with a list each: 40 bytes a task kept.
func TestGraphKeepsReadsInOneList(t *testing.T) {
	const n = 2000
	tm := plainTeam(t, n)
	defs := tm.TaskDefs(tm.InitialState(nil))
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g, err := New(tm, Contexts(tm, defs))
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2, n - 1} {
		if got := g.Context(i); len(got) != 1 || got[0] != i-1 {
			t.Errorf("task %d reads %v; want [%d]", i, got, i-1)
		}
	}
	if got := g.Context(0); got != nil {
		t.Errorf("the first task reads %v; want nothing", got)
	}
	runtime.KeepAlive(defs)
	// Left: where each task's reads start (4 bytes) and the list of
	// indices (8).
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 16 {
		t.Errorf("the graph of %d tasks keeps %d bytes a task; want at most 16", n, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// NewOf makes the graph New makes of the defs' Contexts: the same reads
// and waits, whether the reads leave the sequence 0, 1, 2, … late, early
// or never (a workflow's).
func TestNewOfIsNewOfContexts(t *testing.T) {
	for name, src := range map[string]string{
		"late": `name: w
agents:
  w:
    command: ["true"]
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w}
  c: {description: c, agent: w}
  d: {description: d, agent: w, context: [a, c]}
  e: {description: e, agent: w}
`,
		"early": `name: w
agents:
  w:
    command: ["true"]
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w}
  c: {description: c, agent: w, context: [a]}
  d: {description: d, agent: w, context: []}
`,
		"workflow": `name: w
process: workflow
agents:
  w:
    command: ["true"]
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w, context: [a]}
  c: {description: c, agent: w, context: [b, a]}
`,
	} {
		tm, err := spec.Parse("agents.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defs := tm.TaskDefs(tm.InitialState(nil))
		want, err := New(tm, Contexts(tm, defs))
		if err != nil {
			t.Fatalf("%s: New: %v", name, err)
		}
		got, err := NewOf(tm, defs)
		if err != nil {
			t.Fatalf("%s: NewOf: %v", name, err)
		}
		for i := range tm.Tasks {
			if g, w := got.Context(i), want.Context(i); !slices.Equal(g, w) {
				t.Errorf("%s: Context(%d) = %v; want %v", name, i, g, w)
			}
			if g, w := got.Deps(i), want.Deps(i); !slices.Equal(g, w) {
				t.Errorf("%s: Deps(%d) = %v; want %v", name, i, g, w)
			}
		}
	}
}
