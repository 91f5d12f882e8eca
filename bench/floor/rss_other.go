//go:build !unix

package main

import (
	"errors"
	"os"
)

func peakRSS(*os.ProcessState) (int64, error) {
	return 0, errors.New("floor rss needs getrusage(2), which this system lacks")
}

func pageFaults(*os.ProcessState) (int64, error) {
	return 0, errors.New("floor faults needs getrusage(2), which this system lacks")
}
