//go:build unix

package main

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the peak RSS of the finished process and its waited-for
// children, in KiB.
func peakRSS(p *os.ProcessState) (int64, error) {
	ru, err := rusage(p)
	if err != nil {
		return 0, err
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024, nil // bytes there
	}
	return int64(ru.Maxrss), nil
}

// pageFaults is how many page faults the finished process and its
// waited-for children took, minor and major: where touching a page for
// the first time is costly (a virtual machine), a start's cost follows it.
func pageFaults(p *os.ProcessState) (int64, error) {
	ru, err := rusage(p)
	if err != nil {
		return 0, err
	}
	return int64(ru.Minflt) + int64(ru.Majflt), nil
}

func rusage(p *os.ProcessState) (*syscall.Rusage, error) {
	ru, ok := p.SysUsage().(*syscall.Rusage)
	if !ok {
		return nil, errors.New("no rusage on this system")
	}
	return ru, nil
}
