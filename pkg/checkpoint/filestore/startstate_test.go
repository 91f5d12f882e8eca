package filestore

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// TestStartState: a resumed run renders its tasks from the state the
// session started from, the spec's variables it lacks, and this run's
// --var over all (F20: a run with --var resumed without it re-ran
// everything).
func TestStartState(t *testing.T) {
	team, err := spec.Parse("agents.yaml", []byte("variables: {day: unset, topic: Go, added: new}\nagents: {w: {shell: cat}}\ntasks:\n  a: {description: 'report for {day}', agent: w}\n"))
	if err != nil {
		t.Fatal(err)
	}
	withInitial := func(m map[string]any) *checkpoint.Session {
		return &checkpoint.Session{Team: checkpoint.TeamState{InitialState: m, State: map[string]any{"day": "ignored: output_variable state is not the start"}}}
	}
	tests := []struct {
		name string
		sess *checkpoint.Session
		vars map[string]string
		want map[string]any
	}{
		{"new session", nil, map[string]string{"day": "x"}, map[string]any{"day": "x", "topic": "Go", "added": "new"}},
		{"file without initial_state", withInitial(nil), nil, map[string]any{"day": "unset", "topic": "Go", "added": "new"}},
		{"resumed without --var", withInitial(map[string]any{"day": "2026-11-30", "topic": "Go"}), nil,
			map[string]any{"day": "2026-11-30", "topic": "Go", "added": "new"}},
		{"--var wins", withInitial(map[string]any{"day": "2026-11-30"}), map[string]string{"day": "2026-12-01"},
			map[string]any{"day": "2026-12-01", "topic": "Go", "added": "new"}},
		{"a variable removed from the file stays", withInitial(map[string]any{"gone": int64(1)}), nil,
			map[string]any{"day": "unset", "topic": "Go", "added": "new", "gone": int64(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkpoint.StartState(tt.sess, team, tt.vars); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("StartState = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestInitialStateRoundTrip: initial_state survives a snapshot, is left
// out when empty, and a value JSON cannot hold is dropped from it (the
// spec's value then applies again) rather than stored as {}.
func TestInitialStateRoundTrip(t *testing.T) {
	s := newStore(t)
	tests := []struct {
		name    string
		initial map[string]any
		want    map[string]any // nil: no initial_state key in the file
	}{
		{"none", nil, nil},
		{"empty", map[string]any{}, nil},
		{"values", map[string]any{"day": "2026-11-30", "n": 3, "l": []any{"a", 1.5}, "bin": "\xff\xfe"},
			map[string]any{"day": "2026-11-30", "n": int64(3), "l": []any{"a", 1.5}, "bin": "\xff\xfe"}},
		{"NaN left out", map[string]any{"x": math.NaN(), "day": "d"}, map[string]any{"day": "d"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "init-" + string(rune('a'+i))
			l := mustLock(t, s, id)
			sess := checkpoint.NewSession(id, "/p/agents.yaml", "team", spec.Sequential, seed(), fp(seed()), t0)
			sess.Team.InitialState = tt.initial
			j := mustBegin(t, s, l, sess)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			l.Release()
			data, err := os.ReadFile(s.Path(id))
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(data), `"initial_state"`); has != (tt.want != nil) {
				t.Fatalf("initial_state in the file: %v, want %v", has, tt.want != nil)
			}
			back, err := s.Load(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.Team.InitialState; !(len(got) == 0 && tt.want == nil) && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("loaded %#v, want %#v", got, tt.want)
			}
		})
	}
}
