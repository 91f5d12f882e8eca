package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/spec"
)

// waitFlag is --wait[=DUR]: alone it waits as long as it takes.
type waitFlag struct {
	d   time.Duration
	set bool
}

func (w *waitFlag) String() string {
	if w == nil || !w.set {
		return ""
	}
	return w.d.String()
}

func (w *waitFlag) Set(s string) error {
	w.set = true
	switch s {
	case "true": // --wait alone
		w.d = time.Duration(math.MaxInt64)
		return nil
	case "": // --wait="$TIMEOUT", TIMEOUT unset: not "for ever"
		return fmt.Errorf("an empty duration: give one (--wait=30s), or --wait alone to wait as long as it takes")
	case "false":
		w.set, w.d = false, 0
		return nil
	}
	if _, nerr := strconv.ParseFloat(s, 64); nerr == nil && s != "0" {
		return fmt.Errorf("%q is not a duration: give its unit (--wait=%ss)", s, s)
	}
	d, err := parseDuration(s, "30s, 5m or 1d")
	if err != nil {
		return err
	}
	w.d = d
	return nil
}

// IsBoolFlag lets --wait stand alone, while --wait=5m still takes a value.
func (w *waitFlag) IsBoolFlag() bool { return true }

// Accepts reports whether s is the value of a --wait that may stand alone
// (durationArg): `--wait 1d agents.yaml` takes the 1d, `--wait agents.yaml`
// leaves the FILE alone, and `--wait -5s` is refused by Set.
func (w *waitFlag) Accepts(s string) bool { return durationArg(s) }

// varsFlag collects --var key=value, keeping commas inside values.
type varsFlag struct {
	vals  map[string]string
	order []string
}

func (v *varsFlag) String() string {
	if v == nil {
		return ""
	}
	parts := make([]string, 0, len(v.order))
	for _, k := range v.order {
		parts = append(parts, k+"="+v.vals[k])
	}
	return strings.Join(parts, " ")
}

// IsSliceFlag: --var is given once per variable.
func (v *varsFlag) IsSliceFlag() bool { return true }

// Set takes one --var. Its errors never show the value, which may be a
// key (--var token="$KEY"), nor the argument when it has no "=" (the key
// alone, its name forgotten); the name only when it reads as one
// (spec.ReadsAsName), not as a key pasted before the "=".
func (v *varsFlag) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("expected key=value %s", spec.NotShown)
	}
	// The same rule as the spec's variables: anything else could never be
	// a {placeholder}, and would reach commands under a mangled name.
	if !spec.IsIdentifier(k) {
		name := "the name before the =" // nor the name shown
		if spec.ReadsAsName(k) {
			name = strconv.Quote(k)
		}
		return fmt.Errorf("%s is not a variable name: use ASCII letters, digits and _, not starting with a digit %s", name, spec.NotShown)
	}
	if v.vals == nil {
		v.vals = map[string]string{}
	}
	if _, seen := v.vals[k]; !seen {
		v.order = append(v.order, k)
	}
	v.vals[k] = val
	return nil
}

// runCommand is `teamrun run`; in is the handler main installed for its
// signals before anything else.
func runCommand(ios *iostreams.IOStreams, in *runner.Interrupts) *cli.Command {
	wait := &waitFlag{}
	vars := &varsFlag{}
	maxParallel := &posIntFlag{n: 4}
	cmd := &cli.Command{
		Name:      "run",
		Usage:     "run a team, checkpointing every task; --continue resumes where it stopped",
		ArgsUsage: "FILE",
		// Every cause of each code, as README's exit-code table has them.
		Description: "Exit codes: 0 all tasks done, 1 a task failed, 2 bad usage or spec, 3 halted for a\n" +
			"decision: a human task's, at a tool call a crash left unsettled, at the session's budget,\n" +
			"or at a tool loop that max_turns or max_tool_calls ended after tools that are not\n" +
			"idempotent (teamrun session decide, then --continue), 4 the session is held by another\n" +
			"run, 5 the session store failed, 129/130/131/143 interrupted by\n" +
			"SIGHUP/SIGINT/SIGQUIT/SIGTERM (the checkpoint is written; --continue resumes).\n\n" +
			"The environment it reads, and gives the commands it starts: teamrun help environment.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "continue", Usage: "resume the session (--session, else the project's active one)"},
			&cli.StringFlag{Name: "session", Usage: "the session `ID`"},
			&cli.GenericFlag{Name: "var", Usage: "set `KEY=VALUE` in the shared state (repeatable)", Value: vars},
			&cli.GenericFlag{Name: "max-parallel", Value: maxParallel, Usage: "workflow: at most `N` tasks at once"},
			&cli.StringFlag{Name: "reuse", Value: "strict", Usage: "when the task set changed: strict (restore no output) or unchanged (reuse unchanged tasks); `MODE`: strict|unchanged"},
			&cli.GenericFlag{Name: "wait", Value: wait, Usage: "when another run holds the session, wait for it (alone: as long as it takes; --wait=`DUR`: at most DUR)", DefaultText: "exit 4 at once"},
			storeFlagDef(),
			&cli.BoolFlag{Name: "json", Usage: "one JSON event per line on stdout"},
			&cli.BoolFlag{Name: "stream-json", Usage: "with --json: also a task_delta event per piece of a streamed answer (llm.stream: true), and task_stream_discarded when a request's text so far is dropped"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "only warnings, errors, halts and an unsuccessful summary"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "stream each task's stdout and stderr lines as they come, prefixed with the task's name"},
		},
	}
	cmd.Flags = append(cmd.Flags, rerunFlags("with --continue: ")...)
	cmd.Action = func(c *cli.Context) error {
		args := c.Args().Slice()
		switch len(args) {
		case 0:
			return exitf(exitUsage, "run needs the team's FILE (try: teamrun run agents.yaml)")
		case 1:
		default:
			quoted := make([]string, len(args)) // an empty one is seen: ''
			for i, a := range args {
				quoted[i] = shellcmd.Quote(a)
			}
			return exitf(exitUsage, "run takes one FILE, got %d arguments: %s", len(args), strings.Join(quoted, " "))
		}
		choice, err := choiceFlags(c)
		if err != nil {
			return err
		}
		if c.Bool("json") && c.Bool("quiet") {
			return exitf(exitUsage, "--json and --quiet do not go together: drop --quiet for JSON events on stdout (a failure's among them), or --json for a run that prints nothing unless it fails")
		}
		if c.Bool("stream-json") && !c.Bool("json") {
			return exitf(exitUsage, "--stream-json adds events to --json: give both")
		}
		if c.Bool("verbose") && c.Bool("quiet") {
			return exitf(exitUsage, "--verbose and --quiet do not go together: drop --quiet to see every task's output, or --verbose for a run that prints nothing unless it fails")
		}
		mode := runner.ModeAuto
		switch {
		case c.Bool("json"):
			mode = runner.ModeJSON
		case c.Bool("quiet"):
			mode = runner.ModeQuiet
		}
		var loaded, parsed func()
		if c.Bool("continue") {
			loaded = loadingGC(args[0])
		} else {
			parsed = newRunGC(args[0])
		}
		ctx, interrupts := c.Context, in
		if interrupts == nil { // an app built alone, in a test
			ctx, interrupts = runner.WatchInterrupts(ctx)
			defer interrupts.Stop()
		}
		interrupts.Say(func(msg string) { fmt.Fprintln(ios.ErrOut, msg) })
		defer exitIfStuck(ctx, interrupts, ios)()
		sum, err := runner.Run(ctx, runner.Options{
			SpecPath:    args[0],
			Continue:    c.Bool("continue"),
			Session:     c.String("session"),
			Vars:        vars.vals,
			VarOrder:    vars.order,
			MaxParallel: maxParallel.n,
			Reuse:       choice.Reuse,
			Rerun:       choice.Rerun,
			RerunFrom:   choice.RerunFrom,
			Keep:        choice.Keep,
			Wait:        wait.d,
			Home:        storeFlag(c),
			Mode:        mode,
			StreamJSON:  c.Bool("stream-json"),
			Verbose:     c.Bool("verbose"),
			IO:          ios,
			Interrupts:  interrupts,
			Subreaper:   true, // this process starts no children but the tasks'
			Loaded:      loaded,
			Parsed:      parsed,
		})
		return runExit(sum, err, interrupts.Signal())
	}
	return cmd
}

// exitIfStuck exits with the first signal's code when a run that a signal
// stops cannot end by its ordinary path, which only its own output can keep
// from ending once its tasks are stopped: a reader that does not read (a
// pager left paused, a stalled ssh, a terminal paused with Ctrl-S). That is
// when a second signal (its tasks killed) is not followed by the end
// within forcedGrace, the user having said to exit at once; or when, after
// the first, the output has taken nothing for outputGrace. The checkpoint
// is valid at any instant, as after kill -9: a task whose end could not be
// recorded, its output held, runs again on --continue. ctx ends at the
// first signal. The returned func is called once the run ended.
func exitIfStuck(ctx context.Context, in *runner.Interrupts, ios *iostreams.IOStreams) (ended func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		tick := time.NewTicker(outputGrace / 10)
		defer tick.Stop()
		from, since := ios.OutProgress(), time.Now()
		forced, grace := in.Forced(), (<-chan time.Time)(nil)
		for {
			select {
			case <-done:
				return
			case <-forced:
				forced, grace = nil, time.After(forcedGrace)
			case <-grace:
				os.Exit(runner.ExitCodeOf(in.Signal()))
			case <-tick.C:
				now := ios.OutProgress()
				if !from.StalledUntil(now) {
					from, since = now, time.Now()
				} else if time.Since(since) >= outputGrace {
					in.Groups().KillAll()
					in.Notice(fmt.Sprintf("teamrun: stdout has taken nothing for %s (its reader does not read): exiting without waiting for it; the checkpoint is valid, --continue resumes", outputGrace))
					os.Exit(runner.ExitCodeOf(in.Signal()))
				}
			}
		}
	}()
	return func() { close(done) }
}

// forcedGrace is how long a run has, after a second signal, to end by its
// ordinary path (it usually takes milliseconds once its commands are
// killed).
const forcedGrace = time.Second

// outputGrace is how long a run that a signal stops waits for a reader
// that takes none of its output: a reader that reads at all, however
// slowly, is waited for.
const outputGrace = 5 * time.Second

// rerunFlags are --rerun, --rerun-from and --keep, for run and plan alike
// (checkpoint.Choice); each takes TASK[,TASK…] and repeats.
// rerunFlags are --rerun, --rerun-from and --keep, their usage led by
// when: run takes them with --continue, plan (which has no --continue)
// says what run would do with them.
func rerunFlags(when string) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "rerun", Usage: when + "run `TASK`[,TASK…] again though done; what reads it is reused if its output comes out unchanged"},
		&cli.StringSliceFlag{Name: "rerun-from", Usage: when + "run `TASK` and everything downstream of it again"},
		&cli.StringSliceFlag{Name: "keep", Usage: when + "keep `TASK`'s recorded output even though its definition changed"},
	}
}

// choiceFlags reads --reuse, --rerun, --rerun-from and --keep, for run
// and plan alike. An empty value (`--reuse=`, `--rerun ""`, `a,,b`: a
// variable left unset) is refused: it would say "no choice" in silence.
func choiceFlags(c *cli.Context) (checkpoint.Choice, error) {
	var ch checkpoint.Choice
	reuse, err := checkpoint.ParseReuse(c.String("reuse"))
	if err != nil {
		return ch, withCode(exitUsage, err)
	}
	ch.Reuse = reuse
	for _, f := range []struct {
		name string
		to   *[]string
	}{{"rerun", &ch.Rerun}, {"rerun-from", &ch.RerunFrom}, {"keep", &ch.Keep}} {
		// urfave/cli has split the values at their commas already.
		for _, v := range c.StringSlice(f.name) {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n == "" {
					return ch, exitf(exitUsage, "--%s: an empty task name (an unset variable, or a,,b): name each TASK, comma-separated (--%s a,b)", f.name, f.name)
				}
				*f.to = append(*f.to, n)
			}
		}
	}
	return ch, nil
}

// runExit maps a run's end to the exit codes of DESIGN §3.
func runExit(sum *runner.Summary, err error, sig os.Signal) error {
	var ue *runner.UsageError
	switch {
	case err == nil:
	case sig != nil && !storeFailed(err):
		// Interrupted before the run began (say, while waiting for a
		// lock), or the signal's own doing.
		return withCode(runner.ExitCodeOf(sig), err)
	case errors.As(err, &ue):
		var list spec.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			msg := list.Error()
			for _, d := range spec.WarningsOf(err) {
				msg += "\n" + runner.WarningLine(d.String())
			}
			return exitf(exitUsage, "%s is invalid; nothing was run:\n%s", list[0].File, msg)
		}
		return withCode(exitUsage, err)
	case errors.Is(err, checkpoint.ErrBadID), errors.Is(err, checkpoint.ErrBadLocation):
		return withCode(exitUsage, err)
	case errors.Is(err, checkpoint.ErrLocked):
		return withCode(exitLocked, err)
	default:
		// The store failed (storeFailed), or something no other code
		// names.
		return withCode(exitStore, err)
	}
	switch sum.Outcome {
	case runner.Succeeded:
		return nil
	case runner.Failed:
		return exitf(exitTaskFailed, "")
	case runner.Halted:
		return exitf(exitHalted, "")
	case runner.Interrupted:
		if sig != nil {
			return exitf(runner.ExitCodeOf(sig), "")
		}
		return exitf(exitInterrupted, "")
	}
	return exitf(exitStore, "")
}

// storeFailed reports whether err is the store failing on its own: the
// checkpoint could not be written, so exit 5 even when a signal came too
// (130/143 promise a written checkpoint). A store error the signal caused
// (a connect or a wait cut short) is the signal's.
func storeFailed(err error) bool {
	var se *runner.StoreError
	return errors.As(err, &se) || errors.Is(err, checkpoint.ErrStore) && !errors.Is(err, context.Canceled)
}

// loadingGC sets the collector for a command that loads the specs at
// paths and a session (run --continue, plan, validate), unless GOGC is
// set, and returns what to call once they are loaded. Loading grows a
// heap that stays live, and most loads are small: until the heap first reaches
// loadingHeap nothing is collected at all (a restored 1,000 / 10,000-task
// run would collect one / three times for nothing it could give back: its
// peak RSS is the same). A load that grows past it (a very large spec) is
// collected from there on at GOGC=200, which holds its heap to three times
// what is live, not five as 400 would (a 10,000-task spec's load: 50 MB of
// heap at 400 for 11 MB live), at the cost of 400 (the default, 100, runs
// cycle after cycle on a heap that only grows: a restored 1,000-task run
// took 1.24x the CPU). Running the tasks then allocates garbage around a
// heap that grows slowly, so from there on runningGC sets the collector;
// plan and validate end with the loading, and never call loaded.
//
// Specs of hugeLoadFrom bytes or more, GOGC set or not, also load into
// huge pages (hugeLoadingHeap) until loaded is called.
func loadingGC(paths ...string) (loaded func()) {
	limit := debug.SetMemoryLimit(-1) // GOMEMLIMIT's, else none
	huge := func() {}
	if filesSize(paths) >= hugeLoadFrom {
		huge = hugeLoadingHeap(int(min(limit, loadingHeap)))
	}
	if gogcGiven() {
		return huge
	}
	var once sync.Once
	grown := func() {
		debug.SetGCPercent(200)
		debug.SetMemoryLimit(limit)
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(min(limit, loadingHeap))
	// The first collection, at that bound, finds the sentinel gone.
	runtime.AddCleanup(&struct{ _ *int }{}, func(struct{}) { once.Do(grown) }, struct{}{})
	return func() {
		once.Do(func() {})
		debug.SetMemoryLimit(limit)
		huge()
		runningGC()
	}
}

// newRunGC sets the collector, in loadingGC's place, for a run that
// starts a new session (no --continue) of the specs at paths, unless GOGC
// is set, and returns what to call once they are parsed. The run restores
// nothing, so its loading is the spec's alone, and collecting that costs
// nothing next to running the tasks (a cold 1,000-task run: 0.95x the
// time, farm-bench, 15 pairs): runningGC's rule holds from the start. Nor
// does it load into huge pages: they save a few milliseconds of page
// faults, nothing next to starting the tasks, and a 2 MiB page is resident
// whole, which made the loading the run's peak RSS (a 10,000-task run:
// 38.3-38.9 MiB with them, 35.9-36.5 without).
//
// Specs of collectParsedFrom bytes or more are collected once parsed:
// their parse tree is garbage then, and the session and the engine are
// built next. Left to the pacer, a collection that marks while they are
// built (slower on a busy machine) finds the tree still live and sets a
// higher goal: a 10,000-task run's loading peaked at 31,684-33,112 KiB
// (VmHWM) at load average 7, 29,892-31,564 with the collection, every one
// of 8 interleaved pairs lower.
func newRunGC(paths ...string) (parsed func()) {
	if gogcGiven() {
		return func() {}
	}
	runningGC()
	if filesSize(paths) < collectParsedFrom {
		return func() {}
	}
	return runtime.GC
}

// collectParsedFrom is the size of the specs from which a new run
// collects once they are parsed. At 1,000 tasks (a spec of 47 KB) the
// loading peaked ~0.3 MB lower (7 of 8 interleaved pairs, load average 7)
// for a collection of 2-9 ms, at most 24 (gctrace, stopping the world on
// a busy machine), next to the ~2 s its tasks take to run.
const collectParsedFrom = 32 << 10

// gogcGiven reports whether GOGC is in the environment: it overrides
// loadingGC's, newRunGC's and runningGC's rules.
func gogcGiven() bool { return os.Getenv("GOGC") != "" }

// runningGC sets the collector for running the tasks, and keeps it set
// after every collection (gcPercentFor): past 2 MiB live, the heap may
// grow by 1 MiB, or by an eighth of what is live when that is more; below,
// by what is live, the default. The default lets a heap that only grows
// with the run reach twice what is live between collections: a
// 10,000-task run's 15 MB of records made a 30 MB heap at its end, its
// peak RSS. With 4 MiB of room that run peaked at 44.8 MiB, not 51.6, in
// 1.04x the time (farm-bench, 8 pairs); with 2 MiB its heap peaked at 13
// MB, not 14. With 1 MiB, not 2, its peak (~8 MB live at its end) is 0.86
// MiB lower (7 interleaved pairs, every one lower) for twice the
// collections, ~2% more user CPU. A team of up to about 1,000
// tasks stays near 2 MiB live and runs at the default as before (a cold
// 1,000-task run: 1.01x the time, farm-bench, 9 pairs): GOGC=50 for every
// heap made a 1,000-task workflow at --max-parallel 8 take 1.13x the time.
func runningGC() {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	percent := 100
	debug.SetGCPercent(percent)
	var arm func()
	arm = func() {
		// Only one is armed at a time: each arms the next once it ran.
		runtime.AddCleanup(&struct{ _ *int }{}, func(struct{}) {
			metrics.Read(live)
			if p := gcPercentFor(live[0].Value.Uint64()); p != percent {
				percent = p
				debug.SetGCPercent(p)
			}
			arm()
		}, struct{}{})
	}
	arm()
}

// gcPercentFor is the GOGC that lets a heap with live bytes live grow by
// max(1 MiB, live/8), within GOGC 12 to 100, past 2 MiB live.
func gcPercentFor(live uint64) int {
	const room, small = 1 << 20, 2 << 20
	if live <= small {
		return 100
	}
	return max(12, int(100*room/live))
}

// hugeLoadFrom is the size of the specs from which loading them is worth
// huge pages: below it the collection that sets them up (~3 ms) costs more
// than the page faults they save (farm-bench, 20 pairs each: validate of a
// 1,000-task spec of 47 KB 1.00x the wall time, of 2,000 tasks 0.92x; a
// restored 1,000-task rerun 0.85x; validate of 100 tasks 1.11x).
const hugeLoadFrom = 32 << 10

// filesSize is the sum of the sizes of the files at paths that exist.
func filesSize(paths []string) int64 {
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// loadingHeap is the heap under which loading collects nothing: a
// restored 10,000-task run stays within it.
const loadingHeap = 64 << 20
