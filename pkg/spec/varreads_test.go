package spec

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Which tasks' output_variable a task reads is only what can have set it
// when the task starts: never a task after it (in a workflow, one that
// waits for it), nor itself; in a sequential team nothing before the
// last one that always runs, which overwrote them.
func TestVariableReads(t *testing.T) {
	const head = "agents:\n  w: {shell: cat}\n"
	tests := []struct {
		name, tasks string
		reader      string
		want        []string
	}{
		{"sequential: before, not after",
			"tasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n  z: {description: z, agent: w, output_variable: v}\n",
			"r", []string{"a"}},
		{"sequential: the last one overwrote the ones before",
			"tasks:\n  a: {description: a, agent: w, output_variable: v}\n  b: {description: b, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n",
			"r", []string{"b"}},
		{"sequential: a route may skip the last one",
			"tasks:\n  a: {description: a, agent: w, output_variable: v, condition: {'yes': [b], 'no': [r]}}\n  b: {description: b, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n",
			"r", []string{"a", "b"}},
		{"sequential: a task that reads and sets it reads the one before",
			"tasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: 'improve {v}', agent: w, output_variable: v}\n",
			"r", []string{"a"}},
		{"sequential: not read, not listed",
			"tasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: r, agent: w}\n",
			"r", nil},
		{"workflow: what it waits for, though later in the file",
			"process: workflow\ntasks:\n  r: {description: '{v}', agent: w, context: [z]}\n  z: {description: z, agent: w, output_variable: v}\n",
			"r", []string{"z"}},
		{"workflow: not what waits for it",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w, context: [a]}\n  z: {description: z, agent: w, context: [r], output_variable: v}\n",
			"r", []string{"a"}},
		{"workflow: an unordered one before it in the file, not after",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n  z: {description: z, agent: w, output_variable: v}\n",
			"r", []string{"a"}},
		{"workflow: the one it waits for overwrote the one before it",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  b: {description: b, agent: w, output_variable: v, context: [a]}\n  r: {description: '{v}', agent: w, context: [b]}\n",
			"r", []string{"b"}},
		{"workflow: unordered producers both count",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  b: {description: b, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w, context: [a, b]}\n",
			"r", []string{"a", "b"}},
		{"workflow: what a route makes it wait for",
			"process: workflow\ntasks:\n  r: {description: '{v}', agent: w}\n  g: {description: g, agent: w, output_variable: v, condition: {'yes': [r]}}\n",
			"r", []string{"g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("a.yaml", []byte(head+tt.tasks))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			team.VariableReads().Each(team.TaskIndex(tt.reader), func(j int) { got = append(got, team.Tasks[j].Name) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s reads v from %q, want %q", tt.reader, got, tt.want)
			}
			// From names the same tasks, by the variable (all set v here).
			if from := team.VariableReads().From(team.TaskIndex(tt.reader)); !slices.Equal(from["v"], tt.want) || len(from) > 1 {
				t.Errorf("%s: From = %q, want v: %q", tt.reader, from, tt.want)
			}
		})
	}
}

// A variable is overwritten before a task starts only when a task that
// always runs sets it and always ends before that task starts: never one
// a route may skip, nor in a workflow one whose every context task a route
// may skip (the schedule skips it too), nor one it does not wait for.
func TestVariableOverwritten(t *testing.T) {
	const head = "agents:\n  w: {shell: cat}\n"
	tests := []struct {
		name, tasks string
		want        bool
	}{
		{"sequential: set before it",
			"tasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n", true},
		{"sequential: set after it",
			"tasks:\n  r: {description: '{v}', agent: w}\n  a: {description: a, agent: w, output_variable: v}\n", false},
		{"sequential: by itself only",
			"tasks:\n  r: {description: '{v}', agent: w, output_variable: v}\n", false},
		{"sequential: a route may skip it",
			"tasks:\n  g: {description: g, agent: w, condition: {'yes': [a], 'no': [n]}}\n  a: {description: a, agent: w, output_variable: v}\n  n: {description: n, agent: w}\n  r: {description: '{v}', agent: w, context: [g]}\n", false},
		{"sequential: one a route may skip, one that always runs",
			"tasks:\n  g: {description: g, agent: w, condition: {'yes': [a], 'no': [n]}}\n  a: {description: a, agent: w, output_variable: v}\n  n: {description: n, agent: w}\n  b: {description: b, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n", true},
		{"workflow: waits for it",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w, context: [a]}\n", true},
		{"workflow: waits for it through a task that always runs",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  m: {description: m, agent: w, context: [a]}\n  r: {description: '{v}', agent: w, context: [m]}\n", true},
		{"workflow: a route makes it wait",
			"process: workflow\ntasks:\n  r: {description: '{v}', agent: w}\n  g: {description: g, agent: w, output_variable: v, condition: {'yes': [r]}}\n", true},
		{"workflow: unordered",
			"process: workflow\ntasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w}\n", false},
		{"workflow: through a task a route may skip",
			"process: workflow\ntasks:\n  g: {description: g, agent: w, condition: {'yes': [m], 'no': [n]}}\n  a: {description: a, agent: w, output_variable: v}\n  m: {description: m, agent: w, context: [a, g]}\n  n: {description: n, agent: w, context: [g]}\n  r: {description: '{v}', agent: w, context: [m, n]}\n", false},
		{"workflow: every task its setter reads a route may skip",
			"process: workflow\ntasks:\n  g: {description: g, agent: w, condition: {'yes': [x], 'no': [y]}}\n  x: {description: x, agent: w, context: [g]}\n  y: {description: y, agent: w, context: [g]}\n  a: {description: a, agent: w, output_variable: v, context: [x]}\n  r: {description: '{v}', agent: w, context: [a, y]}\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("a.yaml", []byte(head+tt.tasks))
			if err != nil {
				t.Fatal(err)
			}
			if got := team.VariableReads().Overwritten("v", team.TaskIndex("r")); got != tt.want {
				t.Errorf("Overwritten(v, r) = %v, want %v", got, tt.want)
			}
			if team.VariableReads().Overwritten("other", team.TaskIndex("r")) {
				t.Error("Overwritten(other, r): no task sets other")
			}
		})
	}
}

// A command names a variable's TEAMRUN_VAR_<NAME> only as a whole word.
func TestMentionsVariable(t *testing.T) {
	tests := []struct {
		shell string
		want  bool
	}{
		{`echo "$TEAMRUN_VAR_REGION"`, true},
		{`echo ${TEAMRUN_VAR_REGION}x`, true},
		{`echo $TEAMRUN_VAR_REGIONS`, false},
		{`echo $TEAMRUN_VAR_REGIONS $TEAMRUN_VAR_REGION`, true},
		{`echo $TEAMRUN_VAR_REGION_2`, false},
		{`jq .region "$TEAMRUN_VARS_FILE"`, true},
	}
	for _, tt := range tests {
		a := &Agent{Kind: CommandAgent, Shell: tt.shell}
		if got := a.MentionsVariable("region"); got != tt.want {
			t.Errorf("%s mentions region: %v, want %v", tt.shell, got, tt.want)
		}
	}
}

// A team's VariableReads is made once with its tasks, by Parse and by
// ExpandWith, and shared by all that ask (the parse's warnings, the
// keys, the schedule); a team without an output_variable keeps none; a
// copy of a team never answers with the original's.
func TestVariableReadsMadeOnce(t *testing.T) {
	const head = "process: workflow\nagents:\n  w: {shell: cat}\n"
	for _, tt := range []struct {
		name, tasks string
		kept        bool
	}{
		{"an output_variable", "tasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{v}', agent: w, context: [a]}\n", true},
		{"none", "tasks:\n  a: {description: a, agent: w}\n  r: {description: r, agent: w, context: [a]}\n", false},
		{"a foreach", "tasks:\n  a: {description: a, agent: w, output_variable: v}\n  r: {description: '{it}', agent: w, context: [a], foreach: {over: xs, as: it}}\nvariables: {xs: [x, y]}\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("agents.yaml", []byte(head+tt.tasks))
			if err != nil {
				t.Fatal(err)
			}
			if got := team.reads != nil; got != tt.kept {
				t.Fatalf("kept reads: %v, want %v", got, tt.kept)
			}
			if tt.kept && team.VariableReads() != team.reads {
				t.Error("VariableReads made another, not the one Parse made")
			}
			x, err := team.Expand(team.InitialState(nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := x.VariableReads(); got.team != x || tt.kept && got != x.VariableReads() {
				t.Error("the expanded team's VariableReads is not its own, made once")
			}
			c := *team
			if c.VariableReads().team != &c {
				t.Error("a copy answered with the original's VariableReads")
			}
		})
	}
}

// BenchmarkFingerprintSetterChain is the fingerprint of a 1,000-task
// workflow chain in which every task sets the variable the next reads:
// each task's sources are every task before it (it took 9 s when each
// candidate was checked against all the others from the first).
func BenchmarkFingerprintSetterChain(b *testing.B) {
	data := setterChain(1000)
	b.ReportAllocs()
	for b.Loop() {
		team, err := Parse("chain.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		_ = team.Fingerprint(team.Variables)
	}
}

// A workflow whose every task sets a variable keeps, for each, which tasks
// wait for it and which it waits for: as bits, 2,000 tasks take 2 × 2,000
// × 2,000 / 8 bytes (1 MB) for them, where bools took 8 MB.
func TestVariableReadsMemory(t *testing.T) {
	const n = 2000
	team, err := Parse("chain.yaml", setterChain(n))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v := team.variableReads()
	_ = v.sure()
	runtime.ReadMemStats(&after)
	const sets = 3 * n * n / 8 // after, before and sure
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*sets {
		t.Errorf("VariableReads of %d setters allocated %d bytes, want at most %d (bits, not bools)", n, got, 2*sets)
	}
}

// setterChain is a workflow of n tasks, each waiting for the one before,
// that all set the variable x and read it.
func setterChain(n int) []byte {
	var sb strings.Builder
	sb.WriteString("process: workflow\nvariables: {x: start}\nagents:\n  w: {shell: 'echo hi'}\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  t%d: {description: 'task %d {x}', agent: w, output_variable: x", i, i)
		if i > 0 {
			fmt.Fprintf(&sb, ", context: [t%d]", i-1)
		}
		sb.WriteString("}\n")
	}
	return []byte(sb.String())
}
