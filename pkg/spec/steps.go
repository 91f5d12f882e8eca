package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// PraisonAI "steps:" workflows map onto tasks: a step is a task fed the
// previous step's output, as PraisonAI runs it; parallel, route and if
// steps make the team a workflow DAG whose routing is done by tasks of
// their own (route agents, Decision), recorded as any task is, so that a
// resumed run decides exactly as the first did.

// stepsOf returns the steps list of a PraisonAI file (top-level steps: or
// workflow.steps), or nil.
func stepsOf(root *tree) *tree {
	if s := root.get("steps"); s != nil {
		return s
	}
	if w := root.get("workflow"); w.isMap() {
		return w.get("steps")
	}
	return nil
}

// refuseSteps reports each step teamrun cannot run, anywhere in the
// steps tree, in one line naming the key and what to use instead, and
// returns them: they are not built, so that the file's other errors come
// with these (DESIGN §2), and none that only a missing step would cause.
func (b *builder) refuseSteps(steps *tree) map[*tree]bool {
	refused := map[*tree]bool{}
	var order flowOrder      // for next_tasks loops
	place := map[*tree]int{} // a step's place in order
	var walk func(list *tree)
	walk = func(list *tree) {
		for _, st := range list.itemsOrNil() {
			if !st.isMap() {
				continue // reported when the step is built
			}
			n, _ := st.get("name").str()
			place[st] = order.add(n)
			if at, msg := stepRefusal(st); msg != "" {
				b.errorf(at, at.kpos(), "%s", msg)
				refused[st] = true
			}
			// The steps inside it, refused or not: their refusals are
			// said now, not once this one is fixed.
			walk(st.get("parallel"))
			for _, br := range []string{"then", "else"} {
				walk(st.get("if").get(br))
			}
		}
	}
	walk(steps)
	// A decision graph whose next_tasks go back to an earlier step loops:
	// teamrun's workflow is a DAG.
	for _, st := range steps.itemsOrNil() {
		if nt := st.get("next_tasks"); place[st] > 0 && !refused[st] {
			if msg := order.loopsBack(nt, place[st], "step"); msg != "" {
				b.errorf(nt, nt.kpos(), "%s", msg)
				refused[st] = true
			}
		}
	}
	if len(refused) > 0 && b.refusedSteps == nil {
		b.refusedSteps = map[string]bool{} // step fills in their names
	}
	return refused
}

// stepRefusal is the first key of step st (not of the steps inside it)
// that teamrun cannot run, and what to use instead; "" when none.
func stepRefusal(st *tree) (*tree, string) {
	for _, k := range st.keys() {
		v := st.get(k)
		switch k {
		case "loop":
			if !v.isMap() {
				return v, loopNotMapping(v)
			}
			// A loop of one agent step over a variable is foreach;
			// a loop of several steps, or over a template, is not yet.
			switch body, n := loopBody(st); {
			case n > 1:
				return v, "a loop of several steps is not supported yet: loop one agent step (agent: and action: beside loop:, or step: {agent: NAME, action: TEXT}), which runs once per item as foreach does, and put the other steps after it: the next step reads the JSON array of the loop's answers"
			case body == nil:
				return v, "the loop names no step to run: give it agent: and action: beside loop:, step: {agent: NAME, action: TEXT}, or loop.step: NAME"
			case body.isMap() && body.get("agent") == nil:
				return body, "a loop runs one agent step here: give it agent: and action: (a loop of a loop, parallel, route or if step is not supported yet)"
			}
			for _, k := range []string{"from_csv", "from_file"} {
				if f := v.get(k); f != nil && v.get("over") == nil {
					return f, fmt.Sprintf("a loop over a file (%s) is not supported: teamrun loops over a list variable; give the items under variables: (items: [a, b]) or as --var items='[\"a\", \"b\"]' (a JSON array) and write loop: {over: items}; in the native format, a command task before it can read the file into an output_variable to loop over", k)
				}
			}
			if o, _ := v.get("over").str(); !identRE().MatchString(o) {
				return v, fmt.Sprintf("loop over %s is not supported: loop over a list variable's name (loop: {over: VAR}), which runs once per item as foreach does", v.get("over").describe())
			}
		case "repeat":
			// A repeat on an agent step is the native repeat; a
			// repeat of steps is not yet.
			if v.get("steps") != nil || st.get("agent") == nil {
				return v, "a repeat of steps is not supported yet: give the repeat one agent step (agent:, action:, repeat: {until: TEXT, max_iterations: N}), which runs again until its result contains TEXT"
			}
		case "run":
			return v, "shell steps (run:) are not supported: use a command agent (shell:) in the native format"
		case "judge":
			return v, "judge steps are not supported: use an LLM task that scores the file against the criteria"
		case "approve":
			return v, "approve steps are not supported here: use a task whose agent is human (it halts for `teamrun session decide`) in the native format"
		case "workflow", "include":
			return v, "nested workflows are not supported: write their steps in this file's steps"
		}
	}
	return nil, ""
}

// loopNotMapping says what to write for a loop: that is no mapping, such
// as loop: topics or loop: [a, b] (which PraisonAI's parser stops at too).
func loopNotMapping(v *tree) string {
	msg := "expected a mapping such as {over: VAR}, got " + v.describe()
	s, _ := v.str()
	switch {
	case identRE().MatchString(s):
		return msg + fmt.Sprintf(": write loop: {over: %s}", s)
	case v.isSeq():
		return msg + ": put the items under variables: (items: [a, b]) and write loop: {over: items}"
	}
	return msg + ": name a list variable, loop: {over: VAR}, which runs the step once per item"
}

// stepBuilder holds what mapping one steps list needs.
type stepBuilder struct {
	b        *builder
	hasInput bool
	dag      bool // a parallel, route or if step: the team runs as a workflow
	// byName is the agent steps' tasks, in file order, under the name
	// PraisonAI keeps their output as, NAME_output: the step's name, else
	// its agent's.
	byName map[string][]*Task
	// names are byName's keys, in file order.
	names []string
	// made names the variables made for the steps' outputs.
	made *madeVars
	// parallels is the parallel steps, in file order.
	parallels []parallelStep
	// refused are the steps refuseSteps refused: not built.
	refused map[*tree]bool
}

// ifCond is an if step's condition: the agent that evaluates it, the steps
// before it, which its {{previous_output}} reads, and where it is written.
// The condition itself is its task's description, after evaluatePrefix,
// so that the bindings of the texts bind it too.
type ifCond struct {
	agent *Agent
	prev  []string
	src   *tree
}

// evaluatePrefix begins an if task's description; the condition follows.
const evaluatePrefix = "Evaluate "

// parallelStep is a parallel step: its name, the tasks whose outputs are
// its outputs, and the last task it added.
type parallelStep struct {
	name string
	outs []string
	last string
	src  *tree
}

func (b *builder) praisonSteps(steps *tree) {
	if !steps.isSeq() {
		b.errorf(steps, steps.pos(), "expected a list of steps, got %s", steps.describe())
		return
	}
	_, hasInput := b.team.Variables["input"]
	sb := &stepBuilder{b: b, hasInput: hasInput, byName: map[string][]*Task{}, refused: b.refuseSteps(steps)}
	from := len(b.team.Tasks)
	var prev []string
	for i, st := range steps.items() {
		prev = sb.step(st, stepName(st, fmt.Sprintf("step_%d", i+1)), prev, i == 0)
	}
	if sb.dag {
		b.team.Process = Workflow
	}
	names := slices.Clone(sb.names)
	for _, tk := range b.team.Tasks[from:] {
		names = append(names, tk.Name)
	}
	for _, ps := range sb.parallels {
		names = append(names, ps.name)
	}
	sb.made = newMadeVars(b.team, names)
	// Before the other bindings: a step named previous keeps its output
	// as previous_output, which is not what {{previous_output}} reads.
	b.bindPreviousOutput()
	written := writtenTexts(b.team.Tasks[from:])
	sb.bindParallelOutputs()
	sb.bindStepOutputs(b.team.Tasks[from:])
	noteSpellings(written)
	sb.compileConditions()
	b.team.madeNames, b.team.sharedNames = sb.made.spelled, sb.made.shared
}

// compileConditions gives each if step's agent its condition as bound.
func (sb *stepBuilder) compileConditions() {
	for tk, c := range sb.b.conditions {
		cond, _ := strings.CutPrefix(tk.Description, evaluatePrefix)
		parsed, err := parseCondition(cond)
		if err != nil {
			sb.b.errorf(c.src, c.src.pos(), "%v", err)
			continue
		}
		c.agent.Decides = &Decision{If: parsed, Prev: c.prev}
	}
}

// parallelOutputs is the variable PraisonAI sets after a parallel step:
// the list of its steps' outputs.
const parallelOutputs = "parallel_outputs"

// bindParallelOutputs makes {parallel_outputs} in a step's texts (or a
// loop over parallel_outputs) read the
// outputs of the last parallel step before it, as PraisonAI sets it: a
// task named after that step (a join, run by teamrun) makes the JSON array
// of them, in the steps' order, into a variable of its own, and the step
// reads that task in place of the parallel's steps, or besides what it
// reads, so that it waits for it. A variable of that name is left as it is.
func (sb *stepBuilder) bindParallelOutputs() {
	b := sb.b
	if _, isVar := b.team.Variables[parallelOutputs]; isVar || len(sb.parallels) == 0 {
		return
	}
	// Which parallel each reader reads, before the joins move the tasks.
	readers := map[*Task]int{}
	for i, tk := range b.team.Tasks {
		if _, isIf := b.conditions[tk]; !isIf {
			if a := b.team.Agent(tk.Agent); a != nil && a.made {
				continue // a route's or a join's: it reads no text
			}
		}
		loops := tk.Foreach != nil && tk.Foreach.Over == parallelOutputs
		if !loops && !slices.ContainsFunc(boundTexts(tk), func(s *string) bool { return readsVar(*s, parallelOutputs, praisonSteps) }) {
			continue
		}
		p := -1
		for k, ps := range sb.parallels {
			if b.taskAt[ps.last] < i {
				p = k
			}
		}
		if p >= 0 {
			readers[tk] = p
		}
	}
	joins := map[int]*Task{}
	for k, ps := range sb.parallels {
		used := false
		for _, p := range readers {
			used = used || p == k
		}
		if !used {
			continue
		}
		agent := "parallel:" + ps.name
		b.team.Agents = append(b.team.Agents, &Agent{Name: agent, Kind: JoinAgent, Pos: ps.src.kpos(), made: true})
		b.agents[agent] = true
		j := &Task{Name: ps.name, Agent: agent, Pos: ps.src.kpos(), HasContext: true, Context: slices.Clone(ps.outs),
			OutputVariable: sb.made.varFor(ps.name, parallelOutputs),
			Description:    fmt.Sprintf("the outputs of %s as a JSON array", strings.Join(ps.outs, ", "))}
		if b.placeTask(j, synthMap(ps.src), b.taskAt[ps.last]+1, stepNamed(ps.src)) {
			joins[k] = j
		}
	}
	for tk, k := range readers {
		j := joins[k]
		if j == nil {
			continue // its name is another task's: said
		}
		for _, s := range boundTexts(tk) {
			*s = renameVar(*s, parallelOutputs, j.OutputVariable)
		}
		if tk.Foreach != nil && tk.Foreach.Over == parallelOutputs {
			tk.Foreach.Over = j.OutputVariable
		}
		if _, isIf := b.conditions[tk]; isIf {
			// Besides the steps before it: its {{previous_output}} reads them.
			tk.Context = append(slices.DeleteFunc(tk.Context, func(c string) bool { return c == j.Name }), j.Name)
		} else {
			tk.Context = replaced(tk.Context, sb.parallels[k].outs, j.Name)
		}
		if f := tk.Foreach; f != nil && f.Chain {
			// The join is what the first item is fed now: the items
			// after it read the item before instead.
			f.Feed = replaced(f.Feed, sb.parallels[k].outs, j.Name)
		}
	}
}

// bindStepOutputs gives {NAME_output} placeholders, PraisonAI's name for
// the output of the step NAME (an unnamed step's: its agent's, by its key
// or PraisonAI's name for it), their value: the last such step before the
// reader stores its result as that variable (or, when it already has an
// output_variable, the placeholder reads that one): a repeat's, its last
// iteration's; a loop, whose items PraisonAI runs on a copy of the
// variables, keeps none. A name that is a variable already, or no earlier
// step's, is left as written. A NAME that is no identifier (fetch-data,
// 調査), which is no placeholder then, binds to a variable made of it
// (madeVars), one of its own; so do {{STEP_loop_outputs}}, a loop step's.
// A loop over NAME_output runs over that step's output the same way.
func (sb *stepBuilder) bindStepOutputs(tasks []*Task) {
	seen := map[*Task]bool{}
	last := func(name string) *Task { // the last step named name before the reader
		var src *Task
		for _, s := range sb.byName[name] {
			// A loop keeps no NAME_output: PraisonAI runs its items on a
			// copy of the variables. A repeat's is its last iteration's.
			if seen[s] && s.Foreach == nil {
				src = s
			}
		}
		return src
	}
	isVar := func(name string) bool {
		_, ok := sb.b.team.Variables[name]
		return ok
	}
	// output is the step {{v}} reads when v is NAME_output, NAME as a
	// placeholder may spell it (madeVars.named); nil when none.
	output := func(v string) *Task {
		name, ok := strings.CutSuffix(v, "_output")
		if !ok || isVar(v) {
			return nil
		}
		n, ok := sb.made.named(name, "output", func(n string) bool { return last(n) != nil })
		if !ok {
			return nil
		}
		src := last(n)
		if src.OutputVariable == "" {
			src.OutputVariable = sb.made.varFor(n, "output")
		}
		return src
	}
	var repeated, looped *Task // the last repeat and loop steps before the reader
	// The loop steps before the reader, by name: a text names their
	// outputs so whether or not another reads {{loop_outputs}}.
	loops := map[string]*Task{}
	loopNamed := func(v string) *Task { // v: STEP_loop_outputs; nil when a variable has the name
		name, ok := strings.CutSuffix(v, "_"+loopOutputs)
		if !ok || isVar(v) {
			return nil
		}
		n, ok := sb.made.named(name, loopOutputs, func(n string) bool { return loops[n] != nil })
		if !ok {
			return nil
		}
		return loops[n]
	}
	for _, tk := range tasks {
		switch f := tk.Foreach; {
		case f == nil:
		case f.Over == loopOutputs:
			if v := sb.loopOutputsOf(looped); v != "" {
				f.Over = v
			}
		case loopNamed(f.Over) != nil:
			f.Over = sb.loopOutputsVar(loopNamed(f.Over))
		default:
			// A loop over NAME_output loops over that step's output, as
			// PraisonAI keeps it, unless a variable has the name.
			if src := output(f.Over); src != nil {
				f.Over = src.OutputVariable
			}
		}
		for _, dst := range boundTexts(tk) {
			sb.bindRepeatIterations(dst, repeated)
			if readsVar(*dst, loopOutputs, praisonSteps) {
				if v := sb.loopOutputsOf(looped); v != "" {
					*dst = renameVar(*dst, loopOutputs, v)
				}
			}
			*dst = replacePlaceholders(*dst, praisonSteps, func(n string) (string, bool) {
				v, field, dotted := strings.Cut(n, ".")
				to := ""
				if l := loopNamed(v); l != nil {
					to = sb.loopOutputsVar(l)
				} else if src := output(v); src != nil {
					to = src.OutputVariable
				} else {
					return "", false
				}
				return spellVar(to, field, dotted), true
			})
			if !strings.Contains(*dst, "{{") {
				continue
			}
			// The NAMEs no placeholder is made of: PraisonAI replaces them
			// as written.
			*dst = stepOutputRE().ReplaceAllStringFunc(*dst, func(m string) string {
				if _, end := placeholderAt(m, 0, praisonSteps); end == len(m) {
					return m // a placeholder, bound above if it can be
				}
				sub := stepOutputRE().FindStringSubmatch(m)
				name, kind := sub[1], sub[2]
				if kind == loopOutputs {
					if l := loops[name]; l != nil {
						return "{{" + sb.loopOutputsVar(l) + "}}"
					}
					sb.unboundOutput(tk, m, fmt.Sprintf("no loop step before it is named %q", name))
					return m
				}
				src := last(name)
				if src == nil {
					sb.unboundOutput(tk, m, fmt.Sprintf("no step before it is named %q (a step's name:, else its agent's)", name))
					return m
				}
				if src.OutputVariable == "" {
					src.OutputVariable = sb.made.varFor(name, "output")
				}
				return "{{" + src.OutputVariable + "}}"
			})
		}
		seen[tk] = true
		if tk.Repeat != nil {
			repeated = tk
		}
		if tk.Foreach != nil {
			looped = tk
			loops[tk.Name] = tk
		}
	}
}

// repeatIterations is the variable PraisonAI sets when a repeat is done:
// how many iterations ran.
const repeatIterations = "repeat_iterations"

// praisonSetsWhere says where PraisonAI sets the variable name as a
// workflow runs, for the text of u that reads it elsewhere; "" for the
// others.
func (t *Team) praisonSetsWhere(name string, u PlaceholderUse) string {
	switch {
	case name == PreviousOutput && u.Agent:
		return "an agent's texts make the system message of every task it does, where PraisonAI fills no previous output either: write {{previous_output}} in a step's action or a task's description"
	case name == PreviousOutput && u.Unwritten:
		return "the step has no action:, and PraisonAI sends a later step of a parallel that opens the file {{previous_output}}, which nothing sets there: write the step's action"
	case name == PreviousOutput && u.Runs == "item":
		return "it is the output of the step before, and the loop's first item has none (the items after it read the item before)"
	case name == PreviousOutput && u.Runs == "iteration":
		return "it is the output of the step before, and the repeat's first iteration has none (the iterations after it read the one before)"
	case name == PreviousOutput && !t.PraisonSteps:
		return "it is the output of the task before, and the first task, or one with context: [], has none"
	}
	switch name {
	case repeatIterations:
		return "PraisonAI sets it once a repeat step is done, for the steps after it"
	case parallelOutputs:
		return "PraisonAI sets it once a parallel step is done, for the steps after it"
	case loopIndex:
		return "PraisonAI sets it in the step a loop runs"
	case loopOutputs:
		return "PraisonAI sets it once a loop step is done, for the steps after it"
	case PreviousOutput:
		return "it is the output of the step before, and the first step has none"
	case "input":
		return "it is the workflow's input: input: at the top, or PraisonAI's --input"
	}
	return ""
}

// bindRepeatIterations makes text's {repeat_iterations} read how many
// iterations the repeat step r (the last before the text's step; nil:
// none) ran, counted into a variable of its own (Repeat.Count) so that a
// later repeat's count is never taken for it. A variable of that name is
// left as it is.
func (sb *stepBuilder) bindRepeatIterations(text *string, r *Task) {
	if _, isVar := sb.b.team.Variables[repeatIterations]; r == nil || isVar || !readsVar(*text, repeatIterations, praisonSteps) {
		return
	}
	if r.Repeat.Count == "" {
		r.Repeat.Count = sb.made.varFor(r.Name, repeatIterations)
	}
	*text = renameVar(*text, repeatIterations, r.Repeat.Count)
}

// loopOutputs is the variable PraisonAI sets when a loop step is done:
// the list of its items' outputs.
const loopOutputs = "loop_outputs"

// loopOutputsOf is the variable {{loop_outputs}} (or a loop over
// loop_outputs) reads after the loop step l, the last before the reader
// (nil: none), as PraisonAI sets it: loopOutputsVar. "" when nothing
// binds it: no loop before, or a variable of that name.
func (sb *stepBuilder) loopOutputsOf(l *Task) string {
	if _, isVar := sb.b.team.Variables[loopOutputs]; l == nil || isVar {
		return ""
	}
	return sb.loopOutputsVar(l)
}

// loopOutputsVar is the variable that holds the outputs of loop step l:
// its output_variable, which its join sets to the JSON array of the
// items' outputs (PraisonAI sets the loop's output_variable to that list
// too), named STEP_loop_outputs (madeVars) when it has none. It is set
// only when a text reads it: the key of a loop no step reads stays as it
// was.
func (sb *stepBuilder) loopOutputsVar(l *Task) string {
	if l.OutputVariable == "" {
		l.OutputVariable = sb.made.varFor(l.Name, loopOutputs)
	}
	return l.OutputVariable
}

// unboundOutput warns that tk's {{NAME_output}} (or {{NAME_loop_outputs}})
// m names no step before it, as why says.
func (sb *stepBuilder) unboundOutput(tk *Task, m, why string) {
	b := sb.b
	src := b.tasks[b.taskAt[tk.Name]]
	at := src
	for _, k := range []string{"action", "description", "expected_output", "output_file"} {
		if v := src.get(k); v != nil && strings.Contains(v.text, m) {
			at = v
			break
		}
	}
	b.warnf(at, at.pos(), "%s: %s, so the text keeps it as written", m, why)
}

// stepOutputRE finds {{NAME_output}}s and {{NAME_loop_outputs}}s, NAME
// an identifier or not (submatches: NAME, the kind): PraisonAI replaces
// them as written.
var stepOutputRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*([^{}\s][^{}]*?)_(output|loop_outputs)\s*\}\}`)
})

func stepName(st *tree, fallback string) string {
	if s, ok := st.get("name").str(); ok && s != "" {
		return s
	}
	return fallback
}

// step maps one step, run after the tasks prev, and returns the tasks the
// next step reads; first: it is the first of its list (of steps, of a
// parallel, of a branch).
func (sb *stepBuilder) step(st *tree, name string, prev []string, first bool) []string {
	b := sb.b
	if !st.isMap() {
		hint := ""
		if s, ok := st.str(); ok && b.agents[s] {
			hint = fmt.Sprintf(": write {agent: %s} to run that agent", s)
		}
		b.errorf(st, st.pos(), "expected a step (a mapping with agent and action), got %s%s", st.describe(), hint)
		return prev
	}
	if sb.refused[st] {
		if b.refusedSteps == nil {
			b.refusedSteps = map[string]bool{}
		}
		b.refusedSteps[name] = true
		return prev // said where it was refused
	}
	if n := st.get("name"); n != nil {
		if _, ok := n.str(); !ok {
			// stepName would name it step_N: say so instead of
			// dropping the name (name: 9).
			b.errorf(n, n.pos(), "expected a step name, got %s", n.gotText())
		}
	}
	if s := stepName(st, ""); s != "" && !nameRE().MatchString(s) && !slices.Contains(b.badNames, s) {
		// Said here, before the tasks named after it (a route's
		// STEP_LABEL, a parallel's STEP_K), which placeTask then leaves
		// unsaid; a second step of the name is a duplicate, said there.
		b.errorf(st, st.kpos(), badStepName, quoteShort(s))
		b.badNames = append(b.badNames, s)
	}
	switch {
	case st.get("parallel") != nil:
		sb.dag = true
		p := st.get("parallel")
		if !p.isSeq() || len(p.items()) == 0 {
			b.errorf(p, p.pos(), "expected a list of steps to run at once, got %s", p.describe())
			return prev
		}
		sb.otherKeys(st, "parallel")
		var outs []string
		for k, sub := range p.items() {
			outs = append(outs, sb.step(sub, stepName(sub, fmt.Sprintf("%s_%d", name, k+1)), prev, k == 0)...)
		}
		if n := len(b.team.Tasks); n > 0 {
			sb.parallels = append(sb.parallels, parallelStep{name: name, outs: outs, last: b.team.Tasks[n-1].Name, src: st})
		}
		return outs
	case st.get("route") != nil:
		sb.dag = true
		return sb.route(st, name, prev)
	case st.get("if") != nil:
		sb.dag = true
		return sb.ifStep(st, name, prev)
	case st.get("loop") != nil:
		return sb.agentStep(sb.loopStep(st), name, prev, first)
	}
	return sb.agentStep(st, name, prev, first)
}

// loopBody is the one step a loop step runs, as PraisonAI picks it
// (yaml_parser.py, _parse_loop_step): its steps: (or loop.steps:), else
// loop.step: (an agent's name), else step: (a step, or an agent's name),
// else the step itself; n is how many steps there are (body nil when
// not one).
func loopBody(st *tree) (body *tree, n int) {
	l := st.get("loop")
	steps := st.get("steps")
	if steps == nil {
		steps = l.get("steps")
	}
	if items := steps.itemsOrNil(); len(items) > 0 {
		if len(items) > 1 {
			return nil, len(items)
		}
		return items[0], 1
	}
	if s := l.get("step"); s != nil {
		return s, 1
	}
	if s := st.get("step"); s != nil {
		return s, 1
	}
	if st.get("agent") != nil {
		return st, 1
	}
	return nil, 0
}

// loopStep is a loop step as one agent step: its loop and other keys,
// with the agent and action of the step it runs (loopBody).
func (sb *stepBuilder) loopStep(st *tree) *tree {
	body, _ := loopBody(st)
	if body == st || body == nil {
		return st
	}
	what := map[string]bool{"agent": true, "action": true, "description": true, "expected_output": true}
	out := synthMap(st)
	for i, k := range st.keys() {
		switch {
		case k == "step" || k == "steps":
		case what[k]:
			sb.b.warnf(st.vals()[i], st.vals()[i].kpos(), "ignored: PraisonAI runs the loop's step (line %d), not this one's %s", body.kpos().Line, k)
		default:
			out.add(k, st.vals()[i])
		}
	}
	if _, ok := body.str(); ok {
		out.add("agent", body)
		return out
	}
	for i, k := range body.keys() {
		if k == "name" {
			continue // the loop step's name names the task
		}
		if st.get(k) == nil || what[k] {
			out.add(k, body.vals()[i])
		} else {
			sb.b.warnf(body.vals()[i], body.vals()[i].kpos(), "ignored: the loop step sets %s (line %d); keep one", k, st.get(k).kpos().Line)
		}
	}
	return out
}

// otherKeys warns about the keys of a pattern step besides its pattern:
// a key of an agent step (agent:, action:, …) is PraisonAI's own, which
// its parser ignores there too, so the warning says what the pattern
// runs instead, not that the key may be misspelt.
func (sb *stepBuilder) otherKeys(st *tree, pattern string) {
	for i, k := range st.keys() {
		v := st.vals()[i]
		switch {
		case k == pattern || k == "name":
		case praisonStepKey(k) && !v.isNull():
			sb.b.warnf(v, v.kpos(), "ignored, as PraisonAI ignores it here: %s", patternRuns(pattern, k))
		default:
			sb.b.praisonIgnored(v)
		}
	}
}

// praisonStepKey says whether k is a key PraisonAI reads on an agent step
// (yaml_parser.py, _parse_agent_step), and only there.
func praisonStepKey(k string) bool {
	switch k {
	case "agent", "action", "description", "expected_output", "context", "output_file", "output_json",
		"output_pydantic", "output_variable", "create_directory", "callback", "async_execution",
		"guardrail", "max_retries", "retry_delay", "skip_on_failure":
		return true
	}
	return false
}

// patternRuns says what a route:, parallel: or if: step runs, and where
// key k of an agent step goes instead.
func patternRuns(pattern, k string) string {
	switch {
	case pattern == "route" && k == "agent":
		return "a route step runs only the agents its labels list (route: {LABEL: [AGENT]}), each fed the output of the step before it; to run this agent there, list it under a label; to have it classify, give it the step before the route"
	case pattern == "route":
		return "a route step runs only the agents its labels list (route: {LABEL: [AGENT]}), each fed the output of the step before it; to use this, give it a step of its own"
	case pattern == "parallel":
		return "a parallel step runs only the steps it lists; to use this, put it in one of them"
	}
	return "an if step runs only the steps of its then: or else:; to use this, put it in one of them"
}

// nameSource is where a step task's name comes from, for the error of a
// name two tasks have: the user's name: (at, made ""), or teamrun's, made
// up for what made says, which is declared at at.
type nameSource struct {
	at      *tree
	made    string
	unnamed bool // made: a step's without name:, which the user can name
}

// stepNamed is the nameSource of the task of step st: its name:, else
// the name teamrun gives it by its place.
func stepNamed(st *tree) nameSource {
	if stepName(st, "") != "" {
		return nameSource{at: st.get("name")}
	}
	return nameSource{at: st, made: "the unnamed step " + st.path, unnamed: true}
}

// addTask adds a task mapped from a step after the others: placeTask.
func (b *builder) addTask(tk *Task, src *tree, ns nameSource) bool {
	return b.placeTask(tk, src, -1, ns)
}

// placeTask adds tk at position at (-1: after the others), before the
// tasks already added after it; its name comes from ns, and src is where
// its other errors point. It reports whether tk was added: a name another
// task has is an error (nameTaken), and the task is left out, so that
// nothing reads the other task for it.
func (b *builder) placeTask(tk *Task, src *tree, at int, ns nameSource) bool {
	if i, dup := b.taskAt[tk.Name]; dup {
		b.nameTaken(tk.Name, b.stepNames[tk.Name], ns, b.team.Tasks[i].Pos.Line, src)
		return false
	}
	if !nameRE().MatchString(tk.Name) && !b.madeOfBadName(tk.Name) {
		b.errorf(src, src.kpos(), badStepName, quoteShort(tk.Name))
	}
	if at < 0 || at > len(b.team.Tasks) {
		at = len(b.team.Tasks)
	}
	b.team.Tasks = slices.Insert(b.team.Tasks, at, tk)
	b.tasks = slices.Insert(b.tasks, at, src)
	for i := at; i < len(b.team.Tasks); i++ {
		b.taskAt[b.team.Tasks[i].Name] = i
	}
	if b.stepNames == nil {
		b.stepNames = map[string]nameSource{}
	}
	b.stepNames[tk.Name] = ns
	return true
}

// badStepName is the error of a step's name that is no name (nameRE).
const badStepName = "expected a step name without slashes or control characters, not starting with a dot or a space, got %s"

// madeOfBadName says whether name is bad only for a step name it starts
// with that was said to be bad (badNames): the name itself, or one
// teamrun makes of it (lang/route_default of lang/route). One whose own
// part is bad too (a route label a/b) is not.
func (b *builder) madeOfBadName(name string) bool {
	for _, bad := range b.badNames {
		if rest, ok := strings.CutPrefix(name, bad); ok && nameRE().MatchString("x"+rest) {
			return true
		}
	}
	return false
}

// nameTaken reports that name, which first (declared at line) has, is
// again's too (src: where again's task is declared): at the user's step
// when teamrun made the other name up, saying so, since the user never
// wrote that one. A first without source (a task no step made) is the
// user's, said as a duplicate name.
func (b *builder) nameTaken(name string, first, again nameSource, line int, src *tree) {
	user, made := first, again
	if first.made != "" {
		user, made = again, first
	}
	switch {
	case user.made == "" && made.made == "" || first.at == nil:
		b.errorf(src, src.kpos(), "%s", duplicateName("step", name, line))
	case user.made == "":
		fix := "rename this step"
		if made.unnamed {
			fix += ", or give that one a name"
		}
		b.errorf(user.at, user.at.pos(), "step name %q is the name teamrun gives %s (line %d): %s", name, made.made, made.at.kpos().Line, fix)
	default:
		fix := "rename the step or route label one of them comes from"
		if first.unnamed || again.unnamed {
			fix += ", or give the unnamed step a name"
		}
		b.errorf(src, src.kpos(), "teamrun gives the name %q to %s (line %d) and to %s (line %d): %s", name, first.made, first.at.kpos().Line, again.made, again.at.kpos().Line, fix)
	}
}

func (sb *stepBuilder) agentStep(st *tree, name string, prev []string, first bool) []string {
	b := sb.b
	tk := &Task{Name: name, Pos: st.kpos(), HasContext: true, Context: append([]string(nil), prev...)}
	text := func(f *tree, dst *string) { b.praisonString(f, dst) }
	for i, k := range st.keys() {
		f := st.vals()[i]
		switch k {
		case "name":
		case "agent":
			if s, ok := f.str(); ok {
				tk.Agent = s
			} else if f.isMap() {
				// An inline agent: it takes the step's name.
				b.praisonRole(name, f, false, false)
				tk.Agent = name
			} else {
				b.errorf(f, f.pos(), "expected an agent's name, got %s", f.gotText())
			}
		case "action", "description":
			text(f, &tk.Description)
		case "expected_output":
			text(f, &tk.ExpectedOutput)
		case "context":
			// PraisonAI runs steps in file order and reads none of a
			// step's context: the step still reads, and waits for, the
			// step before it; the steps named add their outputs.
			named := &Task{}
			b.praisonContext(f, named)
			for _, c := range named.Context {
				if !slices.Contains(tk.Context, c) {
					tk.Context = append(tk.Context, c)
				}
			}
		case "max_retries":
			b.praisonRetries(f, tk)
		case "retry_delay":
			tk.RetryDelay = b.seconds(f)
		case "timeout":
			tk.Timeout = b.seconds(f)
		case "output_variable":
			b.praisonString(f, &tk.OutputVariable)
		case "condition":
			b.praisonCondition(f, tk)
		case "skip_on_failure":
			if v, _ := f.val().(bool); v {
				b.warnf(f, f.kpos(), "not supported, ignored: teamrun has no native equivalent, so a failed step fails the run (exit 1) after its retries; `--continue` runs it again")
			}
		case "output_file":
			of := tk.OutputFile()
			b.praisonString(f, &of)
			tk.SetOutputFile(of)
		case "output_json":
			// A JSON Schema is what PraisonAI asks the model to answer in:
			// teamrun's output_schema. Anything else names a Python class
			// (or says yes), or sketches fields ({title: string}) that no
			// schema checks: teamrun cannot read those.
			switch {
			case jsonSchemaLike(f):
				b.outputSchema(f, tk)
			case f.isMap():
				b.warnf(f, f.kpos(), "ignored: not a JSON Schema (no type:, properties: or items:), so the result is not checked; to have it asked for and checked, write one, such as {type: object, properties: {title: {type: string}}, required: [title]}")
			default:
				b.praisonIgnored(f)
			}
		case "loop":
			sb.loop(f, tk, prev)
		case "repeat":
			// PraisonAI's repeat: {until, max_iterations} is teamrun's.
			tk.Repeat = b.repeat(f, true)
			for _, k := range f.keys() {
				if k != "until" && k != "max_iterations" {
					b.praisonIgnored(f.get(k))
				}
			}
		case "tools":
			agent, _ := st.get("agent").str()
			b.praisonTools(b.team.Agent(agent), f)
		default:
			if !b.praisonFlowKey(k, f, st, "steps") {
				b.praisonIgnored(f)
			}
		}
	}
	if st.get("agent") == nil {
		b.errorf(st, st.kpos(), "missing required key \"agent\": name the agent that does this step")
	}
	if st.get("action") == nil && st.get("description") == nil {
		item := ""
		if tk.Foreach != nil {
			item = tk.Foreach.As
		}
		var orElse string
		tk.Description, orElse = sb.noAction(first, len(prev) > 0, item)
		tk.setNoInput(orElse)
	}
	if !b.addTask(tk, st, stepNamed(st)) {
		return prev
	}
	b.userTexts = append(b.userTexts, tk)
	var keys []string
	if n := stepName(st, ""); n != "" {
		keys = append(keys, n)
	}
	if len(keys) == 0 || tk.Repeat != nil {
		// PraisonAI's name of the agent, and its key as teamrun has read
		// it: PraisonAI names a repeat step's output after its agent
		// whatever its name: says.
		keys = append(keys, tk.Agent)
		if n, ok := b.stepOutputName[tk.Agent]; ok {
			keys = append(keys, n)
		}
	}
	for _, k := range dedup(keys) {
		if sb.byName[k] == nil {
			sb.names = append(sb.names, k)
		}
		sb.byName[k] = append(sb.byName[k], tk)
	}
	return []string{name}
}

// carryOn is the description of a step without action that PraisonAI
// feeds the previous output: teamrun appends that output as context.
const carryOn = "Carry on from the previous step's output."

// noAction is what a step without action does, as PraisonAI runs it: the
// first of its list takes the workflow's input, a later one the previous
// output (which teamrun appends as context either way). A first with a
// step before it, where nothing defines input (neither input: nor --var,
// known only as the run starts, nor an output_variable: Task.textIn),
// carries on from that step: orElse is that text, "" when there is none.
// Where there is no previous output, a loop's step (item: the name its
// item is bound to, else "") of a file without input: is given its item,
// where PraisonAI would send the empty input; another step, the
// placeholder PraisonAI sends as written there, which the placeholder
// check says nothing defines, as it says of any {{VAR}}: {{input}} (its
// CLI's --input, --var input= here), or, in a later step of a parallel
// that opens the file, {{previous_output}}.
func (sb *stepBuilder) noAction(first, hasPrev bool, item string) (desc, orElse string) {
	input := praisonSteps.spell("input")
	switch {
	case first && hasPrev:
		return input, carryOn
	case first && sb.hasInput:
		return input, ""
	case hasPrev:
		return carryOn, ""
	case item != "":
		return praisonSteps.spell(item), ""
	case first:
		return input, ""
	}
	return praisonSteps.spell(PreviousOutput), ""
}

// jsonSchemaLike says whether v is a mapping with a JSON Schema keyword
// that says what the value is, rather than a sketch of field names.
func jsonSchemaLike(v *tree) bool {
	if !v.isMap() {
		return false
	}
	for _, k := range []string{"type", "properties", "items", "$schema", "$ref", "enum", "const", "anyOf", "oneOf", "allOf"} {
		if v.get(k) != nil {
			return true
		}
	}
	return false
}

// loopIndex is the variable PraisonAI binds to a loop item's position.
const loopIndex = "loop_index"

// loop maps PraisonAI's loop: {over, var_name} onto foreach, run after the
// tasks prev. As PraisonAI runs it, each item after the first is fed the
// previous item's output in place of prev's (Foreach.Chain); parallel: true
// runs the instances at once instead, each fed prev's, which teamrun's
// workflow process does.
func (sb *stepBuilder) loop(f *tree, tk *Task, prev []string) {
	b := sb.b
	tk.Foreach = &Foreach{As: foreachAs, Pos: f.kpos(), Text: true, Index: loopIndex, Path: f.path}
	parallel := false
	for i, k := range f.keys() {
		v := f.vals()[i]
		switch k {
		case "over":
			tk.Foreach.Over, _ = v.str()
		case "var_name":
			if s, ok := v.str(); ok && identRE().MatchString(s) {
				tk.Foreach.As = s
			} else {
				got := v.describe()
				if identRE().MatchString(v.text) {
					got = v.gotText()
				}
				b.errorf(v, v.pos(), "expected a variable name, got %s", got)
			}
		case "parallel":
			p, _ := b.praisonBool(v)
			if p {
				sb.dag = true
			}
			parallel = p
		case "max_workers":
			b.warnf(v, v.kpos(), "ignored: --max-parallel (default 4) bounds how many instances run at once")
		case "step", "steps":
			// the step the loop runs (loopStep)
		case "from_csv", "from_file":
			// Alone, refused (stepRefusal); beside over, PraisonAI reads
			// over first and never opens the file.
			b.warnf(v, v.kpos(), "ignored: over: wins, as in PraisonAI, which loops over the variable and does not read the file")
		default:
			b.praisonIgnored(v)
		}
	}
	if !parallel {
		tk.Foreach.Chain, tk.Foreach.Feed = true, slices.Clone(prev)
	}
}

// route maps `route: {LABEL: [agents], default: [agents]}`: a task named
// after the step picks the label, as PraisonAI does (the first label found
// as a word in the previous output, case-insensitive; else default), and
// its condition runs that label's agents, each fed the previous output.
func (sb *stepBuilder) route(st *tree, name string, prev []string) []string {
	b := sb.b
	r := st.get("route")
	sb.otherKeys(st, "route")
	if !r.isMap() || len(r.keys()) == 0 {
		b.errorf(r, r.pos(), "expected a mapping of labels to agents, got %s", r.describe())
		return prev
	}
	if len(prev) == 0 {
		b.errorf(r, r.kpos(), "a route step routes on the output of the step before it (a classifier): put such a step first")
		return prev
	}
	agentName := "route:" + name
	var labels []string
	var labelAt []int // the line of each of labels
	for i, l := range r.keys() {
		if l == "default" {
			continue
		}
		// The label is looked for as a word of the output, and the route
		// task's trimmed output is matched to it: an empty one would be
		// found in every output, and one with a space at an end, or a
		// line break, never be picked as written.
		if strings.TrimSpace(l) != l || l == "" || strings.IndexFunc(l, unicode.IsControl) >= 0 {
			b.errorf(r.vals()[i], r.vals()[i].kpos(), "expected a label to find in the output, got %s: a word or words, without a space at either end or a line break", quoteShort(l))
			continue
		}
		if msg := shadowedLabel(l, labels, labelAt); msg != "" {
			b.errorf(r.vals()[i], r.vals()[i].kpos(), "%s", msg)
		}
		labels = append(labels, l)
		labelAt = append(labelAt, r.vals()[i].kpos().Line)
	}
	// After a parallel step it reads their outputs: PraisonAI routes on
	// their joined output.
	b.team.Agents = append(b.team.Agents, &Agent{Name: agentName, Kind: RouteAgent, Pos: r.kpos(), made: true,
		Decides: &Decision{Labels: labels, Prev: slices.Clone(prev)}})
	b.agents[agentName] = true
	rt := &Task{Name: name, Agent: agentName, Pos: st.kpos(), HasContext: true, Context: prev,
		Description: fmt.Sprintf("Pick the route for the output of %s: %s, else default", strings.Join(prev, " and "), strings.Join(labels, ", "))}
	condTree := synthMap(r)
	at := len(b.team.Tasks)
	var outs []string
	// A label that runs no agent (default, when not given) runs pass,
	// which passes the classifier's output on: the next step reads that,
	// and a branch's output alone when a branch ran, as in PraisonAI.
	passName := name + "_pass"
	if r.get("default").isNull() {
		passName = name + "_default"
	}
	type labelRoute struct {
		label string
		src   *tree
		next  []string // nil: pass
	}
	var routes []labelRoute
	for i, l := range r.keys() {
		v := r.vals()[i]
		items := v.itemsOrNil()
		if _, ok := v.str(); ok {
			items = []*tree{v}
		} else if !v.isSeq() && !v.isNull() {
			b.errorf(v, v.pos(), "expected a list of agents, got %s", v.describe())
		}
		var branch []string
		ctx := prev
		for k, it := range items {
			agent, ok := it.str()
			if !ok {
				b.errorf(it, it.pos(), "expected an agent's name, got %s", it.gotText())
				continue
			}
			tn := name + "_" + l
			if k > 0 {
				tn = fmt.Sprintf("%s_%d", tn, k+1)
			}
			// As PraisonAI runs a branch: its first agent takes the input,
			// each later one the output before it.
			desc, orElse := sb.noAction(k == 0, true, "")
			made := nameSource{at: it, made: fmt.Sprintf("the task that runs agent %s for the label %s of route step %q", agent, quoteShort(l), name)}
			tk := &Task{Name: tn, Agent: agent, Description: desc, Pos: it.pos(), HasContext: true, Context: ctx}
			tk.setNoInput(orElse)
			if b.addTask(tk, synthMap(it, "agent", it), made) {
				branch = append(branch, tn)
				ctx = []string{tn}
			}
		}
		if len(branch) > 0 {
			outs = append(outs, branch[len(branch)-1])
		}
		routes = append(routes, labelRoute{l, v, branch})
	}
	if r.get("default") == nil {
		routes = append(routes, labelRoute{"default", r, nil})
	}
	// After the branches' tasks, as the file has them; what routes to it
	// once it is added, and to nothing when its name is another's.
	pass := []string{}
	if slices.ContainsFunc(routes, func(lr labelRoute) bool { return lr.next == nil }) &&
		sb.passStep(passName, "route:", name, "the route runs no agent", prev, r) {
		pass = []string{passName}
		outs = append(outs, passName)
	}
	for _, lr := range routes {
		if lr.next == nil {
			lr.next = pass
		}
		rt.SetCondition(append(rt.Condition(), Route{Value: lr.label, Next: lr.next}))
		condTree.add(lr.label, synthList(lr.src, lr.next))
	}
	// The route task goes before its branches, so that file order is run order.
	b.placeTask(rt, synthMap(st, "condition", condTree), at, stepNamed(st))
	return outs
}

// shadowedLabel says why route label l, after the labels before (each at
// its line in at), can never be picked, "" when it can: Decision.Decide
// picks the first label in file order found as a word of the output,
// ignoring case, and wherever l is found, a label l holds as a word is
// found too (Yes beside yes, yes beside yes please).
func shadowedLabel(l string, before []string, at []int) string {
	for k, e := range before {
		switch {
		case Lower(e) == Lower(l):
			return fmt.Sprintf("label %s is label %s (line %d) but for case, and labels are found ignoring case, so only the first could ever be picked: keep one", quoteShort(l), quoteShort(e), at[k])
		case HasWordFold(l, e):
			return fmt.Sprintf("label %s holds label %s (line %d) as a word, so an output that holds it holds that one too, which comes first and is picked: it could never be picked; put it before %s", quoteShort(l), quoteShort(e), at[k], quoteShort(e))
		}
	}
	return ""
}

// passStep adds a task named name that passes the outputs of prev on, for
// a branch of the route or if step (kind) named step that runs no agent:
// the next step reads it, and a branch's output alone when a branch ran,
// as PraisonAI passes the previous output on. Its agent, a command made
// for it, is named kind+name; src is where it is declared; why ends its
// description. It reports whether it was added (placeTask).
func (sb *stepBuilder) passStep(name, kind, step, why string, prev []string, src *tree) bool {
	b := sb.b
	var script strings.Builder
	if len(prev) == 1 {
		fmt.Fprintf(&script, "cat \"$TEAMRUN_CONTEXT_DIR\"/%s\n", shQuote(prev[0]))
	} else {
		// The outputs of a parallel step before it, each its own; or of
		// the branches of an if or route, of which those not taken were
		// skipped and have no output.
		script.WriteString("s=\nfor f in")
		for _, p := range prev {
			fmt.Fprintf(&script, " \"$TEAMRUN_CONTEXT_DIR\"/%s", shQuote(p))
		}
		script.WriteString("; do\n\tif [ -e \"$f\" ]; then printf \"$s\"; cat \"$f\" || exit; s='\\n\\n'; fi\ndone\n")
	}
	agent := kind + name
	b.team.Agents = append(b.team.Agents, &Agent{Name: agent, Kind: CommandAgent, Shell: script.String(), Pos: src.kpos(), made: true})
	b.agents[agent] = true
	made := fmt.Sprintf("the task of %s step %q that passes the output on when %s", strings.TrimSuffix(kind, ":"), step, why)
	return b.addTask(&Task{Name: name, Agent: agent, Pos: src.kpos(), HasContext: true, Context: prev,
		Description: fmt.Sprintf("Pass the output of %s on: %s", strings.Join(prev, " and "), why)}, synthMap(src), nameSource{at: src, made: made})
}

// ifStep maps `if: {condition, then, else}`: a task named after the step
// evaluates the comparison on the shared state when it runs (a route
// agent, Decision) and its result, then or else, runs that branch's steps.
func (sb *stepBuilder) ifStep(st *tree, name string, prev []string) []string {
	b := sb.b
	c := st.get("if")
	sb.otherKeys(st, "if")
	if !c.isMap() {
		b.errorf(c, c.pos(), "expected a mapping with condition, then and else, got %s", c.describe())
		return prev
	}
	condT := c.get("condition")
	cond, ok := condT.str()
	if !ok || strings.TrimSpace(cond) == "" {
		b.errorf(c, c.kpos(), "missing required key \"condition\", such as \"{{score}} >= 80\"")
		return prev
	}
	if _, err := parseCondition(cond); err != nil {
		b.errorf(condT, condT.pos(), "%v", err)
		return prev
	}
	for _, k := range c.keys() {
		if k != "condition" && k != "then" && k != "else" {
			b.praisonIgnored(c.get(k))
		}
	}
	agentName := "if:" + name
	agent := &Agent{Name: agentName, Kind: RouteAgent, Pos: c.kpos(), made: true}
	b.team.Agents = append(b.team.Agents, agent)
	b.agents[agentName] = true
	it := &Task{Name: name, Agent: agentName, Pos: st.kpos(), HasContext: true, Context: prev,
		Description: evaluatePrefix + cond}
	if b.conditions == nil {
		b.conditions = map[*Task]ifCond{}
	}
	b.conditions[it] = ifCond{agent: agent, prev: prev, src: condT}
	at := len(b.team.Tasks)
	condTree := synthMap(c)
	var outs []string
	for _, br := range []string{"then", "else"} {
		v := c.get(br)
		before := len(b.team.Tasks)
		branchPrev := prev
		for k, sub := range v.itemsOrNil() {
			branchPrev = sb.step(sub, stepName(sub, fmt.Sprintf("%s_%s_%d", name, br, k+1)), branchPrev, k == 0)
		}
		if v != nil && !v.isSeq() && !v.isNull() {
			b.errorf(v, v.pos(), "expected a list of steps, got %s", v.describe())
		}
		src := v
		if src == nil {
			src = c
		}
		var names []string
		for _, t := range b.team.Tasks[before:] {
			names = append(names, t.Name)
		}
		if len(names) == 0 {
			// No step (an if without else): the next step reads what came
			// before the if, as PraisonAI passes it on, not the if's own
			// "then" or "else".
			pass := name + "_" + br
			names = []string{} // routes nowhere when pass's name is another's
			if sb.passStep(pass, "if:", name, "the "+br+" branch runs no step", prev, src) {
				names, branchPrev = []string{pass}, []string{pass}
			}
		}
		outs = append(outs, branchPrev...)
		it.SetCondition(append(it.Condition(), Route{Value: br, Next: names}))
		condTree.add(br, synthList(src, names))
	}
	// Its description is the condition, where a placeholder's warning points.
	b.placeTask(it, synthMap(st, "condition", condTree, "description", condT), at, stepNamed(st))
	return dedup(outs)
}

func dedup(l []string) []string {
	seen := map[string]bool{}
	out := l[:0]
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// shQuote quotes s for /bin/sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// identRE is a variable's name.
var identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// bindPreviousOutput makes the {{previous_output}} of each task in
// b.userTexts (the tasks whose texts the file writes) a reference to the
// context teamrun appends to the prompt, where the previous output is
// given, when the task has one: it reads a task (its context:, the step
// before it, in a sequential team the task before it). A task with none
// (the first, or one with context: []) keeps it as written, as PraisonAI
// sends it, and the placeholder check says so, as for any {{VAR}} nothing
// sets; so does the first item of a loop that has none, while the items
// after it, which read the item before, are bound as the loop expands
// (Team.ExpandWith). An agent's texts are never bound: they make the
// system message of every task the agent does, where PraisonAI fills no
// previous output either. The text's other {{VAR}}s stay as written:
// Render fills them.
func (b *builder) bindPreviousOutput() {
	for _, tk := range b.userTexts {
		i, ok := b.taskAt[tk.Name]
		if !ok || b.team.Tasks[i] != tk || len(b.team.contextAs(i, nil)) == 0 {
			continue
		}
		tk.Description, tk.ExpectedOutput = previousBound(tk.Description), previousBound(tk.ExpectedOutput)
	}
	b.userTexts = nil
}

// previousBound is text with its {{previous_output}} a reference to the
// context teamrun appends to the prompt: the one spelling of it, for a
// task that reads something and for a loop's item that reads the item
// before.
func previousBound(text string) string {
	return replacePlaceholders(text, praisonSteps, func(name string) (string, bool) {
		return "the previous step's output (below)", name == PreviousOutput
	})
}

// boundTexts are the texts of tk the variables PraisonAI binds as a
// workflow runs are bound in: its description, expected output and
// output_file (filled when it is written).
func boundTexts(tk *Task) []*string {
	texts := []*string{&tk.Description, &tk.ExpectedOutput}
	if tk.OutputFile() != "" {
		tk.setMore(func(*taskMore) {}) // its own, to be written through
		texts = append(texts, &tk.more.outputFile)
	}
	return texts
}

// writtenTexts are the boundTexts of tasks as the file writes them,
// before the bindings that make a placeholder read a variable of
// teamrun's: noteSpellings compares the texts as bound with them.
func writtenTexts(tasks []*Task) map[*Task][]string {
	texts := make(map[*Task][]string, len(tasks))
	for _, tk := range tasks {
		for _, s := range boundTexts(tk) {
			texts[tk] = append(texts[tk], *s)
		}
	}
	return texts
}

// noteSpellings gives each task whose texts the bindings changed how the
// file spells the placeholders they bound (taskMore.written), for
// RenderTask to send one that does not resolve as written.
func noteSpellings(written map[*Task][]string) {
	for tk, texts := range written {
		var all []spellings
		for i, s := range boundTexts(tk) {
			if sp := spellingsOf(texts[i], *s); sp != nil {
				all = append(all, make([]spellings, i+1-len(all))...)
				all[i] = sp
			}
		}
		if all != nil {
			tk.setMore(func(m *taskMore) { m.written = all })
		}
	}
}

// spellingsOf is how text, as the file writes it, spells the
// placeholders of bound, the text as bound, that differ. The bindings
// replace whole {{…}} placeholders only, so the text between bound's
// placeholders is text's, and each of text's ends at its first }}. nil
// when none differs, or when the two do not align so.
func spellingsOf(text, bound string) spellings {
	if text == bound {
		return nil
	}
	var sp spellings
	n := map[string]int{} // the placeholders read so far, by variable
	at, prev, ok := 0, 0, true
	eachPlaceholder(bound, praisonSteps, func(name string, start, end int) {
		lit := bound[prev:start]
		prev = end
		if !ok || !strings.HasPrefix(text[at:], lit+"{{") {
			ok = false
			return
		}
		at += len(lit)
		inner := strings.Index(text[at+2:], "}}")
		if inner < 0 {
			ok = false
			return
		}
		written := text[at : at+2+inner+2]
		at += len(written)
		root, _, _ := strings.Cut(name, ".")
		k := n[root]
		n[root]++
		if written != bound[start:end] {
			if sp == nil {
				sp = spellings{}
			}
			sp[root] = append(sp[root], make([]string, k+1-len(sp[root]))...)
			sp[root][k] = written
		}
	})
	if !ok || text[at:] != bound[prev:] {
		return nil
	}
	return sp
}

// renameVar makes text's {{from}} (and {{from.field}}) read the variable
// to instead.
func renameVar(text, from, to string) string {
	return replacePlaceholders(text, praisonSteps, func(name string) (string, bool) {
		root, field, dotted := strings.Cut(name, ".")
		if root != from {
			return "", false
		}
		return spellVar(to, field, dotted), true
	})
}

// spellVar spells the placeholder {{name}}, or {{name.field}} when dotted.
func spellVar(name, field string, dotted bool) string {
	if dotted {
		return "{{" + name + "." + field + "}}"
	}
	return "{{" + name + "}}"
}

// seconds reads a PraisonAI duration: a number of seconds (a float is
// fine) or Go's duration text.
func (b *builder) seconds(f *tree) time.Duration {
	switch x := f.val().(type) {
	case int64:
		if x >= 0 && x < 1<<33 {
			return time.Duration(x) * time.Second
		}
	case float64:
		if x >= 0 && x < 1<<33 {
			return time.Duration(x * float64(time.Second))
		}
	case string:
		if d, err := time.ParseDuration(x); err == nil && d >= 0 {
			return d
		}
		if n, err := strconv.ParseFloat(x, 64); err == nil && n >= 0 && n < 1<<33 {
			return time.Duration(n * float64(time.Second))
		}
	}
	if !f.isNull() {
		b.errorf(f, f.pos(), "expected seconds (such as 1.5) or a duration (such as 30s), got %s", f.describe())
	}
	return 0
}

func (b *builder) praisonRetries(f *tree, tk *Task) {
	n, ok := f.val().(int64)
	if !ok || n < 0 || n > MaxRetries {
		b.errorf(f, f.pos(), "expected a number of retries from 0 to %d, got %s", MaxRetries, f.describe())
		return
	}
	tk.MaxRetries = int(n)
}

// praisonContext reads a task's context: one task name or a list of them,
// each once, as PraisonAI reads them (a name twice is a warning: check).
func (b *builder) praisonContext(f *tree, tk *Task) {
	tk.HasContext = true
	if s, ok := f.str(); ok {
		tk.Context = []string{s}
	} else if f.isSeq() {
		for _, it := range f.items() {
			if s, ok := it.str(); ok {
				if !slices.Contains(tk.Context, s) {
					tk.Context = append(tk.Context, s)
				}
			} else {
				b.errorf(it, it.pos(), "expected a task name, got %s", it.gotText())
			}
		}
	} else if !f.isNull() {
		b.errorf(f, f.pos(), "expected a list of task names, got %s", f.describe())
	}
}

// praisonCondition reads a native condition: {VALUE: [tasks]}.
func (b *builder) praisonCondition(f *tree, tk *Task) {
	if s, ok := f.str(); ok {
		// PraisonAI reads a condition only as that mapping: a text such
		// as "{{flag}}" is dropped, and the step runs.
		b.warnf(f, f.kpos(), "ignored: the task runs always, as in PraisonAI, which reads a condition only as a mapping of results to the tasks they run (beside task_type: decision), not as a text such as %s; an if: step (if: {condition: TEXT, then: [steps]}) runs steps only when a condition holds", quoteShort(s))
		return
	}
	if !f.isMap() {
		b.errorf(f, f.pos(), "expected a mapping of results to the tasks they run, got %s", f.describe())
		return
	}
	for _, r := range routesOf(f) {
		if r.Next == nil {
			r.Next = []string{} // written down: the value routes nowhere
		}
		tk.SetCondition(append(tk.Condition(), r))
	}
}

// synthMap makes a mapping tree at the place of at, for the checks that
// read a task's source: keys and values alternate in kv.
func synthMap(at *tree, kv ...any) *tree {
	t := &tree{kind: yaml.MappingNode, at: at.at, kat: at.kat, path: at.path}
	for i := 0; i+1 < len(kv); i += 2 {
		t.add(kv[i].(string), kv[i+1].(*tree))
	}
	return t
}

// synthList makes a list of task names at the place of at.
func synthList(at *tree, names []string) *tree {
	t := &tree{kind: yaml.SequenceNode, at: at.at, kat: at.kat, path: at.path}
	for _, n := range names {
		t.addItem(&tree{kind: yaml.ScalarNode, isText: true, text: n, at: at.at, kat: at.kat, path: at.path})
	}
	return t
}

// praisonWorkflow reads the workflow: mapping of a steps file: its steps
// are built later, its variables join the shared state.
func (b *builder) praisonWorkflow(v *tree, setVar func(string, *tree)) {
	if !v.isMap() {
		b.praisonIgnored(v)
		return
	}
	for i, k := range v.keys() {
		f := v.vals()[i]
		switch k {
		case "steps":
		case "variables":
			if f.isMap() {
				for j, vk := range f.keys() {
					setVar(vk, f.vals()[j])
				}
			} else if !f.isNull() {
				b.errorf(f, f.pos(), "expected a mapping, got %s", f.describe())
			}
		case "name":
			if s, ok := f.str(); ok && s != "" && b.team.Name == defaultName(b.file) {
				b.team.Name = s
			}
		case "process":
			// the steps decide: in order, or a DAG when they branch
		case "llm", "default_llm":
			// the team's default model, read with the team's llm
		default:
			b.praisonIgnored(f)
		}
	}
}
