//go:build unix

package filestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A named pipe (or a folder) where a session's file or journal goes is
// refused as no regular file, at once: opened to be read, a pipe waited
// for a writer for ever, and `session list` hung, deaf even to SIGTERM.
func TestSpecialFilesRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		make func(t *testing.T, s *Store)
		// listed: what List says of odd: "error" (listed with its error),
		// "ok" (its head is fine: List reads no journal).
		listed string
	}{
		{"session file a pipe", func(t *testing.T, s *Store) { mkfifo(t, s.Path("odd")) }, "error"},
		{"journal a pipe", func(t *testing.T, s *Store) {
			adminSession(t, s, "odd", "/specs/a.yaml")
			os.Remove(s.journalPath("odd"))
			mkfifo(t, s.journalPath("odd"))
		}, "ok"},
		{"session file a folder", func(t *testing.T, s *Store) {
			if err := os.MkdirAll(s.Path("odd"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newAdmin(t)
			adminSession(t, s, "good", "/specs/a.yaml")
			tt.make(t, s)
			done := make(chan struct{})
			var list []checkpoint.Entry
			var head checkpoint.Entry
			var listErr, loadErr, headErr error
			go func() {
				defer close(done)
				list, listErr = s.List(bg)
				_, loadErr = s.Load(bg, "odd")
				head, headErr = s.Head(bg, "odd")
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("List, Load and Head still wait on the pipe after 20s")
			}
			if listErr != nil || len(list) == 0 || list[0].ID != "good" || list[0].Err != nil {
				t.Fatalf("List = %+v, %v; want good first, fine", list, listErr)
			}
			errs := []error{loadErr}
			switch {
			case len(list) != 2 || list[1].ID != "odd" || (list[1].Err != nil) != (tt.listed == "error"):
				t.Errorf("List = %+v; want good, and odd listed %s", list, tt.listed)
			case tt.listed == "error":
				errs = append(errs, list[1].Err, head.Err)
			}
			if headErr != nil {
				t.Errorf("Head: %v; want its entry, with its error", headErr)
			}
			for _, err := range errs {
				if !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), "not a regular file; teamrun keeps only regular files there: move it out of the store") {
					t.Errorf("odd: %v; want a store error saying it is not a regular file (all: %v)", err, errs)
				}
			}
		})
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
