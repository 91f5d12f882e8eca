package spec

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/teamrun/teamrun/internal/testenv"
)

// A 10,000-task spec's tree has ~30,000 nodes and its reader ~30,000
// lines while it loads, and a restore collects nothing then: their size
// is the restore's peak. The fast reader makes its nodes in blocks
// (newNode), where a node takes its own size, not the 128 of the size
// class it would have alone.
func TestTreeNodeSizes(t *testing.T) {
	// A scalar, two of a spec's three nodes, has no branch: a node
	// carried a mapping's two lists and an `any` for a number, 120 bytes.
	if s := unsafe.Sizeof(tree{}); s > 72 {
		t.Errorf("a tree node is %d bytes; want at most 72", s)
	}
	if s := unsafe.Sizeof(branch{}); s > 56 {
		t.Errorf("a mapping's or sequence's branch is %d bytes; want at most 56", s)
	}
	if s := unsafe.Sizeof(fastLine{}); s > 12 {
		t.Errorf("a fastLine is %d bytes; want at most 12", s)
	}
	// A spec's tasks live through the run: 192 is a size class (256 a
	// task took until options, condition and output_file moved to
	// taskMore; 288 until route_on and output_schema did; 320, which a
	// task of 304 bytes took).
	if s := unsafe.Sizeof(Task{}); s > 192 {
		t.Errorf("a Task is %d bytes; want at most 192", s)
	}
	// A restore makes a def a task (TaskDefs) while it loads.
	if s := unsafe.Sizeof(TaskDef{}); s > 152 {
		t.Errorf("a TaskDef is %d bytes; want at most 152", s)
	}
}

// What parsing a spec of plain tasks allocates in all, by task: all of it
// is the peak of a restore, which collects nothing while it loads. 1,362
// bytes a task before the tree's nodes, the reader's lines, the key set
// of the tasks and the placeholders' scratch were made smaller, and the
// lists of tasks made at their size; ~1,000 then; ~880 since keys share
// their paths' bytes, string values are not copied into an any, names are
// found without a map, a task is 288 bytes and nodes are made in blocks;
// ~840 since a task is 256 bytes (route_on and output_schema in taskMore);
// ~755 since a scalar node carries no mapping's lists (tree.br) and no
// `any` (tree.num): 72 bytes, not 120; ~737 since a line is 12 bytes;
// ~718 since paths are written in blocks, a mapping's first key's sharing
// its mapping's bytes (fastParser.pathOf); ~657 since a task is 192
// bytes; ~646 since the tasks are made in one list (builder.free); ~651
// since a task's name is its own string, not cut from a block of paths
// that it kept live to the end of a run (0.3 MB at 10,000 tasks).
func TestParseAllocationPerTask(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector's own allocations are counted too")
	}
	const tasks = 2000
	data := benchSpec(tasks)
	if _, err := Parse("bench.yaml", data); err != nil { // the regexps and schema made once
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	team, err := Parse("bench.yaml", data)
	runtime.ReadMemStats(&after)
	if err != nil || len(team.Tasks) != tasks {
		t.Fatalf("%v", err)
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / tasks; per > 656 {
		t.Errorf("parsing %d tasks allocated %d bytes a task; want at most 656", tasks, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// What TaskDefs allocates for a spec of plain tasks, by task: a restore
// makes them while it loads, collecting nothing. Its list is 152 bytes a
// task and their two keys 32; 304 bytes a task while tasks were found
// through a map of their names and marked done in a list of ints, 247
// while a def held its expansion's fields (192 bytes, not 152).
func TestTaskDefsAllocationPerTask(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector's own allocations are counted too")
	}
	const tasks = 2000
	team, err := Parse("bench.yaml", benchSpec(tasks))
	if err != nil {
		t.Fatal(err)
	}
	team.TaskDefs(nil) // the agents' keys' one-time parts
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	defs := team.TaskDefs(nil)
	runtime.ReadMemStats(&after)
	if len(defs) != tasks {
		t.Fatalf("%d defs", len(defs))
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / tasks; per > 225 {
		t.Errorf("TaskDefs of %d tasks allocated %d bytes a task; want at most 225", tasks, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// TaskDefsKnown makes no string for a key, nor list for a context, that
// comes out as the one known (a session's record of the task): a
// restore's defs share them. One known wrong, or of another task, is
// computed as TaskDefs computes it. Seen failing while every key was a
// string of its own (205 bytes a task), then every context a list (174).
func TestTaskDefsKnownShareKeys(t *testing.T) {
	const tasks = 2000
	team, err := Parse("bench.yaml", benchSpec(tasks))
	if err != nil {
		t.Fatal(err)
	}
	want := team.TaskDefs(nil)
	known := func(i int, name string) Known {
		if i == 7 {
			return Known{Key: "0123456789abcdef", OwnKey: want[i].Key, Context: []string{"t0"}} // wrong, and the own key where the key is
		}
		if i == 8 {
			return Known{Key: want[9].Key, OwnKey: want[9].OwnKey, Context: want[9].Context} // another task's
		}
		return Known{Key: want[i].Key, OwnKey: want[i].OwnKey, Context: want[i].Context}
	}
	// The fewest bytes of three calls: TotalAlloc counts what the rest of
	// the process allocates meanwhile too (another test, the runtime),
	// which once made it 161.
	var defs []TaskDef
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		defs = team.TaskDefsKnown(nil, known)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	for i := range defs {
		if defs[i].Key != want[i].Key || defs[i].OwnKey != want[i].OwnKey || !slices.Equal(defs[i].Context, want[i].Context) {
			t.Fatalf("task %d: keys %s %s, context %v; want %s %s, %v", i, defs[i].Key, defs[i].OwnKey, defs[i].Context, want[i].Key, want[i].OwnKey, want[i].Context)
		}
	}
	if unsafe.StringData(defs[3].Key) != unsafe.StringData(want[3].Key) || unsafe.StringData(defs[3].OwnKey) != unsafe.StringData(want[3].OwnKey) {
		t.Errorf("task 3's keys are strings of their own; want the known ones")
	}
	if c := defs[3].Context; len(c) != 1 || &c[0] != &want[3].Context[0] || cap(c) != 1 {
		t.Errorf("task 3's context %v is a list of its own, or has room; want the known one, full", c)
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	// Left: the list (152 bytes a task).
	if per := least / tasks; per > 160 {
		t.Errorf("TaskDefsKnown of %d tasks allocated %d bytes a task; want at most 160", tasks, per)
	} else {
		t.Logf("%d bytes a task", per)
	}
}

// A task's name is a string of its own, not its key, which is cut from
// a block of the parse's paths (fastParser.pathOf): the task keeps its
// name to the end of a run, and with it the whole block (0.39 MB at the
// end of a 10,000-task run, where 10,000 names take ~0.1).
func TestTaskNamesAreNotTheirKeys(t *testing.T) {
	data := benchSpec(40)
	root, ok := fastTree("bench.yaml", data)
	if !ok {
		t.Fatal("fastTree did not take the spec")
	}
	b := &builder{file: "bench.yaml", team: &Team{File: "bench.yaml"}, taskAt: map[string]int{}, agents: map[string]bool{}, agentSrc: map[*Agent]*tree{}}
	b.native(root)
	keys := root.get("tasks").keys()
	if len(b.team.Tasks) != len(keys) || len(keys) != 40 {
		t.Fatalf("%d tasks for %d keys", len(b.team.Tasks), len(keys))
	}
	for i, tk := range b.team.Tasks {
		if tk.Name != keys[i] {
			t.Fatalf("task %d is %q; want %q", i, tk.Name, keys[i])
		}
		if unsafe.StringData(tk.Name) == unsafe.StringData(keys[i]) {
			t.Errorf("task %s's name is its key's string, cut from the parse's paths", tk.Name)
		}
	}
}
