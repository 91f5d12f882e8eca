package runner

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/atomicfile"
)

// An output_file that could not be written is the disk's failure when the
// disk is full (or the quota used up), however writeOutputFile wraps it: a
// *StoreError that ended its attempt (exit 5, no retry, --continue runs
// the task again), naming the file once. Anything else is the attempt's
// own error, as it was.
func TestOutputFileFailure(t *testing.T) {
	const path = "/p/out/report.md"
	for _, tt := range []struct {
		name string
		err  error
		want string // "": the error as it is
	}{
		{"full, writing", fmt.Errorf("output_file %s: cannot write it: %w", path, &atomicfile.Error{Op: "write", Path: path, Err: syscall.ENOSPC}),
			"cannot keep the output_file of task a: cannot write /p/out/report.md: no space left on device; the disk is full: free some space"},
		{"quota, making its folder", fmt.Errorf("output_file %s: %w", path, syscall.EDQUOT),
			"cannot keep the output_file of task a: cannot write /p/out/report.md: disk quota exceeded; the disk is full: free some space"},
		{"permissions", fmt.Errorf("output_file %s: %w", path, &os.PathError{Op: "mkdir", Path: "/p/out", Err: syscall.EACCES}), ""},
		{"a folder in its place", fmt.Errorf("output_file %s: cannot rename it: %w", path, syscall.EISDIR), ""},
		{"read-only", fmt.Errorf("output_file %s: %w", path, syscall.EROFS), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := outputFileFailure("a", path, tt.err)
			var se *StoreError
			if tt.want == "" {
				if err != tt.err {
					t.Errorf("got %v (%T), want the error as it is", err, err)
				}
				return
			}
			if !errors.As(err, &se) || !se.Ended || !errors.Is(err, checkpoint.ErrStore) || err.Error() != tt.want {
				t.Errorf("got %q (%T), want a *StoreError that ended its attempt:\n%q", err, err, tt.want)
			}
		})
	}
}
