package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/plan"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
)

// TestPlanMatchesRun is the property that plan and run share one schedule
// and one restore decision: for random teams (sequential and workflow,
// conditions, human tasks) left in random checkpoint states (failures, a
// halt, decisions, edited tasks), the action `plan` reports for each task is
// what `run --continue` then does with it.
//
// Memory agents are LLM agents, which this property test (command agents,
// no server) does not generate; their ordering is the schedule package's
// own test.
func TestPlanMatchesRun(t *testing.T) { planMatchesRunSeeds(t, 400, 12, plainRun) }

// TestPlanMatchesRunAfterStop is the same property for a plain --continue
// after a run that stopped early (Ctrl-C at its first, second or third
// task start; a kill -9 leaves the session the same for what it held): its
// early cut-off still applies, so plan and run agree on it, a task it held
// is reused only if what it reads came out as its recorded result was made
// from, and it is not run again when that did.
func TestPlanMatchesRunAfterStop(t *testing.T) { planMatchesRunSeeds(t, 130, 6, afterStop) }

// TestPlanMatchesRunSeeds are seeds beyond the ranges above that found
// plan and run disagreeing. After a stop, 660: a sequential team's foreach
// join, held, whose list producer was restored changed: the run's cut-off
// compares what the join waits for and reads (its instances), plan
// compared the producer too and said the join runs; both now take what
// the cut-off compares from one place (schedule's CutoffReads). 249 264
// 336 379 414 530 703 1222: a foreach over a producer that the stopped
// run ran again and left unfinished is deferred again; plan listed the
// instances its checkpoint holds as removed from the file, the run makes
// them anew and runs them when the producer finishes: both now read the
// deferred foreach from the expanded team (spec's DeferredJoin). 736
// 990: a repeat iteration refused because its gate's restored result no
// longer leads to it (the until narrowed), while that gate runs again
// first: the run routes it by the gate's new result (skipped); plan said
// it runs, without the "only if" it says of any task behind an open gate.
// 985 767: the stopped run held a task and changed the result of another
// task its hold recorded (a repeat iteration an until narrowed is skipped
// now); the next restore dropped the whole hold and the held task ran,
// though what it reads came out as recorded: only a held task whose
// cut-off compares such a task is dropped now. 413: the stopped run's
// --var list dropped a foreach's instance; its join ran again for the
// new list, rightly: the property's reads of a join now take instances
// from the checkpoint before the stop too. 344: a mismatch (an edited
// task, --keep of a repeat) turned the repeat's skipped last iteration
// pending, and the run stopped before deciding it; the plain --continue
// that reran the iterations ran the join too, though they came out as
// recorded: a skipped record stays skipped until its route is decided,
// and a task skipped last time counts as recorded for holding what
// waits for it. (--keep is not carried to the next run: a kept task is
// restored there as the session holds it, by the usual rules.) 26 70: a
// task the stopped run's --keep pinned while what it reads ran again and
// stopped ran again on the plain --continue, though what it reads came
// out as its result was made from (the property compared it with the
// stopped run's results, where that read had none): the session now
// keeps what a kept task was made from, and the next run holds it.
func TestPlanMatchesRunSeeds(t *testing.T) {
	for _, seed := range []uint64{660, 249, 264, 336, 379, 414, 530, 703, 1222, 736, 990, 985, 767, 413, 344, 26, 70} {
		t.Run(fmt.Sprint("stop", seed), func(t *testing.T) { planMatchesRun(t, seed, afterStop) })
	}
}

// TestPlanMatchesRunAfterProducerFails is the property after a stopped
// run that ran a foreach's list producer again (--rerun) and saw it fail:
// the foreach is deferred, its instances' records and its hold carried
// to the plain --continue, which makes them anew when the producer
// finishes; one whose item and inputs are the recorded ones is not run
// again. Its instances read the producer (context) one time in two.
// Seeds whose team has no producer are skipped.
func TestPlanMatchesRunAfterProducerFails(t *testing.T) {
	planMatchesRunSeeds(t, 400, 40, afterProducerFails)
}

// TestPlanMatchesRunAfterFailure is the property after a stopped
// --continue in which one task, instance or iteration fails (with, two
// times in three, a Ctrl-C at its first or second task start too).
func TestPlanMatchesRunAfterFailure(t *testing.T) { planMatchesRunSeeds(t, 150, 10, afterFailure) }

// TestPlanMatchesRunAfterHalt is the property after a --continue that
// halted for a human decision, made before the compared one. Seeds whose
// team has no human task are skipped.
func TestPlanMatchesRunAfterHalt(t *testing.T) { planMatchesRunSeeds(t, 150, 10, afterHalt) }

// planMatchesRunSeeds runs the property for seeds 0 to n-1 (short: to
// short-1), each the way how says.
func planMatchesRunSeeds(t *testing.T, n, short int, how runHow) {
	if testing.Short() {
		n = short
	}
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { planMatchesRun(t, uint64(seed), how) })
	}
}

// runHow is what the compared --continue follows.
type runHow int

const (
	plainRun           runHow = iota // the random checkpoint state as made
	afterStop                        // a --continue that stopped early
	afterProducerFails               // a --continue of the list's producer again, which fails
	afterFailure                     // a --continue in which a random task (or instance, iteration) fails
	afterHalt                        // a --continue that halts for a human decision, made after it
)

type genTeam struct {
	workflow bool
	n        int
	human    map[int]bool
	context  map[int][]int
	routes   map[int][2][]int // a condition: the tasks value "a" and value "b" route to
	version  map[int]int      // edits bump a task's description
	// loop is the task that runs once per item of items (foreach), -1
	// for none; an edit of an item comes as --var items=JSON (vars).
	loop  int
	items []string
	vars  map[string]string
	// producer is the task whose output (its out- file, a JSON array) is
	// items, -1 when items is a variable: the foreach expands at run time.
	producer int
	// rep is the task that repeats (until the text until, at most 3
	// times), -1 for none; an iteration's out- file may say stop. An
	// edit of until (not in the fingerprint) widens or narrows it.
	rep   int
	until string
	// setter sets the variable x (starting as "start") that reader's
	// description reads, -1 for none; the compared run may give it
	// with --var.
	setter, reader int
}

func (g *genTeam) yaml(dir string) string {
	var b strings.Builder
	if g.workflow {
		b.WriteString("process: workflow\n")
	}
	if g.loop >= 0 && g.producer < 0 || g.setter >= 0 {
		b.WriteString("variables:\n")
	}
	if g.loop >= 0 && g.producer < 0 {
		fmt.Fprintf(&b, "  items: [%s]\n", strings.Join(g.items, ", "))
	}
	if g.setter >= 0 {
		b.WriteString("  x: start\n")
	}
	fmt.Fprintf(&b, "agents:\n  sh:\n    shell: 'cd %s; if [ -e \"fail-$TEAMRUN_TASK\" ]; then exit 1; fi; if [ -e \"out-$TEAMRUN_TASK\" ]; then cat \"out-$TEAMRUN_TASK\"; else echo \"$TEAMRUN_TASK\"; fi'\n", dir)
	b.WriteString("tasks:\n")
	for i := range g.n {
		fmt.Fprintf(&b, "  t%d:\n    description: step %d version %d\n", i, i, g.version[i])
		if i == g.reader {
			b.WriteString("    expected_output: 'x is {x}'\n")
		}
		if i == g.setter {
			b.WriteString("    output_variable: x\n")
		}
		if i == g.loop {
			b.WriteString("    foreach: {over: items, as: it}\n    expected_output: 'item {it}'\n")
		}
		if i == g.producer {
			b.WriteString("    output_variable: items\n")
		}
		if i == g.rep {
			fmt.Fprintf(&b, "    repeat: {until: '%s', max_iterations: 3}\n", g.until)
		}
		if g.human[i] {
			b.WriteString("    agent: human\n    options: [a, b]\n")
		} else {
			b.WriteString("    agent: sh\n")
		}
		ctx := make([]string, 0, len(g.context[i]))
		for _, c := range g.context[i] {
			ctx = append(ctx, fmt.Sprintf("t%d", c))
		}
		fmt.Fprintf(&b, "    context: [%s]\n", strings.Join(ctx, ", "))
		if r, ok := g.routes[i]; ok {
			names := func(is []int) string {
				out := make([]string, len(is))
				for k, x := range is {
					out[k] = fmt.Sprintf("t%d", x)
				}
				return "[" + strings.Join(out, ", ") + "]"
			}
			fmt.Fprintf(&b, "    condition:\n      a: %s\n      b: %s\n", names(r[0]), names(r[1]))
		}
	}
	return b.String()
}

func newGenTeam(rng *rand.Rand) *genTeam {
	g := &genTeam{workflow: rng.IntN(2) == 0, n: 3 + rng.IntN(5), human: map[int]bool{}, context: map[int][]int{}, routes: map[int][2][]int{}, version: map[int]int{}, until: "stop"}
	routed := map[int]bool{} // a task is routed by at most one condition
	for i := range g.n {
		if i > 0 && rng.IntN(5) == 0 {
			g.human[i] = true
		}
		for c := range i {
			if rng.IntN(3) == 0 {
				g.context[i] = append(g.context[i], c)
			}
		}
		if g.workflow && len(g.context[i]) == 0 && i > 0 && rng.IntN(2) == 0 {
			g.context[i] = []int{rng.IntN(i)}
		}
	}
	for i := range g.n - 1 {
		if rng.IntN(3) != 0 {
			continue
		}
		var r [2][]int
		for j := i + 1; j < g.n; j++ {
			if routed[j] || rng.IntN(2) == 0 {
				continue
			}
			routed[j] = true
			k := rng.IntN(2)
			r[k] = append(r[k], j)
			// A routed task reads its router, as real ones do.
			if !contains(g.context[j], i) {
				g.context[j] = append(g.context[j], i)
			}
		}
		if len(r[0])+len(r[1]) > 0 {
			g.routes[i] = r
		}
	}
	// A foreach task can neither be human nor route; one that is routed to
	// is left out too.
	g.loop, g.rep, g.producer, g.setter, g.reader = -1, -1, -1, -1, -1
	var free []int // tasks that may loop, repeat or make the list
	for i := range g.n {
		if _, r := g.routes[i]; !g.human[i] && !r && !routed[i] {
			free = append(free, i)
		}
	}
	if len(free) > 0 && rng.IntN(2) == 0 {
		// The list is a variable, or (one time in two) the output of an
		// earlier task.
		if len(free) > 1 && rng.IntN(2) == 0 {
			g.producer, free = free[0], free[1:]
		}
		g.loop, free = free[0], free[1:]
	}
	for _, i := range free {
		if g.rep < 0 && rng.IntN(2) == 0 {
			g.rep = i
		}
	}
	for k := range 1 + rng.IntN(3) {
		g.items = append(g.items, fmt.Sprintf("i%d", k))
	}
	return g
}

// alwaysSets says whether task s always ends before task r starts, no
// route skipping it: earlier in a sequential team, in r's context in a
// workflow, with a context of its own (if any) not all routed. Where it
// cannot tell, no.
func (g *genTeam) alwaysSets(s, r int) bool {
	routed := func(i int) bool {
		for _, rt := range g.routes {
			if contains(rt[0], i) || contains(rt[1], i) {
				return true
			}
		}
		return false
	}
	var runs func(i int) bool
	runs = func(i int) bool {
		if routed(i) {
			return false
		}
		if !g.workflow || len(g.context[i]) == 0 {
			return true
		}
		return slices.ContainsFunc(g.context[i], runs)
	}
	if !g.workflow {
		return s < r && !routed(s)
	}
	return contains(g.context[r], s) && runs(s)
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func planMatchesRun(t *testing.T, seed uint64, how runHow) {
	rng := rand.New(rand.NewPCG(seed, 0x7ea))
	g := newGenTeam(rng)
	stop := how != plainRun
	// Draws of their own, so that the seeds of the other ways keep their
	// teams and states.
	stopRng := rand.New(rand.NewPCG(seed, 0x5709))
	starts := 1 + stopRng.IntN(3)
	if how == afterHalt && len(g.human) == 0 {
		t.Skip("no human task")
	}
	if how == afterProducerFails {
		if g.producer < 0 {
			t.Skip("no foreach over a task's output")
		}
		if stopRng.IntN(2) == 0 && !contains(g.context[g.loop], g.producer) {
			g.context[g.loop] = append(g.context[g.loop], g.producer)
		}
	}
	// A variable one task sets and a later one reads, drawn on its own,
	// so that the seeds above keep their teams as they were.
	varRng := rand.New(rand.NewPCG(seed, 0x7a2))
	if varRng.IntN(2) == 0 {
		var setters []int
		for i := range g.n - 1 {
			if i != g.producer && i != g.loop {
				setters = append(setters, i)
			}
		}
		if len(setters) > 0 {
			g.setter = setters[varRng.IntN(len(setters))]
			g.reader = g.setter + 1 + varRng.IntN(g.n-g.setter-1)
			switch {
			case g.reader == g.loop:
				g.reader, g.setter = -1, -1 // its expected_output names its item
			case g.workflow && !contains(g.context[g.reader], g.setter):
				// Not one that may start before its setter ends (a race
				// Parse warns of): it waits for it.
				g.context[g.reader] = append(g.context[g.reader], g.setter)
			}
		}
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	specPath := filepath.Join(dir, "team.yaml")
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("team.yaml", g.yaml(dir))
	for i := range g.n {
		if _, ok := g.routes[i]; ok && !g.human[i] {
			write(fmt.Sprintf("out-t%d", i), []string{"a", "b"}[rng.IntN(2)]+"\n")
		}
		if rng.IntN(4) == 0 {
			write(fmt.Sprintf("fail-t%d", i), "")
		}
	}
	list := func(items []string) string {
		b, _ := json.Marshal(items)
		return string(b) + "\n"
	}
	if g.producer >= 0 {
		write(fmt.Sprintf("out-t%d", g.producer), list(g.items))
	}
	if g.rep >= 0 {
		for k := 1; k <= 3; k++ {
			switch rng.IntN(4) {
			case 0:
				write(fmt.Sprintf("out-t%d#%d", g.rep, k), "Stop here\n")
			case 1:
				write(fmt.Sprintf("fail-t%d#%d", g.rep, k), "")
			}
		}
	}
	// runStop stops the run (as Ctrl-C does) once it has started starts
	// tasks; 0: never.
	runStop := func(ch checkpoint.Choice, cont bool, starts int) []byte {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := &stopAfter{n: starts, cancel: cancel}
		_, err := Run(ctx, Options{SpecPath: specPath, Continue: cont, Session: "s", Mode: ModeJSON, Reuse: ch.Reuse, Vars: g.vars,
			Rerun: ch.Rerun, RerunFrom: ch.RerunFrom, Keep: ch.Keep,
			MaxParallel: 1 + rng.IntN(3), IO: iostreams.Test(nil, out, out), Home: home, Getenv: func(string) string { return "" }})
		if IsUsage(err) {
			t.Fatalf("the generated team is refused: %v\n%s", err, g.yaml(dir))
		}
		return out.buf.Bytes()
	}
	run := func(ch checkpoint.Choice, cont bool) []byte { return runStop(ch, cont, 0) }

	// A random checkpoint state: a first run with some tasks failing, a
	// human task halting it; perhaps a second, after some fixes.
	run(checkpoint.Choice{}, false)
	rounds := rng.IntN(2)
	for range rounds {
		decideSome(t, rng, home, g, 0.5)
		clearFails(t, dir, rng, 0.5)
		run(checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged}, true)
	}
	// Edits, then everything fixed and every human task decided, so that
	// the next run goes to the end.
	edited := map[int]bool{}
	for i := range g.n {
		if rng.IntN(5) == 0 {
			g.version[i]++
			edited[i] = true
		}
	}
	if g.rep >= 0 && rng.IntN(3) == 0 {
		// until is not in the fingerprint: widened (no iteration meets
		// it), or narrowed (the first one's default output meets it).
		g.until = []string{"never", fmt.Sprintf("t%d#", g.rep), "here"}[rng.IntN(3)]
	}
	write("team.yaml", g.yaml(dir))
	if g.loop >= 0 && rng.IntN(2) == 0 {
		// On resume the list comes from --var: an item edited, one more
		// or one less.
		items := slices.Clone(g.items)
		switch rng.IntN(3) {
		case 0:
			items[rng.IntN(len(items))] = "edited"
		case 1:
			items = append(items, "added")
		default:
			items = items[:len(items)-1]
		}
		if g.producer >= 0 {
			// The producer's next output, if it runs again.
			write(fmt.Sprintf("out-t%d", g.producer), list(items))
		} else {
			b, _ := json.Marshal(items)
			g.vars = map[string]string{"items": string(b)}
		}
	}
	if g.setter >= 0 && varRng.IntN(2) == 0 {
		// x given anew: the reader reads what its setter set, when that
		// always runs before it, and is unchanged then; else it changed.
		if g.vars == nil {
			g.vars = map[string]string{}
		}
		g.vars["x"] = "other"
		if !g.alwaysSets(g.setter, g.reader) {
			edited[g.reader] = true
		}
	}
	clearFails(t, dir, rng, 1)
	if how != afterHalt {
		decideSome(t, rng, home, g, 1)
	}

	ch := checkpoint.Choice{Reuse: []checkpoint.Reuse{checkpoint.ReuseStrict, checkpoint.ReuseUnchanged}[rng.IntN(2)]}
	// What the user asks to run again or keep, and outputs that change
	// (or not) when a task runs again: the early cut-off's two cases.
	for i := range g.n {
		name := fmt.Sprintf("t%d", i)
		switch rng.IntN(8) {
		case 0:
			ch.Rerun = append(ch.Rerun, name)
		case 1:
			ch.RerunFrom = append(ch.RerunFrom, name)
		case 2:
			ch.Keep = append(ch.Keep, name)
		}
		if _, routes := g.routes[i]; !routes && rng.IntN(3) == 0 {
			if i == g.producer {
				write("out-"+name, list([]string{"changed", "i0"}))
			} else {
				write("out-"+name, "changed\n")
			}
		}
	}
	// An instance or an iteration that runs again (its item or the until
	// changed) comes out the same by default (its output is its name), or
	// changed: what reads it is cut off, or runs.
	for k := range 4 {
		if g.loop >= 0 && rng.IntN(3) == 0 {
			write(fmt.Sprintf("out-t%d[%d]", g.loop, k), "changed\n")
		}
		if g.rep >= 0 && k > 0 && rng.IntN(4) == 0 {
			write(fmt.Sprintf("out-t%d#%d", g.rep, k), "changed\n")
		}
	}
	// After a stop, the plain --continue is what plan and run are compared
	// on; what it reads is compared with the results the stopped run
	// started from (before0) for a task still undecided then, and with
	// those it left (before) for one it decided.
	var before0, items0 map[string]string
	did0 := map[string]string{}
	named := map[string]bool{} // what the stopped run was asked to run again
	partial0 := false
	if stop {
		partial0 = planFor(t, specPath, home, ch, g.vars).Restore == "partial"
		for _, n := range slices.Concat(ch.Rerun, ch.RerunFrom) {
			named[n] = true
		}
		// And what --rerun-from reaches: what a task reads or is routed
		// by (context tasks come first; in a sequential team, a task
		// without context reads the one before), and a foreach's producer.
		from := map[int]bool{}
		for i := range g.n {
			reads := slices.Clone(g.context[i])
			if !g.workflow && len(reads) == 0 && i > 0 {
				reads = []int{i - 1}
			}
			for j, r := range g.routes {
				if contains(r[0], i) || contains(r[1], i) {
					reads = append(reads, j)
				}
			}
			if i == g.loop && g.producer >= 0 {
				reads = append(reads, g.producer)
			}
			from[i] = slices.Contains(ch.RerunFrom, fmt.Sprintf("t%d", i)) || slices.ContainsFunc(reads, func(c int) bool { return from[c] })
			named[fmt.Sprintf("t%d", i)] = named[fmt.Sprintf("t%d", i)] || from[i]
		}
		before0 = results(t, home)
		items0 = itemsOf(t, home)
		var failing string // the task that fails in the stopped run
		switch how {
		case afterProducerFails:
			failing = fmt.Sprintf("t%d", g.producer)
			if !slices.Contains(ch.Rerun, failing) && !slices.Contains(ch.RerunFrom, failing) && !slices.Contains(ch.Keep, failing) {
				ch.Rerun = append(ch.Rerun, failing)
			}
			named[failing] = true
			starts = 0 // it stops at the failure
		case afterFailure:
			var names []string
			for i := range g.n {
				if !g.human[i] {
					names = append(names, fmt.Sprintf("t%d", i))
				}
			}
			for k := range len(g.items) {
				if g.loop >= 0 {
					names = append(names, fmt.Sprintf("t%d[%d]", g.loop, k))
				}
			}
			for k := 1; k <= 3 && g.rep >= 0; k++ {
				names = append(names, fmt.Sprintf("t%d#%d", g.rep, k))
			}
			failing = names[stopRng.IntN(len(names))]
			starts = stopRng.IntN(3) // 0: no Ctrl-C, only the failure
		}
		if failing != "" {
			write("fail-"+failing, "")
		}
		if how == afterHalt {
			starts = 0 // it stops at the halt
		}
		did0 = actions(t, runStop(ch, true, starts))
		if failing != "" {
			if err := os.Remove(filepath.Join(dir, "fail-"+failing)); err != nil {
				t.Fatal(err)
			}
		}
		if how == afterHalt {
			decideSome(t, stopRng, home, g, 1)
		}
		ch = checkpoint.Choice{}
	}
	p := planFor(t, specPath, home, ch, g.vars)
	before, items := results(t, home), itemsOf(t, home)
	did := actions(t, run(ch, true))
	after, itemsAfter := results(t, home), itemsOf(t, home)
	refFor := func(name string) map[string]string {
		if stop && before[name] == "" {
			return before0
		}
		return before
	}
	// madeFrom is what the result of task name (refFor) was made from of
	// cn, which it reads: after a stop, a task it left completed while cn
	// has no result (--keep pinned it, and cn ran again and stopped) was
	// made from cn's result before that run.
	madeFrom := func(name, cn string) string {
		if ref := refFor(name); !stop || ref[cn] != "" {
			return ref[cn]
		}
		return before0[cn]
	}
	itemsRef := func(name string) map[string]string {
		if stop && before[name] == "" {
			return items0
		}
		return items
	}
	// What declared task i reads: its context, its routers; a join reads its instances or
	// iterations (and a foreach's producer), not the task's context: those
	// of any of the three checkpoints (the stopped run may have dropped
	// one its list no longer holds).
	readsOf := func(i int) []string {
		name := fmt.Sprintf("t%d", i)
		var names []string
		if i == g.reader && i != g.rep {
			// What its setter sets, through x (a repeat's iterations read
			// it, not its join, made of theirs).
			names = append(names, fmt.Sprintf("t%d", g.setter))
		}
		if i == g.loop || i == g.rep {
			for _, m := range []map[string]string{before0, before, after} {
				for n := range m {
					if (strings.HasPrefix(n, name+"[") || strings.HasPrefix(n, name+"#")) && !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
			if i == g.loop && g.producer >= 0 {
				names = append(names, fmt.Sprintf("t%d", g.producer))
			}
			return names
		}
		// Every generated task has its own context: (in a sequential
		// team too), so the task before it is no read of its.
		reads := append([]int(nil), g.context[i]...)
		for j, r := range g.routes {
			if contains(r[0], i) || contains(r[1], i) {
				reads = append(reads, j)
			}
		}
		for _, c := range reads {
			names = append(names, fmt.Sprintf("t%d", c))
		}
		return names
	}
	// A task the early cut-off reused must read only what came out as
	// recorded.
	for i := range g.n {
		name := fmt.Sprintf("t%d", i)
		if did[name] != "reused" {
			continue
		}
		ref := refFor(name)
		if after[name] != ref[name] {
			t.Errorf("task %s was reused with result %q, recorded %q", name, after[name], ref[name])
		}
		for _, cn := range readsOf(i) {
			if i == g.loop && cn == fmt.Sprintf("t%d", g.producer) {
				// A join is made of its instances alone: a new list whose
				// instances come out as recorded makes the same join.
				continue
			}
			if after[cn] != madeFrom(name, cn) {
				t.Errorf("task %s was reused (early cut-off) though %s, which it reads, changed from %q to %q\nspec:\n%s", name, cn, madeFrom(name, cn), after[cn], g.yaml(dir))
			}
		}
	}
	// And the converse: finished work is not paid for twice. A task
	// completed last time whose own definition is unchanged, that no
	// --rerun or --rerun-from names (or reaches), and everything it reads
	// came out as recorded (or stayed without a result) is not run again:
	// it is restored, or held and cut off. Under --reuse strict a
	// mismatch restores no output; a foreach over a producer that runs
	// again is expanded anew: both left out.
	for i := range g.n {
		name := fmt.Sprintf("t%d", i)
		ref := refFor(name)
		if did[name] != "run" || ref[name] == "" || edited[i] || p.Restore == "partial" ||
			stop && (did0[name] == "run" || named[name] || partial0) {
			continue
		}
		reason := reasonOf(p, name)
		if strings.Contains(reason, "on request") || strings.Contains(reason, "--rerun-from") || strings.Contains(reason, "if the list changes") {
			continue
		}
		same := true
		for _, cn := range readsOf(i) {
			same = same && after[cn] == madeFrom(name, cn)
		}
		if same {
			t.Errorf("task %s ran again though everything it reads (%v) came out as recorded: plan said %q\nspec:\n%s", name, readsOf(i), reason, g.yaml(dir))
		}
	}
	// The same two checks for each foreach instance: one reused reads
	// only what came out as recorded; one whose item and all it reads are
	// the recorded ones is not run again (unless the user asked, it ran
	// in the stopped run, or a restore that keeps no instance applied).
	if g.loop >= 0 {
		loop := fmt.Sprintf("t%d", g.loop)
		var reads []string // what an instance reads: the foreach's reads and its producer
		for _, c := range g.context[g.loop] {
			reads = append(reads, fmt.Sprintf("t%d", c))
		}
		if prod := fmt.Sprintf("t%d", g.producer); g.producer >= 0 && !slices.Contains(reads, prod) {
			reads = append(reads, prod)
		}
		for name, how := range did {
			if !strings.HasPrefix(name, loop+"[") {
				continue
			}
			ref := refFor(name)
			same := ref[name] != "" && itemsRef(name)[name] == itemsAfter[name]
			for _, cn := range reads {
				same = same && after[cn] == madeFrom(name, cn)
			}
			switch how {
			case "reused":
				if after[name] != ref[name] || !same {
					t.Errorf("instance %s was reused (early cut-off) though its item or what it reads (%v) changed\nspec:\n%s", name, reads, g.yaml(dir))
				}
			case "run":
				if !same || edited[g.loop] || p.Restore == "partial" || stop && (did0[name] == "run" || named[loop] || partial0) {
					continue
				}
				reason := reasonOf(p, name)
				if strings.Contains(reason, "on request") || strings.Contains(reason, "--rerun-from") || strings.Contains(reason, "its record is not restored") {
					continue
				}
				t.Errorf("instance %s ran again though its item and everything it reads (%v) came out as recorded: plan said %q\nspec:\n%s", name, reads, reason, g.yaml(dir))
			}
		}
	}
	halts := false // the run stops at an undecided human task
	for _, step := range p.Steps {
		halts = halts || strings.Contains(step.Reason, "the run halts here")
	}
	for _, step := range p.Steps {
		got := did[step.Task]
		want := string(step.Action)
		conditional := strings.Contains(step.Reason, "only if")
		switch {
		case got == want:
		case conditional && step.Action == plan.Run && got == "skip":
			// It runs only if a task that runs first routes to it.
		case conditional && halts && got == "":
			// Its route waits for a decision the run halts for.
		case step.Removed && got == "":
		case strings.Contains(step.Reason, "will run only if") && got == "reused":
			// Early cut-off: what it reads came out as recorded.
		case step.Action == plan.Restore && strings.Contains(step.Reason, "the early cut-off reuses its result") && got == "reused":
			// Held, but all it reads is restored (--keep): reused for sure.
		case strings.Contains(step.Reason, "if the list changes, the run"):
			// Its producer runs first: the instances are made anew from
			// its output, which plan cannot know, and so is what reads them.
		case strings.Contains(step.Reason, "which the run halts for first") && got == "":
			// Behind a halt: this run does not get to it yet.
		default:
			t.Errorf("task %s: plan says %s (%s), the run did %q\nplan: %+v\nrun: %v\nspec:\n%s", step.Task, step.Action, step.Reason, got, p.Steps, did, g.yaml(dir))
		}
	}
}

// reasonOf is what plan p says of task name ("" when nothing).
func reasonOf(p *plan.Plan, name string) string {
	for _, step := range p.Steps {
		if step.Task == name {
			return step.Reason
		}
	}
	return ""
}

// stopAfter keeps a run's output and cancels it once n task_started
// events went through (n 0: never).
type stopAfter struct {
	buf    bytes.Buffer
	n      int
	cancel func()
}

func (s *stopAfter) Write(p []byte) (int, error) {
	if s.n > 0 {
		if s.n -= bytes.Count(p, []byte(`"event":"`+string(TaskStarted)+`"`)); s.n <= 0 {
			s.cancel()
		}
	}
	return s.buf.Write(p)
}

// decideSome records a decision for undecided human tasks (each with
// probability p) as `teamrun session decide` does.
func decideSome(t *testing.T, rng *rand.Rand, home string, g *genTeam, p float64) {
	t.Helper()
	store, err := OpenStore(context.Background(), home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load(context.Background(), "s")
	if err != nil {
		return // the run did not get as far as a session
	}
	for i := range g.n {
		name := fmt.Sprintf("t%d", i)
		tk, ok := sess.Task(name)
		if !g.human[i] || !ok || tk.Status == checkpoint.StatusCompleted || sess.Checkpoint.Decisions[name] != "" || rng.Float64() >= p {
			continue
		}
		if err := checkpoint.Decide(context.Background(), store, "s", name, []string{"a", "b"}[rng.IntN(2)]); err != nil {
			t.Fatal(err)
		}
	}
}

func clearFails(t *testing.T, dir string, rng *rand.Rand, p float64) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "fail-*"))
	for _, m := range matches {
		if rng.Float64() < p {
			os.Remove(m)
		}
	}
}

func planFor(t *testing.T, specPath, home string, ch checkpoint.Choice, vars map[string]string) *plan.Plan {
	t.Helper()
	team, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(context.Background(), home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load(context.Background(), "s")
	if err != nil {
		sess = nil
	}
	set, err := TaskSetOf(team, sess, vars)
	if err != nil {
		t.Fatal(err)
	}
	return plan.Make(set.Team, set.Defs, set.Fingerprint, sess, ch, cmdline.Where{})
}

// results are the session's completed results by task ("" for the rest).
func results(t *testing.T, home string) map[string]string {
	t.Helper()
	return completed(t, home, func(tk checkpoint.TaskRecord) string { return tk.Result })
}

// itemsOf are the session's completed records' expected outputs by task:
// a foreach instance's says its item.
func itemsOf(t *testing.T, home string) map[string]string {
	t.Helper()
	return completed(t, home, func(tk checkpoint.TaskRecord) string { return tk.ExpectedOutput })
}

// completed is field of each of the session's completed records, by task.
func completed(t *testing.T, home string, field func(checkpoint.TaskRecord) string) map[string]string {
	t.Helper()
	store, err := OpenStore(context.Background(), home, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	out := map[string]string{}
	sess, err := store.Load(context.Background(), "s")
	if err != nil {
		return out
	}
	for _, tk := range sess.Team.Tasks {
		if tk.Status == checkpoint.StatusCompleted {
			out[tk.Name] = field(tk)
		}
	}
	return out
}

// actions reads what a run did with each task from its JSON events.
func actions(t *testing.T, out []byte) map[string]string {
	t.Helper()
	did := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Event string `json:"event"`
			Task  string `json:"task"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Task == "" {
			continue
		}
		switch EventType(ev.Event) {
		case TaskRestored:
			did[ev.Task] = "restore"
		case TaskReused:
			did[ev.Task] = "reused"
		case TaskStarted:
			did[ev.Task] = "run"
		case TaskSkipped:
			if did[ev.Task] == "" {
				did[ev.Task] = "skip"
			}
		case RunHalted:
			if did[ev.Task] == "" {
				did[ev.Task] = "run" // a human task waits for its decision, as plan says
			}
		case TaskCompleted:
			if did[ev.Task] == "" {
				did[ev.Task] = "run" // a human task completes with its decision
			}
		}
	}
	return did
}
