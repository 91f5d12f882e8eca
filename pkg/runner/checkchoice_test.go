package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// A run that names no task to run again or keep lists no task names to
// check them against (160 KB at 10,000 tasks, where a restore collects
// nothing); one that names a task still has it checked. Seen failing
// while checkChoice listed the names for every run: 16 bytes a task.
func TestCheckChoiceListsNamesOnlyToLookUp(t *testing.T) {
	const n = 2000
	var b strings.Builder
	b.WriteString("name: w\nagents:\n  w:\n    command: [\"true\"]\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  t%d:\n    description: task %d\n    agent: w\n", i, i)
	}
	team, err := spec.Parse("agents.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkChoice(checkpoint.Choice{Rerun: []string{"t7"}}, team, true); err != nil {
		t.Errorf("--rerun t7: %v", err)
	}
	if err := checkChoice(checkpoint.Choice{Rerun: []string{"t77777"}}, team, true); err == nil || !strings.Contains(err.Error(), `unknown task "t77777"`) {
		t.Errorf("--rerun t77777: %v; want an unknown task", err)
	}
	bytes := testenv.Allocated(3, func() { err = checkChoice(checkpoint.Choice{}, team, true) })
	if err != nil {
		t.Fatal(err)
	}
	if testenv.Race {
		return // the race detector's own allocations are counted too
	}
	if per := bytes / n; per > 1 {
		t.Errorf("checking an empty choice on %d tasks allocated %d bytes a task; want none", n, per)
	}
}
