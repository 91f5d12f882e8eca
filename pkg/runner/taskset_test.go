package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

const foreachTeam = `variables:
  topics: [alpha, beta, gamma]
agents:
  sh:
    shell: cat
tasks:
  research:
    description: '{topic}'
    agent: sh
    foreach: {over: topics, as: topic}
  summary:
    description: summary
    agent: sh
`

// completedSession is a session whose every task of set completed, saved
// with fingerprint fp.
func completedSession(set *TaskSet, fp string) *checkpoint.Session {
	sess := checkpoint.NewSession("s", "team.yaml", "team", set.Team.Process, set.Defs, fp, time.Now())
	for i := range sess.Team.Tasks {
		sess.Team.Tasks[i].Status, sess.Team.Tasks[i].Result = checkpoint.StatusCompleted, "r"
	}
	return sess
}

// TestTaskSetForeachFingerprint: the fingerprint is over the declared tasks,
// so another list keeps it; a full restore then reuses only the instances
// whose rendered definition is the recorded one. A session saved under the
// earlier rule (fingerprint over the instances) is a mismatch whose
// --reuse unchanged still reuses every task.
func TestTaskSetForeachFingerprint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(path, []byte(foreachTeam), 0o600); err != nil {
		t.Fatal(err)
	}
	team, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := TaskSetOf(team, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if set.Fingerprint != team.Fingerprint(set.State) {
		t.Errorf("fingerprint %s is not the declared tasks' %s", set.Fingerprint, team.Fingerprint(set.State))
	}
	edited, err := TaskSetOf(team, nil, map[string]string{"topics": `["alpha","BETA","gamma","delta"]`})
	if err != nil {
		t.Fatal(err)
	}
	if edited.Fingerprint != set.Fingerprint {
		t.Errorf("another list changed the fingerprint: %s, was %s", edited.Fingerprint, set.Fingerprint)
	}

	tests := []struct {
		name     string
		sessFP   string
		reuse    checkpoint.Reuse
		defs     *TaskSet
		kind     checkpoint.RestoreKind
		reused   []string
		warnings int
	}{
		{"same list", set.Fingerprint, checkpoint.ReuseStrict, set, checkpoint.RestoreFull,
			[]string{"research[0]", "research[1]", "research[2]", "research", "summary"}, 0},
		{"an item edited, one added", set.Fingerprint, checkpoint.ReuseStrict, edited, checkpoint.RestoreFull,
			[]string{"research[0]", "research[2]"}, 1}, // what changed (summary held for the early cut-off is a note)
		{"earlier rule, strict", spec.FingerprintOf(set.Defs), checkpoint.ReuseStrict, set, checkpoint.RestorePartial, nil, 1},
		{"earlier rule, unchanged", spec.FingerprintOf(set.Defs), checkpoint.ReuseUnchanged, set, checkpoint.RestorePerTask,
			[]string{"research[0]", "research[1]", "research[2]", "research", "summary"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checkpoint.RestoreChoice(completedSession(set, tt.sessFP), tt.defs.Defs, tt.defs.Fingerprint, checkpoint.Choice{Reuse: tt.reuse})
			if r.Kind != tt.kind {
				t.Errorf("restore %s, want %s", r.Kind, tt.kind)
			}
			if !slices.Equal(r.Reused, tt.reused) {
				t.Errorf("reused %v, want %v", r.Reused, tt.reused)
			}
			if len(r.Warnings) != tt.warnings {
				t.Errorf("warnings %q, want %d", r.Warnings, tt.warnings)
			}
		})
	}
}

// Without a foreach or repeat the task set's defs are the declared tasks:
// its fingerprint, made from them, is the team's, with and without a
// session and --var.
func TestTaskSetPlainFingerprint(t *testing.T) {
	team, err := spec.Parse("agents.yaml", []byte("variables: {topic: Go}\nagents: {w: {shell: cat}}\ntasks:\n  a: {description: 'on {topic}', agent: w}\n  b: {description: b, agent: w, context: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := TaskSetOf(team, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		old  *checkpoint.Session
		vars map[string]string
	}{"new": {}, "--var": {vars: map[string]string{"topic": "Rust"}}, "session": {old: completedSession(first, first.Fingerprint)}} {
		set, err := TaskSetOf(team, tc.old, tc.vars)
		if err != nil {
			t.Fatal(err)
		}
		if want := team.Fingerprint(set.State); set.Fingerprint != want || want == "" {
			t.Errorf("%s: fingerprint %q, want the team's %q", name, set.Fingerprint, want)
		}
	}
}

// The restore's refuser and the engine take one graph of a task set.
func TestTaskSetGraphIsMadeOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(path, []byte(foreachTeam), 0o600); err != nil {
		t.Fatal(err)
	}
	team, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := TaskSetOf(team, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := set.graph()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := set.graph(); again != g || g.Len() != len(set.Defs) {
		t.Errorf("a second graph (%p, then %p) or one of %d tasks for %d", g, again, g.Len(), len(set.Defs))
	}
}

// TestProducedRenamed: a foreach over a producer's output_variable runs
// over what the producer's recorded result sets today, as the restore sets
// it: its record set another name when the output_variable was renamed
// since. A result stored out of line is read with the run's reader.
func TestProducedRenamed(t *testing.T) {
	team, err := spec.Parse("agents.yaml", []byte(`agents: {w: {shell: cat}}
tasks:
  p: {description: P, agent: w, output_variable: ys}
  l: {description: L, agent: w, foreach: {over: ys, as: it}}
`))
	if err != nil {
		t.Fatal(err)
	}
	blob := &checkpoint.Blob{Digest: "sha256:00", Size: 11}
	read := func(_ *spec.Task, rec *checkpoint.TaskRecord) (string, error) {
		if rec.Blob == nil {
			t.Error("read a result held in line")
		}
		return "[\"b1\",\"b2\"]\n", nil
	}
	tests := []struct {
		name   string
		vars   map[string]any // what p's record set
		result string
		blob   *checkpoint.Blob
		text   storedText
		want   any // nil: not produced
	}{
		{name: "recorded under today's name", vars: map[string]any{"ys": `["r1"]`}, result: "[\"x\"]\n", want: `["r1"]`},
		{name: "renamed since: its result today", vars: map[string]any{"xs": `["x"]`}, result: "[\"x\"]\n", want: `["x"]`},
		{name: "added since", result: "[\"x\"]\n", want: `["x"]`},
		{name: "stored out of line, read", vars: map[string]any{"xs": "old"}, blob: blob, text: read, want: `["b1","b2"]`},
		{name: "stored out of line, no reader", vars: map[string]any{"xs": "old"}, blob: blob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := checkpoint.NewSession("s", "agents.yaml", "team", spec.Sequential, team.TaskDefs(nil), "fp", time.Now())
			rec, _ := sess.Task("p")
			rec.Status, rec.Result, rec.Blob, rec.Variables = checkpoint.StatusCompleted, tt.result, tt.blob, tt.vars
			got, err := Produced(team, sess, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := got["ys"]
			if tt.want == nil && ok || tt.want != nil && v != tt.want {
				t.Errorf("produced %v, want ys = %v", got, tt.want)
			}
		})
	}
}
