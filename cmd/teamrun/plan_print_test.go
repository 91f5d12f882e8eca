package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/plan"
)

// writeCounter counts the writes made to it.
type writeCounter struct {
	strings.Builder
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

// The plan of 1,000 tasks is written at once, not a cell or a line at a
// time (thousands of write calls on an unbuffered stdout).
func TestPrintPlanWritesOnce(t *testing.T) {
	p := &plan.Plan{Spec: "agents.yaml", Session: "s", Fingerprint: "fp", Restore: "full"}
	for i := range 1000 {
		p.Steps = append(p.Steps, plan.Step{Task: fmt.Sprintf("t%d", i), Action: plan.Restore, Reason: "completed in the session"})
	}
	var w writeCounter
	printPlan(&w, p)
	if w.writes > 2 {
		t.Errorf("printPlan made %d writes for 1,000 tasks, want 1 or 2", w.writes)
	}
	out := w.String()
	if !strings.Contains(out, "t999  restore") || !strings.HasSuffix(out, "1000 to restore, 0 to run, 0 to skip\n") {
		t.Errorf("plan text:\n%s", out[len(out)-200:])
	}
}
