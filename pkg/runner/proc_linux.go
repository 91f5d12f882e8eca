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
