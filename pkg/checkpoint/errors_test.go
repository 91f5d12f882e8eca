package checkpoint

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// A store error names the path once and says what to do about its cause;
// Retryable says whether the command is then run again (the command says
// how).
func TestStoreErrorAdvice(t *testing.T) {
	const p = "/h/sessions/s1.json"
	tests := []struct {
		name      string
		err       error
		want      string
		retryable bool
	}{
		{"full disk", &fs.PathError{Op: "write", Path: p, Err: syscall.ENOSPC},
			"cannot write " + p + ": no space left on device; the disk is full: free some space", true},
		// A read-only mount is no matter of owner or permissions.
		{"read-only", &fs.PathError{Op: "open", Path: p, Err: syscall.EROFS},
			"cannot write " + p + ": read-only file system; the file system there is mounted read-only: point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) at a writable folder, or mount it read-write", true},
		// A folder where a file goes is said as a special file is.
		{"a folder", &fs.PathError{Op: "open", Path: p, Err: syscall.EISDIR},
			"cannot write " + p + ": a folder, not a regular file; teamrun keeps only regular files there: move it out of the store (and find out who put it there)", false},
		{"permission", &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES},
			"cannot write " + p + ": permission denied; check the owner and permissions of the file and its folder (teamrun keeps them 0700/0600)", false},
		{"disk", syscall.EIO,
			"cannot write " + p + ": input/output error; check the disk and the folder", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("saving: %w", NewStoreError("write", p, tt.err))
			if got := err.Error(); got != "saving: "+tt.want {
				t.Errorf("got  %s\nwant saving: %s", got, tt.want)
			}
			if strings.Count(err.Error(), p) != 1 {
				t.Errorf("%v names the path more than once", err)
			}
			if Retryable(err) != tt.retryable {
				t.Errorf("Retryable(%v) = %v", err, !tt.retryable)
			}
		})
	}
}
