package filestore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSweepScratch: the session's scratch folder and its snapshot temp
// files go; another session's, the session's own files and the target of
// a symlink put in the folder's place stay; without the lock nothing goes.
func TestSweepScratch(t *testing.T) {
	s := newStore(t)
	if err := s.makeDir(); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.MkdirAll(filepath.Join(victim, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	put := func(rel string) string {
		p := filepath.Join(s.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{put("a.scratch/teamrun-context-1/t1"), put("a.scratch/teamrun-context-1.vars.json"), put(".a.json.tmp-123")}
	kept := []string{put("a.json"), put("a.journal"), put("b.scratch/teamrun-context-2/t1"), put(".b.json.tmp-1"), put(".a.json.tmp-x"), filepath.Join(victim, "keep")}
	if err := os.Symlink(victim, s.ScratchDir("c")); err != nil {
		t.Fatal(err)
	}

	if err := s.SweepScratch(nil); err == nil {
		t.Fatal("swept without the lock")
	}
	for _, id := range []string{"a", "c"} {
		l := mustLock(t, s, id)
		if err := s.SweepScratch(l); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	for _, p := range append(gone, s.ScratchDir("a"), s.ScratchDir("c")) {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
