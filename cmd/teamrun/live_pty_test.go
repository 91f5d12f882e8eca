//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// onTerminal runs cmd with its stdin and stdout (and its stderr, unless
// set) on an 80-column pseudo-terminal, and returns what the terminal got
// and how cmd ended; it skips the test where there is no pseudo-terminal.
func onTerminal(t *testing.T, cmd *exec.Cmd) (*bytes.Buffer, error) {
	t.Helper()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	var out bytes.Buffer
	if _, err := io.Copy(&out, f); err != nil && !errors.Is(err, syscall.EIO) { // EIO: the other side closed
		t.Fatal(err)
	}
	return &out, cmd.Wait()
}

// The live display through a real pseudo-terminal of 80 columns, as a user
// sees it: three tasks with long names run at once; no line may wrap (a
// wrapped progress line leaves a stale copy at every redraw) and the final
// screen shows every task once.
func TestLiveDisplayOnATerminal(t *testing.T) {
	dir := t.TempDir()
	long := "summarise-the-quarterly-revenue-figures-for-the-region-"
	spec := "process: workflow\nagents:\n  slow:\n    shell: sleep 0.7; echo ok\ntasks:\n"
	var names []string
	for _, region := range []string{"emea", "apac", "americas"} {
		n := long + region
		names = append(names, n)
		spec += "  " + n + ":\n    description: x\n    agent: slow\n"
	}
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", path, "--max-parallel", "3")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=xterm", "NO_COLOR=")
	cmd.Dir = dir
	out, err := onTerminal(t, cmd)
	if err != nil {
		t.Fatalf("teamrun: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "3 running") {
		t.Fatalf("the live block never showed the three running tasks:\n%q", out.String())
	}
	// What the run shows while it runs must fit; the outputs and the
	// summary after it are printed once, in full (a resume command is
	// pasted, never cut), and may wrap.
	live, _, _ := bytes.Cut(out.Bytes(), []byte("── output of"))
	screen := &iostreams.Screen{Width: 80}
	if _, err := screen.Write(live); err != nil {
		t.Fatal(err)
	}
	if screen.Wrapped > 0 {
		t.Errorf("%d lines wrapped at 80 columns:\n%s", screen.Wrapped, strings.Join(screen.Lines(), "\n"))
	}
	if _, err := screen.Write(out.Bytes()[len(live):]); err != nil {
		t.Fatal(err)
	}
	lines := screen.Lines()
	text := strings.Join(lines, "\n")
	for _, n := range names {
		region := n[len(long):]
		c := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "completed ") && strings.Contains(l, region+" in ") {
				c++
			}
		}
		if c != 1 {
			t.Errorf("task ...%s completed %d times on the final screen:\n%s", region, c, text)
		}
	}
	if strings.Contains(text, " done, ") || !strings.Contains(text, "summary done: 0 restored, 3 ran") {
		t.Errorf("final screen:\n%s", text)
	}
}

// --verbose on a terminal: each task's lines are printed above the live
// block as they come, each once, and the block leaves no stale line.
func TestLiveVerboseOnATerminal(t *testing.T) {
	dir := t.TempDir()
	spec := "process: workflow\nagents:\n  talk:\n    shell: 'for i in 1 2 3; do echo \"$TEAMRUN_TASK line $i\"; sleep 0.3; done; echo \"$TEAMRUN_TASK warns\" >&2'\n" +
		"tasks:\n  north:\n    description: x\n    agent: talk\n  south:\n    description: x\n    agent: talk\n"
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", path, "-v")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=xterm", "NO_COLOR=")
	cmd.Dir = dir
	out, err := onTerminal(t, cmd)
	if err != nil {
		t.Fatalf("teamrun: %v\n%s", err, out.String())
	}
	// The summary after the run may wrap (a resume command is never cut);
	// what the run shows while it runs may not.
	live, _, _ := bytes.Cut(out.Bytes(), []byte("── output of"))
	screen := &iostreams.Screen{Width: 80}
	if _, err := screen.Write(live); err != nil {
		t.Fatal(err)
	}
	wrapped := screen.Wrapped
	if _, err := screen.Write(out.Bytes()[len(live):]); err != nil {
		t.Fatal(err)
	}
	lines := screen.Lines()
	text := strings.Join(lines, "\n")
	for _, task := range []string{"north", "south"} {
		for _, want := range []string{task + " | " + task + " line 1", task + " | " + task + " line 3", task + " | " + task + " warns"} {
			c := 0
			for _, l := range lines {
				if l == want {
					c++
				}
			}
			if c != 1 {
				t.Errorf("%q is %d times on the final screen:\n%s", want, c, text)
			}
		}
	}
	if strings.Contains(text, " done, ") || wrapped > 0 {
		t.Errorf("a stale block line or a wrapped line (%d) on the final screen:\n%s", wrapped, text)
	}
}

// A task fails on an 80-column terminal while another runs on: the block
// counts it as failed, not done, and its "its output:" command, printed for
// pasting, is there whole (it was cut with "…" to the width).
func TestLiveFailureOnATerminal(t *testing.T) {
	dir := t.TempDir()
	// slow waits for bad to have failed, so the block shows the failure
	// next to a running task.
	spec := "process: workflow\nagents:\n" +
		"  slow:\n    shell: 'while [ ! -e bad.done ]; do sleep 0.1; done; sleep 1; echo slow'\n" +
		"  bad:\n    shell: 'echo \"something went wrong\" >&2; touch bad.done; exit 1'\n" +
		"tasks:\n  wait-for-it:\n    description: x\n    agent: slow\n  fetch-changelog:\n    description: x\n    agent: bad\n"
	path := filepath.Join(dir, "nightly-release-notes.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", "nightly-release-notes.yaml")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=xterm", "NO_COLOR=1")
	cmd.Dir = dir
	out, err := onTerminal(t, cmd)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("teamrun: %v, want exit 1\n%s", err, out.String())
	}
	raw := out.String()
	if !strings.Contains(raw, "0/2 done, 1 failed, 1 running") || strings.Contains(raw, "1/2 done, 1 running") {
		t.Errorf("the block does not count the failed task apart:\n%q", raw)
	}
	logs := regexp.MustCompile(`its output: teamrun session logs nightly-release-notes-\S+ fetch-changelog --attempt 1\r\n`)
	if !logs.MatchString(raw) {
		t.Errorf("no whole `its output:` command:\n%q", raw)
	}
}

// A command's output kept with the session holds an escape sequence (one
// that sets the window title, one that clears the screen): `session logs`
// and `session diff` show it escaped on a terminal, as a run's results
// are, and byte for byte through a pipe.
func TestSessionViewsEscapeOnATerminal(t *testing.T) {
	dir := t.TempDir()
	spec := "agents:\n  loud:\n    shell: 'printf \"run $TEAMRUN_ATTEMPT \\033]0;pwned\\007\\033[2J%s\\n\" \"$(date +%N)\"'\ntasks:\n  a:\n    description: x\n    agent: loud\n"
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=xterm", "NO_COLOR=")
	teamrun := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env, cmd.Dir = env, dir
		return cmd
	}
	for _, args := range [][]string{{"run", path, "--session", "s1", "--quiet"}, {"run", path, "--continue", "--session", "s1", "--rerun", "a", "--quiet"}} {
		if out, err := teamrun(args...).CombinedOutput(); err != nil {
			t.Fatalf("teamrun %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, args := range [][]string{{"session", "logs", "s1", "a"}, {"session", "diff", "s1", "a"}} {
		piped, err := teamrun(args...).Output()
		if err != nil {
			t.Fatalf("teamrun %s: %v", strings.Join(args, " "), err)
		}
		if !bytes.Contains(piped, []byte("\x1b]0;pwned\a\x1b[2J")) {
			t.Errorf("teamrun %s through a pipe changed the output:\n%q", strings.Join(args, " "), piped)
		}
		cmd := teamrun(args...)
		out, err := onTerminal(t, cmd)
		if err != nil {
			t.Fatalf("teamrun %s: %v\n%q", strings.Join(args, " "), err, out.String())
		}
		if bytes.ContainsRune(out.Bytes(), 0x1b) || bytes.ContainsRune(out.Bytes(), 0x07) || !strings.Contains(out.String(), `\x1b]0;pwned\x07\x1b[2J`) {
			t.Errorf("teamrun %s on a terminal sent the escape sequences:\n%q", strings.Join(args, " "), out.String())
		}
	}
}

// -v with stdout to a file and stderr on a terminal: a task's stderr
// lines reach the terminal with their control characters escaped, and its
// stdout lines reach the file byte for byte.
func TestVerboseStderrOnATerminal(t *testing.T) {
	dir := t.TempDir()
	spec := "agents:\n  loud:\n    shell: 'printf \"out \\033[2J\\n\"; printf \"err \\033]0;pwned\\007\\n\" >&2'\ntasks:\n  a:\n    description: x\n    agent: loud\n"
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	outFile, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd := exec.Command(os.Args[0], "run", path, "-v")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=xterm", "NO_COLOR=")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, outFile, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var errOut bytes.Buffer
	if _, err := io.Copy(&errOut, ptmx); err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("teamrun: %v\n%q", err, errOut.String())
	}
	if bytes.ContainsRune(errOut.Bytes(), 0x1b) || !strings.Contains(errOut.String(), `a | err \x1b]0;pwned\x07`) {
		t.Errorf("the stderr line on the terminal:\n%q", errOut.String())
	}
	out, err := os.ReadFile(outFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("a | out \x1b[2J\n")) {
		t.Errorf("the stdout line in the file is not byte for byte:\n%q", out)
	}
}

// -v with stdout on a terminal and stderr to a file (`2> errors.log`): the
// terminal gets colour, the file none. The warning and the task's stderr
// line were coloured by stdout's terminal and left escape codes in the file.
func TestVerboseStderrToAFileFromATerminal(t *testing.T) {
	dir := t.TempDir()
	spec := "agents:\n  sh:\n    shell: 'echo to-stdout; echo to-stderr >&2'\n    role: ignored on a command agent\ntasks:\n  a:\n    description: x\n    agent: sh\n"
	path := filepath.Join(dir, "warn.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	errFile, err := os.Create(filepath.Join(dir, "errors.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd := exec.Command(os.Args[0], "run", path, "-v")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=xterm", "NO_COLOR=")
	cmd.Dir, cmd.Stderr = dir, errFile // kept by pty: only stdin and stdout are the terminal
	out, err := onTerminal(t, cmd)
	if err != nil {
		t.Fatalf("teamrun: %v\n%q", err, out.String())
	}
	if !strings.Contains(out.String(), "\x1b[32mcompleted\x1b[0m a") {
		t.Errorf("the terminal has no colour:\n%q", out.String())
	}
	errLog, err := os.ReadFile(errFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(errLog, 0x1b) || !bytes.Contains(errLog, []byte("teamrun: warning: ")) || !bytes.Contains(errLog, []byte("a | to-stderr\n")) {
		t.Errorf("errors.log, written from a run on a terminal:\n%q", errLog)
	}
}

// TERM=dumb on a real terminal (Emacs' shell, some IDE consoles): plain
// lines and no colour, yet a task's control characters are escaped, in
// its -v lines and its result: the device writes the clipboard on OSC 52
// whatever TERM says.
func TestDumbTerminalEscapes(t *testing.T) {
	dir := t.TempDir()
	spec := "agents:\n  sh:\n    shell: 'printf \"before\\033]52;c;cHduZWQ=\\007after\\n\"'\ntasks:\n  a:\n    description: x\n    agent: sh\n"
	path := filepath.Join(dir, "osc.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", path, "-v")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_AS_MAIN=1", "TEAMRUN_HOME="+filepath.Join(dir, "home"), "TERM=dumb", "NO_COLOR=")
	cmd.Dir = dir
	out, err := onTerminal(t, cmd)
	if err != nil {
		t.Fatalf("teamrun: %v\n%q", err, out.String())
	}
	got := out.String()
	if bytes.ContainsRune(out.Bytes(), 0x1b) || bytes.ContainsRune(out.Bytes(), 0x07) {
		t.Errorf("an escape sequence reached the TERM=dumb terminal:\n%q", got)
	}
	if strings.Count(got, `before\x1b]52;c;cHduZWQ=\x07after`) != 2 { // the -v line and the result
		t.Errorf("the OSC 52 write is not shown escaped twice:\n%q", got)
	}
}
