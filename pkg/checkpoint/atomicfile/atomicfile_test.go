package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, body := range []string{"first", "second, longer", ""} {
		if err := Write(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != body {
			t.Errorf("read %q, want %q", got, body)
		}
	}
	if err := Write(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %04o, want 0644", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
}

// A link at the target is replaced, its victim left as it was.
func TestWriteReplacesALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	path := filepath.Join(dir, "f")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("the link's target was written: %q", got)
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeSymlink != 0 {
		t.Error("the link is still there")
	}
}

func TestWriteErrors(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "missing", "f"), []byte("x"), 0o600)
	var ae *Error
	if !errors.As(err, &ae) || ae.Op != "create" || ae.Renamed || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %#v", err)
	}
}

// WriteWith streams what its function writes in pieces; the function's
// error leaves the old file and no temp file.
func TestWriteWith(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteWith(path, func(w io.Writer) error {
		for i := range 100_000 {
			fmt.Fprintf(w, "%d,", i)
		}
		return nil
	}, 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(got), "0,1,2,") || !strings.HasSuffix(string(got), ",99999,") {
		t.Errorf("read %.20q…%q", got, got[max(0, len(got)-20):])
	}
	boom := errors.New("boom")
	err := WriteWith(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	}, 0o600)
	var ae *Error
	if !errors.Is(err, boom) || !errors.As(err, &ae) || ae.Op != "write" || ae.Renamed {
		t.Errorf("err = %#v", err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(got) {
		t.Error("a failed write changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
}

// Sweep removes the temp files of its path written before the cut-off,
// and nothing else: not a newer one (a writer at work), not another
// file's, not a name that only looks like one.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "draft.md")
	old := time.Now().Add(-time.Hour)
	names := map[string]bool{ // name: swept
		".draft.md.tmp-123": true, ".draft.md.tmp-9": true,
		".draft.md.tmp-new": false, ".draft.md.tmp-": false, ".other.md.tmp-1": false, "draft.md": false, ".draft.md.tmp-77": false,
	}
	for name := range names {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != ".draft.md.tmp-77" { // 77 is newer: a writer at work
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	Sweep(path, time.Now().Add(-time.Minute))
	for name, swept := range names {
		_, err := os.Lstat(filepath.Join(dir, name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != swept {
			t.Errorf("%s: gone %v, want %v", name, gone, swept)
		}
	}
}
