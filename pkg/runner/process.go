package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// process is a command RunCommand starts with os.StartProcess. exec.Cmd
// would copy and de-duplicate the whole environment for every command
// (a map of every entry: 3.6 KB of the 20 KB a `command: [true]` task
// allocated with a 39-variable environment); commandEnv does that with
// the run's environment read once.
type process struct {
	name string // as the spec gives it: argv[0] and messages
	argv []string
	attr os.ProcAttr
	proc *os.Process
}

// start starts the program that name is, through PATH (paths) when name
// has no slash; a program not found is an *exec.Error, as exec's.
func (c *process) start(paths *pathCache) error {
	path, err := paths.program(c.name)
	if err != nil {
		return err
	}
	c.proc, err = os.StartProcess(path, c.argv, &c.attr)
	return err
}

// wait waits for the process to end; an exit other than 0 is an
// *exec.ExitError, as exec.Cmd.Wait's.
func (c *process) wait() error {
	state, err := c.proc.Wait()
	if err != nil {
		return err
	}
	if !state.Success() {
		return &exec.ExitError{ProcessState: state}
	}
	return nil
}

// commandEnv is the environment of a command started in dir with extra
// added to inherited (inheritedEnv's; nil: read now), as exec.Cmd makes
// it: an entry of extra replaces an inherited one of the same name, the
// last of a name wins, and a command started in a folder gets it as PWD.
// An entry no environment can carry (envEntryProblem, the rule fitEnv
// leaves variables out by) is an error.
func commandEnv(inherited, extra []string, dir string) ([]string, error) {
	if inherited == nil {
		inherited = inheritedEnv()
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			extra = append(extra[:len(extra):len(extra)], "PWD="+abs)
		}
	}
	env := make([]string, 0, len(inherited)+len(extra))
	for _, e := range inherited {
		if !namedIn(extra, e) {
			env = append(env, e)
		}
	}
	for i, e := range extra {
		if why := envEntryProblem(e); why != "" {
			return nil, fmt.Errorf("its environment variable %s cannot be passed: %s", envName(e), why)
		}
		if !namedIn(extra[i+1:], e) {
			env = append(env, e)
		}
	}
	return env, nil
}

// inheritedEnv is teamrun's own environment, which every command gets,
// each name once (as exec.Cmd has it).
func inheritedEnv() []string { return lastOfEach(os.Environ()) }

// lastOfEach is env with, of each name, only its last entry, in its place.
func lastOfEach(env []string) []string {
	seen := make(map[string]bool, len(env))
	out := make([]string, len(env))
	n := len(out)
	for i := len(env) - 1; i >= 0; i-- {
		if name := envName(env[i]); !seen[name] {
			seen[name] = true
			n--
			out[n] = env[i]
		}
	}
	return out[n:]
}

// envName is the name environment entry e sets.
func envName(e string) string {
	name, _, _ := strings.Cut(e, "=")
	return name
}

// namedIn reports whether an entry of env sets the variable e sets.
func namedIn(env []string, e string) bool {
	name := envName(e)
	for _, x := range env {
		if len(x) > len(name) && x[len(name)] == '=' && strings.HasPrefix(x, name) {
			return true
		}
	}
	return false
}
