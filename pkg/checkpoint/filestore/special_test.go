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

// A named pipe where the store or the project writes a file is refused at
// once, saying what it is: opened to write, a pipe waited for a reader for
// ever, and `run` hung with it, deaf to SIGTERM (an attempt's log, the
// project's audit.log), or failed with "invalid argument" (the journal).
func TestSpecialFilesRefusedToWrite(t *testing.T) {
	for _, tt := range []struct {
		name string
		pipe func(s *Store, p *Project) string
		do   func(s *Store, p *Project, l checkpoint.Lock) error // l: session w's, nil for "lock"
	}{
		{"attempt log", func(s *Store, _ *Project) string { return s.logPath("w", "a", 1, "stdout") }, func(s *Store, _ *Project, l checkpoint.Lock) error {
			w := s.AttemptLog(bg, l, "a", 1, "stdout")
			defer w.Close()
			_, err := w.Write([]byte("out"))
			return err
		}},
		{"audit.log appended to", func(_ *Store, p *Project) string { return p.auditPath() }, func(_ *Store, p *Project, _ checkpoint.Lock) error {
			return p.Audit(bg, checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: "w"})
		}},
		{"audit.log checked", func(_ *Store, p *Project) string { return p.auditPath() }, func(_ *Store, p *Project, _ checkpoint.Lock) error {
			return p.CheckWritable()
		}},
		{"journal of a new session", func(s *Store, _ *Project) string { return s.journalPath("w") }, func(s *Store, _ *Project, l checkpoint.Lock) error {
			_, err := s.Begin(bg, l, checkpoint.NewSession("w", "a.yaml", "t", "sequential", seed(), fp(seed()), t0))
			return err
		}},
		{"lock", func(s *Store, _ *Project) string { return s.lockPath("w") }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			p := OpenProject(t.TempDir())
			var l checkpoint.Lock
			do := tt.do
			if do == nil {
				do = func(s *Store, _ *Project, _ checkpoint.Lock) error {
					_, err := s.Lock(bg, "w", 0)
					return err
				}
			} else {
				l = mustLock(t, s, "w")
			}
			mkfifo(t, tt.pipe(s, p))
			done := make(chan error, 1)
			go func() { done <- do(s, p, l) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("still waiting on the pipe after 20s")
			}
			if !errors.Is(err, checkpoint.ErrStore) || !errors.Is(err, checkpoint.ErrNotRegular) ||
				!strings.Contains(err.Error(), tt.pipe(s, p)+": a named pipe, not a regular file") {
				t.Errorf("err = %v; want a store error naming the pipe", err)
			}
			if fi, err := os.Lstat(tt.pipe(s, p)); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the pipe was replaced or removed: %v, %v", fi, err)
			}
		})
	}
}
