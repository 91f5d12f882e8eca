package main

import (
	"fmt"

	"github.com/teamrun/teamrun/internal/fserr"
)

// fileError is a file the user named (export's -o FILE, init's FILE) that
// could not be written: which, why, what became of it and what to do
// first. It is Retryable (checkpoint.Retryable), so the command appends how
// to do it again (explained), as for a store failure; exit 5.
type fileError struct {
	op, path string // "write", "create"
	err      error  // the system's, without the path
	state    string // what became of the file: "nothing was written"
	another  string // how to name another: "-o FILE"
}

func (e *fileError) Error() string {
	return fmt.Sprintf("cannot %s %s: %v; %s: %s", e.op, e.path, e.err, e.state, e.advice())
}

func (e *fileError) Unwrap() error   { return e.err }
func (e *fileError) Retryable() bool { return true }

// advice is what to deal with before the file is written again.
func (e *fileError) advice() string {
	switch fserr.Of(e.err) {
	case fserr.Full:
		return "the disk is full: free some space, or name a file on another disk (" + e.another + ")"
	case fserr.ReadOnly:
		return "the file system there is mounted read-only: name a file on a writable one (" + e.another + ")"
	case fserr.Permission:
		return "check the permissions of its folder, or name a file elsewhere (" + e.another + ")"
	case fserr.NotExist:
		return "its folder does not exist: create it, or name a file in another (" + e.another + ")"
	case fserr.NotDir:
		return "a part of that path is a file, not a folder: name another (" + e.another + ")"
	case fserr.NameTooLong:
		return "name a shorter one (" + e.another + ")"
	}
	return "check the disk and the folder, or name a file elsewhere (" + e.another + ")"
}

// writeFileError is exit 5 with a fileError, after prefix ("init: ").
func writeFileError(prefix, op, path string, err error, state, another string) error {
	return withCode(exitStore, fmt.Errorf("%s%w", prefix, &fileError{op: op, path: path, err: fserr.Bare(err), state: state, another: another}))
}
