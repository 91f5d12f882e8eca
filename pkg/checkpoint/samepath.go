package checkpoint

import (
	"os"
	"path/filepath"
)

// SamePath reports whether a and b name one file or folder: the one rule
// for "the same spec" and "the same project folder". They are the same
// path once cleaned, or, both absolute and both there on this machine,
// one file (os.SameFile): a folder reached through a symbolic link (a
// home behind a link, macOS's /tmp and /private/tmp) is the folder, and
// its spec the spec. A path that is not there — a checkout since removed,
// or a path another machine wrote into a database store — compares by
// its text alone; so does a relative one, which is a name (a
// TEAMRUN_PROJECT key) rather than a place.
func SamePath(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	if !filepath.IsAbs(a) || !filepath.IsAbs(b) {
		return false
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// pathMatch is SamePath against one path for a loop over a store's
// sessions: each distinct path is looked up once, not once a session.
type pathMatch struct {
	path string
	seen map[string]bool
}

func matchPath(path string) *pathMatch { return &pathMatch{path: path, seen: map[string]bool{}} }

func (m *pathMatch) same(other string) bool {
	same, ok := m.seen[other]
	if !ok {
		same = SamePath(m.path, other)
		m.seen[other] = same
	}
	return same
}
