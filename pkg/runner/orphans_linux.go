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
)

// killOrphans kills the process groups of the live processes, of this
// user, whose environment says TEAMRUN_SESSION=session and
// TEAMRUN_STORE=store, or whose group's leader the dead run wrote down in
// record (alive or not: kill -9 of teamrun kills the leader, and the rest
// of a group started less than recordEvery before it is on record by
// nothing else), and those the dead run wrote down (killRecorded), and
// returns the pids it found. The caller holds the
// session's lock, so such a process is a leftover of a run that died
// without stopping its tasks. (The lock is the store's: a session of the
// same id in another store, say another TEAMRUN_HOME, may be running, so
// the store must match too.) (kill -9 of
// teamrun kills only each task's first process, through Pdeathsig; what
// that process started lives on in the task's group). Resuming without
// killing them would run the same work twice, in parallel. The caller
// asks liveHolder first: a run that still lives is no dead run.
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
	// Nor is a group one of them is in.
	spared := map[int]bool{ownGroup: true}
	for pid := range ancestors {
		if pgid := processGroup(filepath.Join("/proc", strconv.Itoa(pid))); pgid > 1 {
			spared[pgid] = true
		}
	}
	uid := uint32(os.Geteuid())
	want := [][]byte{[]byte("TEAMRUN_SESSION=" + session), []byte("TEAMRUN_STORE=" + store)}
	leaders := readRecord(record)
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
		p, ok := readProc(pid)
		if !ok || p.state == 'Z' {
			continue // gone, or dead and waiting for its parent
		}
		pgid := p.pgrp
		if spared[pgid] {
			continue // started by this very run's caller: never kill ourselves
		}
		if !leaders.led(pgid) {
			env, err := os.ReadFile(filepath.Join(dir, "environ"))
			if err != nil || !hasEnvEntry(env, want[0]) || !hasEnvEntry(env, want[1]) {
				continue
			}
		}
		found = append(found, pid)
		if pgid > 1 {
			groups[pgid] = true
		} else {
			loners = append(loners, pid)
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
	return found
}

// recorded are the processes a run wrote down (recordDescendants,
// Groups.recordStart), pid to start time.
type recorded map[int]uint64

// readRecord reads the record at path; none when it cannot be read.
func readRecord(path string) recorded {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := recorded{}
	for _, line := range strings.Split(string(data), "\n") {
		var pid int
		var start uint64
		if n, _ := fmt.Sscanf(line, "%d %d", &pid, &start); n == 2 && pid > 1 {
			out[pid] = start
		}
	}
	return out
}

// led says whether the process group pgid is one a recorded process led:
// its leader is on record and is that process still, or gone (while a
// group has a member, its id is given to no new process). A pid another
// process has now leads that process's group. (Only a group whose id was
// freed, given to a process that led a group of its own and died, all
// since the dead run, would be taken for the dead run's.)
func (l recorded) led(pgid int) bool {
	start, ok := l[pgid]
	if !ok {
		return false
	}
	p, alive := readProc(pgid)
	return !alive || p.start == start
}

// liveHolder is the live process, other than this one, that keeps the
// file at journal (a session's journal) open for writing, as a run keeps
// its session's journal from Begin to its end (after a compaction, the
// new one, renamed to that path); 0 when there is none or journal is
// missing. This run holds the session's lock: such a process is a run
// whose lock file was removed or moved while it ran (which let this run
// take the lock), and its tasks, whether processes or requests under way,
// are no leftovers. Its identity is the file's (device and inode), not its
// name nor a process tree: a moved lock file and a run with no task
// process are found as well. A reader (session show) is no run. Each
// process's fds are looked at once, and again only if the journal was
// replaced meanwhile (a compaction between the stat and the look).
func liveHolder(journal string) int {
	want, err := os.Stat(journal)
	if err != nil {
		return 0
	}
	for range 2 {
		if pid := openedForWrite(want); pid > 0 {
			return pid
		}
		now, err := os.Stat(journal)
		if err != nil || os.SameFile(now, want) {
			return 0
		}
		want = now
	}
	return 0
}

// openedForWrite is a live process, not this one, that has file open for
// writing; 0 when none has (or none this user may look into).
func openedForWrite(file os.FileInfo) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue // gone, or not ours to look into
		}
		for _, fd := range fds {
			link := filepath.Join(dir, "fd", fd.Name())
			// A socket, a pipe or an anonymous inode is named so: no
			// file to stat.
			if target, err := os.Readlink(link); err != nil || !strings.HasPrefix(target, "/") {
				continue
			}
			if fi, err := os.Stat(link); err == nil && os.SameFile(fi, file) && writable(filepath.Join(dir, "fdinfo", fd.Name())) {
				return pid
			}
		}
	}
	return 0
}

// writable says whether the open file that fdinfo (/proc/PID/fdinfo/FD)
// describes was opened for writing, from its octal flags.
func writable(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return false
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
