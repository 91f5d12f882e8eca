//go:build !unix

package runner

import (
	"os"
	"syscall"
)

// Without process groups, only the command itself can be killed.
func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// killLeftovers does nothing: without process groups there is no way to
// find what the command left behind, and its pid may already name
// another process.
func killLeftovers(pid int) {}

// runGroup is this run's process group, for started records: none here.
func runGroup() int { return 0 }
