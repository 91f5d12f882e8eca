package spec

import (
	"fmt"
	"slices"
)

// Repeat is a task's repeat: it runs again, fed its previous output, until
// its result contains Until (case-insensitive; "" never) or it has run
// MaxIterations times.
type Repeat struct {
	Until         string
	MaxIterations int
	// Count, when set, is the variable that holds how many iterations ran
	// once the repeat is done: PraisonAI's repeat_iterations. A task of
	// the expansion counts them (CountName).
	Count string
	Pos   Pos
}

// Bounds of max_iterations: every iteration is a task of its own.
const (
	DefaultMaxIterations = 10
	MaxIterationsLimit   = 100
	// praisonMaxIterations is PraisonAI's own default (yaml_parser.py),
	// so that a PraisonAI file repeats as often as it does there.
	praisonMaxIterations = 5
)

// PreviousOutput is the placeholder a repeat iteration's texts may hold:
// the output of the last task it reads, the previous iteration's from the
// second on.
const PreviousOutput = "previous_output"

// FillsNoPrevious says whether a repeat iteration that reads no task has
// its {previous_output} filled, empty: in the native format. A PraisonAI
// file's stays as written, as PraisonAI sends it, with a warning, as in
// any task with nothing before it (bindPreviousOutput); there every other
// iteration's is bound to the context teamrun appends.
func (t *Team) FillsNoPrevious() bool { return !t.PraisonTemplates }

// repeat reads a task's repeat: (native: the schema checked its shape) or
// a PraisonAI step's (praison: no schema did, and its default differs).
func (b *builder) repeat(v *tree, praison bool) *Repeat {
	check := praison
	if !v.isMap() {
		if check && v != nil && !v.isNull() {
			b.errorf(v, v.pos(), "expected a mapping such as {until: TEXT, max_iterations: N}, got %s", v.describe())
		}
		return nil
	}
	r := &Repeat{MaxIterations: DefaultMaxIterations, Pos: v.kpos()}
	if praison {
		r.MaxIterations = praisonMaxIterations
	}
	if u := v.get("until"); u != nil {
		if s, ok := u.str(); ok && s == "" {
			// PraisonAI's "" in result ends after the first iteration,
			// "no until" would run them all: neither is meant.
			b.errorf(u, u.pos(), "expected the text that ends the repeat, got \"\", which every result holds: a word or words the result holds once it is done (without until:, the task runs max_iterations times)")
		} else if ok {
			r.Until = s
		} else if check && !u.isNull() {
			b.errorf(u, u.pos(), "expected the text that ends the repeat, got %s", u.gotText())
		}
	}
	if m := v.get("max_iterations"); m != nil {
		n, ok := m.val().(int64)
		if !ok || n < 1 || n > MaxIterationsLimit {
			if !check {
				return r // the schema reported it
			}
			b.errorf(m, m.pos(), "expected a number of iterations from 1 to %d, got %s", MaxIterationsLimit, m.describe())
		} else {
			r.MaxIterations = int(n)
		}
	}
	return r
}

// checkRepeat refuses what a repeat task cannot combine with.
func (b *builder) checkRepeat() {
	for i, tk := range b.team.Tasks {
		if tk.Repeat == nil {
			continue
		}
		rv := b.tasks[i].get("repeat")
		switch {
		case tk.Foreach != nil:
			b.errorf(rv, rv.kpos(), "a task cannot both repeat and run once per item (foreach): repeat a task that reads the foreach task's results")
		case tk.Agent == HumanAgent:
			b.errorf(rv, rv.kpos(), "a human task cannot repeat: a decision is taken once")
		case len(tk.Condition()) > 0:
			b.errorf(rv, rv.kpos(), "a repeat task cannot route (condition): route on a task after it, which reads its last iteration's result")
		}
	}
}

// IterationName is the name of iteration k (from 1) of task name.
func IterationName(name string, k int) string { return fmt.Sprintf("%s#%d", name, k) }

// CountName is the name of the task that counts the iterations of repeat
// task name that ran (Repeat.Count).
func CountName(name string) string { return name + "#iterations" }

// expandRepeat appends to out the iterations of repeat task tk (at i in
// t), then the join under its own name whose result is the last
// iteration's that ran. Iteration k reads what the task reads and, from
// the second on, iteration k-1; it is skipped once an iteration's result
// contains Until (schedule), so the ones after are skipped too. With a
// Count, a task before the join counts the iterations that ran into that
// variable; the join reads it first, so what reads the join waits for it.
// clashes are the names it makes that another task has.
func (t *Team) expandRepeat(out *Team, i int, taken map[string]bool) (clashes []error) {
	tk := t.Tasks[i]
	n := tk.Repeat.MaxIterations
	ctx := t.ContextOf(i)
	join := &Task{Name: tk.Name, Agent: "repeat:" + tk.Name, HasContext: true, Pos: tk.Pos,
		Description:    fmt.Sprintf("the result of the last iteration of %s#1..%d that ran", tk.Name, n),
		OutputVariable: tk.OutputVariable, Expansion: &Expansion{RepeatOf: tk.Name}}
	join.SetOutputFile(tk.OutputFile())
	var count *Task
	if tk.Repeat.Count != "" {
		count = &Task{Name: CountName(tk.Name), Agent: join.Agent, HasContext: true, Pos: tk.Pos,
			Description:    fmt.Sprintf("the number of the iterations of %s#1..%d that ran", tk.Name, n),
			OutputVariable: tk.Repeat.Count, Expansion: &Expansion{RepeatOf: tk.Name, Counts: true}}
		if taken[count.Name] {
			clashes = append(clashes, fmt.Errorf("%s:%d:%d: %s: %s has the name of another task: rename one", t.File, tk.Pos.Line, tk.Pos.Column, QuotePath(tk.KeyPath()), count.Name))
		}
		join.Context = []string{count.Name}
	}
	// The join keeps the output: the iterations share one taskMore
	// without its file, not one each.
	base := *tk
	base.OutputVariable = ""
	base.SetOutputFile("")
	// A PraisonAI repeat with nothing before it: its first iteration
	// keeps {{previous_output}} as written (FillsNoPrevious), the ones
	// after it read the one before, as a loop's items do.
	later := base
	if !t.FillsNoPrevious() && len(ctx) == 0 {
		later.Description, later.ExpectedOutput = previousBound(tk.Description), previousBound(tk.ExpectedOutput)
	}
	for k := 1; k <= n; k++ {
		name := IterationName(tk.Name, k)
		if taken[name] {
			clashes = append(clashes, fmt.Errorf("%s:%d:%d: %s: iteration %s has the name of another task: rename one", t.File, tk.Pos.Line, tk.Pos.Column, QuotePath(tk.KeyPath()), name))
		}
		it := base
		if k > 1 {
			it = later
		}
		it.Name, it.Repeat = name, nil
		it.Expansion = &Expansion{RepeatOf: tk.Name, Iteration: k}
		it.Context, it.HasContext = slices.Clone(ctx), true
		if k > 1 {
			prev := IterationName(tk.Name, k-1)
			it.Context = append(slices.DeleteFunc(it.Context, func(c string) bool { return c == prev }), prev)
			it.Expansion.Until = tk.Repeat.Until
		}
		out.Tasks = append(out.Tasks, &it)
		join.Context = append(join.Context, name)
	}
	if count != nil {
		count.Context = slices.Clone(join.Context[1:])
		out.Tasks = append(out.Tasks, count)
	}
	out.Tasks = append(out.Tasks, join)
	out.Agents = append(out.Agents, &Agent{Name: join.Agent, Kind: JoinAgent, Pos: tk.Pos})
	return clashes
}
