package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

func TestRunCommand(t *testing.T) {
	tests := []struct {
		name     string
		cs       CommandSpec
		want     string
		exit     int    // expected exit code when an error is expected
		errHas   string // substring of the error
		timedOut bool
	}{
		{name: "shell stdin to stdout", cs: CommandSpec{Shell: "tr a-z A-Z", Stdin: "hello"}, want: "HELLO"},
		{name: "argv", cs: CommandSpec{Argv: []string{"printf", "%s-%s", "a", "b c"}}, want: "a-b c"},
		{name: "env", cs: CommandSpec{Shell: `printf %s "$FOO"`, Env: []string{"FOO=bar"}}, want: "bar"},
		{name: "non-zero exit with stderr", cs: CommandSpec{Shell: "echo partial; echo oops >&2; exit 3"}, want: "partial\n", exit: 3, errHas: "exit status 3: oops"},
		{name: "missing program", cs: CommandSpec{Argv: []string{"/no/such/program"}}, exit: -1, errHas: `command "/no/such/program" does not exist: check the agent's command`},
		// Not exec's `exec: "…": executable file not found in $PATH`.
		{name: "program not in PATH", cs: CommandSpec{Argv: []string{"teamrun-no-such-program"}}, exit: -1, errHas: `command "teamrun-no-such-program" is not in PATH: install it, or give its full path`},
		{name: "timeout", cs: CommandSpec{Shell: "sleep 30", Timeout: 50 * time.Millisecond}, exit: -1, errHas: "timed out after 50ms", timedOut: true},
		// A background child keeps stdout open: the task still ends with
		// the command, with what it printed (was exec's "WaitDelay expired").
		{name: "background child holds stdout", cs: CommandSpec{Shell: "sleep 30 & echo hi"}, want: "hi\n"},
		{name: "background child, failing", cs: CommandSpec{Shell: "sleep 30 & echo hi; echo bad >&2; exit 4"}, want: "hi\n", exit: 4, errHas: "exit status 4: bad"},
		{name: "command does not read its input", cs: CommandSpec{Shell: "true", Stdin: strings.Repeat("x", 1<<20)}},
	}
	for _, tt := range tests {
		for _, goroutines := range []bool{false, true} {
			tt.cs.copyByGoroutines = goroutines
			t.Run(fmt.Sprintf("%s/goroutines=%v", tt.name, goroutines), func(t *testing.T) {
				out, err := RunCommand(context.Background(), &Groups{}, tt.cs)
				if string(out) != tt.want {
					t.Errorf("stdout %q, want %q", out, tt.want)
				}
				if tt.errHas == "" {
					if err != nil {
						t.Fatalf("error %v", err)
					}
					return
				}
				var ce *CommandError
				if !errors.As(err, &ce) {
					t.Fatalf("error %v (%T), want *CommandError", err, err)
				}
				if ce.ExitCode != tt.exit || ce.TimedOut != tt.timedOut || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("error %q (exit %d, timed out %v), want exit %d containing %q", err, ce.ExitCode, ce.TimedOut, tt.exit, tt.errHas)
				}
			})
		}
	}
}

func TestStderrTail(t *testing.T) {
	for _, goroutines := range []bool{false, true} {
		_, err := RunCommand(context.Background(), nil, CommandSpec{Shell: "head -c 100000 /dev/zero | tr '\\0' x >&2; echo END >&2; exit 1", copyByGoroutines: goroutines})
		msg := err.Error()
		if !strings.HasSuffix(msg, "END") || len(msg) > stderrTail+64 || !strings.Contains(msg, "…") {
			t.Fatalf("goroutines=%v: error of %d bytes, ending %q", goroutines, len(msg), msg[max(0, len(msg)-20):])
		}
	}
}

// gone waits until pid is dead or a zombie; a slow machine only makes it
// wait longer.
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d outlived its task", pid)
}

func TestKillsTheWholeGroup(t *testing.T) {
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			// The grandchild ignores nothing special: it only has to die with its group.
			// The pid reaches pidFile by a rename: the test never reads a
			// file the shell has created but not yet written.
			cs := CommandSpec{Shell: "sleep 60 & echo $! > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "; wait"}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "timeout" {
				// Long enough for the shell to start the grandchild and
				// write its pid on a loaded machine; the test waits for
				// the timeout, it does not measure it.
				cs.Timeout = 2 * time.Second
			} else {
				go func() {
					for {
						if _, err := os.Stat(pidFile); err == nil {
							cancel()
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
				}()
			}
			groups := &Groups{}
			_, err := RunCommand(ctx, groups, cs)
			if err == nil {
				t.Fatal("no error")
			}
			if how == "cancel" && !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			b, rerr := os.ReadFile(pidFile)
			if rerr != nil {
				t.Fatal(rerr)
			}
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if perr != nil || pid <= 0 {
				t.Fatalf("pid file %q: %v", b, perr)
			}
			gone(t, pid)
			if len(groups.pgid) != 0 {
				t.Fatalf("groups still tracked: %v", groups.pgid)
			}
		})
	}
}

// TestLeftoversDie: when a task's command ends, what it started in the
// background dies with it, whether the command succeeded or not.
func TestLeftoversDie(t *testing.T) {
	for _, tail := range []string{"echo hi", "echo hi; exit 1"} {
		t.Run(tail, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			out, _ := RunCommand(context.Background(), &Groups{}, CommandSpec{Shell: "sleep 60 & echo $! > " + pidFile + "; " + tail})
			if string(out) != "hi\n" {
				t.Fatalf("stdout %q, want %q", out, "hi\n")
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			gone(t, pid)
		})
	}
}

// TestOutsiderHoldsStdout: a process that left the task's group keeps
// stdout open; the task still ends, after a bounded wait.
func TestOutsiderHoldsStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits outputGrace")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	for _, goroutines := range []bool{false, true} {
		pidFile := filepath.Join(t.TempDir(), "pid")
		var copied strings.Builder // stdout through a pipe too
		out, err := RunCommand(context.Background(), &Groups{}, CommandSpec{
			Shell:  "setsid sh -c 'echo $$ > " + pidFile + "; exec sleep 60' & until [ -s " + pidFile + " ]; do sleep 0.01; done; echo hi",
			Stdout: &copied, copyByGoroutines: goroutines})
		if b, rerr := os.ReadFile(pidFile); rerr == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
				defer syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if err != nil || string(out) != "hi\n" || copied.String() != "hi\n" {
			t.Fatalf("goroutines=%v: stdout %q (copied %q), error %v; want %q and no error", goroutines, out, copied.String(), err, "hi\n")
		}
	}
}

func TestCommandsEnvironment(t *testing.T) {
	c := &Commands{TempDir: t.TempDir()}
	job := &Job{
		Session: "s1", Attempt: 2,
		Task:        &spec.Task{Name: "count"},
		Agent:       &spec.Agent{Name: "counter", Kind: spec.CommandAgent, Shell: `cat; echo "|$TEAMRUN_SESSION|$TEAMRUN_TASK|$TEAMRUN_ATTEMPT|$TEAMRUN_VAR_TOPIC|$TEAMRUN_VAR_N|$TEAMRUN_VAR_MY_VAR|"; cat "$TEAMRUN_CONTEXT_DIR/draft"`},
		Description: "the description\n",
		Context:     []ContextOutput{{Task: "draft", Output: Output{Raw: "draft text"}}},
		State:       map[string]any{"topic": "Go 1.26", "n": 3, "my-var": "x"},
	}
	res, err := c.Execute(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	want := "the description\n|s1|count|2|Go 1.26|3|x|\ndraft text"
	if res.Raw != want {
		t.Fatalf("result %q, want %q", res.Raw, want)
	}
	c.Close()
	if left, _ := os.ReadDir(c.TempDir); len(left) != 0 {
		t.Fatalf("context folder left behind: %v", left)
	}
}

// TestEnvLeftOut: a variable the environment cannot carry (a NUL byte, or
// more than Linux's 128 KiB per string) is left out with one warning
// naming it, and every other variable still arrives; was every command
// task failing with exec's "environment variable contains NUL" or
// "argument list too long".
func TestEnvLeftOut(t *testing.T) {
	// TEAMRUN_VAR_BIG= is 16 bytes: the longest value that fits.
	fits := strings.Repeat("a", maxEnvEntry-16)
	tests := []struct {
		name  string
		value any
		warn  string // "" when the variable is passed
	}{
		{"nul", "a\x00b", "contains a NUL byte"},
		{"nul in JSON", map[string]any{"k": "a\x00b"}, ""}, // JSON escapes it as \u0000
		{"longest that fits", fits, ""},
		{"one byte more", fits + "a", "over the 128 KiB"},
		{"huge", strings.Repeat("a", 150000), "over the 128 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, job, warned := shellJob(t, `printf '%s|%s' "${#TEAMRUN_VAR_BIG}" "$TEAMRUN_VAR_OK"`, map[string]any{"big": tt.value, "ok": "yes"})
			for range 2 { // the warning comes once
				res, err := c.Execute(context.Background(), job)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasSuffix(res.Raw, "|yes") || (tt.warn != "") != strings.HasPrefix(res.Raw, "0|") {
					t.Fatalf("result %q: TEAMRUN_VAR_BIG should be passed: %v", truncate(res.Raw, 40), tt.warn == "")
				}
			}
			warnings := *warned
			switch {
			case tt.warn == "" && len(warnings) > 0:
				t.Fatalf("warnings %q", warnings)
			case tt.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warn) || !strings.Contains(warnings[0], `variable "big" is not passed to commands as TEAMRUN_VAR_BIG`)):
				t.Fatalf("warnings %q, want one naming big and saying %q", warnings, tt.warn)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"topic": "TOPIC", "my-var": "MY_VAR", "a.b": "A_B", "ünï": "_N_", "X9_y": "X9_Y"} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSimpleCommand(t *testing.T) {
	tests := []struct {
		line string
		want []string // nil: through /bin/sh -c
	}{
		{"true", []string{"true"}},
		{"wc -w", []string{"wc", "-w"}},
		{"  sort\t-u  ", []string{"sort", "-u"}},
		{"sort -t, -k2 --key=1,1", []string{"sort", "-t,", "-k2", "--key=1,1"}},
		{"", nil},
		{"echo hi", nil},     // a builtin that differs from /bin/echo
		{"exit 3", nil},      // a special builtin
		{"FOO=1 env", nil},   // an assignment
		{"cat $FILE", nil},   // expansion
		{"cat *.txt", nil},   // glob
		{"wc -w < in", nil},  // redirection
		{"true; false", nil}, // a list
		{"true\nfalse", nil}, // two commands
		{"grep 'a b'", nil},  // quotes
		{"tr a-z A-Z", []string{"tr", "a-z", "A-Z"}},
		{"no-such-program-xyz", nil}, // the shell reports it
		{"ls ~", nil},                // tilde expansion
	}
	for _, tt := range tests {
		got, ok := simpleCommand(nil, tt.line)
		if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
			t.Errorf("simpleCommand(%q) = %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
}

// shellJob is a command agent's job running shell with the shared state,
// and the Commands that runs it; warnings collects what it warns.
func shellJob(t *testing.T, shell string, state map[string]any) (*Commands, *Job, *[]string) {
	t.Helper()
	warnings := &[]string{}
	c := &Commands{TempDir: t.TempDir(), Warn: func(m string) { *warnings = append(*warnings, m) }}
	t.Cleanup(c.Close)
	job := &Job{
		Session: "s1", Attempt: 1,
		Task:  &spec.Task{Name: "t"},
		Agent: &spec.Agent{Name: "a", Kind: spec.CommandAgent, Shell: shell},
		State: state,
	}
	return c, job, warnings
}

// TestScratchSymlinkRefused: a symlink in place of the scratch folder is
// refused, and nothing is written where it points.
func TestScratchSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.Mkdir(victim, 0o700); err != nil {
		t.Fatal(err)
	}
	scratch := filepath.Join(dir, "s.scratch")
	if err := os.Symlink(victim, scratch); err != nil {
		t.Fatal(err)
	}
	c, job, _ := shellJob(t, "echo hi", nil)
	c.TempDir = scratch
	if _, err := c.Execute(context.Background(), job); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Fatalf("error %v, want a refusal naming the symlink", err)
	}
	if left, _ := os.ReadDir(victim); len(left) != 0 {
		t.Fatalf("written through the symlink: %v", left)
	}
}

// TestOutputHeldOnce: a command's output is allocated once, at its size,
// on its way to the result (was a growing buffer, up to twice the size,
// then a copy of it as the result: 3×).
func TestOutputHeldOnce(t *testing.T) {
	const size = 32 << 20
	c, job, _ := shellJob(t, fmt.Sprintf("head -c %d /dev/zero", size), nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := c.Execute(context.Background(), job)
	runtime.ReadMemStats(&after)
	if err != nil || len(res.Raw) != size {
		t.Fatalf("result of %d bytes, error %v; want %d bytes", len(res.Raw), err, size)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/4 {
		t.Fatalf("%d MiB allocated for an output of %d MiB", got>>20, size>>20)
	}
}

// A command that prints nothing costs its output no 32 KiB buffers (io.Copy
// allocates one per call unless given one: stdout, stderr and the spool
// read each took one, three per task).
func TestRunCommandSmallOutputAllocatesLittle(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true")
	}
	cs := CommandSpec{Argv: []string{"true"}, Spool: t.TempDir()}
	run := func() {
		if _, err := RunCommand(context.Background(), nil, cs); err != nil {
			t.Fatal(err)
		}
	}
	run()
	const n = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		run()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 64<<10 {
		t.Errorf("a silent command allocated %d bytes (want ≤ 64 KiB)", per)
	} else {
		t.Logf("a silent command allocated %d bytes", per)
	}
}

// A command that does not start is said so in the user's terms, each
// cause its own words: exec's own error only where none fits.
func TestStartError(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cs   CommandSpec
		want string
		is   error
	}{
		{"missing program", CommandSpec{Argv: []string{"/no/such/program"}},
			`command "/no/such/program" does not exist: check the agent's command`, os.ErrNotExist},
		{"missing folder", CommandSpec{Argv: []string{"true"}, Dir: filepath.Join(dir, "no-such-folder")},
			fmt.Sprintf(`command "true" or the folder %s does not exist: check the agent's command`, filepath.Join(dir, "no-such-folder")), os.ErrNotExist},
		{"not executable", CommandSpec{Argv: []string{plain}},
			fmt.Sprintf(`command %q cannot be run (permission denied): make it executable (chmod +x)`, plain), os.ErrPermission},
		{"not in PATH", CommandSpec{Argv: []string{"teamrun-no-such-program"}},
			`command "teamrun-no-such-program" is not in PATH: install it, or give its full path`, exec.ErrNotFound},
		{"none of these", CommandSpec{Argv: []string{garbage}},
			fmt.Sprintf(`command %q did not start: fork/exec %s: exec format error`, garbage, garbage), syscall.ENOEXEC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RunCommand(context.Background(), &Groups{}, tt.cs)
			var ce *CommandError
			if !errors.As(err, &ce) || ce.ExitCode != -1 {
				t.Fatalf("error %v (%T), want a *CommandError of exit -1", err, err)
			}
			if ce.Err == nil || ce.Err.Error() != tt.want || !errors.Is(err, tt.is) {
				t.Errorf("error %q, want %q (one that is %v)", ce.Err, tt.want, tt.is)
			}
		})
	}
}
