package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/runner/schedule"
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
	// FingerprintBefore is what a teamrun that rendered every placeholder
	// from State gave these tasks, when the session's is not Fingerprint
	// and that differs (checkpoint.Choice's); else "".
	FingerprintBefore string
	// Dynamic names the output variables a foreach runs over; Produced
	// holds those whose value the expansion used (Produced).
	Dynamic  map[string]bool
	Produced map[string]any
	// Warnings: what the run does not take from the spec, said by run and
	// plan alike (keptVariables).
	Warnings []string

	// g is the schedule of Team, made by graph once for the restore's
	// refuser and the engine alike (1.5 MB at 10,000 tasks, made twice
	// while a restore loads, when nothing is collected).
	g    *schedule.Graph
	gErr error
}

// graph is the schedule of the set's team with its defs' contexts.
func (s *TaskSet) graph() (*schedule.Graph, error) {
	if s.g == nil && s.gErr == nil {
		s.g, s.gErr = schedule.NewOf(s.Team, s.Defs)
	}
	return s.g, s.gErr
}

// TaskSetOf computes the task set of team for session old (nil: a new
// session) and --var vars. An error is bad usage (foreach over something
// that is not a list). Of old's results it reads those held in line (plan
// reads the others in line first: ReadBlobs).
func TaskSetOf(team *spec.Team, old *checkpoint.Session, vars map[string]string) (*TaskSet, error) {
	return taskSetOf(team, old, vars, nil)
}

// storedText reads the result rec holds of task tk as the engine reads it
// (readResult); an error is the store's.
type storedText func(tk *spec.Task, rec *checkpoint.TaskRecord) (string, error)

// taskSetOf is TaskSetOf reading old's results with text (nil: those in
// line only).
func taskSetOf(team *spec.Team, old *checkpoint.Session, vars map[string]string, text storedText) (*TaskSet, error) {
	if err := redactedStart(team, old, vars); err != nil {
		return nil, err
	}
	state := checkpoint.StartState(old, team, vars)
	produced, err := Produced(team, old, text)
	if err != nil {
		return nil, err
	}
	expanded, err := team.ExpandWith(state, produced)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	set := &TaskSet{Team: expanded, State: state, Defs: expanded.TaskDefsKnown(state, knownKeys(old)), Produced: produced,
		Warnings: keptVariables(team, old, vars)}
	if expanded == team {
		// Nothing expanded: the declared tasks are the defs just made, and
		// rendering and hashing them a second time would cost as much again.
		set.Fingerprint = spec.FingerprintOf(set.Defs)
	} else {
		set.Fingerprint = team.Fingerprint(state)
	}
	if old != nil && old.Team.TasksFingerprint != set.Fingerprint {
		set.FingerprintBefore = team.FingerprintBefore(state)
	}
	for _, tk := range team.Tasks {
		if tk.Foreach != nil && team.Producer(tk.Foreach) != "" {
			if set.Dynamic == nil {
				set.Dynamic = map[string]bool{}
			}
			set.Dynamic[tk.Foreach.Over] = true
		}
	}
	return set, nil
}

// redactedStart refuses to resume old (nil: none) from a value it started
// from that it stores redacted, because it held a key (Session.Redact),
// unless vars give it again: the tasks would be rendered, and run, with
// the redaction marker in place of the key.
func redactedStart(team *spec.Team, old *checkpoint.Session, vars map[string]string) error {
	if old == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(old.Team.InitialState)) {
		if _, given := vars[k]; given {
			continue
		}
		if b, err := json.Marshal(old.Team.InitialState[k]); err == nil && bytes.Contains(b, []byte(llm.Redacted)) {
			if _, inSpec := team.Variables[k]; inSpec {
				// No --var was given to give "again": the key is written
				// in the spec, where none belongs.
				return usagef("variable %s: session %s stores its value with a key redacted (a key is never written to a session), and that value is the spec's own (variables.%s), which holds a key of the team: a key never goes into the spec; remove it there and pass it on every run of the session, this one included, as --var %s=\"$VARIABLE\" (the environment variable that holds the key)", k, old.ID, k, k)
			}
			return usagef("variable %s: session %s stores its value with a key redacted (a key is never written to a session): pass --var %s=VALUE again, with the value the session started with, to continue it", k, old.ID, k)
		}
	}
	return nil
}

// knownKeys is, for TaskDefsKnown, the keys and context of old's (nil:
// none) record of task i: the i-th, as a session's records are in the
// order of its tasks, else (a task added or moved before it) the one of
// its name, which TaskDefsKnown needs to tell a key an older teamrun
// recorded for it. It reads the records only, from two goroutines.
func knownKeys(old *checkpoint.Session) func(i int, name string) spec.Known {
	if old == nil {
		return nil
	}
	recs := old.Team.Tasks
	byName := sync.OnceValue(func() map[string]int {
		m := make(map[string]int, len(recs))
		for j := range recs {
			if _, dup := m[recs[j].Name]; !dup {
				m[recs[j].Name] = j
			}
		}
		return m
	})
	return func(i int, name string) spec.Known {
		if i >= len(recs) || recs[i].Name != name {
			j, ok := byName()[name]
			if !ok {
				return spec.Known{}
			}
			i = j
		}
		return spec.Known{Key: recs[i].Key, OwnKey: recs[i].OwnKey, AgentKey: recs[i].AgentKey, Context: recs[i].Context}
	}
}

// Produced is what a foreach over a task's output_variable runs over: the
// values old (nil: none) holds of the output variables of its completed
// tasks. A producer that has not completed leaves its foreach deferred.
// One whose record set another variable (its output_variable was renamed
// since) gives what its recorded result sets today (spec.Task.Sets), as
// the restore sets it (checkpoint.Choice.Sets), read with text (nil: only
// a result held in line is read).
func Produced(team *spec.Team, old *checkpoint.Session, text storedText) (map[string]any, error) {
	if old == nil {
		return nil, nil
	}
	var out map[string]any
	for _, tk := range team.Tasks {
		if tk.Foreach == nil {
			continue
		}
		p := team.Producer(tk.Foreach)
		if p == "" {
			continue
		}
		rec, ok := old.Task(p)
		if !ok || rec.Status != checkpoint.StatusCompleted {
			continue
		}
		v, has := rec.Variables[tk.Foreach.Over]
		if i := team.TaskIndex(p); !has && i >= 0 && (rec.Blob == nil || text != nil) {
			result := rec.Result
			if rec.Blob != nil {
				var err error
				if result, err = text(team.Tasks[i], rec); err != nil {
					return nil, err
				}
			}
			var name string
			name, v = team.Tasks[i].Sets(result)
			has = name == tk.Foreach.Over
		}
		if !has {
			if v, has = old.Team.State[tk.Foreach.Over]; !has {
				continue
			}
		}
		if out == nil {
			out = map[string]any{}
		}
		out[tk.Foreach.Over] = v
	}
	return out, nil
}

// keptVariables says of each variable whose value in the spec is not the
// one session old started from that the session's value is kept (DESIGN
// §4: the shared state comes back; StartState): an edit to variables:,
// or a --var of the first run left off, would otherwise change nothing
// without a word.
func keptVariables(team *spec.Team, old *checkpoint.Session, vars map[string]string) []string {
	if old == nil {
		return nil
	}
	var warns []string
	// The spec's values, PraisonAI's {{today}} filled as the session
	// filled it (a --var today=X included): a built-in is no edit.
	now := team.InitialState(team.BuiltinsIn(old.Team.InitialState))
	for _, k := range slices.Sorted(maps.Keys(team.Variables)) {
		was, ok := old.Team.InitialState[k]
		if _, forced := vars[k]; forced || !ok {
			continue
		}
		a, aerr := valueText(was)
		b, berr := valueText(now[k])
		if aerr != nil || berr != nil || a == b {
			continue
		}
		a, b = differing(a, b, 60)
		warns = append(warns, fmt.Sprintf("variable %s: session %s started with %s (the spec says %s), and --continue keeps the session's value (the shared state comes back): pass --var %s=VALUE for another, or start a new session",
			k, old.ID, a, b, k))
	}
	return warns
}

// valueText is a variable's value as JSON, for a message and to compare:
// a text that holds a JSON list or mapping (a --var, which comes as
// text) as that list or mapping, which is what a loop or a field reads
// of it, so that --var xs='["a", "b"]' is the spec's xs: [a, b].
func valueText(v any) (string, error) {
	if s, ok := v.(string); ok {
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
			var parsed any
			if json.Unmarshal([]byte(t), &parsed) == nil {
				v = parsed
			}
		}
	}
	b, err := marshalText(v)
	return string(b), err
}

// differing is a and b cut to about width characters each where they
// differ, with the characters before the first difference that place it,
// so that two long values never look alike for being cut at one place.
func differing(a, b string, width int) (string, string) {
	ra, rb := []rune(a), []rune(b)
	if len(ra) <= width && len(rb) <= width {
		return a, b
	}
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	from := max(0, p-width/3)
	cut := func(r []rune) string {
		out := string(r[from:min(len(r), from+width)])
		if from > 0 {
			out = "…" + out
		}
		if from+width < len(r) {
			out += "…"
		}
		return out
	}
	return cut(ra), cut(rb)
}
