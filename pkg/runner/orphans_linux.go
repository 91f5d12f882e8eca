package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killOrphans kills the process groups of the live processes, of this
// user, whose environment says TEAMRUN_SESSION=session and
// TEAMRUN_STORE=store, and those the dead run wrote down in record
// (killRecorded), and returns the pids it found. The caller holds the
// session's lock, so such a process is a leftover of a run that died
// without stopping its tasks. (The lock is the store's: a session of the
// same id in another store, say another TEAMRUN_HOME, may be running, so
// the store must match too.) (kill -9 of
// teamrun kills only each task's first process, through Pdeathsig; what
// that process started lives on in the task's group). Resuming without
// killing them would run the same work twice, in parallel.
func killOrphans(session, store, record string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil // no /proc: nothing to find
	}
	self := os.Getpid()
	ownGroup := syscall.Getpgrp()
	// A shell that exported TEAMRUN_SESSION (someone trying a task's
	// script by hand) may have started this run: it is no orphan.
	ancestors := map[int]bool{}
	for pid := os.Getppid(); pid > 1 && !ancestors[pid]; pid = parentOf(pid) {
		ancestors[pid] = true
	}
	recorded := killRecorded(record, ancestors)
	uid := uint32(os.Geteuid())
	want := [][]byte{[]byte("TEAMRUN_SESSION=" + session), []byte("TEAMRUN_STORE=" + store)}
	var found []int
	groups := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 || ancestors[pid] {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		fi, err := os.Stat(dir)
		if err != nil {
			continue // gone already
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue // not ours to judge, nor to kill
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !hasEnvEntry(env, want[0]) || !hasEnvEntry(env, want[1]) {
			continue
		}
		pgid := processGroup(dir)
		if pgid == ownGroup {
			continue // started by this very run's caller: never kill ourselves
		}
		found = append(found, pid)
		if pgid > 1 {
			groups[pgid] = true
		} else {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for _, pid := range recorded {
		if !slices.Contains(found, pid) {
			found = append(found, pid)
		}
	}
	// SIGKILL is not death yet: the task must not start again while the
	// old copy still runs.
	waitGone(found, 10*time.Second)
	sort.Ints(found)
	return found
}

// waitGone waits, at most limit, until each of pids has ended (gone, or a
// zombie). A process stuck in the kernel may take longer: then the run goes
// on rather than hang.
func waitGone(pids []int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for _, pid := range pids {
		first, ok := readProc(pid)
		for ok && first.state != 'Z' && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			p, alive := readProc(pid)
			ok = alive && p.start == first.start && p.state != 'Z'
		}
	}
}

// hasEnvEntry reports whether the NUL-separated environment holds the
// entry exactly.
func hasEnvEntry(environ, entry []byte) bool {
	for _, e := range bytes.Split(environ, []byte{0}) {
		if bytes.Equal(e, entry) {
			return true
		}
	}
	return false
}

// processGroup is a process's group, from /proc/<pid>/stat; 0 when it
// cannot be read.
func processGroup(dir string) int { return statField(dir, 2) }

// parentOf is a process's parent; 0 when it cannot be read.
func parentOf(pid int) int { return statField(filepath.Join("/proc", strconv.Itoa(pid)), 1) }

// statField reads the n-th number after the command name in
// /proc/<pid>/stat (0: state, 1: ppid, 2: pgrp). The name, in
// parentheses, may hold spaces and parentheses itself, so the fields are
// counted after the last ')'.
func statField(dir string, n int) int {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) <= n {
		return 0
	}
	v, err := strconv.Atoi(f[n])
	if err != nil {
		return 0
	}
	return v
}
