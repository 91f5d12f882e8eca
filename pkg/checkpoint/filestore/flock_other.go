//go:build !unix

package filestore

import (
	"errors"
	"os"
)

func flock(f *os.File) (bool, error) {
	return false, errors.New("session locks need a Unix system (flock)")
}

func probe(f *os.File) (bool, error) {
	return false, errors.New("session locks need a Unix system (flock)")
}

func flockWait(f *os.File) error {
	return errors.New("project locks need a Unix system (flock)")
}

// alive cannot tell without Unix signals: assume alive, so that a note is
// reported and Held probes the lock.
func alive(pid int) bool { return true }

const noFollow = 0
