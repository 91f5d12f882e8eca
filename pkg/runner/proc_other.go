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
