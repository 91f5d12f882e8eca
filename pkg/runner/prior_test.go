package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// A new session's tasks have neither attempts nor usage: priorOf makes no
// list a task for them (16 bytes a task for the whole run), and still
// gives back the ones a session records.
func TestPriorOf(t *testing.T) {
	defs := make([]spec.TaskDef, 1000)
	for i := range defs {
		defs[i] = spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "a"}
	}
	sess := checkpoint.NewSession("s", "team.yaml", "team", spec.Sequential, defs, "fp", time.Now())
	var attempts, from []int
	var usage []*Usage
	if n := testing.AllocsPerRun(5, func() { attempts, usage, from = priorOf(sess, defs) }); n != 0 || attempts != nil || usage != nil || from != nil {
		t.Errorf("a new session: %v allocations, attempts %d long, usage %d long, from %d long; want none", n, len(attempts), len(usage), len(from))
	}

	u := &Usage{PromptTokens: 7}
	sess.Team.Tasks[3].Attempts, sess.Team.Tasks[5].Usage = 2, u
	// Task 3's tool loop began in attempt 1, and its second completed it.
	sess.ToolLogs = map[string]*checkpoint.ToolLog{"t3": {Attempt: 1, Ended: "completed"}, "t5": {Attempt: 1, Ended: "completed"}}
	attempts, usage, from = priorOf(sess, defs)
	if len(from) != len(defs) || from[3] != 1 || from[5] != 0 {
		t.Errorf("from = %v…; want task 3's loop from attempt 1 (task 5 has no later attempt)", from[:min(len(from), 6)])
	}
	if len(attempts) != len(defs) || attempts[3] != 2 || attempts[4] != 0 {
		t.Errorf("attempts = %v…; want task 3's 2", attempts[:min(len(attempts), 6)])
	}
	if len(usage) != len(defs) || usage[5] != u || usage[3] != nil {
		t.Errorf("usage = %v…; want task 5's", usage[:min(len(usage), 6)])
	}
}
