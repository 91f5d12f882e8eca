package ownfiles

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOf(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "home")
	spec := filepath.Join(dir, "agents.yaml")
	for _, p := range []string{store, filepath.Join(dir, "work")} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(spec, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The store by another name: a link to it, and a hard link to the spec.
	if err := os.Symlink(store, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(spec, filepath.Join(dir, "work", "copy.yaml")); err != nil {
		t.Fatal(err)
	}
	guards := []Guard{{Path: spec, What: "the spec"}, {Path: filepath.Join(dir, "alias"), What: "the store"}}
	for _, tt := range []struct {
		name, real string
		names      []string
		want       string
	}{
		{"the spec itself", spec, nil, "the spec"},
		{"the spec by a hard link", filepath.Join(dir, "work", "copy.yaml"), nil, "the spec"},
		{"a file in the store, its guard a link", filepath.Join(store, "sessions", "s.json"), nil, "the store"},
		{"the store itself", store, nil, "the store"},
		{"a .teamrun folder among the names", filepath.Join(dir, "work", ".teamrun", "state.json"), []string{".TeamRun/state.json"}, Project},
		{"a .teamrun folder not among the names", filepath.Join(dir, ".teamrun", "x"), []string{"x"}, ""},
		{"elsewhere", filepath.Join(dir, "work", "out.json"), []string{"out.json"}, ""},
		{"a name that only starts like the store", store + "2/x", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.real, guards, tt.names...); got != tt.want {
				t.Errorf("Of(%s, %v) = %q, want %q", tt.real, tt.names, got, tt.want)
			}
		})
	}
}

// RenameTarget resolves the folders of a path, links that lead nowhere yet
// included, and leaves its own name alone: a rename replaces a link there.
func TestRenameTarget(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"alias": store, "file-link": filepath.Join(store, "s.json"), "later": "notyet", "later2": "later"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "alias", "s.json"), filepath.Join(store, "s.json")},
		{filepath.Join(dir, "alias", "new", "deeper", "s.json"), filepath.Join(store, "new", "deeper", "s.json")},
		{filepath.Join(dir, "file-link"), filepath.Join(dir, "file-link")},
		{filepath.Join(dir, "alias", "..", "x"), filepath.Join(dir, "x")},
		// A link that leads nowhere yet: to where the writer makes its target.
		{filepath.Join(dir, "later", "s.json"), filepath.Join(dir, "notyet", "s.json")},
		{filepath.Join(dir, "later2", "a", "s.json"), filepath.Join(dir, "notyet", "a", "s.json")},
	} {
		if got := RenameTarget(tt.path); got != tt.want {
			t.Errorf("RenameTarget(%s) = %s, want %s", tt.path, got, tt.want)
		}
	}
}
