//go:build !linux

package runner

import (
	"errors"
	"io"
	"os"
	"time"
)

var errNoDrain = errors.New("no pidfd here")

func drainPipe() (*os.File, int, error) { return nil, -1, errNoDrain }

func openPidfd(int) (int, error) { return -1, errNoDrain }

func drain(int, *process, int, int, io.Writer, io.Writer, time.Duration, func(error) error) error {
	return errNoDrain
}

// closeFd has nothing to close: drainPipe makes no descriptor here.
func closeFd(int) {}
