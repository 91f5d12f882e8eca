package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
)

// foreachSpec is a team whose one task runs once per item of a list of n.
func foreachSpec(n int) []byte {
	var b bytes.Buffer
	b.WriteString("agents:\n  w:\n    shell: cat\nvariables:\n  items:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - item%d\n", i)
	}
	b.WriteString("tasks:\n  each:\n    description: do {item}\n    agent: w\n    foreach: {over: items, as: item}\n  sum:\n    description: sum\n    agent: w\n")
	return b.Bytes()
}

// TestPlanForeachAllocation: what `teamrun plan` allocates for a foreach
// of many items, in all and in objects, by instance, is bounded, and the
// same for twice the items (linear). All of it is what the collector has
// to go through, and at GOGC=200 a part of it is the peak RSS. It was
// 3,571 bytes and 28 objects an instance (a 200,000-item foreach: 764 MB
// allocated, 560-650 MB of RSS), and is ~2,090 and 20 since each instance
// has no map of its own for its item, TaskDefs no copy of the state for
// each, and plan's steps, table and the join's key are made at their size.
func TestPlanForeachAllocation(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector's own allocations are counted too")
	}
	// Without the huge pages' one untouched allocation (hugeLoadingHeap),
	// 64 MiB that are not the plan's.
	if !ownProcess(t, 1, "GODEBUG=disablethp=1") {
		return
	}
	dir := t.TempDir()
	t.Setenv("TEAMRUN_HOME", filepath.Join(dir, "home"))
	per := func(n int) (bytesPer, objectsPer uint64) {
		path := filepath.Join(dir, fmt.Sprintf("items%d.yaml", n))
		if err := os.WriteFile(path, foreachSpec(n), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code := run([]string{"teamrun", "plan", path}, nil, io.Discard, &stderr)
		runtime.ReadMemStats(&after)
		if code != 0 {
			t.Fatalf("plan of %d items: exit %d: %s", n, code, stderr.String())
		}
		return (after.TotalAlloc - before.TotalAlloc) / uint64(n), (after.Mallocs - before.Mallocs) / uint64(n)
	}
	per(100) // the schema, the regexps and the like, made once
	b1, o1 := per(20_000)
	b2, o2 := per(40_000)
	t.Logf("by instance: %d bytes and %d objects at 20,000 items, %d and %d at 40,000", b1, o1, b2, o2)
	const maxBytes, maxObjects = 2400, 24
	if b1 > maxBytes || b2 > maxBytes {
		t.Errorf("plan allocated %d and %d bytes an instance; want at most %d", b1, b2, maxBytes)
	}
	if o1 > maxObjects || o2 > maxObjects {
		t.Errorf("plan allocated %d and %d objects an instance; want at most %d", o1, o2, maxObjects)
	}
	if b2 > b1*5/4 || o2 > o1*5/4 {
		t.Errorf("twice the items cost more by instance: %d then %d bytes, %d then %d objects; want it linear", b1, b2, o1, o2)
	}
}
