package runner

import "syscall"

// procAttr puts a command in its own process group, so that the whole
// tree can be killed, and has the kernel kill it when teamrun dies, even by
// kill -9, so that no task outlives the run.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group led by pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// killLeftovers kills what is left of the process group of pid, whose
// leader has been waited for. The group's id cannot have been reused
// while any member lives, so this reaches only the task's processes.
func killLeftovers(pid int) { _ = killGroup(pid) }

// runGroup is this run's process group, for started records.
func runGroup() int { return syscall.Getpgrp() }
