package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setSubreaper makes teamrun the subreaper of its descendants, or stops it:
// a task's process whose parent dies is then re-parented to teamrun, not to
// init, whatever session or group it moved to (setsid), so teamrun can
// still find it and kill it when the task ends.
func setSubreaper(on bool) error {
	v := uintptr(0)
	if on {
		v = 1
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, v, 0, 0, 0)
}

// proc is one line of the process table.
type proc struct {
	ppid  int
	pgrp  int
	state byte
	start uint64 // clock ticks after boot: with the pid, names the process across pid reuse
}

// processTable reads the pid, parent, state and start time of every
// process in /proc.
func processTable() map[int]proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make(map[int]proc, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out[pid] = p
		}
	}
	return out
}

// readProc reads /proc/<pid>/stat: fields after the name, in parentheses
// that may hold spaces, are state (0), ppid (1), pgrp (2) and starttime
// (19).
func readProc(pid int) (proc, bool) {
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", make([]byte, 0, 512))
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return proc{}, false
	}
	return proc{ppid: ppid, pgrp: pgrp, state: f[0][0], start: start}, true
}

// sweepAdopted kills the processes teamrun adopted as subreaper (its
// children that are not running commands) whose environment holds every
// entry of owner, or all of them when all is set, with everything below
// them, and reaps them. The caller holds Groups.start exclusively, so no
// command is between its fork and its registration in running.
//
// Reaping is why: an adopted process that ends stays a zombie until its
// new parent waits for it. teamrun waits only for pids it knows no other
// wait is for (never wait4(-1), which would take a running command's exit
// status from its own Wait, RunCommand's or os/exec's for an MCP server,
// and make that fail with ECHILD): a child of teamrun that is not in
// running can only be an adopted one.
func sweepAdopted(owner []string, running map[int]bool, all bool) {
	if !hasChildren() || onlyChildren(running) {
		return // nothing adopted: the /proc scan (slow on a busy machine) is not needed
	}
	self := os.Getpid()
	want := make([][]byte, len(owner))
	for i, o := range owner {
		want[i] = []byte(o)
	}
	doomed := map[int]uint64{} // pid → start time, of everything decided to die
	for range 64 {
		table := processTable()
		var kids, kill []int
		for pid, p := range table {
			if p.ppid == self && !running[pid] {
				kids = append(kids, pid)
			}
		}
		for _, k := range kids {
			p := table[k]
			if p.state == 'Z' {
				reap(k)
				continue
			}
			if s, ok := doomed[k]; ok && s == p.start {
				kill = append(kill, k) // forked while its parent was killed
				continue
			}
			if all || ownedBy(k, want) {
				for _, d := range subtree(table, k) {
					doomed[d] = table[d].start
					kill = append(kill, d)
				}
			}
		}
		// A process forked by a doomed one after the last scan is doomed
		// too: it is found under its parent in the next.
		for pid, p := range table {
			if s, ok := doomed[p.ppid]; ok && table[p.ppid].start == s {
				if _, seen := doomed[pid]; !seen {
					doomed[pid] = p.start
					kill = append(kill, pid)
				}
			}
		}
		if len(kill) == 0 {
			return
		}
		for _, pid := range kill {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, k := range kids {
			if _, ok := doomed[k]; ok {
				reapWithin(k, 2*time.Second)
			}
		}
	}
}

// hasChildren reports whether teamrun has any child, running or ended,
// without waiting for one (WNOWAIT leaves an ended one to its waiter).
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return !errors.Is(err, unix.ECHILD)
}

// onlyChildren reports whether teamrun's children, as its threads' /proc
// children lists give them, are all in running: then none was adopted.
// Between parallel tasks this is what spares every sweep a scan of all
// /proc (most of a parallel run's CPU time, on a busy machine). It is
// false when it cannot tell (a kernel without the lists, a thread gone
// while read): the caller scans.
func onlyChildren(running map[int]bool) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	buf := make([]byte, 512)
	for _, t := range tasks {
		b, err := readSmall("/proc/self/task/"+t.Name()+"/children", buf)
		if err != nil {
			return false
		}
		for _, f := range bytes.Fields(b) {
			pid, err := strconv.Atoi(string(f))
			if err != nil || !running[pid] {
				return false
			}
		}
		buf = b[:0]
	}
	return true
}

// readSmall reads a /proc file into buf, grown as needed (os.ReadFile
// would try to put it in the poller first: five more system calls).
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if n > 0 {
			b = b[:len(b)+n]
		}
		if err != nil {
			return nil, err
		}
		if n == 0 || len(b) < cap(b) {
			// /proc fills a read as far as the file goes: a short one
			// is its end, and a read more would only say so.
			return b, nil
		}
	}
}

// subtree is root and every process below it in table.
func subtree(table map[int]proc, root int) []int {
	below := map[int][]int{}
	for pid, p := range table {
		below[p.ppid] = append(below[p.ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, below[out[i]]...)
	}
	return out
}

// ownedBy reports whether pid's environment holds every entry of want.
func ownedBy(pid int, want [][]byte) bool {
	if len(want) == 0 {
		return false
	}
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	for _, w := range want {
		if !hasEnvEntry(env, w) {
			return false
		}
	}
	return true
}

// reap waits for pid, an adopted child that has ended, without blocking.
func reap(pid int) bool {
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	return got == pid || errors.Is(err, syscall.ECHILD)
}

// reapWithin reaps pid, just sent SIGKILL, once it has died; a process
// that takes longer (stuck in the kernel) is reaped by a later sweep.
func reapWithin(pid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for !reap(pid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// recordEvery is how often the processes below teamrun are written down
// while commands run: a kill -9 of teamrun leaves its tasks' processes to
// init, and the next run of the session kills the ones on record
// (killRecorded), even those that cleared their environment and left
// their group, which nothing else can tell apart.
const recordEvery = time.Second

// processLine is pid's line in the record: "pid start"; nil when it has
// ended already (and its group, if it led one, with it: killLeftovers).
func processLine(pid int) []byte {
	p, ok := readProc(pid)
	if !ok {
		return nil
	}
	return fmt.Appendf(nil, "%d %d\n", pid, p.start)
}

// recordDescendants appends to rec, as "pid start" lines, every process
// below teamrun that is not written there yet; seen holds what is.
func recordDescendants(rec *procsFile, seen map[int]uint64) error {
	table := processTable()
	var b []byte
	for _, pid := range subtree(table, os.Getpid())[1:] {
		p := table[pid]
		if s, ok := seen[pid]; ok && s == p.start {
			continue
		}
		seen[pid] = p.start
		b = fmt.Appendf(b, "%d %d\n", pid, p.start)
	}
	if len(b) == 0 {
		return nil
	}
	return rec.write(b)
}

// killRecorded kills the processes on record in path (recordedLive), with
// their process groups when they lead one, and returns their pids.
func killRecorded(path string, ancestors map[int]bool) []int {
	live := recordedLive(path, ancestors)
	for _, pid := range live {
		if p, ok := readProc(pid); ok && p.pgrp == pid {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return live
}

// recordedLive is the processes on record in path (recordDescendants)
// that still live with the same start time and owner. An ancestor of this
// run is left out: it started the run, it is no leftover.
func recordedLive(path string, ancestors map[int]bool) []int {
	uid := uint32(os.Geteuid())
	self := os.Getpid()
	var live []int
	for pid, start := range readRecord(path) {
		if pid == self || ancestors[pid] {
			continue
		}
		p, ok := readProc(pid)
		if !ok || p.start != start || p.state == 'Z' {
			continue // gone, or the pid is another process's now
		}
		fi, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue // not ours to kill
		}
		live = append(live, pid)
	}
	return live
}
