package schedule

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// build parses a team and its graph, as the runner and plan build them.
func build(t *testing.T, yaml string) (*spec.Team, *Graph) {
	t.Helper()
	tm, err := spec.Parse("agents.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(tm, Contexts(tm, tm.TaskDefs(tm.InitialState(nil))))
	if err != nil {
		t.Fatal(err)
	}
	return tm, g
}

func names(tm *spec.Team, is []int) string {
	var out []string
	for _, i := range is {
		out = append(out, tm.Tasks[i].Name)
	}
	return strings.Join(out, ",")
}

func index(tm *spec.Team, name string) int {
	return slices.IndexFunc(tm.Tasks, func(t *spec.Task) bool { return t.Name == name })
}

// step is one move on a state: "complete NAME RESULT", "skip NAME",
// "start NAME", "wait NAME", "fail NAME", "reset NAME", "assume NAME".
func apply(t *testing.T, tm *spec.Team, s *State, steps []string) {
	t.Helper()
	for _, st := range steps {
		f := strings.SplitN(st, " ", 3)
		i := index(tm, f[1])
		if i < 0 {
			t.Fatalf("no task %s", f[1])
		}
		switch f[0] {
		case "complete":
			s.Complete(i, f[2])
		case "skip":
			s.Skip(i)
		case "start":
			s.Start(i)
		case "wait":
			s.Wait(i)
		case "fail":
			s.Fail(i)
		case "reset":
			s.Reset(i)
		case "assume":
			s.Assume(i)
		default:
			t.Fatalf("bad step %q", st)
		}
	}
}

const sequential = `
agents: {sh: {shell: cat}}
tasks:
  a: {description: a, agent: sh, condition: {"x": [b], "y": [c]}}
  b: {description: b, agent: sh}
  c: {description: c, agent: sh}
  d: {description: d, agent: sh}
`

const workflow = `
process: workflow
agents:
  sh: {shell: cat}
  mem: {llm: m, memory: true}
tasks:
  fetch: {description: fetch, agent: sh}
  gate: {description: proceed, agent: sh, context: [fetch], condition: {"yes": [ship], "no": [fix]}}
  ship: {description: ship, agent: sh, context: [gate]}
  fix: {description: fix, agent: sh, context: [gate]}
  after: {description: after, agent: sh, context: [fix]}
  m1: {description: m1, agent: mem}
  m2: {description: m2, agent: mem}
  m3: {description: m3, agent: mem, context: [m4]}
  m4: {description: m4, agent: mem}
  ask: {description: ask, agent: human, options: [ok, no]}
`

func TestReadyAndSkip(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		steps []string
		ready string
		skips map[string]string // task: its skip reason, "" for none
	}{
		{"sequential: only the first task", sequential, nil, "a", nil},
		{"sequential: a running task holds the next", sequential, []string{"start a"}, "", nil},
		{"sequential: routed elsewhere", sequential, []string{"complete a y"}, "b",
			map[string]string{"b": "routed a y", "c": ""}},
		{"sequential: after a skip", sequential, []string{"complete a y", "skip b"}, "c", map[string]string{"c": ""}},
		{"sequential: waiting holds the rest", sequential, []string{"complete a x", "complete b ok", "complete c ok"}, "d", nil},
		{"sequential: a failed task holds the rest", sequential, []string{"fail a"}, "", nil},
		{"sequential: interrupted task is ready again", sequential, []string{"start a", "reset a"}, "a", nil},
		{"workflow: roots, memory in file order", workflow, nil, "fetch,m1,ask", nil},
		{"workflow: gate unknown holds its routes", workflow, []string{"complete fetch f"}, "gate,m1,ask", nil},
		{"workflow: route", workflow, []string{"complete fetch f", "complete gate yes"}, "ship,fix,m1,ask",
			map[string]string{"ship": "", "fix": "routed gate yes"}},
		{"workflow: route with surrounding spaces", workflow, []string{"complete fetch f", "complete gate \n no \n"}, "ship,fix,m1,ask",
			map[string]string{"ship": "routed gate no", "fix": ""}},
		{"workflow: every context task skipped", workflow, []string{"complete fetch f", "complete gate yes", "skip fix"}, "ship,after,m1,ask",
			map[string]string{"after": "context"}},
		{"workflow: gate skipped", workflow, []string{"skip gate"}, "fetch,ship,fix,m1,ask",
			map[string]string{"ship": "skipped gate", "fix": "skipped gate"}},
		{"workflow: assumed gate routes nothing yet", workflow, []string{"complete fetch f", "assume gate"}, "ship,fix,m1,ask",
			map[string]string{"ship": "", "fix": ""}},
		{"workflow: memory tasks one after another", workflow, []string{"start m1"}, "fetch,ask", nil},
		{"workflow: memory next in order", workflow, []string{"complete m1 r"}, "fetch,m2,ask", nil},
		{"workflow: m4 before m3, which reads it", workflow, []string{"complete m1 r", "complete m2 r"}, "fetch,m4,ask", nil},
		{"workflow: m3 after m4", workflow, []string{"complete m1 r", "complete m2 r", "complete m4 r"}, "fetch,m3,ask", nil},
		{"workflow: a waiting human holds nothing else", workflow, []string{"wait ask"}, "fetch,m1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, g := build(t, tt.yaml)
			s := g.NewState()
			apply(t, tm, s, tt.steps)
			if got := names(tm, s.Ready()); got != tt.ready {
				t.Errorf("ready %q, want %q", got, tt.ready)
			}
			for task, want := range tt.skips {
				r := s.SkipReason(index(tm, task))
				got := ""
				if r != nil {
					switch r.Cause {
					case RoutedElsewhere:
						got = fmt.Sprintf("routed %s %s", tm.Tasks[r.Gate].Name, r.Value)
					case GateSkipped:
						got = "skipped " + tm.Tasks[r.Gate].Name
					case ContextSkipped:
						got = "context"
					}
				}
				if got != want {
					t.Errorf("skip reason of %s: %q, want %q", task, got, want)
				}
			}
		})
	}
}

func TestRoute(t *testing.T) {
	tm, g := build(t, `
agents: {sh: {shell: cat}}
tasks:
  a: {description: a, agent: sh, condition: {"x": [b], "stop": []}}
  b: {description: b, agent: sh}
`)
	a := index(tm, "a")
	tests := []struct {
		raw  string
		next []string
		ok   bool
	}{
		{"x", []string{"b"}, true},
		{" x\n", []string{"b"}, true},
		{"stop", []string{}, true},
		{"X", nil, false},
		{"", nil, false},
	}
	for _, tt := range tests {
		next, ok := g.Route(a, tt.raw)
		if ok != tt.ok || !slices.Equal(next, tt.next) || (ok && next == nil) {
			t.Errorf("Route(%q) = %v, %v; want %v, %v", tt.raw, next, ok, tt.next, tt.ok)
		}
	}
	if next, ok := g.Route(index(tm, "b"), "anything"); !ok || next != nil {
		t.Errorf("a task without a condition routes nowhere in particular: %v, %v", next, ok)
	}
	if got := g.RouteValues(a); got != `"x", "stop"` {
		t.Errorf("RouteValues = %s", got)
	}
	if g.RestoreProblem(a, "nope") == "" {
		t.Error("a restored result that routes nowhere must be refused")
	}
	if why := g.RestoreProblem(a, "x"); why != "" {
		t.Errorf("a restored result that routes must be taken over: %s", why)
	}
}

func TestValidDecision(t *testing.T) {
	tm, g := build(t, workflow+`  pick: {description: pick, agent: human, condition: {"a": [ship]}}
`)
	tests := []struct {
		task, value string
		want        string
	}{
		{"ask", "ok", ""},
		{"ask", "maybe", "not one of the options"},
		{"pick", "a", ""},
		{"pick", "b", "matches none of the condition's values"},
	}
	for _, tt := range tests {
		err := g.ValidDecision(index(tm, tt.task), tt.value)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("ValidDecision(%s, %s) = %v, want %q", tt.task, tt.value, err, tt.want)
		}
	}
}

func TestDryRun(t *testing.T) {
	tests := []struct {
		name      string
		restored  map[string]string
		decisions map[string]string
		skipped   string // skipped tasks, in file order
		pending   string // still pending: behind a decision
		known     string // completed with a known result
	}{
		{"nothing known", nil, nil, "", "", ""},
		{"restored gate routes", map[string]string{"fetch": "f", "gate": "no"}, nil, "ship", "", "fetch,gate"},
		{"restored gate routes the other way", map[string]string{"fetch": "f", "gate": "yes"}, nil, "fix,after", "", "fetch,gate"},
		{"a decision completes a human task", nil, map[string]string{"ask": "ok"}, "", "", "ask"},
		{"an invalid decision is not known", nil, map[string]string{"ask": "maybe"}, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, g := build(t, workflow)
			s := g.NewState()
			for name, res := range tt.restored {
				if why := g.RestoreProblem(index(tm, name), res); why != "" {
					t.Fatalf("restore %s: %s", name, why)
				}
				s.Complete(index(tm, name), res)
			}
			skipped := s.DryRun(func(i int) (string, bool) {
				v, ok := tt.decisions[tm.Tasks[i].Name]
				return v, ok
			})
			var sk, known []int
			for i := range tm.Tasks {
				if _, ok := skipped[i]; ok {
					sk = append(sk, i)
					if s.Status(i) != Skipped {
						t.Errorf("%s reported skipped but is %v", tm.Tasks[i].Name, s.Status(i))
					}
				}
				if s.known[i] {
					known = append(known, i)
				}
			}
			if got := names(tm, sk); got != tt.skipped {
				t.Errorf("skipped %q, want %q", got, tt.skipped)
			}
			if got := names(tm, s.Pending()); got != tt.pending {
				t.Errorf("pending %q, want %q", got, tt.pending)
			}
			if got := names(tm, known); got != tt.known {
				t.Errorf("known %q, want %q", got, tt.known)
			}
		})
	}
}

func TestDryRunHaltHoldsDownstream(t *testing.T) {
	tm, g := build(t, `
process: workflow
agents: {sh: {shell: cat}}
tasks:
  a: {description: a, agent: sh}
  ask: {description: ask, agent: human, context: [a], condition: {"go": [b]}}
  b: {description: b, agent: sh}
  c: {description: c, agent: sh, context: [a]}
`)
	s := g.NewState()
	s.DryRun(func(int) (string, bool) { return "", false })
	if got := names(tm, s.Pending()); got != "b" {
		t.Errorf("pending %q, want b (behind the decision)", got)
	}
	if s.Status(index(tm, "ask")) != Waiting || s.Status(index(tm, "c")) != Completed {
		t.Errorf("ask %v, c %v", s.Status(index(tm, "ask")), s.Status(index(tm, "c")))
	}
	if got := names(tm, s.OpenGates(index(tm, "b"))); got != "ask" {
		t.Errorf("open gates of b: %q", got)
	}
}

func TestNewRefusesMismatchedContext(t *testing.T) {
	tm, _ := build(t, sequential)
	if _, err := New(tm, nil); err == nil {
		t.Fatal("want an error for a context list that does not match the tasks")
	}
}

// TestRepeatUntil: an iteration after one whose result contains the until
// text (case-insensitively) is skipped, and so is every one after it; an
// iteration whose predecessor's result is not known yet is open, but not
// for the join, which reads the predecessor itself.
func TestRepeatUntil(t *testing.T) {
	for _, process := range []string{"sequential", "workflow"} {
		t.Run(process, func(t *testing.T) {
			src := "process: " + process + "\nagents: {w: {shell: cat}}\ntasks:\n  d: {description: d, agent: w, repeat: {until: Done, max_iterations: 3}}\n  e: {description: e, agent: w, context: [d]}\n"
			tm, err := spec.Parse("agents.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if tm, err = tm.Expand(nil); err != nil {
				t.Fatal(err)
			}
			g, err := New(tm, Contexts(tm, tm.TaskDefs(nil)))
			if err != nil {
				t.Fatal(err)
			}
			if p, text := g.Until(index(tm, "d#2")); p != index(tm, "d#1") || text != "Done" {
				t.Errorf("Until(d#2) = %d, %q", p, text)
			}
			if p, _ := g.Until(index(tm, "d#1")); p != -1 {
				t.Errorf("d#1 has an until gate %d", p)
			}
			s := g.NewState()
			s.Assume(index(tm, "d#1"))
			if got := names(tm, s.OpenGates(index(tm, "d#2"))); got != "d#1" {
				t.Errorf("open gates of d#2 = %q, want d#1", got)
			}
			s.Assume(index(tm, "d#2"))
			if got := names(tm, s.OpenGates(index(tm, "d"))); got != "" {
				t.Errorf("open gates of the join = %q, want none", got)
			}

			s = g.NewState()
			apply(t, tm, s, []string{"complete d#1 not yet"})
			if r := s.SkipReason(index(tm, "d#2")); r != nil {
				t.Errorf("d#2 skipped after a result without the text: %+v", r)
			}
			apply(t, tm, s, []string{"complete d#2 all DONE."})
			r := s.SkipReason(index(tm, "d#3"))
			if r == nil || r.Cause != RepeatDone || r.Gate != index(tm, "d#2") || r.Value != "Done" {
				t.Fatalf("d#3: %+v, want RepeatDone after d#2", r)
			}
			s.Skip(index(tm, "d#3"))
			if !slices.Contains(s.Ready(), index(tm, "d")) || s.SkipReason(index(tm, "d")) != nil {
				t.Errorf("the join is not ready to run after the repeat ended: ready %q", names(tm, s.Ready()))
			}
		})
	}
	if UntilMet("anything", "") {
		t.Error("an empty until text ends a repeat")
	}
	// The case rule of an if step's contains (spec.ContainsFold), as
	// PraisonAI's str.lower(): Unicode, the same in every locale.
	for _, tt := range []struct {
		raw, until string
		want       bool
	}{
		{"ÄRGER", "ärger", true},
		{"Verdict: APPROVED", "approved", true},
		{"ΟΔΟΣ", "οδος", true}, // a final sigma
		{"İstanbul", "i̇stanbul", true},
		{"approve", "approved", false},
	} {
		if got := UntilMet(tt.raw, tt.until); got != tt.want {
			t.Errorf("UntilMet(%q, %q) = %v, want %v", tt.raw, tt.until, got, tt.want)
		}
	}
}

// A task that reads the branches of one gate waits on it only if some route
// of it runs none of them: a result no route takes fails the gate instead.
func TestOpenGatesOfJoinedBranches(t *testing.T) {
	const branches = `  a: {description: a, agent: sh, context: [g]}
  b: {description: b, agent: sh, context: [g]}
  d: {description: d, agent: sh, context: [g]}
`
	tests := []struct {
		name, condition, reads, want string
	}{
		{"every route runs one it reads", `{"yes": [a], "no": [b]}`, "[a, b]", ""},
		{"a route that runs neither", `{"yes": [a], "no": [b], "maybe": [d]}`, "[a, b]", "g"},
		{"one branch only", `{"yes": [a], "no": [b]}`, "[a]", "g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, g := build(t, "process: workflow\nagents: {sh: {shell: cat}}\ntasks:\n"+
				"  g: {description: g, agent: sh, condition: "+tt.condition+"}\n"+branches+
				"  c: {description: c, agent: sh, context: "+tt.reads+"}\n")
			if got := names(tm, g.NewState().OpenGates(index(tm, "c"))); got != tt.want {
				t.Errorf("open gates of c: %q, want %q", got, tt.want)
			}
		})
	}
	// A PraisonAI route step with a default: the step after it always runs.
	tm, g := build(t, `agents:
  c: {role: C, llm: m}
  x: {role: X, llm: m}
  y: {role: Y, llm: m}
steps:
  - agent: c
    action: classify
  - name: r
    route:
      tech: [x, y]
      default: [y]
  - agent: y
    action: summarize
`)
	s := g.NewState()
	if got := names(tm, s.OpenGates(index(tm, "step_3"))); got != "" {
		t.Errorf("open gates of the step after a route with a default: %q, want none", got)
	}
	if got := names(tm, s.OpenGates(index(tm, "r_tech_2"))); got != "r" {
		t.Errorf("open gates of a branch: %q, want r", got)
	}
	// A repeat after the route: its later iterations read the one before
	// beside the branches, and wait on that alone, not on the route.
	tm, err := spec.Parse("agents.yaml", []byte(`agents:
  c: {role: C, llm: m}
  x: {role: X, llm: m}
  z: {role: Z, llm: m}
steps:
  - {name: classify, agent: c, action: classify}
  - name: r
    route: {technical: [x], default: [z]}
  - {name: refine, agent: c, action: refine, repeat: {until: approved, max_iterations: 3}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if tm, err = tm.Expand(nil); err != nil {
		t.Fatal(err)
	}
	if g, err = New(tm, Contexts(tm, tm.TaskDefs(nil))); err != nil {
		t.Fatal(err)
	}
	s = g.NewState()
	for task, want := range map[string]string{"refine#1": "", "refine#2": "refine#1", "refine#3": "refine#1,refine#2"} {
		if got := names(tm, s.OpenGates(index(tm, task))); got != want {
			t.Errorf("open gates of %s: %q, want %q", task, got, want)
		}
	}
}

// RestoreProblems keeps a restored result only when nothing it reads,
// directly or not, runs this time: a join after a route whose other branch
// stays skipped is kept; a repeat's join whose until now lets more
// iterations run is not, nor what reads it; --keep pins a result anyway.
func TestRestoreProblems(t *testing.T) {
	const routed = `
process: workflow
agents: {sh: {shell: cat}}
tasks:
  gate: {description: g, agent: sh, condition: {"yes": [ship], "no": [fix]}}
  ship: {description: s, agent: sh, context: [gate]}
  fix: {description: f, agent: sh, context: [gate]}
  join: {description: j, agent: sh, context: [ship, fix]}
`
	const repeated = `
agents: {sh: {shell: cat}}
tasks:
  d: {description: d, agent: sh, repeat: {until: Perfect, max_iterations: 3}}
  e: {description: e, agent: sh}
`
	tests := []struct {
		name     string
		yaml     string
		restored map[string]string
		kept     string
		want     map[string]string // task: its problem's start; absent: ""
	}{
		{"a skipped branch stays skipped", routed,
			map[string]string{"gate": "yes", "ship": "s", "join": "j"}, "", nil},
		{"a result no route takes, and what reads it", routed,
			map[string]string{"gate": "maybe", "ship": "s", "join": "j"}, "",
			map[string]string{"gate": `its restored result "maybe" matches none`, "ship": "it reads gate, whose restored result is not taken over", "join": "it reads ship, whose restored"}},
		{"a repeat that goes on now", repeated,
			map[string]string{"d#1": "draft Approved", "d": "draft Approved", "e": "e"}, "",
			map[string]string{"d": "it reads d#2, which runs this time", "e": "it reads d, whose restored result is not taken over"}},
		{"a branch the restored gate no longer takes, and what reads it", routed,
			map[string]string{"gate": "yes", "fix": "f", "join": "j"}, "",
			map[string]string{"fix": "gate's restored result no longer leads to it", "join": "it reads fix, whose restored result is not taken over"}},
		{"an iteration after one that meets the until now", repeated,
			map[string]string{"d#1": "Perfect", "d#2": "more", "d": "more", "e": "e"}, "",
			map[string]string{"d#2": "d#1's restored result no longer leads to it", "d": "it reads d#2, whose restored", "e": "it reads d, whose restored"}},
		{"a repeat still done", repeated,
			map[string]string{"d#1": "Perfect", "d": "Perfect", "e": "e"}, "", nil},
		{"--keep pins the join", repeated,
			map[string]string{"d#1": "draft Approved", "d": "draft Approved", "e": "e"}, "d", nil},
	}
	// Held for the early cut-off: refused only because what it reads runs
	// again from a recorded result (not one skipped or not recorded, one
	// a gate skips now, nor one refused itself, as gate is).
	held := map[string][]string{
		"a repeat that goes on now":                       {"e"},
		"an iteration after one that meets the until now": {"e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, err := spec.Parse("agents.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if tm, err = tm.Expand(nil); err != nil {
				t.Fatal(err)
			}
			g, err := New(tm, Contexts(tm, tm.TaskDefs(nil)))
			if err != nil {
				t.Fatal(err)
			}
			got := g.RestoreProblems(func(i int) (string, bool) {
				raw, ok := tt.restored[tm.Tasks[i].Name]
				return raw, ok
			}, nil, func(int) (string, bool) { return "", false },
				func(i int) bool { return tm.Tasks[i].Name == tt.kept })
			for i, p := range got {
				name := tm.Tasks[i].Name
				if want := tt.want[name]; !strings.HasPrefix(p.Why, want) || (want == "") != (p.Why == "") {
					t.Errorf("%s: %q, want %q…", name, p.Why, want)
				}
				if want := slices.Contains(held[tt.name], name); p.Held != want {
					t.Errorf("%s: held %v, want %v", name, p.Held, want)
				}
			}
		})
	}
}

// RestoreProblems of a result that reads a task not taken over, which
// --keep pinned in a run that stopped: a human task decided since runs
// this time (the decision may not be what the result was made from), and
// the result is held when what it reads runs again, or is held, from a
// result the restore records to compare with; else it runs.
func TestRestoreProblemsReadsWhatRunsAgain(t *testing.T) {
	const team = `
agents: {sh: {shell: cat}}
tasks:
  review: {description: r, agent: human}
  publish: {description: p, agent: sh, context: [review]}
  report: {description: q, agent: sh, context: [publish]}
`
	tm, g := build(t, team)
	tests := []struct {
		name     string
		restored map[string]string
		recorded map[string]string // the restore's result to compare with
		decided  map[string]string
		want     map[string]string // task: its problem's start; absent: ""
		held     []string
	}{
		{"undecided: the run halts before what reads it",
			map[string]string{"publish": "p", "report": "q"}, nil, nil, nil, nil},
		{"decided since, nothing recorded: it runs",
			map[string]string{"publish": "p", "report": "q"}, nil, map[string]string{"review": "no"},
			map[string]string{"publish": "it reads review, which runs this time", "report": "it reads publish, whose restored result is not taken over"},
			[]string{"report"}},
		{"decided since, what it was made from recorded: held",
			map[string]string{"publish": "p", "report": "q"}, map[string]string{"review": "yes"}, map[string]string{"review": "no"},
			map[string]string{"publish": "it reads review, which runs this time", "report": "it reads publish, whose restored result is not taken over"},
			[]string{"publish", "report"}},
		{"it reads a held task: held",
			map[string]string{"review": "yes", "report": "q"}, map[string]string{"publish": "p"}, nil,
			map[string]string{"report": "it reads publish, which runs this time"}, []string{"report"}},
		{"it reads a task not recorded: it runs",
			map[string]string{"review": "yes", "report": "q"}, nil, nil,
			map[string]string{"report": "it reads publish, which runs this time"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := g.RestoreProblems(func(i int) (string, bool) {
				raw, ok := tt.restored[tm.Tasks[i].Name]
				return raw, ok
			}, func(i int) (checkpoint.Outcome, bool) {
				raw, ok := tt.recorded[tm.Tasks[i].Name]
				return checkpoint.Outcome{Text: raw}, ok
			}, func(i int) (string, bool) {
				v, ok := tt.decided[tm.Tasks[i].Name]
				return v, ok
			}, func(int) bool { return false })
			for i := range tm.Tasks {
				name, p := tm.Tasks[i].Name, Problem{}
				if got != nil {
					p = got[i]
				}
				if want := tt.want[name]; !strings.HasPrefix(p.Why, want) || (want == "") != (p.Why == "") {
					t.Errorf("%s: %q, want %q…", name, p.Why, want)
				}
				if want := slices.Contains(tt.held, name); p.Held != want {
					t.Errorf("%s: held %v, want %v", name, p.Held, want)
				}
			}
		})
	}
}

// Refuser says nothing (nil) when every restored result is taken over,
// and why for each one that is not.
func TestRefuserListsOnlyWhatItRefuses(t *testing.T) {
	tm, g := build(t, sequential)
	tests := []struct {
		name     string
		restored map[string]string
		want     map[string]bool // the tasks refused
	}{
		{"none restored", map[string]string{}, nil},
		{"all taken over", map[string]string{"a": "x", "b": "bee"}, nil},
		{"a route no longer there", map[string]string{"a": "zzz", "b": "bee"}, map[string]bool{"a": true, "b": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := restoredOf(tm, tt.restored)
			got := g.Refuser(func(_ int, t checkpoint.TaskRecord) string { return t.Result })(r)
			if tt.want == nil {
				if got != nil {
					t.Errorf("refusals %+v, want none", got)
				}
				return
			}
			for i, f := range got {
				if (f.Why != "") != tt.want[tm.Tasks[i].Name] {
					t.Errorf("%s: refused %q", tm.Tasks[i].Name, f.Why)
				}
			}
		})
	}
}

// restoredOf is the full restore of a session of tm whose tasks named in
// results completed with those results; the others are pending.
func restoredOf(tm *spec.Team, results map[string]string) *checkpoint.Restored {
	defs := tm.TaskDefs(tm.InitialState(nil))
	fp := spec.FingerprintOf(defs)
	sess := checkpoint.NewSession("s", "", tm.Name, tm.Process, defs, fp, time.Now())
	for i := range sess.Team.Tasks {
		if res, ok := results[sess.Team.Tasks[i].Name]; ok {
			sess.Team.Tasks[i].Status, sess.Team.Tasks[i].Result = checkpoint.StatusCompleted, res
		}
	}
	return checkpoint.Restore(sess, defs, fp, checkpoint.ReuseStrict)
}

// TestCutoffReads is what the early cut-off compares for a held task, run
// and plan alike: what its result is made of — its context (in a
// sequential team, the task before it when it has none), what it waits
// for in a workflow, a foreach instance's list producer — and the tasks
// whose output_variable its texts name, but not a variable a foreach
// instance's item shadows, nor a gate it does not read (whose route
// decides whether it runs, not its result), nor in a sequential team the
// task before it that its context leaves out (a changed one ran a
// finished task again whose inputs were all unchanged).
func TestCutoffReads(t *testing.T) {
	for _, c := range []struct{ name, yaml, task, want string }{
		{"sequential: the task before it, with no context", `
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w}
  c: {description: c, agent: w}
`, "c", "b"},
		{"sequential: its context, not the task before it", `
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w}
  c: {description: c, agent: w, context: [a]}
`, "c", "a"},
		{"sequential: context: [] reads none", `
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w}
  c: {description: c, agent: w, context: []}
`, "c", ""},
		{"sequential: an instance reads its list's producer, not the task before it", `
agents: {w: {shell: cat}, l: {shell: 'echo "[1, 2]"'}}
tasks:
  a: {description: a, agent: l, output_variable: xs}
  b: {description: b, agent: w}
  each: {description: "do {it}", agent: w, context: [], foreach: {over: xs, as: it}}
`, "each[0]", "a"},
		{"sequential: nor the instance before it", `
agents: {w: {shell: cat}, l: {shell: 'echo "[1, 2]"'}}
tasks:
  a: {description: a, agent: l, output_variable: xs}
  b: {description: b, agent: w}
  each: {description: "do {it}", agent: w, context: [], foreach: {over: xs, as: it}}
`, "each[1]", "a"},
		{"workflow: an instance reads its list's producer", `
process: workflow
agents: {w: {shell: cat}, l: {shell: 'echo "[1, 2]"'}}
tasks:
  a: {description: a, agent: l, output_variable: xs}
  b: {description: b, agent: w}
  each: {description: "do {it}", agent: w, context: [b], foreach: {over: xs, as: it}}
`, "each[1]", "b,a"},
		{"workflow: a gate routing to it, not read", `
process: workflow
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w}
  g: {description: g, agent: w, condition: {go: [c], no: []}}
  c: {description: c, agent: w, context: [a]}
`, "c", "a"},
		{"workflow: a gate routing to it, read", `
process: workflow
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w}
  g: {description: g, agent: w, condition: {go: [c], no: []}}
  c: {description: c, agent: w, context: [a, g]}
`, "c", "a,g"},
		{"sequential: the gate before it, not read", `
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w}
  g: {description: g, agent: w, condition: {go: [c], no: []}}
  c: {description: c, agent: w, context: [a]}
`, "c", "a"},
		{"an output_variable its texts name", `
process: workflow
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w, output_variable: v}
  b: {description: b, agent: w}
  c: {description: "c {v}", expected_output: "{v}", agent: w, context: [b]}
`, "c", "b,a"},
		{"sequential: the earlier tasks of its agent's memory", `
agents: {m: {llm: x, memory: true}, w: {shell: cat}}
tasks:
  a: {description: a, agent: m}
  b: {description: b, agent: w}
  c: {description: c, agent: m, context: []}
`, "c", "a"},
		{"workflow: the earlier tasks of its agent's memory", `
process: workflow
agents: {m: {llm: x, memory: true}, w: {shell: cat}}
tasks:
  a: {description: a, agent: m}
  b: {description: b, agent: w}
  c: {description: c, agent: m, context: [b]}
`, "c", "b,a"},
		{"an instance's item shadows a variable of its name", `
process: workflow
variables: {xs: [1, 2]}
agents: {w: {shell: cat}}
tasks:
  a: {description: a, agent: w, output_variable: it}
  each: {description: "do {it}", agent: w, foreach: {over: xs, as: it}}
`, "each[0]", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tm, err := spec.Parse("agents.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			// A foreach over xs that a task sets: expanded as when it
			// completed with [1, 2].
			if tm, err = tm.ExpandWith(tm.InitialState(nil), map[string]any{"xs": []any{"1", "2"}}); err != nil {
				t.Fatal(err)
			}
			g, err := New(tm, Contexts(tm, tm.TaskDefs(tm.InitialState(nil))))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(tm, g.CutoffReads(index(tm, c.task))); got != c.want {
				t.Errorf("CutoffReads(%s) = %q, want %q", c.task, got, c.want)
			}
		})
	}
}

// CutoffReads of every task of a 50,000-item foreach, as plan asks it:
// the join reads each instance once, in order, and a task reads the
// output_variable its text names. It looks at the tasks that set an
// output_variable, not at every task for every task: 50,000² map lookups
// and as many scans of the join's list took plan minutes (a test timeout
// here, not a clock).
func TestCutoffReadsOfABigForeach(t *testing.T) {
	const n = 50_000
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	tm, err := spec.Parse("agents.yaml", []byte(`process: workflow
variables: {xs: [`+strings.Join(items, ",")+`]}
agents:
  a: {shell: cat}
tasks:
  each: {description: "{x}", agent: a, foreach: {over: xs, as: x}, output_variable: all}
  after: {description: "{all}", agent: a}
`))
	if err != nil {
		t.Fatal(err)
	}
	if tm, err = tm.Expand(tm.InitialState(nil)); err != nil {
		t.Fatal(err)
	}
	g, err := New(tm, Contexts(tm, tm.TaskDefs(tm.InitialState(nil))))
	if err != nil {
		t.Fatal(err)
	}
	join, after := index(tm, "each"), index(tm, "after")
	for i := range tm.Tasks {
		got := g.CutoffReads(i)
		switch i {
		case join:
			if len(got) != n || got[0] != 0 || got[n-1] != n-1 {
				t.Fatalf("the join reads %d tasks (%v…), want the %d instances in order", len(got), got[:min(3, len(got))], n)
			}
		case after:
			if want := []int{join}; !slices.Equal(got, want) {
				t.Errorf("after reads %v, want %v", got, want)
			}
		default:
			if len(got) != 0 {
				t.Fatalf("instance %s reads %s", tm.Tasks[i].Name, names(tm, got))
			}
		}
	}
}

// An instance of a foreach made from the recorded list of a task that
// does not run this time (its gate's restored result leads elsewhere, or,
// in a workflow, every task it reads is skipped) is refused, as a new run
// has no list: it reads nothing that runs again (context: []), so only
// that rule refuses it. Refusals says it is skipped.
func TestRestoreProblemsForeachOfSkippedProducer(t *testing.T) {
	const seq = `
agents: {sh: {shell: cat}}
tasks:
  g: {description: g, agent: sh, condition: {"yes": [p], "no": []}}
  p: {description: p, agent: sh, output_variable: items}
  loop: {description: "l {item}", agent: sh, foreach: {over: items}, context: []}
`
	const wf = `
process: workflow
agents: {sh: {shell: cat}}
tasks:
  g: {description: g, agent: sh, condition: {"yes": [x], "no": []}}
  x: {description: x, agent: sh, context: [g]}
  p: {description: p, agent: sh, output_variable: items, context: [x]}
  loop: {description: "l {item}", agent: sh, foreach: {over: items}, context: [g]}
`
	const why = "its foreach's list is the output of p, which does not run this time"
	tests := []struct {
		name     string
		yaml     string
		restored map[string]string
		want     map[string]string // task: its problem's start; absent: ""
	}{
		{"the gate still leads to the producer", seq,
			map[string]string{"g": "yes", "p": `["a"]`, "loop[0]": "r", "loop": `["r"]`}, nil},
		{"the gate leads elsewhere now", seq,
			map[string]string{"g": "no", "p": `["a"]`, "loop[0]": "r", "loop": `["r"]`},
			map[string]string{"p": "g's restored result no longer leads to it", "loop[0]": why, "loop": "it reads loop[0], whose restored"}},
		{"the gate runs again", seq,
			map[string]string{"p": `["a"]`, "loop[0]": "r", "loop": `["r"]`},
			map[string]string{"p": "g runs this time"}},
		{"a workflow producer whose reads are all skipped", wf,
			map[string]string{"g": "no", "x": "x", "p": `["a"]`, "loop[0]": "r", "loop": `["r"]`},
			map[string]string{"x": "g's restored result no longer leads to it", "p": "it reads x, whose restored", "loop[0]": why, "loop": "it reads loop[0], whose restored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, err := spec.Parse("agents.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if tm, err = tm.ExpandWith(nil, map[string]any{"items": []any{"a"}}); err != nil {
				t.Fatal(err)
			}
			g, err := New(tm, Contexts(tm, tm.TaskDefs(nil)))
			if err != nil {
				t.Fatal(err)
			}
			result := func(i int) (string, bool) {
				raw, ok := tt.restored[tm.Tasks[i].Name]
				return raw, ok
			}
			got := g.Refusals(result, nil, func(int) (string, bool) { return "", false }, func(int) bool { return false })
			for i := range tm.Tasks {
				name, p := tm.Tasks[i].Name, Problem{}
				if got != nil {
					p = got[i]
				}
				if want := tt.want[name]; !strings.HasPrefix(p.Why, want) || (want == "") != (p.Why == "") {
					t.Errorf("%s: %q, want %q…", name, p.Why, want)
				}
				if name == "loop[0]" && p.Skipped != (tt.want[name] == why) {
					t.Errorf("%s: skipped %v, want %v", name, p.Skipped, !p.Skipped)
				}
			}
		})
	}
}
