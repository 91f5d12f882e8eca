package fserr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/teamrun/teamrun/internal/regfile"
)

// Of finds the errno however the os package wrapped it, and sorts every
// errno a store or a user's file meets into the Kind its advice is for.
func TestOf(t *testing.T) {
	tests := []struct {
		err  error
		want Kind
	}{
		{syscall.ENOSPC, Full},
		{syscall.EDQUOT, Full},
		{&fs.PathError{Op: "write", Path: "/f", Err: syscall.ENOSPC}, Full},
		{syscall.EROFS, ReadOnly},
		{&os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: syscall.EROFS}, ReadOnly},
		{syscall.EACCES, Permission},
		{syscall.EPERM, Permission},
		{syscall.ENOENT, NotExist},
		{&fs.PathError{Op: "open", Path: "/d/f", Err: syscall.ENOENT}, NotExist},
		{syscall.ENOTDIR, NotDir},
		{syscall.ENAMETOOLONG, NameTooLong},
		{fmt.Errorf("open: %w", syscall.ELOOP), Link},
		{syscall.EISDIR, IsDir},
		{regfile.NotRegular(fs.ModeNamedPipe), NotRegular},
		{regfile.NotRegular(fs.ModeDir), NotRegular},
		{syscall.EIO, Other},
		{syscall.EEXIST, Other},
		{errors.New("no errno"), Other},
		{nil, Other},
	}
	for _, tt := range tests {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("Of(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// Bare leaves the errno of an os error, which the message then names its
// path beside once; an error with no path is left whole.
func TestBare(t *testing.T) {
	plain := errors.New("no path")
	tests := []struct {
		err, want error
	}{
		{&fs.PathError{Op: "open", Path: "/d/f", Err: syscall.EACCES}, syscall.EACCES},
		{&os.LinkError{Op: "rename", Old: "/d/.f.tmp", New: "/d/f", Err: syscall.EXDEV}, syscall.EXDEV},
		{fmt.Errorf("saving: %w", &fs.PathError{Op: "write", Path: "/d/f", Err: syscall.ENOSPC}), syscall.ENOSPC},
		{plain, plain},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := Bare(tt.err); got != tt.want {
			t.Errorf("Bare(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
