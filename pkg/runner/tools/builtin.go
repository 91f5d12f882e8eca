package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/ownfiles"
	"github.com/teamrun/teamrun/pkg/spec"
)

// builtin runs one of teamrun's own tools. The file tools see only Dir:
// a path that leaves it, by .., an absolute path or a symbolic link, is an
// error result.
func (s *Set) builtin(ctx context.Context, t *spec.Tool, args map[string]any) ([]byte, bool, error) {
	str := func(k string) string { v, _ := args[k].(string); return v }
	switch t.Builtin {
	case spec.ExecuteCommand:
		if !slices.Contains(s.Allow, spec.ExecuteCommand) {
			return nil, false, errors.New("execute_command is not allowed by this spec (allow: [execute_command])")
		}
		out, err := s.Run(ctx, Proc{Shell: str("command"), Env: s.Env, Dir: s.Dir, StdoutLimit: MaxOutput + 1})
		out, cut := cutOutput(out)
		return out, cut, err
	case "read_file", "write_file", "list_files":
	default:
		return nil, false, fmt.Errorf("unknown built-in %q", t.Builtin)
	}
	p := str("path")
	if p == "" && t.Builtin == "list_files" {
		p = "."
	}
	if p = s.local(filepath.Clean(p)); !filepath.IsLocal(p) {
		return nil, false, fmt.Errorf("path %q is outside the folder the file tools may use (%s): give a path inside it, relative to it or absolute", str("path"), s.Dir)
	}
	if t.Builtin == "write_file" {
		// A workdir that does not exist yet is made by the first write.
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("cannot create the folder %s: %w", s.Dir, fserr.Bare(err))
		}
	}
	// os.Root below is what keeps the tools in the folder; where a path
	// leads is worked out first only to say so in words, and to tell
	// teamrun's own files however they are reached.
	real, inside, err := s.resolve(p)
	if err != nil {
		return nil, false, err
	}
	if t.Builtin == "write_file" {
		if why := ownfiles.Of(real, s.Guarded, p, inside); why != "" {
			return nil, false, fmt.Errorf("%s is %s: the file tools do not write teamrun's own files", p, why)
		}
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return nil, false, fmt.Errorf("cannot open the folder %s: %w", s.Dir, fserr.Bare(err))
	}
	defer root.Close()
	switch t.Builtin {
	case "read_file":
		f, err := root.Open(p)
		if err != nil {
			return nil, false, fmt.Errorf("cannot read %s: %w", p, fserr.Bare(err))
		}
		defer f.Close()
		out, err := io.ReadAll(io.LimitReader(f, MaxOutput+1))
		if err != nil {
			return nil, false, fmt.Errorf("cannot read %s: %w", p, fserr.Bare(err))
		}
		out, cut := cutOutput(out)
		return out, cut, nil
	case "write_file":
		if dir := path.Dir(filepath.ToSlash(p)); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, false, fmt.Errorf("cannot create the folder %s: %w", dir, fserr.Bare(err))
			}
		}
		content := str("content")
		if err := root.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, false, fmt.Errorf("cannot write %s: %w", p, fserr.Bare(err))
		}
		return fmt.Appendf(nil, "wrote %d bytes to %s", len(content), p), false, nil
	default: // list_files
		entries, err := fs.ReadDir(root.FS(), filepath.ToSlash(p))
		if err != nil {
			return nil, false, fmt.Errorf("cannot list %s: %w", p, fserr.Bare(err))
		}
		var b strings.Builder
		for _, e := range entries {
			b.WriteString(e.Name())
			if e.IsDir() {
				b.WriteByte('/')
			}
			b.WriteByte('\n')
		}
		out := []byte(b.String())
		out, cut := cutOutput(out)
		return out, cut, nil
	}
}

// local is p relative to s.Dir when p is an absolute path in it (models
// often send one), by the folder's name as given or its real one; any
// other p is returned as it is, for the checks that follow to judge.
func (s *Set) local(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return p
	}
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, p); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	return p
}

// resolve is where p, a local path in s.Dir, leads once symbolic links
// are followed (as far as it exists: the rest as written), and that place
// relative to s.Dir; an error names a path that leaves s.Dir that way.
func (s *Set) resolve(p string) (real, inside string, err error) {
	root, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		return filepath.Join(s.Dir, p), p, nil // no folder yet: nothing to follow
	}
	if real, err = ownfiles.Follow(root, p); err != nil {
		return "", "", fmt.Errorf("cannot follow %s: %w", p, err)
	}
	if inside, err = filepath.Rel(root, real); err != nil || !filepath.IsLocal(inside) && inside != "." {
		return "", "", fmt.Errorf("path %q leads out of the folder the file tools may use (%s) through a symbolic link: give a path inside it", p, s.Dir)
	}
	return real, inside, nil
}
