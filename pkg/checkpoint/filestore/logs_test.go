package filestore

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A log is a file of its own (0600 in a 0700 folder), and one that is a
// symbolic link is never written through.
func TestAttemptLogFiles(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "a")
	w := s.AttemptLog(bg, l, "t/1", 1, "stdout")
	if _, err := io.WriteString(w, "out"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := s.logPath("a", "t/1", 1, "stdout")
	if filepath.Dir(filepath.Dir(p)) != s.LogsDir("a") {
		t.Errorf("log %s is not in %s", p, s.LogsDir("a"))
	}
	for path, want := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, fi, err, want)
		}
	}

	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := s.logPath("a", "t/1", 2, "stdout")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	w = s.AttemptLog(bg, l, "t/1", 2, "stdout")
	if _, err := io.WriteString(w, "output"); err == nil {
		t.Error("a log path that is a symbolic link was written without an error")
	}
	w.Close()
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := s.ReadLog(bg, "a", "t/1", 2, "stdout"); err == nil {
		t.Error("a log that is a symbolic link was read")
	}
}

// A symbolic link at the session's log folder or at a task's folder in it
// is never written through (O_NOFOLLOW guards only the file's own name):
// the write fails saying it is a link, and nothing is made where it points.
func TestAttemptLogFoldersLinked(t *testing.T) {
	for _, tt := range []struct {
		name string
		link func(s *Store) string
	}{
		{"logs folder", func(s *Store) string { return s.LogsDir("a") }},
		{"task folder", func(s *Store) string { return filepath.Dir(s.logPath("a", "t", 1, "stdout")) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			l := mustLock(t, s, "a")
			outside := t.TempDir()
			link := tt.link(s)
			if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			w := s.AttemptLog(bg, l, "t", 1, "stdout")
			_, err := io.WriteString(w, "output")
			w.Close()
			if !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), link+": it is a symbolic link, and teamrun never writes through one") {
				t.Errorf("err = %v; want a store error naming the link", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("made %d entries where the link points", len(entries))
			}
		})
	}
}
