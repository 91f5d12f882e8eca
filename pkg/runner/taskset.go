package runner

import (
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// TaskSet is the task set a run works on, as run and plan both compute it:
// the texts rendered from the state the session started from (State, with
// this invocation's --var over it), foreach expanded, and the fingerprint.
//
// The fingerprint is over the tasks as declared (DESIGN §4), not over the
// instances: a foreach task is one entry, its {as} placeholder unrendered,
// so a list known only later (or another list) leaves it as it is; each
// instance is then restored only if its own rendered definition, item
// included, is the recorded one (checkpoint.Restore).
type TaskSet struct {
	Team        *spec.Team // the team with foreach instances expanded
	State       map[string]any
	Defs        []spec.TaskDef
	Fingerprint string
}

// TaskSetOf computes the task set of team for session old (nil: a new
// session) and --var vars. An error is bad usage (foreach over something
// that is not a list).
func TaskSetOf(team *spec.Team, old *checkpoint.Session, vars map[string]string) (*TaskSet, error) {
	state := checkpoint.StartState(old, team, vars)
	expanded, err := team.Expand(state)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return &TaskSet{Team: expanded, State: state, Defs: expanded.TaskDefs(state), Fingerprint: team.Fingerprint(state)}, nil
}
