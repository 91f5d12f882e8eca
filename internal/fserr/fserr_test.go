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
