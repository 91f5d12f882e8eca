package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// SamePath is the one rule for the same spec and the same project folder:
// a folder reached through a link is that folder, and its files its files;
// a path not here (another machine's, in a database) compares by its text.
func TestSamePath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	other := filepath.Join(dir, "other")
	for _, d := range []string{real, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "agents.yaml"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("agents.yaml", filepath.Join(real, "alias.yaml")); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone")
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"one path", real, real, true},
		{"one path once cleaned", real + "/", filepath.Join(dir, "other", "..", "real"), true},
		{"a folder through a link", link, real, true},
		{"a spec through a linked folder", filepath.Join(link, "agents.yaml"), filepath.Join(real, "agents.yaml"), true},
		{"a linked spec", filepath.Join(real, "alias.yaml"), filepath.Join(real, "agents.yaml"), true},
		{"two folders", real, other, false},
		{"two specs of one name", filepath.Join(other, "agents.yaml"), filepath.Join(real, "agents.yaml"), false},
		{"a path not here, by its text", "/mnt/pod-a/specs", "/mnt/pod-a/specs/", true},
		{"a path not here and one here", gone, real, false},
		{"two paths not here", gone, filepath.Join(dir, "gone2"), false},
		{"names compare by text", "nightly", "nightly", true},
		{"a name is no path", "real", real, false},
		{"empty", "", "", true},
		{"empty and a path", "", real, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SamePath(tt.a, tt.b); got != tt.want {
				t.Errorf("SamePath(%q, %q) = %v; want %v", tt.a, tt.b, got, tt.want)
			}
			if got := SamePath(tt.b, tt.a); got != tt.want {
				t.Errorf("SamePath(%q, %q) = %v; want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}
