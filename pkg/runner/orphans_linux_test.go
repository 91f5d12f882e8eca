package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

func TestHasEnvEntry(t *testing.T) {
	tests := []struct {
		environ string
		want    bool
	}{
		{"A=1\x00TEAMRUN_SESSION=s1\x00B=2\x00", true},
		{"TEAMRUN_SESSION=s1", true},
		{"TEAMRUN_SESSION=s10\x00", false}, // another session
		{"X_TEAMRUN_SESSION=s1\x00", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := hasEnvEntry([]byte(tt.environ), []byte("TEAMRUN_SESSION=s1")); got != tt.want {
			t.Errorf("hasEnvEntry(%q) = %v, want %v", tt.environ, got, tt.want)
		}
	}
}

func TestStatField(t *testing.T) {
	dir := t.TempDir()
	// A command name with spaces and parentheses must not shift the fields.
	stat := "4242 (a (b) c) S 17 4240 4240 0 -1 4194560"
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := statField(dir, 1); got != 17 {
		t.Errorf("ppid %d, want 17", got)
	}
	if got := processGroup(dir); got != 4240 {
		t.Errorf("pgrp %d, want 4240", got)
	}
	if got := processGroup(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("pgrp of a missing process %d, want 0", got)
	}
}

// TestKillOrphans: a process left by a dead run of the session dies with
// its group (a child that has no TEAMRUN_SESSION of its own too); a
// process of another session, or of the same session id in another
// store, is left alone.
func TestKillOrphans(t *testing.T) {
	id := fmt.Sprintf("orphan-test-%d", os.Getpid())
	dir := t.TempDir()
	store := filepath.Join(dir, "sessions")
	start := func(name, session, store string) (leader *exec.Cmd, child int) {
		// The child clears its environment: only its group ties it to the
		// task. It writes its pid once it has.
		pidFile := filepath.Join(dir, name)
		cmd := exec.Command("/bin/sh", "-c", `env -i /bin/sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 60' "$PIDFILE" & wait`)
		cmd.Env = append(os.Environ(), "TEAMRUN_SESSION="+session, "TEAMRUN_STORE="+store, "PIDFILE="+pidFile)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
		for range 3000 { // a slow machine only makes it wait longer
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				return cmd, pid
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the child never started")
		return nil, 0
	}
	ours, child := start("ours", id, store)
	others := []*exec.Cmd{}
	for name, env := range map[string][2]string{"other-session": {id + "-other", store}, "other-store": {id, store + "2"}} {
		cmd, _ := start(name, env[0], env[1])
		others = append(others, cmd)
	}

	found, err := killOrphans(id, store, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found, []int{ours.Process.Pid}) {
		t.Fatalf("found %v, want [%d]", found, ours.Process.Pid)
	}
	_ = ours.Wait()
	gone(t, child)
	for _, o := range others {
		if err := syscall.Kill(o.Process.Pid, 0); err != nil {
			t.Fatalf("process %d of another session or store: %v", o.Process.Pid, err)
		}
	}
}

// TestKillOrphansLiveHolder: the session's lock file was removed while its
// run lived, and this run made a new one there. A process of the session
// whose parent (the earlier run, here a shell) keeps the removed lock file
// open is no leftover: nothing is killed, and the error (ErrLocked, exit 4)
// names that run. Once that run has ended, what it left is killed.
func TestKillOrphansLiveHolder(t *testing.T) {
	id := fmt.Sprintf("holder-test-%d", os.Getpid())
	dir := t.TempDir()
	store := filepath.Join(dir, "sessions")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(store, id+".lock")
	if err := os.WriteFile(lockPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "task")
	// The earlier run keeps its lock file open (fd 3) and waits for its
	// task, which has the session's environment.
	run := exec.Command("/bin/sh", "-c", `exec 3<"$LOCK"; /bin/sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 60' "$PIDFILE" & wait`)
	run.Env = append(os.Environ(), "TEAMRUN_SESSION="+id, "TEAMRUN_STORE="+store, "LOCK="+lockPath, "PIDFILE="+pidFile)
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		_ = run.Wait()
	})
	task := 0
	for range 3000 { // a slow machine only makes it wait longer
		if b, err := os.ReadFile(pidFile); err == nil {
			task, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if task == 0 {
		t.Fatal("the task never started")
	}
	// Removed by hand; this run's lock file is a new one.
	if err := os.Remove(lockPath); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := killOrphans(id, store, "", lockPath)
	var live *LiveRunError
	if !errors.As(err, &live) || !errors.Is(err, checkpoint.ErrLocked) || live.PID != run.Process.Pid || found != nil {
		t.Fatalf("killOrphans with the earlier run alive = %v, %v; want a LiveRunError naming pid %d", found, err, run.Process.Pid)
	}
	for _, part := range []string{"session " + id, fmt.Sprintf("pid %d", run.Process.Pid), lockPath, "was removed", "not killed"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("%q lacks %q", err, part)
		}
	}
	if err := syscall.Kill(task, 0); err != nil {
		t.Fatalf("the live run's task was killed: %v", err)
	}

	// The earlier run ends (kill -9): its task is left over now.
	if err := syscall.Kill(run.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	found, err = killOrphans(id, store, "", lockPath)
	if err != nil || !slices.Contains(found, task) {
		t.Fatalf("killOrphans once the earlier run ended = %v, %v; want task %d killed", found, err, task)
	}
}

// TestWaitGone: killOrphans returns only once what it killed has ended,
// so that the task it runs again never runs beside its old copy; a
// process that does not end holds the run at most the limit.
func TestWaitGone(t *testing.T) {
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	killed, alive := start(), start()
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone([]int{killed.Process.Pid, alive.Process.Pid}, 100*time.Millisecond)
	if p, ok := readProc(killed.Process.Pid); ok && p.state != 'Z' {
		t.Fatalf("process %d still running (state %c) after waitGone", killed.Process.Pid, p.state)
	}
	if err := syscall.Kill(alive.Process.Pid, 0); err != nil {
		t.Fatalf("a process that was not killed: %v", err)
	}
}

// The note names the earlier run truly: the file store's lock dies with
// its holder, so that run ended; PostgreSQL's lapses with its lease, and
// the run may be alive, stalled.
func TestOrphansNote(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pids   []int
		lapses bool
		want   string
	}{
		{"one, file store", []int{7}, false,
			"killed process 7 (and its process group) left running by an earlier run of session s1 that ended without stopping its tasks"},
		{"two, file store", []int{7, 9}, false,
			"killed processes 7, 9 (and their process groups) left running by an earlier run of session s1 that ended without stopping its tasks"},
		{"a lease", []int{7}, true,
			"killed process 7 (and its process group) left running by an earlier run of session s1, which no longer holds the session: it ended, or its lease expired or its connection broke while it ran (it may still be alive; it can no longer write to the session)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := orphansNote("s1", tc.pids, tc.lapses); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
