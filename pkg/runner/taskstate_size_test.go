package runner

import (
	"testing"
	"unsafe"
)

// The engine keeps one taskState a task for the whole run, and a fully
// restored rerun collects nothing: at 10,000 tasks each 16 bytes are 0.16
// MB of its peak. A failed task's error, never read back from here (the
// event and the session record it), is no longer kept: 112 bytes before.
// Nor are its output's agent, format and blob opener, the same for every
// output the engine takes (Engine.out adds them back): 96 bytes before.
func TestTaskStateSize(t *testing.T) {
	if s := unsafe.Sizeof(taskState{}); s > 48 {
		t.Errorf("a taskState is %d bytes; want at most 48", s)
	}
}
