package runner

import (
	"bytes"
	"errors"
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
// that may hold spaces, are state (0), ppid (1) and starttime (19).
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
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
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{ppid: ppid, state: f[0][0], start: start}, true
}

// sweepAdopted kills the processes teamrun adopted as subreaper (its
// children that are not running commands) whose environment holds every
// entry of owner, or all of them when all is set, with everything below
// them, and reaps them. The caller holds Groups.start exclusively, so no
// command is between its fork and its registration in running.
//
// Reaping is why: an adopted process that ends stays a zombie until its
// new parent waits for it. teamrun waits only for pids it knows are not
// os/exec's (never wait4(-1), which would take a running command's exit
// status from exec.Cmd.Wait and make it fail with ECHILD): a child of
// teamrun that is not in running can only be an adopted one.
func sweepAdopted(owner []string, running map[int]bool, all bool) {
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
