package runner

import (
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

	found := killOrphans(id, store, "")
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

// TestLiveHolder: a run keeps its session's journal open for writing
// from Begin to its end; liveHolder finds that process by the file
// (device and inode), whatever its lock file became, and whether or not it
// has task processes. A reader of the journal is no run, nor is a process
// that holds a journal the path no longer names; a run that ended holds
// nothing.
func TestLiveHolder(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "s.journal")
	if err := os.WriteFile(journal, []byte("header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// hold starts a process that opens the journal on fd 3 with redirect
	// (<: to read, >>: to append, as a run does) and waits.
	hold := func(redirect string) *exec.Cmd {
		ready := filepath.Join(dir, fmt.Sprintf("ready-%d", time.Now().UnixNano()))
		cmd := exec.Command("/bin/sh", "-c", `exec 3`+redirect+`"$0"; : > "$1"; exec sleep 60`, journal, ready)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		for range 3000 { // a slow machine only makes it wait longer
			if _, err := os.Stat(ready); err == nil {
				return cmd
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the holder never opened the journal")
		return nil
	}
	if pid := liveHolder(journal); pid != 0 {
		t.Fatalf("nothing holds the journal, liveHolder = %d", pid)
	}
	hold("<")
	if pid := liveHolder(journal); pid != 0 {
		t.Fatalf("a reader holds the journal, liveHolder = %d, want 0", pid)
	}
	run := hold(">>")
	if pid := liveHolder(journal); pid != run.Process.Pid {
		t.Fatalf("liveHolder = %d, want the writer %d", pid, run.Process.Pid)
	}
	// A journal put in its place (another run's Begin): the old one's
	// holder no longer runs this session's journal.
	if err := os.Rename(journal, journal+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal, []byte("header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pid := liveHolder(journal); pid != 0 {
		t.Fatalf("the journal was replaced, liveHolder = %d, want 0", pid)
	}
	if err := os.Rename(journal+".old", journal); err != nil {
		t.Fatal(err)
	}
	if pid := liveHolder(journal); pid != run.Process.Pid {
		t.Fatalf("liveHolder = %d, want the writer %d", pid, run.Process.Pid)
	}
	// The run ends (kill -9): nothing holds the journal.
	if err := run.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()
	if pid := liveHolder(journal); pid != 0 {
		t.Fatalf("the writer ended, liveHolder = %d, want 0", pid)
	}
	if pid := liveHolder(filepath.Join(dir, "missing.journal")); pid != 0 {
		t.Fatalf("no journal, liveHolder = %d, want 0", pid)
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

// TestLeadersLed: a group is the dead run's when its leader is on record
// and is still the process recorded, or gone (kill -9 of teamrun kills
// it); not when its pid is another process's now (a reused pid) or was
// never written down.
func TestLeadersLed(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	live, ok := readProc(cmd.Process.Pid)
	if !ok {
		t.Fatal("cannot read the process")
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	pid, gone := cmd.Process.Pid, ended.Process.Pid
	record := filepath.Join(t.TempDir(), "procs")
	tests := []struct {
		name   string
		record string
		pgid   int
		want   bool
	}{
		{"recorded, alive", fmt.Sprintf("%d %d\n", pid, live.start), pid, true},
		{"recorded, gone", fmt.Sprintf("%d 1\n", gone), gone, true},
		{"pid reused", fmt.Sprintf("%d %d\n", pid, live.start+1), pid, false},
		{"not recorded", fmt.Sprintf("%d %d\n", gone, live.start), pid, false},
		{"no record", "", pid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(record, []byte(tt.record), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := readRecord(record).led(tt.pgid); got != tt.want {
				t.Errorf("led(%d) with record %q = %v, want %v", tt.pgid, tt.record, got, tt.want)
			}
		})
	}
}
