//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// What is no regular file where the file goes (a named pipe, a folder, a
// link to a pipe: as with -o /dev/null or /dev/stdout) is refused and left
// as it was: the rename replaced it, a device node itself as root.
func TestWriteRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(pipe, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{pipe, folder, link} {
		before, _ := os.Lstat(p)
		err := Write(p, []byte("doc"), 0o600)
		if !errors.Is(err, checkpoint.ErrNotRegular) {
			t.Errorf("Write(%s) = %v, want ErrNotRegular", p, err)
		}
		if after, _ := os.Lstat(p); after == nil || after.Mode() != before.Mode() {
			t.Errorf("%s was replaced", p)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(m) > 0 {
		t.Errorf("temp files left: %v", m)
	}
}
