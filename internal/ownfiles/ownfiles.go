// Package ownfiles decides whether a path is one of teamrun's own files,
// for the writers that must never replace one (the file tools, `session
// export -o`): anything in a .teamrun folder, or in a place a run guards
// (the session store, the spec being run, its scratch folder).
package ownfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/teamrun/teamrun/internal/fserr"
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
		path := Resolve(g.Path)
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
// with the links resolved (Resolve; a link that leads nowhere yet, to its
// target, which a writer makes), and its own name as written, since a rename replaces a link
// there rather than writing through it.
func RenameTarget(path string) string {
	// Not filepath.Dir, which cleans "link/../x" to "x" where the kernel
	// follows link first.
	dir, base := ".", path
	if i := strings.LastIndexByte(path, filepath.Separator); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	return filepath.Join(Resolve(dir), base)
}

// Resolve is path, absolute, with every link on the way replaced by its
// target (Follow), as far as it exists.
func Resolve(path string) string {
	root, rel := string(filepath.Separator), path
	if filepath.IsAbs(path) {
		root = filepath.VolumeName(path) + root
		rel = path[len(root):]
	} else if wd, err := os.Getwd(); err == nil {
		// Not filepath.Abs, which cleans "link/.." before the link is followed.
		if r, err := filepath.EvalSymlinks(wd); err == nil {
			wd = r
		}
		root = wd
	}
	if r, err := Follow(root, rel); err == nil {
		return r
	}
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// maxLinks bounds the symbolic links one path may go through, as
// Linux's MAXSYMLINKS does.
const maxLinks = 40

// ErrLinkLoop: a path goes through more links than the kernel follows.
var ErrLinkLoop = errors.New("too many symbolic links (a loop?)")

// Follow is rel in the folder root (itself free of links) with every
// symbolic link on the way replaced by its target, dangling ones
// included: a write through a link creates its target.
func Follow(root, rel string) (string, error) {
	todo := strings.Split(filepath.ToSlash(rel), "/")
	cur, links := root, 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Not there (yet): the rest is as written.
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", ErrLinkLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fserr.Bare(err)
		}
		if filepath.IsAbs(target) {
			cur = filepath.VolumeName(target) + string(filepath.Separator)
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return cur, nil
}
