package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
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
//
// lockPath, when not "", is the session's lock file: one removed by hand
// while its run lived let this run take the lock, and that run's tasks
// are no leftovers. When a process above those found keeps an earlier
// lock file of that path open (liveHolder), nothing is killed and the
// error (ErrLocked) names it.
func killOrphans(session, store, record, lockPath string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil // no /proc: nothing to find
	}
	self := os.Getpid()
	ownGroup := syscall.Getpgrp()
	// A shell that exported TEAMRUN_SESSION (someone trying a task's
	// script by hand) may have started this run: it is no orphan.
	ancestors := map[int]bool{}
	for pid := os.Getppid(); pid > 1 && !ancestors[pid]; pid = parentOf(pid) {
		ancestors[pid] = true
	}
	uid := uint32(os.Geteuid())
	want := [][]byte{[]byte("TEAMRUN_SESSION=" + session), []byte("TEAMRUN_STORE=" + store)}
	var found, loners []int // loners lead no group of their own
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
			loners = append(loners, pid)
		}
	}
	if lockPath != "" {
		if holder := liveHolder(append(slices.Clone(found), recordedLive(record, ancestors)...), lockPath, ancestors); holder > 0 {
			return nil, &LiveRunError{Session: session, PID: holder, Lock: lockPath}
		}
	}
	for _, pid := range loners {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for _, pid := range killRecorded(record, ancestors) {
		if !slices.Contains(found, pid) {
			found = append(found, pid)
		}
	}
	// SIGKILL is not death yet: the task must not start again while the
	// old copy still runs.
	waitGone(found, 10*time.Second)
	sort.Ints(found)
	return found, nil
}

// liveHolder is the live process, above one of pids (its parent, or
// further up), that keeps open a lock file at lockPath which is not the
// one there now: the run that started them, its lock file removed (or
// replaced) while it ran. 0 when there is none: the run that started them
// ended. This run and its own ancestors are never it.
func liveHolder(pids []int, lockPath string, ancestors map[int]bool) int {
	// The kernel names an open file by its path with the links resolved.
	if dir, err := filepath.EvalSymlinks(filepath.Dir(lockPath)); err == nil {
		lockPath = filepath.Join(dir, filepath.Base(lockPath))
	}
	now, err := os.Stat(lockPath)
	if err != nil {
		now = nil
	}
	self := os.Getpid()
	seen := map[int]bool{}
	for _, pid := range pids {
		for p := parentOf(pid); p > 1 && !seen[p]; p = parentOf(p) {
			seen[p] = true
			if p == self || ancestors[p] {
				break
			}
			if holdsOther(p, lockPath, now) {
				return p
			}
		}
	}
	return 0
}

// holdsOther reports whether process pid has a file named path open that
// is not now (the file at path now; nil: none).
func holdsOther(pid int, path string, now os.FileInfo) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false // gone, or not ours to look into
	}
	for _, fd := range fds {
		link := filepath.Join(dir, fd.Name())
		target, err := os.Readlink(link)
		if err != nil || strings.TrimSuffix(target, " (deleted)") != path {
			continue
		}
		if fi, err := os.Stat(link); err == nil && (now == nil || !os.SameFile(fi, now)) {
			return true
		}
	}
	return false
}

// LiveRunError: the run that started a session's running tasks is alive
// on this host, though its lock file was removed (by hand) while it ran,
// which let this run take the lock. Its tasks are no leftovers: they were
// left running. It wraps ErrLocked (exit 4).
type LiveRunError struct {
	Session string
	PID     int
	Lock    string
}

func (e *LiveRunError) Error() string {
	return fmt.Sprintf("session %s is still being run by pid %d on this host, whose lock file %s was removed while it ran (so this run could take the lock): its tasks were left running, not killed; that run stops by itself within seconds, saying it lost the session (exit 5): wait for it to end, then rerun with --continue",
		e.Session, e.PID, e.Lock)
}

func (e *LiveRunError) Unwrap() error { return checkpoint.ErrLocked }

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
