package filestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Every file the store writes refuses a symbolic link in its place: the
// link's target (here a precious file of the user's) is never written,
// emptied or appended to, and the error says it is a link.
func TestSymlinksAreNeverWrittenThrough(t *testing.T) {
	tests := []struct {
		name string
		link func(s *Store, p *Project) string // the path to replace with a link
		do   func(s *Store, p *Project) error
	}{
		{"journal", func(s *Store, _ *Project) string { return s.journalPath("j") }, func(s *Store, _ *Project) error {
			l, err := s.Lock(bg, "j", 0)
			if err != nil {
				return err
			}
			defer l.Release()
			_, err = s.Begin(bg, l, checkpoint.NewSession("j", "a.yaml", "t", "sequential", seed(), fp(seed()), t0))
			return err
		}},
		{"lock", func(s *Store, _ *Project) string { return s.lockPath("k") }, func(s *Store, _ *Project) error {
			l, err := s.Lock(bg, "k", 0)
			if err == nil {
				l.Release()
			}
			return err
		}},
		{"audit.log", func(_ *Store, p *Project) string { return p.auditPath() }, func(_ *Store, p *Project) error {
			return p.Audit(bg, checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: "s"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			p := OpenProject(t.TempDir())
			if err := os.MkdirAll(p.stateDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(t.TempDir(), "precious")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, tc.link(s, p)); err != nil {
				t.Fatal(err)
			}
			err := tc.do(s, p)
			if !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("err = %v, want a store error saying it is a symbolic link", err)
			}
			if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
				t.Errorf("the link's target was changed: %q", got)
			}
		})
	}
	// state.json is replaced by a rename: the link goes, its target stays.
	p := OpenProject(t.TempDir())
	os.MkdirAll(p.stateDir(), 0o700)
	victim := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	os.Symlink(victim, p.statePath())
	if err := p.SetActive(bg, "s1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
		t.Errorf("state.json's link target was changed: %q", got)
	}
	// A linked sessions folder is used, but its target's mode is not touched.
	target := t.TempDir()
	os.Chmod(target, 0o755)
	home := t.TempDir()
	os.Symlink(target, filepath.Join(home, "sessions"))
	s, _ := Open(home)
	if err := s.makeDir(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o755 {
		t.Errorf("the linked folder's target was chmod'ed to %04o", fi.Mode().Perm())
	}
}

// A symbolic link at a session's file, dangling or not, is refused by
// Exists, Load and Head alike, saying it is a link: a dangling one was "no
// session" to Exists and Load and "already exists" to Begin.
func TestSessionFileLinkRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target func(t *testing.T, s *Store) string
	}{
		{"dangling", func(t *testing.T, _ *Store) string { return filepath.Join(t.TempDir(), "nowhere.json") }},
		{"to a session file", func(t *testing.T, s *Store) string {
			adminSession(t, s, "real", "/specs/a.yaml")
			return s.Path("real")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tt.target(t, s), s.Path("l")); err != nil {
				t.Fatal(err)
			}
			ok, existsErr := s.Exists(bg, "l")
			_, loadErr := s.Load(bg, "l")
			head, headErr := s.Head(bg, "l")
			if ok || headErr != nil {
				t.Errorf("Exists = %v, Head: %v", ok, headErr)
			}
			for _, err := range []error{existsErr, loadErr, head.Err} {
				if !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), s.Path("l")+": it is a symbolic link") {
					t.Errorf("err = %v; want a store error naming the link", err)
				}
			}
		})
	}
}
