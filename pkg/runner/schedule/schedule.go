// Package schedule holds the rules of which task may go next: the task
// graph, dependency gating, condition routing, skip reasons, human tasks
// waiting for a decision, and the order of the tasks that share an agent's
// memory. It is pure data and rules: no I/O, no goroutines. The engine asks
// it what may run next; plan asks it the same questions of a dry run, so
// the two cannot drift apart.
package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Status is where a task stands.
type Status uint8

const (
	Pending   Status = iota // not started (or interrupted): it may become ready
	Running                 // an attempt is under way
	Completed               // done, with a result (known or not: State.known)
	Failed                  // its attempts are spent
	Skipped                 // it does not run: see State.SkipReason
	Waiting                 // a human task without a decision
)

// Graph is a team's tasks and what each waits for.
type Graph struct {
	team *spec.Team
	// at and reads are the tasks each task reads (Context), cut from one
	// list: task i's are reads[at[i]:at[i+1]]. A list a task was 32 bytes
	// live for the run (0.32 MB at 10,000 tasks); this is 4 a task and 8
	// a read, and a sequential team's reads are its seq.
	at    []int32
	reads []int
	// deps is what must be resolved before a task can start (Deps); nil
	// in a sequential team, where each task waits for the one before it,
	// the one-item list seq[i-1:i] (a list each was 32 bytes a task
	// that live through the run, a list of indices is 8).
	deps  [][]int
	seq   []int
	gates [][]int // tasks whose condition routes to this one
	// until is, for a repeat iteration after the first, the iteration
	// before it (-1 otherwise): its result containing the repeat's text
	// (Task.Until) skips this one. Both gates and until are nil in a
	// team without conditions or repeats: most have neither, and each
	// would cost a 10,000-task run a quarter of a megabyte for the run.
	until []int
	// vars says which task's output_variable each task reads, which
	// CutoffReads and Reads follow.
	vars *spec.VariableReads
	// remembers is, for a task of an agent with memory: true, its
	// agent's task whose turns it is sent last (-1: none); nil when no
	// agent has memory.
	remembers []int
}

// Contexts turns each task definition's context names into task indices;
// names that are not tasks of team are left out.
func Contexts(team *spec.Team, defs []spec.TaskDef) [][]int {
	out := make([][]int, len(team.Tasks))
	eachRead(team, defs, func(i, j int) { out[i] = append(out[i], j) })
	return out
}

// eachRead calls read(i, j) for each task j, in order, that task i's
// definition names in its context (Contexts).
func eachRead(team *spec.Team, defs []spec.TaskDef, read func(i, j int)) {
	index := team.Finder()
	for i := range min(len(defs), len(team.Tasks)) {
		guess := i - 1 // a sequential team's task reads the one before it
		for _, name := range defs[i].Context {
			if j, ok := index.Find(name, guess); ok {
				read(i, j)
				guess = j + 1 // a join reads the instances in their order
			}
		}
	}
}

// New builds the graph of team. context holds each task's effective context
// as task indices (Contexts).
//
// A task waits for its context tasks, the tasks whose condition routes to
// it and those it comes After in a workflow, for the task before it in a sequential team. In a
// workflow, the tasks of one agent with memory: true also run one after
// another, each seeing the turns of the ones before: in file order, unless a
// task reads a later one (then in the first order the graph allows).
func New(team *spec.Team, context [][]int) (*Graph, error) {
	if len(context) != len(team.Tasks) {
		return nil, fmt.Errorf("schedule: %d context lists for %d tasks", len(context), len(team.Tasks))
	}
	total := 0
	for _, c := range context {
		total += len(c)
	}
	return newGraph(team, total, func(read func(i, j int)) {
		for i, c := range context {
			for _, j := range c {
				read(i, j)
			}
		}
	})
}

// NewOf is New of the contexts of defs (Contexts), without their list of
// lists: 32 bytes a task (0.32 MB at 10,000 tasks, made while a restore
// loads, collecting nothing) that the graph, keeping its own, dropped.
func NewOf(team *spec.Team, defs []spec.TaskDef) (*Graph, error) {
	total := 0 // at most: names that are not tasks are left out
	for i := range min(len(defs), len(team.Tasks)) {
		total += len(defs[i].Context)
	}
	return newGraph(team, total, func(read func(i, j int)) { eachRead(team, defs, read) })
}

// newGraph builds the graph of team whose reads each calls read(i, j)
// for, at most total of them (setReads).
func newGraph(team *spec.Team, total int, each func(read func(i, j int))) (*Graph, error) {
	n := len(team.Tasks)
	g := &Graph{team: team}
	if team.Process == spec.Workflow {
		g.deps = make([][]int, n)
	} else {
		g.seq = make([]int, n)
		for i := range g.seq {
			g.seq[i] = i
		}
	}
	if err := g.setReads(total, each); err != nil {
		return nil, err
	}
	byName := team.Finder()
	g.vars = team.VariableReads()
	for i, t := range team.Tasks {
		if x := t.Expansion; x != nil && x.Until != "" && x.Iteration > 1 {
			if p, ok := byName.Find(spec.IterationName(x.RepeatOf, x.Iteration-1), i-1); ok {
				if g.until == nil {
					g.until = slices.Repeat([]int{-1}, n)
				}
				g.until[i] = p
			}
		}
	}
	gate := func(i, j int) {
		if !slices.Contains(g.Gates(i), j) {
			if g.gates == nil {
				g.gates = make([][]int, n)
			}
			g.gates[i] = append(g.gates[i], j)
		}
	}
	for j, t := range team.Tasks {
		for _, r := range t.Condition() {
			for _, name := range r.Next {
				if i, ok := byName.Find(name, j+1); ok {
					gate(i, j)
				}
			}
		}
	}
	// A route names the task as declared: its join. The instances of a
	// foreach and the iterations of a repeat (made before the join) are
	// routed with it: a branch not taken runs none of them.
	if g.gates != nil {
		for i, t := range team.Tasks {
			if name := routedAs(t); name != t.Name {
				if join, ok := byName.Find(name, i+1); ok {
					for _, j := range g.gates[join] {
						gate(i, j)
					}
				}
			}
		}
	}
	for i := range g.deps {
		d := slices.Clone(g.Context(i))
		for _, gt := range g.Gates(i) {
			if !slices.Contains(d, gt) {
				d = append(d, gt)
			}
		}
		// A foreach over a task's output waits for that task.
		for _, name := range team.Tasks[i].Expanded().After {
			if a, ok := byName.Find(name, -1); ok && !slices.Contains(d, a) {
				d = append(d, a)
			}
		}
		g.deps[i] = d
	}
	if team.Process == spec.Workflow {
		g.chainMemory()
	} else {
		g.memoryInFileOrder()
	}
	return g, nil
}

// memoryInFileOrder sets remembers for a sequential team: each task of an
// agent with memory is sent the turns of its agent's tasks before it.
func (g *Graph) memoryInFileOrder() {
	if !slices.ContainsFunc(g.team.Agents, func(a *spec.Agent) bool { return a.Memory }) {
		return // most teams: no map, no lookup a task
	}
	last := map[string]int{}
	for i, t := range g.team.Tasks {
		if a := g.team.Agent(t.Agent); a == nil || !a.Memory {
			continue
		}
		if g.remembers == nil {
			g.remembers = slices.Repeat([]int{-1}, len(g.team.Tasks))
		}
		if p, ok := last[t.Agent]; ok {
			g.remembers[i] = p
		}
		last[t.Agent] = i
	}
}

// Memory says whether task i's agent has memory: true.
func (g *Graph) Memory(i int) bool {
	_, ok := g.Remembers(i)
	return ok
}

// Remembers says whether task i's agent has memory: true (its answer is
// made of its agent's earlier turns, so the early cut-off never reuses
// it), and the task whose turns it is sent last (-1: none).
func (g *Graph) Remembers(i int) (int, bool) {
	if g.remembers == nil {
		return -1, false
	}
	a := g.team.Agent(g.team.Tasks[i].Agent)
	return g.remembers[i], a != nil && a.Memory
}

// setReads keeps the reads each calls read(i, j) for, task by task and
// at most total of them, as at and reads. A sequential team whose tasks
// read the one before them (or none) reads 0, 1, 2, …: seq, kept
// already, then stands for reads.
func (g *Graph) setReads(total int, each func(read func(i, j int))) error {
	if total > math.MaxInt32 {
		return fmt.Errorf("schedule: %d context reads; at most %d", total, math.MaxInt32)
	}
	g.at = make([]int32, len(g.team.Tasks)+1)
	inSeq := g.seq != nil && total <= len(g.seq)
	var reads []int
	if !inSeq {
		reads = make([]int, 0, total)
	}
	p := 0 // reads so far
	each(func(i, j int) {
		g.at[i+1]++
		switch {
		case inSeq && j == p:
		case inSeq:
			inSeq = false
			reads = append(make([]int, 0, total), g.seq[:p]...)
			reads = append(reads, j)
		default:
			reads = append(reads, j)
		}
		p++
	})
	for i := range len(g.at) - 1 {
		g.at[i+1] += g.at[i]
	}
	if inSeq {
		g.reads = g.seq[:p:p]
	} else {
		g.reads = reads
	}
	return nil
}

// chainMemory makes each task of a memory agent wait for the one before it
// in the graph's first topological order (file order breaks ties). Chaining
// along a topological order cannot make a cycle.
func (g *Graph) chainMemory() {
	memory := map[string]bool{}
	for _, a := range g.team.Agents {
		if a.Memory {
			memory[a.Name] = true
		}
	}
	if len(memory) == 0 {
		return
	}
	n := len(g.deps)
	indeg := make([]int, n)
	users := make([][]int, n)
	for i, d := range g.deps {
		indeg[i] = len(d)
		for _, j := range d {
			users[j] = append(users[j], i)
		}
	}
	var ready []int // kept sorted: the smallest index goes first
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	last := map[string]int{}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		if a := g.team.Tasks[i].Agent; memory[a] {
			if g.remembers == nil {
				g.remembers = slices.Repeat([]int{-1}, n)
			}
			if p, ok := last[a]; ok {
				g.remembers[i] = p
				if !slices.Contains(g.deps[i], p) {
					g.deps[i] = append(g.deps[i], p)
				}
			}
			last[a] = i
		}
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				k, _ := slices.BinarySearch(ready, u)
				ready = slices.Insert(ready, k, u)
			}
		}
	}
	// Tasks on a cycle were never reached: they can never start anyway,
	// and the engine says so.
}

// Len is the number of tasks.
func (g *Graph) Len() int { return len(g.at) - 1 }

// routedAs is the name a condition's route gives task t by: the task as
// declared, for a foreach's instance or a repeat's iteration (and the
// task counting them).
func routedAs(t *spec.Task) string {
	if x := t.Expansion; x != nil && x.ForeachOf+x.RepeatOf != "" {
		return x.ForeachOf + x.RepeatOf
	}
	return t.Name
}

// Context is the tasks task i reads, as indices (nil: none); full: an
// append copies.
func (g *Graph) Context(i int) []int {
	a, b := g.at[i], g.at[i+1]
	if a == b {
		return nil
	}
	return g.reads[a:b:b]
}

// Deps is what task i waits for: its context, the tasks routing to it,
// the task before it in a sequential team, its memory agent's previous task.
func (g *Graph) Deps(i int) []int {
	switch {
	case g.deps != nil:
		return g.deps[i]
	case i > 0:
		return g.seq[i-1 : i : i] // full: an append copies
	}
	return nil
}

// CutoffReads is what the early cut-off compares for held task i, in
// run and plan alike: what its result is made of (madeOf) and each task
// whose output_variable its texts name; each once.
func (g *Graph) CutoffReads(i int) []int {
	var out []int
	// A join reads every instance: past a few reads a set, not a scan of
	// out per read, keeps a 100,000-item foreach's plan linear; below, no
	// set is made for each of 10,000 plain tasks.
	var seen map[int]bool
	add := func(j int) {
		switch {
		case j == i:
		case seen != nil:
			if !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		case !slices.Contains(out, j):
			out = append(out, j)
			if len(out) == 16 {
				seen = make(map[int]bool, len(g.Deps(i))+len(g.Context(i)))
				for _, k := range out {
					seen[k] = true
				}
			}
		}
	}
	g.madeOf(i, func(j int) bool { add(j); return false })
	g.eachVariableRead(i, add)
	return out
}

// VariableReads says which tasks' output_variable each task reads or
// finds when it starts.
func (g *Graph) VariableReads() *spec.VariableReads { return g.vars }

// eachVariableRead calls read with each task whose output_variable task
// i reads (spec.VariableReads.Each).
func (g *Graph) eachVariableRead(i int, read func(j int)) {
	g.vars.Each(i, read)
}

// Reads is what task i's result is made of: its context, each task whose
// output_variable its texts name, and the tasks whose turns its agent's
// memory sends it (a task may be listed twice).
// What reads a task --rerun names is held for the early cut-off.
func (g *Graph) Reads(i int) []int {
	out := slices.Clone(g.Context(i))
	g.eachVariableRead(i, func(j int) { out = append(out, j) })
	// Every earlier task of its agent's: their turns are in what it is
	// sent, even when one between them is kept (--keep).
	for p, _ := g.Remembers(i); p >= 0; p, _ = g.Remembers(p) {
		out = append(out, p)
	}
	return out
}

// Upstream is what task i's run is made of or decided by (a task may be
// listed twice): what it reads, the gates routing to it and the task
// whose output its foreach is over. --rerun-from runs again every task
// with one it names upstream.
func (g *Graph) Upstream(i int) []int {
	out := append(g.Reads(i), g.Gates(i)...)
	for _, name := range g.team.Tasks[i].Expanded().After {
		if j := g.team.TaskIndex(name); j >= 0 {
			out = append(out, j)
		}
	}
	return out
}

// readsAny reports whether is holds for a task that task i's result is
// made of (madeOf), without making a list of them.
func (g *Graph) readsAny(i int, is func(c int) bool) bool { return g.madeOf(i, is) }

// madeOf calls read with each task whose result task i's is made of, one
// may be twice, until read returns true, and reports whether one did: its
// context; in a workflow what it waits for but a gate that only routes to
// it; the earlier tasks of its agent's memory; a foreach instance's list
// producer (its item). Not, in a sequential
// team, the task before it as such: a task that reads it has it as its
// context, and one with its own context: (or an instance, after the one
// before it) is made without it, whatever it gives.
func (g *Graph) madeOf(i int, read func(j int) bool) bool {
	if g.deps != nil && slices.ContainsFunc(g.deps[i], func(c int) bool { return !g.routesOnly(i, c) && read(c) }) {
		return true
	}
	if slices.ContainsFunc(g.Context(i), read) {
		return true
	}
	// The earlier tasks of its agent's memory: their turns are in what it
	// is sent (in a workflow it waits for them too).
	for p, _ := g.Remembers(i); p >= 0; p, _ = g.Remembers(p) {
		if read(p) {
			return true
		}
	}
	if x := g.team.Tasks[i].Expansion; x != nil && x.ForeachOf != "" && x.ForeachOf != g.team.Tasks[i].Name {
		if p := g.ListFrom(i); p >= 0 {
			return read(p)
		}
	}
	// A join that waits for its producer is made of what that gives: its
	// instances, or none when a route skips it.
	if p := g.WaitsFor(i); p >= 0 {
		return read(p)
	}
	return false
}

// WaitsFor is, for the join of a foreach that waits for its producer
// (ExpandsWhen: its list is not known yet), that producer; -1 for any
// other task.
func (g *Graph) WaitsFor(i int) int {
	p := g.team.Tasks[i].WaitsFor()
	if p == "" {
		return -1
	}
	return g.team.TaskIndex(p)
}

// routesOnly reports whether task i waits for task c only because c's
// condition routes to it (a gate it does not read): that route decides
// whether i runs (SkipReason), never what its result is made of.
func (g *Graph) routesOnly(i, c int) bool {
	return slices.Contains(g.Gates(i), c) && !slices.Contains(g.Context(i), c) &&
		!slices.Contains(g.team.Tasks[i].Expanded().After, g.team.Tasks[c].Name)
}

// ListFrom is, for an instance or the join of a foreach expanded from
// the recorded output of its list's producer, that producer; -1 for any
// other task (a deferred join waits for its producer: ExpandsWhen).
func (g *Graph) ListFrom(i int) int {
	x := g.team.Tasks[i].Expanded()
	if len(x.After) == 0 || x.ExpandsWhen != "" || x.ForeachOf == "" {
		return -1
	}
	return g.team.TaskIndex(x.After[0])
}

// NoInstance reports whether task i is an instance of a foreach expanded
// from the recorded output of a task that skipped says is skipped: a new
// run's foreach has no list then, and the run, which expands again once
// it skips that task, makes no instance of it.
func (g *Graph) NoInstance(i int, skipped func(p int) bool) bool {
	p := g.ListFrom(i)
	return p >= 0 && g.team.Tasks[i].Expanded().ForeachOf != g.team.Tasks[i].Name && skipped(p)
}

// Gates is the tasks whose condition routes to task i.
func (g *Graph) Gates(i int) []int {
	if g.gates == nil {
		return nil
	}
	return g.gates[i]
}

// until is the iteration before repeat iteration i, or -1.
func (g *Graph) untilOf(i int) int {
	if g.until == nil {
		return -1
	}
	return g.until[i]
}

// Until is, for a repeat iteration after the first, the iteration before
// it and the text whose presence in its result ends the repeat; -1 and ""
// for any other task.
func (g *Graph) Until(i int) (int, string) {
	if p := g.untilOf(i); p >= 0 {
		return p, g.team.Tasks[i].Expansion.Until
	}
	return -1, ""
}

// EndsRepeat says whether task i's result may end a repeat: it is an
// iteration another one follows, with an until text, which it returns.
func (g *Graph) EndsRepeat(i int) (string, bool) {
	if k := slices.Index(g.until, i); k >= 0 {
		return g.team.Tasks[k].Expansion.Until, true
	}
	return "", false
}

// UntilMet says whether result raw of an iteration ends a repeat whose
// text is until: it contains it, case-insensitively, by the rule an if
// step's contains follows (spec.ContainsFold). "" (no until) never does.
func UntilMet(raw, until string) bool {
	return until != "" && spec.ContainsFold(raw, until)
}

// Human says whether task i is decided by a person.
func (g *Graph) Human(i int) bool {
	return g.team.Tasks[i].Agent == spec.HumanAgent || g.agentKind(i) == spec.Human
}

func (g *Graph) agentKind(i int) spec.AgentKind {
	name := g.team.Tasks[i].Agent
	for _, a := range g.team.Agents {
		if a.Name == name {
			return a.Kind
		}
	}
	return spec.Human
}

// Route picks the condition route of task i for a result: ok is false when
// the task has a condition and no value matches the trimmed result.
func (g *Graph) Route(i int, raw string) (next []string, ok bool) {
	conds := g.team.Tasks[i].Condition()
	if len(conds) == 0 {
		return nil, true
	}
	v, err := g.team.Tasks[i].RouteKey(raw)
	if err != nil {
		return nil, false
	}
	for _, r := range conds {
		if r.Value == v {
			if r.Next == nil {
				return []string{}, true
			}
			return r.Next, true
		}
	}
	return nil, false
}

// NoRoute says why task i's result raw routes nowhere: "result %q
// matches none of its condition's values (…)", or why route_on finds no
// value in it.
func (g *Graph) NoRoute(i int, raw string) string {
	tk := g.team.Tasks[i]
	key, err := tk.RouteKey(raw)
	switch {
	case err != nil:
		return "result routes nowhere: " + err.Error()
	case tk.RouteOn() != "":
		return fmt.Sprintf("result's %s, %q, matches none of its condition's values (%s)", tk.RouteOn(), truncate(key, 80), g.RouteValues(i))
	}
	return fmt.Sprintf("result %q matches none of its condition's values (%s)", truncate(key, 80), g.RouteValues(i))
}

// RouteValues lists the values of task i's condition, quoted, for messages.
func (g *Graph) RouteValues(i int) string {
	conds := g.team.Tasks[i].Condition()
	vs := make([]string, len(conds))
	for k, r := range conds {
		vs[k] = fmt.Sprintf("%q", r.Value)
	}
	return strings.Join(vs, ", ")
}

// State is every task's status and, once completed, its result.
type State struct {
	g      *Graph
	status []Status
	// result is each completed task's result, kept only where the rules
	// read one (a condition's route, a repeat's until): nil in a team
	// with neither, whose 10,000 results were 0.16 MB for the run.
	result []string
	known  []bool     // completed with a known result (a dry run may assume one)
	chosen [][]string // the route a completed task with a known result took; nil until one has one
	lo     int        // tasks before lo are not pending
}

// NewState is the state where every task is pending.
func (g *Graph) NewState() *State {
	n := g.Len()
	s := &State{g: g, status: make([]Status, n), known: make([]bool, n)}
	if g.gates != nil || g.until != nil {
		s.result = make([]string, n)
	}
	return s
}

// Status is where task i stands.
func (s *State) Status(i int) Status { return s.status[i] }

// Problem is why a checkpointed result is not taken over (Why, "" when it
// is), and whether the run holds the task for the early cut-off instead
// (Held): its result itself still fits, and it is refused only because
// what it reads runs again, each from a recorded result that may come out
// byte-identical; then its recorded result is reused after all.
type Problem struct {
	Why  string
	Held bool
	// Skipped: a dry run from the results taken over skips it this time
	// (Refusals); then it is not held.
	Skipped bool
}

// Refusals is RestoreProblems with, for each task not taken over, whether
// a dry run of the schedule from the results taken over skips it this
// time (Problem.Skipped): the state alone knows only the gates restored,
// not an iteration skipped after one an until narrowed skips. Nil, as
// RestoreProblems, when every result is taken over.
func (g *Graph) Refusals(result func(i int) (raw string, ok bool), recorded func(i int) (checkpoint.Outcome, bool), decide func(i int) (string, bool), kept func(i int) bool) []Problem {
	problems := g.RestoreProblems(result, recorded, decide, kept)
	refused := false
	for i := range problems {
		if _, ok := result(i); ok && problems[i].Why != "" {
			refused = true
			break
		}
	}
	if !refused {
		return problems // no dry run, nor its state (0.25 MB at 10,000 tasks)
	}
	st := g.NewState()
	for i := range problems {
		if raw, ok := result(i); ok && problems[i].Why == "" {
			st.Complete(i, raw)
		}
	}
	skipped := st.DryRun(decide)
	// started: the dry run runs it (a result it cannot know), and for
	// sure: what decides whether it runs (its gates, the iteration before
	// it) has a known result.
	started := func(c int) bool {
		if st.status[c] != Completed || st.known[c] {
			return false
		}
		if p := g.untilOf(c); p >= 0 && !st.known[p] {
			return false
		}
		return !slices.ContainsFunc(g.Gates(c), func(gt int) bool { return !st.known[gt] })
	}
	for i := range problems {
		if problems[i].Why != "" && (skipped[i] != nil || g.NoInstance(i, func(p int) bool { return skipped[p] != nil })) {
			problems[i].Skipped, problems[i].Held = true, false
		}
		// Held behind a task skipped last time that runs now for sure:
		// it cannot come out as recorded (skipped), so nothing is held.
		if problems[i].Held && recorded != nil && g.readsAny(i, func(c int) bool { o, ok := recorded(c); return ok && o.Skipped && started(c) }) {
			problems[i].Held = false
		}
	}
	return problems
}

// Refuser is checkpoint.Choice.Refuse for a run or a plan of the graph's
// team, whose tasks are the restore's defs in the same order: the restore
// asks it, before the session is written, which restored results today's
// team does not take over (Refusals). text is a restored task's result as
// the engine reads it (a result stored out of line: its text, when the
// task reads it). text is asked as Refusals asks for a result, more than
// once for some tasks: a list of the n results was 160 KB at 10,000
// tasks, where a restore collects nothing.
func (g *Graph) Refuser(text func(i int, t checkpoint.TaskRecord) string) func(*checkpoint.Restored) []checkpoint.Refusal {
	return func(r *checkpoint.Restored) []checkpoint.Refusal {
		n := len(g.team.Tasks)
		result := func(i int) (string, bool) {
			name := g.team.Tasks[i].Name
			if !r.Done(name) {
				return "", false
			}
			rec, _ := r.Task(name)
			return text(i, *rec), true
		}
		problems := g.Refusals(result,
			func(i int) (checkpoint.Outcome, bool) { o, ok := r.Recorded[g.team.Tasks[i].Name]; return o, ok },
			func(i int) (string, bool) { v, ok := r.Decisions[g.team.Tasks[i].Name]; return v, ok },
			func(i int) bool { return slices.Contains(r.Keep, g.team.Tasks[i].Name) })
		if !slices.ContainsFunc(problems, func(p Problem) bool { return p.Why != "" }) {
			return nil // nothing refused: no list of n empty refusals
		}
		out := make([]checkpoint.Refusal, n)
		for i, p := range problems {
			out[i] = checkpoint.Refusal{Why: p.Why, Held: p.Held, Skipped: p.Skipped}
		}
		return out
	}
}

// Setter is what a restored result of the graph's team sets in the shared
// state today (checkpoint.Choice.Sets: spec.Task.Sets), text reading it as
// for Refuser; a task without an output_variable has no text read.
func (g *Graph) Setter(text func(i int, t checkpoint.TaskRecord) string) func(i int, t checkpoint.TaskRecord) (string, any) {
	return func(i int, t checkpoint.TaskRecord) (string, any) {
		tk := g.team.Tasks[i]
		if tk.OutputVariable == "" {
			return "", nil
		}
		return tk.Sets(text(i, t))
	}
}

// RestoreProblems says, for each task with a checkpointed result
// (result(i) ok), why it is not taken over ("" when it is): its own
// RestoreProblem, or it reads, directly or not, a task that runs this time
// — one whose result is not taken over, or one the rest of the run starts
// (a dry run with the decisions decide gives): a repeat whose until
// changed runs iterations it had stopped before, and its join read the
// old last one. A result computed from an output the run replaces is not
// reused, unless kept (--keep pins it), but may be held for the early
// cut-off (Problem.Held). recorded is, for a task whose result is not
// taken over, the one the restore compares it with (nil: none): the result
// it had when it runs again or is held, or that it was skipped last time
// (skipped again, it stands as recorded: checkpoint.Stands). The restore asks it, for run and plan
// alike (Refusals, Refuser). It is nil when every result is taken over;
// result may be asked more than once for a task.
func (g *Graph) RestoreProblems(result func(i int) (raw string, ok bool), recorded func(i int) (checkpoint.Outcome, bool), decide func(i int) (string, bool), kept func(i int) bool) []Problem {
	n := g.Len()
	var why reasons
	has := make([]bool, n)
	// own: its result itself is refused (schema, route); gated: a gate
	// restored before it no longer leads to it.
	own, gated := make([]bool, n), make([]bool, n)
	for i := range n {
		raw, ok := result(i)
		if has[i] = ok; ok {
			why.set(i, n, g.RestoreProblem(i, raw))
			own[i] = why.of(i) != ""
		}
	}
	taken := func(i int) bool { return has[i] && why.of(i) == "" }
	problems := func() []Problem {
		if why == nil {
			return nil // every result taken over: no list of n empty problems
		}
		out := make([]Problem, n)
		for i := range n {
			out[i].Why = why.of(i)
			if out[i].Why == "" || own[i] || gated[i] {
				continue
			}
			// Held only if each task it waits for or reads that is not
			// taken over runs again (or is held) from a recorded result
			// that may come out the same, or was skipped last time and
			// may be again: not one recorded otherwise (failed, never
			// run), one a gate skips now, or one whose own result is
			// refused (what replaces it cannot be the same).
			out[i].Held = !g.readsAny(i, func(c int) bool {
				return !taken(c) && (!has[c] && !recordedAt(recorded, c) || own[c] || gated[c])
			})
		}
		return out
	}
	for {
		// A workflow's context may name a later task: to a fixed point.
		for grew := true; grew; {
			grew = false
			for i := range n {
				if !taken(i) || kept(i) {
					continue
				}
				for _, c := range g.Context(i) {
					if has[c] && why.of(c) != "" {
						why.set(i, n, fmt.Sprintf("it reads %s, whose restored result is not taken over", g.team.Tasks[c].Name))
						grew = true
						break
					}
				}
			}
		}
		// Only a task taken over behind a gate (a condition, a repeat's
		// until), or that reads one not taken over (skipped last time),
		// needs a look at the routes: a plain resume has none.
		gatedAny, readsOther := false, false
		for i := range n {
			if taken(i) && !kept(i) {
				gatedAny = gatedAny || len(g.Gates(i)) > 0 || g.untilOf(i) >= 0
				readsOther = readsOther || slices.ContainsFunc(g.Context(i), func(c int) bool { return !taken(c) }) ||
					g.NoInstance(i, func(p int) bool { return !taken(p) }) || g.WaitsFor(i) >= 0 && !taken(g.WaitsFor(i))
			}
		}
		if !gatedAny && !readsOther {
			return problems()
		}
		st := g.NewState()
		for i := range n {
			if taken(i) {
				raw, _ := result(i) // asked again: no list of n results kept for a rare case
				st.Complete(i, raw)
			}
		}
		// A gate's restored result that no longer leads to a task (a
		// changed condition, an until met earlier now) skips it this time:
		// its old result is not taken over, and what reads it runs again.
		// A gate that runs this time decides again whether the task runs:
		// it is held, skipped if the gate routes elsewhere.
		skips := false
		for i := range n {
			if !taken(i) || kept(i) {
				continue
			}
			if r := st.SkipReason(i); r != nil && r.Gate >= 0 {
				why.set(i, n, fmt.Sprintf("%s's restored result no longer leads to it", g.team.Tasks[r.Gate].Name))
				gated[i], skips = true, true
			} else if k := slices.IndexFunc(g.Gates(i), func(gt int) bool { return !taken(gt) }); k >= 0 {
				why.set(i, n, fmt.Sprintf("%s runs this time: whether it routes here is decided again", g.team.Tasks[g.Gates(i)[k]].Name))
				skips = true
			}
		}
		if skips {
			continue // what reads those, then the routes again
		}
		if !readsOther {
			return problems()
		}
		st.DryRun(decide)
		stale := false
		for i := range n {
			if !taken(i) || kept(i) {
				continue
			}
			if g.NoInstance(i, func(p int) bool { return st.status[p] == Skipped }) {
				// As in a new run, its foreach has no list: the run
				// expands again without it, and the join reads none.
				why.set(i, n, fmt.Sprintf("its foreach's list is the output of %s, which does not run this time", g.team.Tasks[g.ListFrom(i)].Name))
				gated[i], stale = true, true
				continue
			}
			if p := g.WaitsFor(i); p >= 0 && !taken(p) && st.status[p] != Skipped {
				// Its list is made this time: the run expands it when p
				// finishes, which a route may skip again (then the
				// early cut-off reuses its no-list result).
				why.set(i, n, fmt.Sprintf("it waits for %s, which runs this time", g.team.Tasks[p].Name))
				stale = true
				continue
			}
			for _, c := range g.Context(i) {
				// Started by the dry run, or a human task it completes
				// with a decision, known but recorded since i's result
				// was made from what c gave before: maybe not that one.
				if !taken(c) && st.status[c] == Completed && (!st.known[c] || g.Human(c)) {
					why.set(i, n, fmt.Sprintf("it reads %s, which runs this time", g.team.Tasks[c].Name))
					stale = true
					break
				}
			}
		}
		if !stale {
			return problems()
		}
	}
}

// recordedAt says whether recorded (RestoreProblems) has a result for
// task c.
func recordedAt(recorded func(i int) (checkpoint.Outcome, bool), c int) bool {
	if recorded == nil {
		return false
	}
	_, ok := recorded(c)
	return ok
}

// reasons are RestoreProblems' why a task's result is not taken over,
// made at the first: a full restore has none, and its list of n empty
// strings was 160 KB at 10,000 tasks.
type reasons []string

// set makes task i's reason why, of n tasks.
func (w *reasons) set(i, n int, why string) {
	if *w == nil {
		if why == "" {
			return
		}
		*w = make([]string, n)
	}
	(*w)[i] = why
}

// of is task i's reason, "" when none.
func (w reasons) of(i int) string {
	if w == nil {
		return ""
	}
	return w[i]
}

// RestoreProblem says why a checkpointed result of task i cannot be
// taken over as it is ("" when it can): it no longer fits the task's
// output_schema, or it matches none of its condition's values. Neither is
// in the fingerprint, so a full restore can meet either.
func (g *Graph) RestoreProblem(i int, raw string) string {
	if _, err := g.team.Tasks[i].CheckOutput(raw); err != nil {
		return "its restored result no longer fits output_schema (" + strings.TrimPrefix(err.Error(), spec.ErrOutputSchema.Error()+": ") + ")"
	}
	if _, ok := g.Route(i, raw); !ok {
		return "its restored " + g.NoRoute(i, raw)
	}
	return ""
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Complete records task i's result; a result that matches no route leaves
// the task without a route (the engine fails such an attempt first).
func (s *State) Complete(i int, raw string) {
	route, _ := s.g.Route(i, raw)
	s.status[i], s.known[i] = Completed, true
	s.keep(i, raw)
	s.choose(i, route)
}

// keep keeps task i's result where the rules read one.
func (s *State) keep(i int, raw string) {
	if s.result != nil {
		s.result[i] = raw
	}
}

// choose records the route task i took (nil: none).
func (s *State) choose(i int, route []string) {
	if s.chosen == nil {
		if route == nil {
			return
		}
		s.chosen = make([][]string, len(s.status))
	}
	s.chosen[i] = route
}

// Assume marks task i as one that runs in a dry run: completed, with a
// result nobody knows yet, so no route is known either.
func (s *State) Assume(i int) {
	s.status[i], s.known[i] = Completed, false
	s.keep(i, "")
	s.choose(i, nil)
}

// Start, Fail, Skip, Wait and Reset move task i to Running, Failed,
// Skipped, Waiting and (interrupted, or not recorded) Pending.
func (s *State) Start(i int) { s.set(i, Running) }
func (s *State) Fail(i int)  { s.set(i, Failed) }
func (s *State) Skip(i int)  { s.set(i, Skipped) }
func (s *State) Wait(i int)  { s.set(i, Waiting) }
func (s *State) Reset(i int) {
	s.set(i, Pending)
	s.lo = min(s.lo, i)
}

func (s *State) set(i int, st Status) {
	s.status[i], s.known[i] = st, false
	s.keep(i, "")
	s.choose(i, nil)
}

func resolved(st Status) bool { return st == Completed || st == Skipped }

// Ready lists, in file order, the pending tasks that may go now: everything
// they wait for is completed or skipped. Each is then either skipped
// (SkipReason), waits for a decision (a human task), or starts. In a
// sequential team only the first pending task can be ready.
func (s *State) Ready() []int {
	for s.lo < len(s.status) && s.status[s.lo] != Pending {
		s.lo++
	}
	var out []int
	for i := s.lo; i < len(s.status); i++ {
		if s.g.team.Process != spec.Workflow && i > s.lo {
			break
		}
		if s.status[i] == Pending && s.depsResolved(i) {
			out = append(out, i)
		}
	}
	return out
}

func (s *State) depsResolved(i int) bool {
	for _, d := range s.g.Deps(i) {
		if !resolved(s.status[d]) {
			return false
		}
	}
	return true
}

// Pending lists the tasks still pending, in file order.
func (s *State) Pending() []int {
	var out []int
	for i, st := range s.status {
		if st == Pending {
			out = append(out, i)
		}
	}
	return out
}

// Cause is why a task does not run.
type Cause int

const (
	RoutedElsewhere Cause = iota + 1 // a gate's result routes to other tasks
	GateSkipped                      // a gate was skipped
	ContextSkipped                   // a workflow task whose every context task was skipped
	RepeatDone                       // a repeat iteration after one whose result has the until text (Value)
)

// Reason says why a task is skipped: Gate is the gate's index and Value its
// trimmed result for RoutedElsewhere.
type Reason struct {
	Cause Cause
	Gate  int
	Value string
}

// SkipReason says why task i must not run, or nil. Only what the state
// knows counts: a gate whose result is not known yet skips nothing.
func (s *State) SkipReason(i int) *Reason {
	if p, until := s.g.Until(i); p >= 0 {
		switch {
		case s.status[p] == Skipped:
			return &Reason{Cause: GateSkipped, Gate: p}
		case s.status[p] == Completed && s.known[p] && UntilMet(s.result[p], until):
			return &Reason{Cause: RepeatDone, Gate: p, Value: until}
		}
	}
	for _, gt := range s.g.Gates(i) {
		switch {
		case s.status[gt] == Skipped:
			return &Reason{Cause: GateSkipped, Gate: gt}
		case s.status[gt] == Completed && s.known[gt] && (s.chosen == nil || !slices.Contains(s.chosen[gt], routedAs(s.g.team.Tasks[i]))):
			return &Reason{Cause: RoutedElsewhere, Gate: gt, Value: strings.TrimSpace(s.result[gt])}
		}
	}
	if s.g.team.Process == spec.Workflow && len(s.g.Context(i)) > 0 {
		for _, c := range s.g.Context(i) {
			if s.status[c] != Skipped {
				return nil
			}
		}
		return &Reason{Cause: ContextSkipped, Gate: -1}
	}
	return nil
}

// OpenGates lists the gates whose route is not known yet and on which task
// i depends: it runs only if they route its way. That is its own gates, the
// open gates of those gates, and in a workflow, when every task it reads is
// itself conditional, theirs (a task whose context was all skipped is
// skipped too), unless whichever way their gate routes one of them runs.
func (s *State) OpenGates(i int) []int {
	return s.openGates(i, map[int][]int{})
}

func (s *State) openGates(i int, memo map[int][]int) []int {
	if v, ok := memo[i]; ok {
		return v
	}
	memo[i] = nil // a cycle never runs; stop here
	var out []int
	gates := s.g.Gates(i)
	if p := s.g.untilOf(i); p >= 0 {
		gates = append(slices.Clone(gates), p)
	}
	for _, gt := range gates {
		if !s.known[gt] {
			out = append(out, gt)
		}
		out = append(out, s.openGates(gt, memo)...)
	}
	if s.g.team.Process == spec.Workflow && len(s.g.Context(i)) > 0 {
		var upstream []int
		conditional := true
		for _, c := range s.g.Context(i) {
			// An iteration that i reads itself cannot skip i by ending
			// the repeat: i still reads it (a repeat's join).
			oc := slices.DeleteFunc(slices.Clone(s.openGates(c, memo)), func(gt int) bool {
				_, ends := s.g.EndsRepeat(gt)
				return ends && slices.Contains(s.g.Context(i), gt)
			})
			if len(oc) == 0 && s.status[c] != Skipped {
				conditional = false // it reads a task that runs whatever is decided
				break
			}
			upstream = append(upstream, oc...)
		}
		if conditional && !s.runsAnyRoute(s.g.Context(i), memo) {
			out = append(out, upstream...)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	memo[i] = out
	return out
}

// runsAnyRoute reports whether one of the tasks ctx runs whichever way
// a gate routes: those that wait on that gate alone cover every one of
// its routes (the branches of a route step with a default, all read by
// the step after it, which may read a repeat's iteration beside them). A
// result no route takes fails the gate, which then runs none.
func (s *State) runsAnyRoute(ctx []int, memo map[int][]int) bool {
	covered := map[int]map[int]bool{} // gate -> the routes of it ctx covers
	for _, c := range ctx {
		oc := s.openGates(c, memo)
		if len(oc) != 1 {
			continue
		}
		gate := oc[0]
		for k, r := range s.g.team.Tasks[gate].Condition() {
			if slices.Contains(r.Next, routedAs(s.g.team.Tasks[c])) {
				if covered[gate] == nil {
					covered[gate] = map[int]bool{}
				}
				covered[gate][k] = true
			}
		}
	}
	for gate, routes := range covered {
		if n := len(s.g.team.Tasks[gate].Condition()); n > 0 && len(routes) == n {
			return true
		}
	}
	return false
}

// DryRun plays the rest of a run on s without running anything: every task
// that would start is assumed to complete with a result not known yet, a
// human task completes with its decision when decide gives one (and waits
// otherwise). It returns the skip reason of each task it skipped. What is
// still pending afterwards waits behind a decision.
func (s *State) DryRun(decide func(i int) (string, bool)) map[int]*Reason {
	skipped := map[int]*Reason{}
	for progressed := true; progressed; {
		progressed = false
		for _, i := range s.Ready() {
			progressed = true
			if r := s.SkipReason(i); r != nil {
				s.Skip(i)
				skipped[i] = r
				continue
			}
			if s.g.Human(i) {
				v, ok := decide(i)
				switch {
				case !ok:
					s.Wait(i)
				case s.validDecision(i, v):
					s.Complete(i, v)
				default:
					s.Assume(i) // the run fails it: nothing is known
				}
				continue
			}
			s.Assume(i)
		}
	}
	return skipped
}

// ValidDecision says why decision value cannot complete human task i, or
// returns nil.
func (g *Graph) ValidDecision(i int, value string) error {
	t := g.team.Tasks[i]
	if len(t.Options()) > 0 && !slices.Contains(t.Options(), value) {
		return fmt.Errorf("decision %q is not one of the options %s", value, strings.Join(t.Options(), ", "))
	}
	if _, ok := g.Route(i, value); !ok {
		return fmt.Errorf("decision %q matches none of the condition's values %s", value, g.RouteValues(i))
	}
	return nil
}

func (s *State) validDecision(i int, v string) bool { return s.g.ValidDecision(i, v) == nil }
