package checkpoint_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// TestRestoreSetsToday: a result the restore takes over sets what today's
// task sets with it (DESIGN §4: rebuilt as if just produced), whatever
// output_variable its record set; a variable only an old output_variable
// set leaves the state, one something else set stays.
func TestRestoreSetsToday(t *testing.T) {
	tests := []struct {
		name      string
		was       map[string]string // the variable each record set
		stopped   []string          // records a run set to run again and stopped: their result kept as the previous one
		state     map[string]any    // the session's state, when not what was gives
		now       map[string]string // today's output_variable of each task
		fp        string            // "": the session's own
		ch        checkpoint.Choice
		wantState map[string]any
		wantVars  map[string]string // each completed record's variable after the restore
		resets    []string          // the tasks the restore set anew
		warnings  []string          // each in some warning
		noWarning string            // in none
	}{
		{name: "unchanged", was: map[string]string{"a": "v"}, now: map[string]string{"a": "v"},
			wantState: map[string]any{"v": "a"}, wantVars: map[string]string{"a": "v"}, noWarning: "output_variable"},
		{name: "added", now: map[string]string{"a": "v"},
			wantState: map[string]any{"v": "a"}, wantVars: map[string]string{"a": "v"}, resets: []string{"a"},
			warnings: []string{"task a: output_variable (none) → v since it ran: its restored result sets v, as a run of it would"}},
		{name: "renamed", was: map[string]string{"a": "v"}, now: map[string]string{"a": "w"},
			wantState: map[string]any{"w": "a"}, wantVars: map[string]string{"a": "w"}, resets: []string{"a"},
			warnings: []string{"task a: output_variable v → w since it ran: its restored result sets w, as a run of it would; v, set by nothing else, is dropped from the shared state"}},
		{name: "removed", was: map[string]string{"a": "v"},
			wantState: map[string]any{}, wantVars: map[string]string{}, resets: []string{"a"},
			warnings: []string{"task a: output_variable v → (none) since it ran: v, set by nothing else, is dropped from the shared state"}},
		{name: "another record sets it too", was: map[string]string{"a": "v", "c": "v"}, now: map[string]string{"a": "w", "c": "v"},
			wantState: map[string]any{"v": "c", "w": "a"}, wantVars: map[string]string{"a": "w", "c": "v"}, resets: []string{"a"},
			warnings: []string{"v stays in the shared state: something else set it too"}},
		{name: "an earlier task sets it today", was: map[string]string{"a": "v", "c": "v"}, now: map[string]string{"a": "v", "c": "w"},
			wantState: map[string]any{"v": "a", "w": "c"}, wantVars: map[string]string{"a": "v", "c": "w"}, resets: []string{"c"},
			warnings: []string{"task c: output_variable v → w since it ran: its restored result sets w, as a run of it would; v stays in the shared state: something else set it too"}},
		{name: "something else left another value", was: map[string]string{"a": "v"}, state: map[string]any{"v": "from --var"},
			wantState: map[string]any{"v": "from --var"}, wantVars: map[string]string{}, resets: []string{"a"},
			warnings: []string{"v stays in the shared state"}},
		{name: "the last restored task's value wins", was: map[string]string{"c": "v"}, now: map[string]string{"a": "v", "c": "v"},
			wantState: map[string]any{"v": "c"}, wantVars: map[string]string{"a": "v", "c": "v"}, resets: []string{"a"}},
		// A task that runs again reads what the tasks taken over before it
		// left, as a new run of it would, not what it set last time.
		{name: "a task run again leaves nothing of its last run", was: map[string]string{"a": "v"}, now: map[string]string{"a": "w"},
			ch:        checkpoint.Choice{RerunFrom: []string{"a"}},
			wantState: map[string]any{}, wantVars: map[string]string{}, noWarning: "output_variable"},
		{name: "a task run again reads what the one before it set", was: map[string]string{"a": "v", "b": "v"}, now: map[string]string{"a": "v", "b": "v"},
			ch:        checkpoint.Choice{Rerun: []string{"b"}},
			wantState: map[string]any{"v": "a"}, wantVars: map[string]string{"a": "v"}, noWarning: "output_variable"},
		{name: "of two taken over, the one that runs after the other, wherever the file lists it",
			was: map[string]string{"a": "v", "b": "v", "c": "v"}, now: map[string]string{"a": "v", "b": "v", "c": "v"},
			ch:        checkpoint.Choice{Rerun: []string{"c"}, After: func(j, k int) bool { return j == 1 && k == 0 }}, // a waits for b
			wantState: map[string]any{"v": "a"}, wantVars: map[string]string{"a": "v", "b": "v"}, noWarning: "output_variable"},
		{name: "renamed beside a task that runs again, which set the old name too", was: map[string]string{"a": "v", "b": "v"}, now: map[string]string{"a": "w", "b": "v"},
			ch:        checkpoint.Choice{Rerun: []string{"b"}},
			wantState: map[string]any{"w": "a"}, wantVars: map[string]string{"a": "w"}, resets: []string{"a"},
			warnings: []string{"v, set by nothing else, is dropped from the shared state"}},
		{name: "a held task's old variable goes", was: map[string]string{"b": "u"}, ch: checkpoint.Choice{Rerun: []string{"a"}},
			wantState: map[string]any{}, wantVars: map[string]string{}, resets: []string{"b"},
			warnings: []string{"task b: output_variable u → (none) since it ran: u, set by nothing else, is dropped from the shared state"}},
		{name: "a held task sets today's when it completes", was: map[string]string{"b": "u"}, now: map[string]string{"b": "w"}, ch: checkpoint.Choice{Rerun: []string{"a"}},
			wantState: map[string]any{}, wantVars: map[string]string{}, resets: []string{"b"},
			warnings: []string{"the result it completes with (its recorded one, if the early cut-off reuses it) sets w"}},
		{name: "a mismatch restores the state as it was", was: map[string]string{"a": "v"}, now: map[string]string{"a": "w"}, fp: "other",
			wantState: map[string]any{"v": "a"}, wantVars: map[string]string{}, noWarning: "output_variable"},
		{name: "kept under a mismatch", was: map[string]string{"a": "v"}, now: map[string]string{"a": "w"}, fp: "other",
			ch:        checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged, Keep: []string{"a"}},
			wantState: map[string]any{"w": "a"}, wantVars: map[string]string{"a": "w", "b": "", "c": "", "d": "", "x": ""}, resets: []string{"a"}},
		// The session keeps no variable with a previous result: the kept
		// one sets today's, and nothing is said to have changed.
		{name: "kept from before a stopped run", stopped: []string{"a"}, now: map[string]string{"a": "v"},
			ch:        checkpoint.Choice{Keep: []string{"a"}},
			wantState: map[string]any{"v": "a"}, wantVars: map[string]string{"a": "v"}, resets: []string{"a"}, noWarning: "output_variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := finished()
			for i := range sess.Team.Tasks {
				rec := &sess.Team.Tasks[i]
				if v, ok := tt.was[rec.Name]; ok {
					rec.Variables = map[string]any{v: rec.Name}
					sess.Team.State[v] = rec.Name
				}
			}
			for i := range sess.Team.Tasks {
				if rec := &sess.Team.Tasks[i]; slices.Contains(tt.stopped, rec.Name) {
					rec.Previous = &checkpoint.PreviousResult{Outcome: checkpoint.Outcome{Text: rec.Result}, Key: rec.Key}
					rec.Status, rec.Result = checkpoint.StatusPending, ""
				}
			}
			if tt.state != nil {
				sess.Team.State = maps.Clone(tt.state)
			}
			before := sess.Team.Tasks[0].Variables
			ch := tt.ch
			ch.Sets = func(i int, rec checkpoint.TaskRecord) (string, any) {
				name := tt.now[chain()[i].Name]
				if name == "" {
					return "", nil
				}
				return name, strings.TrimRight(rec.Result, "\n") // as spec.Task.Sets does without a schema
			}
			fp := tt.fp
			if fp == "" {
				fp = "fp"
			}
			r := checkpoint.RestoreChoice(sess, chain(), fp, ch)
			if !reflect.DeepEqual(r.State, tt.wantState) {
				t.Errorf("state = %v, want %v", r.State, tt.wantState)
			}
			var resets []string
			for _, d := range chain() {
				if _, ok := r.Resets[d.Name]; ok {
					resets = append(resets, d.Name)
				}
				rec, ok := r.Task(d.Name)
				if !ok || !r.Done(d.Name) {
					continue
				}
				want, got := tt.wantVars[d.Name], ""
				for k := range rec.Variables {
					got = k
				}
				if got != want || len(rec.Variables) > 1 {
					t.Errorf("task %s sets %v, want %q", d.Name, rec.Variables, want)
				}
			}
			if !reflect.DeepEqual(resets, tt.resets) {
				t.Errorf("resets = %v, want %v", resets, tt.resets)
			}
			all := strings.Join(r.Warnings, "\n")
			for _, w := range tt.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("no warning %q in:\n%s", w, all)
				}
			}
			if tt.noWarning != "" && strings.Contains(all, tt.noWarning) {
				t.Errorf("warning %q in:\n%s", tt.noWarning, all)
			}
			// The session read is as it was recorded; its continuation
			// holds what the restore set.
			if !reflect.DeepEqual(sess.Team.Tasks[0].Variables, before) {
				t.Errorf("the restore changed the session's record: %v", sess.Team.Tasks[0].Variables)
			}
			next := checkpoint.Continue(sess, r, spec.Sequential, chain(), fp, time.Unix(1, 0))
			if !reflect.DeepEqual(next.Team.State, tt.wantState) {
				t.Errorf("continued state = %v, want %v", next.Team.State, tt.wantState)
			}
		})
	}
}
