package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Agents dispatches a job to the executor for its agent's kind.
type Agents struct {
	Command Executor
	LLM     Executor
}

func (a Agents) Execute(ctx context.Context, job *Job) (Result, error) {
	switch job.Agent.Kind {
	case spec.CommandAgent:
		if a.Command != nil {
			return a.Command.Execute(ctx, job)
		}
	case spec.LLMAgent:
		if a.LLM != nil {
			return a.LLM.Execute(ctx, job)
		}
	case spec.JoinAgent:
		return joinResults(ctx, job)
	case spec.RouteAgent:
		return decide(ctx, job)
	}
	return Result{}, fmt.Errorf("no executor for %s agent %q", job.Agent.Kind, job.Agent.Name)
}

// unendedUsage is the LLM executor's (unendedCounter), when it has one.
func (a Agents) unendedUsage(ctx context.Context, job *Job) *Usage {
	if c, ok := a.LLM.(unendedCounter); ok && job.Agent.Kind == spec.LLMAgent {
		return c.unendedUsage(ctx, job)
	}
	return nil
}

// firstRequestBytes is the LLM executor's (requestSizer), when it has one.
func (a Agents) firstRequestBytes(ctx context.Context, job *Job) (int, bool, error) {
	if s, ok := a.LLM.(requestSizer); ok && job.Agent.Kind == spec.LLMAgent {
		return s.firstRequestBytes(ctx, job)
	}
	return 0, false, errors.New("no size known")
}

// joinResults is a foreach task's result: its instances' results, in item
// order, as a JSON array of strings (none: a foreach whose producer was
// skipped has no list, so "[]"); a repeat task's is its last
// iteration's that ran (the context holds only completed tasks), stored
// out of line if that one was; the count of a repeat's is how many of its
// iterations ran.
func joinResults(ctx context.Context, job *Job) (Result, error) {
	x := job.Task.Expanded()
	if x.JoinError != "" {
		return Result{}, errors.New(x.JoinError)
	}
	if x.Counts {
		return Result{Raw: strconv.Itoa(len(job.Context))}, nil
	}
	if x.ExpandsWhen != "" {
		// Never expanded: its producer was skipped. Its context is what
		// the instances would have read, not results of its own.
		return Result{Raw: "[]"}, nil
	}
	if x.RepeatOf != "" {
		// The last task it reads that is an iteration: the count comes first.
		for i := len(job.Context) - 1; i >= 0; i-- {
			if c := job.Context[i]; c.Task != spec.CountName(x.RepeatOf) {
				return Result{Raw: c.Output.Raw, Blob: c.Output.Blob}, nil
			}
		}
		return Result{}, fmt.Errorf("joining %s: no iteration completed", job.Task.Name)
	}
	raws := make([]string, len(job.Context))
	for i, c := range job.Context {
		var err error
		if raws[i], err = c.Output.Text(ctx); err != nil {
			return Result{}, fmt.Errorf("joining the results of %s: %w", job.Task.Name, err)
		}
	}
	b, err := marshalText(raws)
	if err != nil {
		return Result{}, fmt.Errorf("joining the results of %s: %w", job.Task.Name, err)
	}
	return Result{Raw: string(b)}, nil
}

// noListNote is what the run notes as it runs foreach task tk that was
// never expanded, its producer skipped (joinResults: "[]"): a loop that
// runs no instance is said, in a new run as in a resumed one. ok is false
// for any other task.
func noListNote(tk *spec.Task) (note string, ok bool) {
	x := tk.Expansion // nil for all but a foreach's tasks: asked of every task
	if x == nil || x.ForeachOf != tk.Name || x.ExpandsWhen == "" {
		return "", false
	}
	return fmt.Sprintf("foreach %s: no instance: %s was skipped, so there is no list", tk.Name, x.ExpandsWhen), true
}

// decide is a route agent's result (spec.Decision): the label or branch
// it picks, on the whole of the outputs and variables it reads, as they
// are here, with no process started; a line as a command's echo made it,
// so that a result recorded before compares equal (early cut-off). An
// output that cannot be read fails the attempt: it is never taken for a
// condition that does not hold.
func decide(ctx context.Context, job *Job) (Result, error) {
	d := job.Agent.Decides
	if d == nil {
		return Result{}, fmt.Errorf("agent %s has nothing to decide by", job.Agent.Name)
	}
	prev := func() (string, error) {
		var parts []string
		for _, name := range d.Prev {
			// A task that was skipped (a branch not taken) has no output.
			for _, c := range job.Context {
				if c.Task != name {
					continue
				}
				text, err := c.Output.Text(ctx)
				if err != nil {
					return "", fmt.Errorf("reading the output of %s: %w", name, err)
				}
				parts = append(parts, text)
			}
		}
		// The outputs of a parallel step, each its own, as they are passed on.
		return strings.Join(parts, "\n\n"), nil
	}
	value := func(name string) string { return spec.FormatValue(job.State[name]) }
	picked, err := d.Decide(prev, value)
	if err != nil {
		return Result{}, err
	}
	return Result{Raw: picked + "\n"}, nil
}

// Commands runs command agents (DESIGN §2): the rendered description on
// stdin, stdout as the result, TEAMRUN_* in the environment.
type Commands struct {
	// TempDir holds the per-attempt context folders, made (0700) at the
	// first; "" means os.TempDir().
	TempDir string
	Groups  *Groups
	// Store is the session store as TEAMRUN_STORE names it to the
	// commands (stores.Named): a teamrun a task starts opens the same
	// store, and with TEAMRUN_SESSION it tells the processes of this
	// store's session from those of a namesake in another store
	// (killOrphans, given the same value).
	Store string
	// Warn tells the user something; nil: nobody. Called from the
	// goroutines of parallel tasks.
	Warn func(msg string)
	// Logs keeps the attempts' output of the session Lock holds (nil:
	// none is kept), LogsCtx the context its writes use (they outlive a
	// cancelled run: an interrupted attempt's output is kept too), and
	// Kept learns which attempts' output was kept.
	Logs    logStore
	Lock    checkpoint.Lock
	LogsCtx context.Context
	Kept    *keptLogs
	// Line, when set, gets every line of a command's stdout and stderr as
	// it comes (--verbose). Called from the goroutines of parallel tasks.
	Line func(task, stream, line string)
	// Blobs, when set, keeps a stdout over checkpoint.BlobThreshold out
	// of line (streamed from its spool file), as session Session's.
	Blobs blobStore
	// Session is the id of the session the commands run for.
	Session string
	// Keys are the API keys the team's LLM agents use: a command gets
	// teamrun's environment, and what its result holds of them is
	// redacted before it is recorded (DESIGN §2).
	Keys []string

	paths    pathCache
	mu       sync.Mutex
	madeTemp bool            // TempDir is there
	free     []contextFolder // emptied context folders, ready for the next attempt
	all      []string
	warned   map[string]bool // variables left out of the environment, with why
	// env is teamrun's own environment, which every command gets
	// (inheritedEnv's), and envCost what it costs against maxEnvTotal;
	// nil: not read yet.
	env     []string
	envCost int
}

// contextFolder is a context folder and the files teamrun wrote in it for
// its last job, spares to be rewritten for the next job's: renaming and
// rewriting a file costs far less than removing it and creating another
// (on ext4, a new inode beside many just deleted is slow).
type contextFolder struct {
	dir   string
	files map[string]bool
}

// contextDir fills a folder, fresh or reused, with one file per context
// task. Reusing folders saves a mkdir and an rmdir per task.
func (c *Commands) contextDir(ctx context.Context, outs []ContextOutput) (contextFolder, error) {
	c.mu.Lock()
	var f contextFolder
	if n := len(c.free); n > 0 {
		f, c.free = c.free[n-1], c.free[:n-1]
	}
	c.mu.Unlock()
	if f.dir == "" {
		if err := c.makeTempDir(); err != nil {
			return f, err
		}
		dir, err := os.MkdirTemp(c.TempDir, "teamrun-context-")
		if err != nil {
			return f, err
		}
		f.dir = dir
		c.mu.Lock()
		c.all = append(c.all, dir)
		c.mu.Unlock()
	}
	names := make([]string, len(outs))
	want := make(map[string]bool, len(outs))
	for i, co := range outs {
		names[i] = checkpoint.TaskFileName(co.Task)
		want[names[i]] = true
	}
	// A spare of a name this job wants is rewritten; the others are
	// renamed to the names still missing, and what is left removed.
	var others []string
	for n := range f.files {
		if !want[n] {
			others = append(others, n)
		}
	}
	spare := f.files
	f.files = want
	for i, co := range outs {
		path := filepath.Join(f.dir, names[i])
		if !spare[names[i]] && len(others) > 0 {
			old := filepath.Join(f.dir, others[len(others)-1])
			others = others[:len(others)-1]
			if renameFile(old, path) != nil {
				os.Remove(old)
			}
		}
		if err := writeContextFile(ctx, path, co.Output); err != nil {
			c.release(f, false)
			return f, err
		}
	}
	for _, n := range others {
		os.Remove(filepath.Join(f.dir, n))
	}
	return f, nil
}

// makeTempDir makes TempDir, once. One that is there must be a folder:
// a symlink in its place would put the outputs wherever it points.
func (c *Commands) makeTempDir() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.TempDir == "" || c.madeTemp {
		return nil
	}
	err := makePrivateDir(c.TempDir)
	c.madeTemp = err == nil
	return err
}

// makePrivateDir makes the scratch folder dir (0700) unless it is there;
// a symlink in its place is refused.
func makePrivateDir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		if fi, lerr := os.Lstat(dir); lerr == nil && !fi.IsDir() {
			return fmt.Errorf("%s is not a folder (a symlink?): remove it; teamrun keeps a run's scratch there", dir)
		}
		err = nil
	}
	return err
}

// release empties a context folder of whatever the command left in it,
// but the files teamrun wrote there (f.files), kept as spares while they
// are plain files with no other link; it returns the folder to the pool,
// with its variables file removed when the job had one. A folder that
// cannot be emptied is dropped.
func (c *Commands) release(f contextFolder, vars bool) {
	if vars {
		if err := os.Remove(varsFile(f.dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(f.dir)
			return
		}
	}
	wrote := f.files
	f.files = make(map[string]bool, len(wrote))
	entries, err := os.ReadDir(f.dir)
	if err == nil {
		for _, e := range entries {
			if e.Type().IsRegular() && wrote[e.Name()] {
				if fi, ierr := e.Info(); ierr == nil && singleLink(fi) {
					f.files[e.Name()] = true
					continue
				}
			}
			if err = os.RemoveAll(filepath.Join(f.dir, e.Name())); err != nil {
				break
			}
		}
	}
	if err != nil {
		os.RemoveAll(f.dir)
		return
	}
	c.mu.Lock()
	c.free = append(c.free, f)
	c.mu.Unlock()
}

// Close removes the context folders.
func (c *Commands) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.all {
		os.RemoveAll(d)
		os.Remove(varsFile(d))
	}
	c.all, c.free = nil, nil
}

func (c *Commands) Execute(ctx context.Context, job *Job) (Result, error) {
	a := job.Agent
	timeout, timeoutKey := attemptTimeout(job)
	env, owner, release, err := c.jobEnv(ctx, job)
	if err != nil {
		return Result{}, err
	}
	defer release()
	sinks := c.sinks(job)
	var blob *checkpoint.Blob
	var large func(io.Reader) error
	if c.Blobs != nil && c.Session != "" {
		// Streamed from the spool file into the store, durable before the
		// completion that names it is recorded.
		large = func(r io.Reader) error {
			r, stop := c.redactedReader(r)
			defer stop()
			b, err := c.Blobs.PutBlob(ctx, c.Session, r)
			blob = &b
			return err
		}
	}
	inherited, _ := c.inherited()
	out, err := RunCommand(ctx, c.Groups, CommandSpec{
		Shell: a.Shell, Argv: a.Command, Stdin: job.Description, Env: env, Inherited: inherited, Dir: a.Dir, Timeout: timeout, Owner: owner,
		Spool: c.TempDir, Stdout: sinks.stdout, Stderr: sinks.stderr, Large: large, Paths: &c.paths,
	})
	for _, cerr := range sinks.close() {
		// Each log not kept is told (a full disk loses each stream on its
		// own), a cause they share once (a link at <id>.logs).
		c.warnOnce("logs: "+cerr.Error(), fmt.Sprintf("task %s: its output could not be kept in %s: %v (the run goes on)", job.Task.Name, c.Store, cerr))
	}
	var se *SpoolError
	if errors.As(err, &se) {
		return Result{}, scratchFailure("the output of task "+job.Task.Name, se.Dir, se.Err, true)
	}
	if ce := (*CommandError)(nil); errors.As(err, &ce) && ce.TimedOut {
		ce.TimeoutKey = timeoutKey
	}
	if err != nil {
		return Result{}, redactedErr(err, c.Keys)
	}
	return Result{Raw: llm.RedactKeys(out, c.Keys...), Blob: blob}, nil
}

// redactedReader is r with c.Keys redacted (a redacting writer fed from
// it); stop ends the copy once the reader is no longer read.
func (c *Commands) redactedReader(r io.Reader) (io.Reader, func()) {
	if len(c.Keys) == 0 {
		return r, func() {}
	}
	pr, pw := io.Pipe()
	go func() {
		w := redacting(pw, c.Keys)
		if _, err := io.Copy(w, r); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(w.Close())
	}()
	return pr, func() { pr.Close() }
}

// redactedError is an error whose text held a key: errors.Is and As still
// see the error, its text has the key redacted (a command's stderr tail).
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

func redactedErr(err error, keys []string) error {
	text := err.Error()
	red := llm.RedactKeys(text, keys...)
	if red == text {
		return err
	}
	return &redactedError{text: red, err: err}
}

// scratchFailure is a file teamrun writes for an attempt in the session's
// scratch folder — its context folder, its variables file, its command's
// spooled stdout — that could not be written or read back (a full disk, a
// folder gone), or its output_file on a full disk (outputFileFailure):
// whichever the file, the store's failure, as a checkpoint
// it could not write is (exit 5), not the task's, and no attempt is spent
// on it. path is where ("": the path err names; an error that names none
// says where itself); ran: the command ran to its end and only its output
// was lost (StoreError.Ended).
func scratchFailure(what, path string, err error, ran bool) *StoreError {
	if path == "" {
		var pe *fs.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			path = pe.Path
		case errors.As(err, &le):
			path = le.New
		}
	}
	// A result stored out of line that could not be read is the store's
	// own error already, with its path and advice.
	if path != "" && !errors.Is(err, checkpoint.ErrStore) {
		err = checkpoint.NewStoreError("write", path, err)
	}
	return &StoreError{Err: err, Ended: ran, What: what}
}

// jobEnv is the TEAMRUN_* environment of a job's processes, the command
// agent's or an LLM agent's tools': session, task, attempt, a context
// folder with the context tasks' outputs, the shared state. owner are the
// entries that tell the job's processes (CommandSpec.Owner); release
// empties the folder for the next job.
func (c *Commands) jobEnv(ctx context.Context, job *Job) (env, owner []string, release func(), err error) {
	folder, err := c.contextDir(ctx, job.Context)
	if err != nil {
		return nil, nil, nil, scratchFailure("the context folder of task "+job.Task.Name, "", err, false)
	}
	dir := folder.dir
	spilled := false
	release = func() { c.release(folder, spilled) }
	env = make([]string, 0, 6+len(job.State))
	env = append(env,
		"TEAMRUN_SESSION="+job.Session,
		"TEAMRUN_TASK="+job.Task.Name,
		"TEAMRUN_ATTEMPT="+strconv.Itoa(job.Attempt),
		"TEAMRUN_CONTEXT_DIR="+dir,
	)
	if c.Store != "" {
		env = append(env, "TEAMRUN_STORE="+c.Store)
	}
	owner = slices.Clone(env[:2])
	if c.Store != "" {
		owner = append(owner, env[len(env)-1])
	}
	if job.Agent.Made() {
		// teamrun's own command (one that passes an output on) reads
		// its context folder only: no variable is passed, none is
		// warned about to a user who wrote no command.
		return env, owner, release, nil
	}
	vars, spill := c.varEnv(job.State, env, "TEAMRUN_VARS_FILE="+varsFile(dir))
	if len(spill) > 0 {
		spilled = true
		path, err := writeVarsFile(dir, job.State)
		if err != nil {
			release()
			return nil, nil, nil, scratchFailure("the variables file of task "+job.Task.Name, varsFile(dir), err, false)
		}
		env = append(env, "TEAMRUN_VARS_FILE="+path)
	}
	return append(env, vars...), owner, release, nil
}

// sinks opens an attempt's logs and its --verbose lines.
func (c *Commands) sinks(job *Job) *outputSinks {
	s := &outputSinks{}
	if c.Lock != nil && c.Logs != nil {
		task, attempt := job.Task.Name, job.Attempt
		ctx := c.LogsCtx
		if ctx == nil {
			ctx = context.Background()
		}
		kept := func() { c.Kept.add(task, attempt) }
		o := &attemptLog{w: redacting(c.Logs.AttemptLog(ctx, c.Lock, task, attempt, "stdout"), c.Keys), kept: kept}
		e := &attemptLog{w: redacting(c.Logs.AttemptLog(ctx, c.Lock, task, attempt, "stderr"), c.Keys), kept: kept}
		s.add(o, e, o, e)
	}
	if c.Line != nil {
		task := job.Task.Name
		o := redacting(&lineWriter{emit: func(l string) { c.Line(task, "stdout", l) }}, c.Keys)
		e := redacting(&lineWriter{emit: func(l string) { c.Line(task, "stderr", l) }}, c.Keys)
		s.add(o, e, o, e)
	}
	return s
}

// maxEnvEntry is the longest NAME=value string an environment can carry:
// Linux refuses to start a program (E2BIG, "argument list too long") when
// one string, its terminating NUL included, exceeds MAX_ARG_STRLEN (32
// pages: 131072 bytes). Other systems get the same limit, so a team
// behaves the same everywhere.
const maxEnvEntry = 131072 - 1

// maxEnvTotal bounds a command's whole environment, teamrun's own
// included. Linux refuses to start a program whose arguments and
// environment together pass a quarter of the stack limit (2 MiB with the
// usual 8 MiB); half of that leaves room for a long command line and a
// smaller stack. Each string costs its bytes, its NUL and a pointer.
const maxEnvTotal = 1 << 20

func envCost(entry string) int { return len(entry) + 1 + 8 }

// varEnv is the TEAMRUN_VAR_<NAME> entries of state that fit beside base,
// varsEntry and the inherited environment, and the names of the variables left out
// (spill), each said once: those go to the TEAMRUN_VARS_FILE instead, so a
// team whose variables grow never stops being able to start its commands.
func (c *Commands) varEnv(state map[string]any, base []string, varsEntry string) (env, spill []string) {
	// In name order: when two names share one TEAMRUN_VAR_<NAME> (a
	// warning at the start), the same one wins every time, and the same
	// variables fit every time.
	names := slices.Sorted(maps.Keys(state))
	entries := make([]string, len(names))
	for i, k := range names {
		entries[i] = "TEAMRUN_VAR_" + EnvName(k) + "=" + envValue(state[k])
	}
	// The file's entry is counted in as if it were always needed.
	env, bad, over := c.fitEnv(append(slices.Clip(base), varsEntry), entries)
	for _, i := range slices.Sorted(maps.Keys(bad)) {
		// One variable the environment cannot carry must not stop every
		// command task: leave it out, and say so once.
		k := names[i]
		c.warnOnce(k+"\x00"+bad[i], fmt.Sprintf("variable %q is not passed to commands as TEAMRUN_VAR_%s: %s; it stays in the shared state and in {%s} placeholders, and commands find it in the JSON file named by TEAMRUN_VARS_FILE",
			k, EnvName(k), bad[i], k))
		spill = append(spill, k)
	}
	if len(over) > 0 {
		overNames := make([]string, len(over))
		for j, i := range over {
			overNames[j] = names[i]
		}
		c.warnOnce("\x00budget", fmt.Sprintf("variables %s are not passed to commands as TEAMRUN_VAR_<NAME>: with the others they would pass the %d KiB a command's environment may hold; commands find them (and every later variable that does not fit) in the JSON file named by TEAMRUN_VARS_FILE",
			quoteList(overNames), maxEnvTotal>>10))
		spill = append(spill, overNames...)
	}
	return env, spill
}

// fitArgs is tools.Set.FitArgs for calls whose processes get base (the
// task's environment) too: a TEAMRUN_ARG_* entry that no environment can
// carry (a NUL byte, over 128 KiB), or that does not fit in what is left
// of maxEnvTotal (in name order), is left out, said once per tool and
// argument, so that the tool still starts: it reads the arguments on
// stdin.
func (c *Commands) fitArgs(base []string) func(tool string, entries []string) []string {
	return func(tool string, entries []string) []string {
		out, bad, over := c.fitEnv(base, entries)
		name := func(i int) string { return envName(entries[i]) }
		for _, i := range slices.Sorted(maps.Keys(bad)) {
			c.warnOnce("\x00arg "+tool+"\x00"+name(i)+"\x00"+bad[i], fmt.Sprintf("tool %s: %s is left out of its environment: %s; the tool reads the argument in the JSON on its stdin", tool, name(i), bad[i]))
		}
		if len(over) > 0 {
			names := make([]string, len(over))
			for j, i := range over {
				names[j] = name(i)
			}
			c.warnOnce("\x00args "+tool+"\x00"+strings.Join(names, ","), fmt.Sprintf("tool %s: %s are left out of its environment: with the rest of it they would pass the %d KiB a process's environment may hold; the tool reads the arguments in the JSON on its stdin",
				tool, strings.Join(names, ", "), maxEnvTotal>>10))
		}
		return out
	}
}

// fitEnv is the one rule of what goes into a command's environment beside
// base and the inherited environment: of entries, in order, those that
// fit; the others by index, an entry no environment can carry (a NUL
// byte, over 128 KiB) in bad with why, one past maxEnvTotal in over.
func (c *Commands) fitEnv(base, entries []string) (fit []string, bad map[int]string, over []int) {
	_, inherited := c.inherited()
	budget := maxEnvTotal - inherited
	for _, e := range base {
		budget -= envCost(e)
	}
	for i, e := range entries {
		if why := envEntryProblem(e); why != "" {
			if bad == nil {
				bad = map[int]string{}
			}
			bad[i] = why
			continue
		}
		if envCost(e) > budget {
			over = append(over, i)
			continue
		}
		budget -= envCost(e)
		fit = append(fit, e)
	}
	return fit, bad, over
}

// inherited is teamrun's own environment, which every command gets, and
// what it costs against maxEnvTotal; read once.
func (c *Commands) inherited() (env []string, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.env == nil {
		c.env, c.envCost = inheritedEnv(), 1 // the environment may be empty
		for _, e := range c.env {
			c.envCost += envCost(e)
		}
	}
	return c.env, c.envCost
}

// writeVarsFile writes the whole shared state, as a JSON object keyed by
// the variables' own names, beside the attempt's context folder (not in
// it: that folder holds only context tasks' files).
func writeVarsFile(dir string, state map[string]any) (string, error) {
	obj := make(map[string]json.RawMessage, len(state))
	for k, v := range state {
		b, err := marshalText(v)
		if err != nil {
			// Not JSON (NaN, say): as the environment would have it.
			b, _ = marshalText(envValue(v))
		}
		obj[k] = b
	}
	data, err := marshalText(obj)
	if err != nil {
		return "", err
	}
	path := varsFile(dir)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// varsFile is where an attempt's TEAMRUN_VARS_FILE goes.
func varsFile(contextDir string) string { return contextDir + ".vars.json" }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// envEntryProblem says why NAME=value cannot be put in a command's
// environment; "" when it can.
func envEntryProblem(entry string) string {
	switch {
	case strings.IndexByte(entry, 0) >= 0:
		return "its value contains a NUL byte, which an environment variable cannot hold"
	case len(entry) > maxEnvEntry:
		return fmt.Sprintf("with its name it is %d bytes, over the 128 KiB one environment variable can hold", len(entry))
	}
	return ""
}

// warnOnce warns msg the first time key comes up.
func (c *Commands) warnOnce(key, msg string) {
	c.mu.Lock()
	seen := c.warned[key]
	if !seen {
		if c.warned == nil {
			c.warned = map[string]bool{}
		}
		c.warned[key] = true
	}
	c.mu.Unlock()
	if !seen && c.Warn != nil {
		c.Warn(msg)
	}
}

// EnvName is a variable's name as it appears after TEAMRUN_VAR_: upper
// case, anything but letters, digits and _ replaced by _.
func EnvName(name string) string { return spec.EnvName(name) }

// envValue is a shared-state value as text: strings as they are, anything
// else as JSON.
func envValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, err := marshalText(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// marshalText is json.Marshal without its HTML escaping: what it makes is
// text for agents, commands and files, where "<" and "&" stay as written.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// writeContextFile writes a context task's output to path (0600), copied
// from its blob when it is stored out of line: never whole in memory.
func writeContextFile(ctx context.Context, path string, out Output) error {
	if out.Blob == nil {
		return writePlain(path, out.Raw)
	}
	rc, err := out.Open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := createPlain(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
