package spec

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Foreach is a task's foreach: one instance per item of the list in the
// shared-state variable Over, each rendered with {As} bound to its item.
type Foreach struct {
	Over string
	As   string
	// Text reads a task's output that is no JSON array as PraisonAI's
	// loop reads one (praisonList) rather than refusing it: a PraisonAI
	// loop's. A text the user gives (variables:, --var) is no list in
	// either format (foreachItems).
	Text bool
	// Index, when set, is bound in each instance to its item's position
	// from 0: PraisonAI's loop_index.
	Index string
	// Chain makes each instance after the first read the one before it in
	// place of Feed, the tasks the task reads as its previous output: a
	// PraisonAI loop that is not parallel feeds each item the output of
	// the item before. The instances so run one after another.
	Chain bool
	Feed  []string
	Pos   Pos
	// Path is the key path errors name when it is not tasks.NAME.foreach:
	// a PraisonAI step's loop (steps[0].loop).
	Path string `json:"-"`
}

// keyPath is the key path of the foreach of task tk, as the file writes it.
func (f *Foreach) keyPath(tk *Task) string {
	if f.Path != "" {
		return f.Path
	}
	return tk.KeyPath() + ".foreach"
}

// foreachAs is the item's name when foreach gives no as: PraisonAI's.
const foreachAs = "item"

func (b *builder) foreach(v *tree) *Foreach {
	if !v.isMap() {
		return nil // the schema reported it
	}
	f := &Foreach{As: foreachAs, Pos: v.kpos()}
	f.Over, _ = v.get("over").str()
	if s, ok := v.get("as").str(); ok && s != "" {
		f.As = s
	}
	return f
}

// checkForeach refuses what a foreach task cannot combine with, and says
// when its list can only come from --var.
func (b *builder) checkForeach() {
	t := b.team
	b.checkInstanceNames()
	outputs := map[string]string{}
	producer := map[string]int{} // output_variable -> the index of its task
	for i, tk := range t.Tasks {
		if tk.OutputVariable != "" {
			outputs[tk.OutputVariable] = tk.Name
			if _, dup := producer[tk.OutputVariable]; !dup {
				producer[tk.OutputVariable] = i
			}
		}
	}
	for i, tk := range t.Tasks {
		f := tk.Foreach
		if f == nil {
			continue
		}
		fv := b.tasks[i].get("foreach")
		if fv == nil {
			fv = b.tasks[i].get("loop") // a PraisonAI step's
		}
		over := fv.get("over")
		switch {
		case tk.Agent == HumanAgent:
			b.errorf(fv, fv.kpos(), "a human task cannot run once per item: give the decision one task")
		case len(tk.Condition()) > 0:
			b.errorf(fv, fv.kpos(), "a foreach task cannot route (condition): route on a task after it, which reads the JSON array of results")
		case over == nil:
			// No over: the schema says so, and there is nothing to check.
		case outputs[f.Over] != "" && producer[f.Over] >= i:
			b.errorf(over, over.pos(), "%s is the output_variable of task %q, which comes after (or is) this one: move the task that makes the list before the foreach task", f.Over, outputs[f.Over])
		}
		if outputs[f.Over] != "" || over == nil {
			continue
		}
		if _, ok := t.Variables[f.Over]; ok {
			b.givenLists = append(b.givenLists, givenList{tk, fv})
		} else {
			t.UnsetLists = append(t.UnsetLists, PlaceholderUse{Name: f.Over, Pos: over.pos(), Path: over.path})
		}
	}
}

// checkInstanceNames refuses a task named as an instance of a foreach
// task is (each[1] beside foreach task each), by the name's shape alone:
// the list may be known only once a task before it has run, or be made
// longer by --var, and the run must not stop there, after paying for
// what ran before it, at every --continue.
func (b *builder) checkInstanceNames() {
	t := b.team
	loops := map[string]*Task{}
	for _, tk := range t.Tasks {
		if tk.Foreach != nil {
			loops[tk.Name] = tk
		}
	}
	if len(loops) == 0 {
		return
	}
	for i, tk := range t.Tasks {
		of, k, ok := instanceOf(tk.Name)
		l := loops[of]
		if !ok || l == nil {
			continue
		}
		at, pos := b.tasks[i], b.tasks[i].kpos()
		if nv := at.get("name"); nv != nil {
			at, pos = nv, nv.pos()
		}
		kind, what := "task", "foreach task"
		if l.Foreach.Path != "" {
			kind, what = "step", "loop step"
		}
		b.errorf(at, pos, "%s name %q is the name teamrun gives the instance of item %d of %s %q (line %d), whatever its list holds: rename one of them", kind, tk.Name, k, what, of, l.Pos.Line)
	}
}

// givenList is a foreach task whose list the file's variables give, and
// the foreach (or loop) it is written as.
type givenList struct {
	tk *Task
	at *tree
}

// listErrors are the errors of the lists the file's variables give that
// are none (ForeachItems), for a file its other errors (b.diags) keep from
// loading: validate says them with those, where it says them once the file
// loads (TaskSetOf refuses them as run does), so that one validate says
// all. Run and plan do not: their --var may give the list.
func (b *builder) listErrors() ErrorList {
	if len(b.givenLists) == 0 {
		return nil
	}
	state := b.team.InitialState(nil) // as a run starts from it
	var out ErrorList
	for _, l := range b.givenLists {
		if _, err := ForeachItems(l.tk.Foreach, state); err != nil {
			p := l.tk.Foreach.Pos
			out = append(out, Diagnostic{File: b.file, Line: p.Line, Column: p.Column, Path: l.at.path, Message: err.Error()})
		}
	}
	return out
}

// ErrNoVariable: a foreach over a variable the state lacks, which --var
// may give at run (validate, with no --var, only warns of it).
var ErrNoVariable = errors.New("no variable")

// ForeachItems is the list a foreach runs over, from the state the run
// starts from: a list, or a string holding a JSON array (as --var gives).
func ForeachItems(f *Foreach, state map[string]any) ([]any, error) {
	return foreachItems(f, state, false)
}

// foreachItems is the one rule of what a foreach, native or PraisonAI's
// loop, runs over. A list, or a text that is a JSON array, is its items.
// Any other text the user wrote (variables:, --var) is refused, in both
// formats: PraisonAI would run it as one item, where a careful user who
// wrote "AI, ML" meant two. Only a task's output (produced) that a
// PraisonAI loop reads is read as PraisonAI reads a model's answer
// (praisonList), as the files written for it expect.
func foreachItems(f *Foreach, state map[string]any, produced bool) ([]any, error) {
	v, ok := state[f.Over]
	if !ok {
		return nil, fmt.Errorf("foreach over %s: %w %s; set it under variables: or with --var %s='[\"a\", \"b\"]'", f.Over, ErrNoVariable, f.Over, f.Over)
	}
	hint := ""
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		if f.Text && produced {
			return praisonList(x), nil
		}
		var items []any
		if err := json.Unmarshal([]byte(strings.TrimSpace(x)), &items); err == nil && items != nil {
			return items, nil
		}
		if f.Text {
			hint = fmt.Sprintf("; PraisonAI would run the whole text as one item: to keep that, write it as a list of one, [%s]", quoteShort(x))
		}
	}
	got := quoteShort(FormatValue(v))
	if v == nil {
		got = "null (nothing)" // not "": an empty text would be no item
	}
	return nil, fmt.Errorf("foreach over %s: expected a list (or a JSON array such as '[\"a\", \"b\"]'), got %s%s", f.Over, got, hint)
}

// replaced is context ctx with the tasks of old replaced by task by, where
// the first of them was (first of all without one).
func replaced(ctx, old []string, by string) []string {
	out := make([]string, 0, len(ctx)+1)
	put := false
	for _, c := range ctx {
		switch {
		case !slices.Contains(old, c):
			out = append(out, c)
		case !put:
			out, put = append(out, by), true
		}
	}
	if !put {
		out = append([]string{by}, out...)
	}
	return out
}

// praisonList is the list PraisonAI's loop makes of a text (workflows.py,
// _parse_list_from_string): none of an empty text; the text's JSON array;
// else the first non-empty array the text holds ('...' quotes read as
// "..."), as a model writes one in a sentence or a ```json block; else the
// text as one item. It reads only the text, so a list made of a recorded
// output is the same on every --continue.
func praisonList(text string) []any {
	text = strings.TrimSpace(text)
	if text == "" {
		return []any{}
	}
	var items []any
	if json.Unmarshal([]byte(text), &items) == nil && items != nil {
		return items
	}
	for _, m := range praisonArrayRE().FindAllString(text, -1) {
		items = nil
		if err := json.Unmarshal([]byte(m), &items); err != nil {
			// As PraisonAI: only an array JSON cannot read is tried again.
			items = nil
			_ = json.Unmarshal([]byte(strings.ReplaceAll(m, "'", `"`)), &items)
		}
		if len(items) > 0 {
			return items
		}
	}
	return []any{text}
}

// praisonArrayRE is PraisonAI's pattern of an array in a text: brackets
// around no other bracket, except inside quotes. Go's leftmost-first
// matching picks the same matches as Python's backtracking does.
var praisonArrayRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[(?:[^\[\]]*(?:"[^"]*"|'[^']*')?[^\[\]]*)*\]`)
})

// InstanceName is the name of item i's instance of task name.
func InstanceName(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) }

// DeferredJoin is, for name an instance's name (InstanceName) of a
// foreach that expanded team t holds deferred (ExpandsWhen: its producer
// has not completed), that foreach's join; nil for any other name. Such
// an instance is not removed from the file: it is made anew, from the
// producer's output, when the producer finishes.
func (t *Team) DeferredJoin(name string) *Task {
	of, _, ok := instanceOf(name)
	if !ok {
		return nil
	}
	for _, tk := range t.Tasks {
		if x := tk.Expanded(); tk.Name == of && x.ExpandsWhen != "" && x.ForeachOf == tk.Name {
			return tk
		}
	}
	return nil
}

// instanceOf splits name into the foreach task's name and the item's
// index when it has the shape of an instance's name (InstanceName: of[k],
// k written as InstanceName writes it); ok is false for any other name.
func instanceOf(name string) (of string, k int, ok bool) {
	open := strings.LastIndexByte(name, '[')
	if open < 0 || !strings.HasSuffix(name, "]") {
		return "", 0, false
	}
	digits := name[open+1 : len(name)-1]
	k, err := strconv.Atoi(digits)
	if err != nil || k < 0 || strconv.Itoa(k) != digits {
		return "", 0, false // +1, 01: no instance is named so
	}
	return name[:open], k, true
}

// Producer is the task whose output_variable foreach f runs over ("" when
// the list is a variable known when the run starts): of those whose value
// the foreach task can find when it starts (VariableReads.Sources), the
// one that ends last, as a {placeholder} of it would read; one no route
// can skip before one a route may skip, which may leave the list to the
// other: the run expands the foreach once, from one task's list.
func (t *Team) Producer(f *Foreach) string {
	sets := 0
	for _, tk := range t.Tasks {
		if tk.OutputVariable == f.Over && tk.Foreach != f {
			sets++
		}
	}
	// Only when several set it is the order asked (it may walk a
	// workflow's graph once for each task that sets a variable).
	if i := slices.IndexFunc(t.Tasks, func(tk *Task) bool { return tk.Foreach == f }); i >= 0 && sets > 1 {
		reads, last := t.VariableReads(), -1
		reads.Sources(i, func(j int) {
			switch {
			case t.Tasks[j].OutputVariable != f.Over:
			case last < 0:
				last = j
			case reads.Skippable(j) != reads.Skippable(last):
				if !reads.Skippable(j) {
					last = j
				}
			case !reads.After(j, last):
				last = j
			}
		})
		if last >= 0 {
			return t.Tasks[last].Name
		}
	}
	for _, tk := range t.Tasks {
		if tk.OutputVariable == f.Over && tk.Foreach != f {
			return tk.Name
		}
	}
	return ""
}

// Expand returns the team with each foreach task replaced by its
// instances, in item order, then a join task under the task's own name
// whose result is the JSON array of theirs (a repeat task: by its
// iterations, then a join whose result is the last one's, expandRepeat): later tasks, context and
// output_variable see the task as before. Each instance is a task of its
// own, so it is checkpointed, restored and (under --reuse unchanged)
// reused on its own, its item part of its rendered definition. A team
// without foreach is returned as it is.
//
// A foreach over an earlier task's output_variable (its producer) takes
// its list from produced, the values of the output variables of the tasks
// completed so far. Without one the task is deferred: no instances yet, a
// join that waits for the producer (ExpandsWhen); once the producer
// finishes, the run expands again. Its instances also wait for the
// producer (After), whatever their context. A value that is not a list
// gives a join that fails, saying so (JoinError): the run fails there.
func (t *Team) Expand(state map[string]any) (*Team, error) { return t.ExpandWith(state, nil) }

// ExpandWith is Expand with the output variables produced so far.
func (t *Team) ExpandWith(state, produced map[string]any) (*Team, error) {
	has := false
	for _, tk := range t.Tasks {
		has = has || tk.Foreach != nil || tk.Repeat != nil
	}
	if !has {
		return t, nil
	}
	out := *t
	out.Tasks = nil
	out.Agents = append([]*Agent(nil), t.Agents...)
	taken := map[string]bool{}
	for _, tk := range t.Tasks {
		taken[tk.Name] = true
	}
	// Every problem, said at once in line order: a name taken, a list
	// that is none.
	var bad []located
	for i, tk := range t.Tasks {
		if tk.Repeat != nil {
			for _, err := range t.expandRepeat(&out, i, taken) {
				bad = append(bad, located{tk.Pos, err})
			}
			continue
		}
		if tk.Foreach == nil {
			out.Tasks = append(out.Tasks, tk)
			continue
		}
		ctx := t.ContextOf(i)
		join := &Task{Name: tk.Name, Agent: "foreach:" + tk.Name, HasContext: true, Pos: tk.Pos,
			OutputVariable: tk.OutputVariable, Expansion: &Expansion{ForeachOf: tk.Name}}
		join.SetOutputFile(tk.OutputFile())
		var items []any
		var err error
		if p := t.Producer(tk.Foreach); p != "" {
			join.Expansion.After = []string{p}
			v, ok := produced[tk.Foreach.Over]
			switch {
			case !ok:
				// Until it expands, the join stands for its instances:
				// it waits for what they will read (a decision among it).
				join.Expansion.ExpandsWhen, join.Context = p, ctx
				join.Description = fmt.Sprintf("the results of %s[…] as a JSON array, its instances made when %s finishes", tk.Name, p)
			default:
				if items, err = foreachItems(tk.Foreach, map[string]any{tk.Foreach.Over: v}, true); err != nil {
					join.Expansion.JoinError = fmt.Sprintf("%s:%d:%d: %s: %v (the output of task %s)", t.File, tk.Foreach.Pos.Line, tk.Foreach.Pos.Column, QuotePath(tk.Foreach.keyPath(tk)), err, p)
					join.Description = fmt.Sprintf("the results of %s[…]: %s's output is not a list", tk.Name, p)
				}
			}
		} else if items, err = ForeachItems(tk.Foreach, state); err != nil {
			bad = append(bad, located{tk.Foreach.Pos, fmt.Errorf("%s:%d:%d: %s: %w", t.File, tk.Foreach.Pos.Line, tk.Foreach.Pos.Column, QuotePath(tk.Foreach.keyPath(tk)), err)})
			continue
		}
		if join.Description == "" {
			join.Description = fmt.Sprintf("the results of %s[0..%d] as a JSON array", tk.Name, len(items)-1)
		}
		bind := make(map[string]any, 2)
		join.Context = slices.Grow(join.Context, len(items))
		// The join keeps the output: the instances share one taskMore
		// without its file, not one each.
		base := *tk
		base.OutputVariable = ""
		base.SetOutputFile("")
		// A chained loop with nothing before it: its first item keeps
		// {{previous_output}} as written (bindPreviousOutput), the items
		// after it read the item before.
		later := base
		if tk.Foreach.Chain && len(ctx) == 0 {
			later.Description, later.ExpectedOutput = previousBound(tk.Description), previousBound(tk.ExpectedOutput)
		}
		for k, item := range items {
			// No other task has its name: the file's names were checked
			// by their shape (checkInstanceNames), whatever the list.
			name := InstanceName(tk.Name, k)
			inst := base
			if k > 0 {
				inst = later
			}
			inst.Name, inst.Foreach = name, nil
			inst.Expansion = &Expansion{ForeachOf: tk.Name, After: join.Expansion.After, Item: item, As: tk.Foreach.As, IndexAs: tk.Foreach.Index, Index: k}
			// Its texts stay the declared ones: rendered against its
			// Scope, the item is filled with the shared state, once.
			// bind is the foreach's one mapping, set to each item in
			// turn: one of each instance's own was ~300 bytes more.
			bind[tk.Foreach.As] = item
			if tk.Foreach.Index != "" {
				bind[tk.Foreach.Index] = k
			}
			inst.Expansion.BindInKey = t.Render(inst.Description, bind) == inst.Description && t.Render(inst.ExpectedOutput, bind) == inst.ExpectedOutput
			inst.Context, inst.HasContext = ctx, true
			if tk.Foreach.Chain && k > 0 {
				inst.Context = replaced(ctx, tk.Foreach.Feed, InstanceName(tk.Name, k-1))
			}
			out.Tasks = append(out.Tasks, &inst)
			join.Context = append(join.Context, name)
		}
		out.Tasks = append(out.Tasks, join)
		out.Agents = append(out.Agents, &Agent{Name: join.Agent, Kind: JoinAgent, Pos: tk.Pos})
	}
	if len(bad) > 0 {
		slices.SortStableFunc(bad, func(a, b located) int {
			return cmp.Or(cmp.Compare(a.at.Line, b.at.Line), cmp.Compare(a.at.Column, b.at.Column))
		})
		errs := make([]error, len(bad))
		for i, b := range bad {
			errs[i] = b.err
		}
		return nil, errors.Join(errs...)
	}
	out.keepReads()
	return &out, nil
}

// located is an error of the expansion and the place in the file it is
// about, by which the errors are said in line order.
type located struct {
	at  Pos
	err error
}
