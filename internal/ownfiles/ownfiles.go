// Package ownfiles decides whether a path is one of teamrun's own files,
// for the writers that must never replace one (the file tools, `session
// export -o`): anything in a .teamrun folder, or in a place a run guards
// (the session store, the spec being run, its scratch folder).
package ownfiles

import (
	"os"
	"path/filepath"
	"strings"
)

// Guard is a file or folder of teamrun's, and what it is in words.
type Guard struct{ Path, What string }

// Project is what a path in a .teamrun folder is.
const Project = "in a .teamrun folder, whose files are a project's own (state.json, audit.log, config.yml)"

// Of says what of teamrun's the path real (its links resolved) is, ""
// when it is none of teamrun's own. A .teamrun folder is looked for in
// names, the spellings of the path that count (a writer confined to a
// folder passes only the part inside it); a guard holds real when real is
// it or inside it, by name or as the same file by another name (a hard
// link, a bind mount, a disk that ignores case).
func Of(real string, guards []Guard, names ...string) string {
	for _, p := range names {
		for _, c := range strings.Split(filepath.ToSlash(p), "/") {
			if strings.EqualFold(c, ".teamrun") {
				return Project
			}
		}
	}
	for _, g := range guards {
		path := g.Path
		if r, err := filepath.EvalSymlinks(path); err == nil {
			path = r
		}
		if within(path, real) || sameOrAncestor(path, real) {
			return g.What
		}
	}
	return ""
}

// within says whether path is dir or inside it, by name.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// sameOrAncestor says whether dir is path or one of its folders as a file:
// each is compared with dir by os.SameFile.
func sameOrAncestor(dir, path string) bool {
	di, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for p := path; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && os.SameFile(di, fi) {
			return true
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
}

// RenameTarget is where a file renamed onto path lands, for Of: its folder
// with the links resolved as far as the folder exists (a writer makes the
// rest), and its own name as written, since a rename replaces a link
// there rather than writing through it.
func RenameTarget(path string) string {
	// Not filepath.Dir, which cleans "link/../x" to "x" where the kernel
	// follows link first.
	dir, base := ".", path
	if i := strings.LastIndexByte(path, filepath.Separator); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	return filepath.Join(realDir(dir), base)
}

// realDir is dir, absolute, with its links resolved up to the first part
// that does not exist.
func realDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		if a, err := filepath.Abs(r); err == nil {
			return a
		}
		return r
	}
	clean := filepath.Clean(dir)
	parent := filepath.Dir(clean)
	if parent == clean {
		return clean
	}
	return filepath.Join(realDir(parent), filepath.Base(clean))
}
