//go:build unix && !linux

package runner

import "syscall"

// procAttr puts a command in its own process group, so that the whole
// tree can be killed. (Only Linux can also tie it to teamrun's life.)
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group led by pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
