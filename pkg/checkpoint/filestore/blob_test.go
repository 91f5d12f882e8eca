package filestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A blobs folder replaced by a link to a folder of the user's: nothing is
// written there, and neither the sweep nor Delete removes its files.
func TestBlobFolderLinkIsNeverUsed(t *testing.T) {
	s := newStore(t)
	victim := t.TempDir()
	precious := filepath.Join(victim, "precious")
	if err := os.WriteFile(precious, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, s.BlobDir("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlob(bg, "v", strings.NewReader("data")); !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("PutBlob through a linked folder: %v, want a store error saying it is a symbolic link", err)
	}
	l, err := s.Lock(bg, "v", 0)
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Begin(bg, l, checkpoint.NewSession("v", "a.yaml", "t", "sequential", seed(), fp(seed()), t0))
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if w := j.Warnings(); len(w) != 1 || !strings.Contains(w[0], "symbolic link") {
		t.Errorf("Begin's warnings %q, want one saying the blob folder is a link", w)
	}
	j.Close()
	l.Release()
	if err := s.Delete(bg, "v"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(victim)
	if got, _ := os.ReadFile(precious); string(got) != "precious\n" || len(entries) != 1 {
		t.Errorf("the link's target was changed: %d entries, precious = %q", len(entries), got)
	}
	if _, err := os.Lstat(s.BlobDir("v")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link itself outlived Delete: %v", err)
	}
}
