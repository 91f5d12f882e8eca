package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// reaped waits until pid no longer exists: dead and waited for, not a
// zombie left to teamrun.
func reaped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	state := "alive"
	if p, ok := readProc(pid); ok && p.state == 'Z' {
		state = "a zombie nobody reaped"
	}
	t.Fatalf("process %d outlived its task: %s", pid, state)
}

// subreaping makes the test process the subreaper for the test.
func subreaping(t *testing.T) *Groups {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	g := &Groups{}
	if err := g.Subreap(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// TestSetsidGrandchildDies: a process that left the task's group and
// session (setsid), with or without the task's environment, dies with the
// task however it ends, and is reaped; was alive, re-parented to init.
func TestSetsidGrandchildDies(t *testing.T) {
	g := subreaping(t)
	owner := []string{"TEAMRUN_SESSION=reap-test", "TEAMRUN_TASK=t"}
	tests := []struct {
		name    string
		env     string // how the grandchild is started
		tail    string
		timeout time.Duration
		cancel  bool
	}{
		{name: "success", env: "env", tail: "echo hi"},
		{name: "failure", env: "env", tail: "exit 3"},
		{name: "timeout", env: "env", tail: "sleep 60", timeout: time.Second},
		{name: "cancel", env: "env", tail: "sleep 60", cancel: true},
		{name: "no environment", env: "env -i", tail: "echo hi"},
		// The setsid'd process is still a child of the live shell when the
		// task is killed: adopted at that instant.
		{name: "waiting parent", env: "env", tail: "wait", timeout: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			shell := fmt.Sprintf(`setsid %s sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 300' %s &
until [ -s %s ]; do sleep 0.01; done
%s`, tt.env, pidFile, pidFile, tt.tail)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
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
			env := append([]string{}, owner...)
			_, _ = RunCommand(ctx, g, CommandSpec{Shell: shell, Env: env, Owner: owner, Timeout: tt.timeout})
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || pid <= 0 {
				t.Fatalf("pid file %q: %v", b, err)
			}
			reaped(t, pid)
		})
	}
}

// TestSubreaperKeepsWait: while adopted processes are swept and reaped,
// every parallel command's own exit status still reaches exec's Wait (a
// reaper that waited for any child would take some: "no child processes").
func TestSubreaperKeepsWait(t *testing.T) {
	g := subreaping(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := []string{"TEAMRUN_TASK=t" + strconv.Itoa(i)}
			out, err := RunCommand(context.Background(), g, CommandSpec{
				Shell: fmt.Sprintf("setsid sleep 0.0%d & echo %d; exit %d", i%10, i, i%3), Env: owner, Owner: owner})
			var ce *CommandError
			switch {
			case i%3 == 0 && err != nil:
				errs <- fmt.Errorf("command %d: %v", i, err)
			case i%3 != 0 && (!errors.As(err, &ce) || ce.ExitCode != i%3):
				errs <- fmt.Errorf("command %d: error %v, want exit status %d", i, err, i%3)
			case string(out) != strconv.Itoa(i)+"\n":
				errs <- fmt.Errorf("command %d: stdout %q", i, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestKillRecorded: a process on record dies only while it is the one
// recorded (same start time: not a reused pid) and no ancestor of the run.
func TestKillRecorded(t *testing.T) {
	start := func() (*exec.Cmd, proc) {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		p, ok := readProc(cmd.Process.Pid)
		if !ok {
			t.Fatal("cannot read the process")
		}
		return cmd, p
	}
	victim, vp := start()
	reused, rp := start()
	spared, sp := start()
	path := filepath.Join(t.TempDir(), "procs")
	record := fmt.Sprintf("%d %d\n%d %d\n%d %d\nnot a line\n", victim.Process.Pid, vp.start, reused.Process.Pid, rp.start+1, spared.Process.Pid, sp.start)
	if err := os.WriteFile(path, []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	got := killRecorded(path, map[int]bool{spared.Process.Pid: true})
	if len(got) != 1 || got[0] != victim.Process.Pid {
		t.Fatalf("killed %v, want [%d]", got, victim.Process.Pid)
	}
	if err := victim.Wait(); err == nil {
		t.Fatal("the recorded process was not killed")
	}
	for _, c := range []*exec.Cmd{reused, spared} {
		if err := syscall.Kill(c.Process.Pid, 0); err != nil {
			t.Fatalf("process %d killed: %v", c.Process.Pid, err)
		}
	}
}

// TestRecordDescendants: every process below this one is written down
// once, with its start time.
func TestRecordDescendants(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	path := filepath.Join(t.TempDir(), "scratch", "procs")
	seen := map[int]uint64{}
	rec := &procsFile{path: path}
	defer rec.close()
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) { // the shell, then its sleep
		if err := recordDescendants(rec, seen); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	p, _ := readProc(cmd.Process.Pid)
	if !slices.Contains(lines, fmt.Sprintf("%d %d", cmd.Process.Pid, p.start)) || len(lines) != len(seen) {
		t.Fatalf("record %q, want each of %v once", lines, seen)
	}
}

// TestHasChildren: the sweep's fast path sees a child, running or ended
// and not yet waited for, and leaves its exit status to its waiter.
func TestHasChildren(t *testing.T) {
	if hasChildren() {
		t.Skip("the test process already has children")
	}
	cmd := exec.Command("sh", "-c", "exit 7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !hasChildren() {
		t.Fatal("a running child not seen")
	}
	for range 3000 { // until it has ended; a slow machine only makes it wait longer
		if p, ok := readProc(cmd.Process.Pid); !ok || p.state == 'Z' {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !hasChildren() {
		t.Fatal("an ended child not seen")
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("Wait: %v, want exit status 7 (hasChildren must not reap)", err)
	}
	if hasChildren() {
		t.Fatal("a child seen after it was waited for")
	}
}

// TestSweepWhileOthersRun: in a workflow, a command's adopted process that
// carries its environment dies when that command ends, though another
// command still runs; one that cleared its environment cannot be told
// from the other command's, and dies when no command runs any more.
func TestSweepWhileOthersRun(t *testing.T) {
	g := subreaping(t)
	dir := t.TempDir()
	pidOf := func(name string) int {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	grandchild := func(env, name string) string {
		p := filepath.Join(dir, name)
		return fmt.Sprintf(`setsid %s sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 300' %s &
until [ -s %s ]; do sleep 0.01; done
`, env, p, p)
	}
	release := filepath.Join(dir, "release")
	otherDone := make(chan error, 1)
	go func() {
		owner := []string{"TEAMRUN_TASK=other"}
		_, err := RunCommand(context.Background(), g, CommandSpec{Env: owner, Owner: owner,
			Shell: "touch " + filepath.Join(dir, "other-running") + "; until [ -e " + release + " ]; do sleep 0.01; done"})
		otherDone <- err
	}()
	for range 3000 {
		if _, err := os.Stat(filepath.Join(dir, "other-running")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	owner := []string{"TEAMRUN_TASK=mine"}
	if _, err := RunCommand(context.Background(), g, CommandSpec{Env: owner, Owner: owner,
		Shell: grandchild("env", "marked") + grandchild("env -i", "bare") + "echo hi"}); err != nil {
		t.Fatal(err)
	}
	reaped(t, pidOf("marked"))
	bare := pidOf("bare")
	if err := syscall.Kill(bare, 0); err != nil {
		t.Fatalf("the unmarked process died while another command ran: %v", err)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-otherDone; err != nil {
		t.Fatal(err)
	}
	reaped(t, bare)
}

// TestSweepHeld: a child being started outside RunCommand (an MCP server,
// registered only after its handshake) is not taken for an adopted
// process: no sweep runs while it is held.
func TestSweepHeld(t *testing.T) {
	g := subreaping(t)
	server := exec.Command("sleep", "60")
	g.hold(1)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	if _, err := RunCommand(context.Background(), g, CommandSpec{Shell: "setsid true & wait; echo hi"}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(server.Process.Pid, 0); err != nil {
		t.Fatalf("the server being started was swept: %v", err)
	}
	g.addIfSet(server.Process.Pid)
	g.hold(-1)
	if _, err := RunCommand(context.Background(), g, CommandSpec{Shell: "echo hi"}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(server.Process.Pid, 0); err != nil {
		t.Fatalf("the registered server was swept: %v", err)
	}
	g.removeIfSet(server.Process.Pid)
}

// onlyChildren tells a running command's process from an adopted one
// through the threads' children lists, where the kernel keeps them.
func TestOnlyChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil {
		t.Skip("this kernel keeps no children lists:", err)
	}
	if !onlyChildren(nil) {
		t.Fatal("with no child, onlyChildren is false")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	if !onlyChildren(map[int]bool{pid: true}) {
		t.Errorf("child %d, known as running: onlyChildren is false", pid)
	}
	if onlyChildren(map[int]bool{pid + 1: true}) || onlyChildren(nil) {
		t.Errorf("child %d, not known as running: onlyChildren is true", pid)
	}
}
