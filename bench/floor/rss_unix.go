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
	ru, ok := p.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no rusage on this system")
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024, nil // bytes there
	}
	return int64(ru.Maxrss), nil
}
