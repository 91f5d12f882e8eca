package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

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
	}
	return Result{}, fmt.Errorf("no executor for %s agent %q", job.Agent.Kind, job.Agent.Name)
}

// Commands runs command agents (DESIGN §2): the rendered description on
// stdin, stdout as the result, TEAMRUN_* in the environment.
type Commands struct {
	// TempDir holds the per-attempt context folders; "" means os.TempDir().
	TempDir string
	Groups  *Groups
	// Store is the session store's folder, passed as TEAMRUN_STORE: with
	// TEAMRUN_SESSION it tells the processes of this store's session from
	// those of a namesake in another store (killOrphans).
	Store string
	// Warn tells the user something; nil: nobody. Called from the
	// goroutines of parallel tasks.
	Warn func(msg string)

	mu     sync.Mutex
	free   []string // emptied context folders, ready for the next attempt
	all    []string
	warned map[string]bool // variables left out of the environment, with why
}

// contextDir fills a folder, fresh or reused, with one file per context
// task. Reusing folders saves a mkdir and an rmdir per task.
func (c *Commands) contextDir(ctx []ContextOutput) (string, error) {
	c.mu.Lock()
	var dir string
	if n := len(c.free); n > 0 {
		dir, c.free = c.free[n-1], c.free[:n-1]
	}
	c.mu.Unlock()
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp(c.TempDir, "teamrun-context-"); err != nil {
			return "", err
		}
		c.mu.Lock()
		c.all = append(c.all, dir)
		c.mu.Unlock()
	}
	for _, co := range ctx {
		if err := os.WriteFile(filepath.Join(dir, fileName(co.Task)), []byte(co.Output.Raw), 0o600); err != nil {
			c.release(dir)
			return "", err
		}
	}
	return dir, nil
}

// release empties a context folder (whatever the command left in it) and
// returns it to the pool; a folder that cannot be emptied is dropped.
func (c *Commands) release(dir string) {
	entries, err := os.ReadDir(dir)
	if err == nil {
		for _, e := range entries {
			if err = os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				break
			}
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return
	}
	c.mu.Lock()
	c.free = append(c.free, dir)
	c.mu.Unlock()
}

// Close removes the context folders.
func (c *Commands) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.all {
		os.RemoveAll(d)
	}
	c.all, c.free = nil, nil
}

func (c *Commands) Execute(ctx context.Context, job *Job) (Result, error) {
	a := job.Agent
	timeout := job.Task.Timeout
	if timeout <= 0 {
		timeout = a.Timeout
	}
	dir, err := c.contextDir(job.Context)
	if err != nil {
		return Result{}, fmt.Errorf("context folder: %w", err)
	}
	defer c.release(dir)
	env := make([]string, 0, 5+len(job.State))
	env = append(env,
		"TEAMRUN_SESSION="+job.Session,
		"TEAMRUN_TASK="+job.Task.Name,
		"TEAMRUN_ATTEMPT="+strconv.Itoa(job.Attempt),
		"TEAMRUN_CONTEXT_DIR="+dir,
	)
	if c.Store != "" {
		env = append(env, "TEAMRUN_STORE="+c.Store)
	}
	// In name order: when two names share one TEAMRUN_VAR_<NAME> (a
	// warning at the start), the same one wins every time.
	for _, k := range slices.Sorted(maps.Keys(job.State)) {
		v := job.State[k]
		entry := "TEAMRUN_VAR_" + EnvName(k) + "=" + envValue(v)
		if why := envEntryProblem(entry); why != "" {
			// One variable the environment cannot carry must not stop every
			// command task: leave it out, and say so once.
			c.warnOnce(k+"\x00"+why, fmt.Sprintf("variable %q is not passed to commands as TEAMRUN_VAR_%s: %s; it stays in the shared state and in {%s} placeholders",
				k, EnvName(k), why, k))
			continue
		}
		env = append(env, entry)
	}
	out, err := RunCommand(ctx, c.Groups, CommandSpec{
		Shell: a.Shell, Argv: a.Command, Stdin: job.Description, Env: env, Timeout: timeout,
	})
	if err != nil {
		return Result{}, err
	}
	return Result{Raw: string(out)}, nil
}

// maxEnvEntry is the longest NAME=value string an environment can carry:
// Linux refuses to start a program (E2BIG, "argument list too long") when
// one string, its terminating NUL included, exceeds MAX_ARG_STRLEN (32
// pages: 131072 bytes). Other systems get the same limit, so a team
// behaves the same everywhere.
const maxEnvEntry = 131072 - 1

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
func EnvName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			return unicode.ToUpper(r)
		default:
			return '_'
		}
	}, name)
}

// envValue is a shared-state value as text: strings as they are, anything
// else as JSON.
func envValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// fileName keeps a task's name usable as a file name in the context folder.
func fileName(task string) string {
	if task == "" || task == "." || task == ".." || strings.ContainsAny(task, "/\x00") {
		return strings.NewReplacer("/", "_", "\x00", "_").Replace(strings.Trim(task, ".")) + "_"
	}
	return task
}
