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

	"github.com/teamrun/teamrun/pkg/spec"
)

// builtin runs one of teamrun's own tools. The file tools see only Dir:
// a path that leaves it, by .. or a symbolic link, is an error result.
func (s *Set) builtin(ctx context.Context, t *spec.Tool, args map[string]any) ([]byte, bool, error) {
	str := func(k string) string { v, _ := args[k].(string); return v }
	switch t.Builtin {
	case spec.ExecuteCommand:
		if !slices.Contains(s.Allow, spec.ExecuteCommand) {
			return nil, false, errors.New("execute_command is not allowed by this spec (allow: [execute_command])")
		}
		out, err := s.Run(ctx, Proc{Shell: str("command"), Env: s.Env, Dir: s.Dir, StdoutLimit: MaxOutput + 1})
		cut := len(out) > MaxOutput
		if cut {
			out = out[:MaxOutput]
		}
		return out, cut, err
	case "read_file", "write_file", "list_files":
	default:
		return nil, false, fmt.Errorf("unknown built-in %q", t.Builtin)
	}
	p := str("path")
	if p == "" && t.Builtin == "list_files" {
		p = "."
	}
	if p = filepath.Clean(p); !filepath.IsLocal(p) {
		return nil, false, fmt.Errorf("path %q is outside the folder the file tools may use (%s): give a path relative to it", str("path"), s.Dir)
	}
	if t.Builtin == "write_file" {
		// A workdir that does not exist yet is made by the first write.
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("cannot create the folder %s: %w", s.Dir, pathErr(err))
		}
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return nil, false, fmt.Errorf("cannot open the folder %s: %w", s.Dir, pathErr(err))
	}
	defer root.Close()
	switch t.Builtin {
	case "read_file":
		f, err := root.Open(p)
		if err != nil {
			return nil, false, fmt.Errorf("cannot read %s: %w", p, pathErr(err))
		}
		defer f.Close()
		out, err := io.ReadAll(io.LimitReader(f, MaxOutput+1))
		if err != nil {
			return nil, false, fmt.Errorf("cannot read %s: %w", p, pathErr(err))
		}
		cut := len(out) > MaxOutput
		if cut {
			out = out[:MaxOutput]
		}
		return out, cut, nil
	case "write_file":
		if dir := path.Dir(filepath.ToSlash(p)); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, false, fmt.Errorf("cannot create the folder %s: %w", dir, pathErr(err))
			}
		}
		content := str("content")
		if err := root.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, false, fmt.Errorf("cannot write %s: %w", p, pathErr(err))
		}
		return fmt.Appendf(nil, "wrote %d bytes to %s", len(content), p), false, nil
	default: // list_files
		entries, err := fs.ReadDir(root.FS(), filepath.ToSlash(p))
		if err != nil {
			return nil, false, fmt.Errorf("cannot list %s: %w", p, pathErr(err))
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
		cut := len(out) > MaxOutput
		if cut {
			out = out[:MaxOutput]
		}
		return out, cut, nil
	}
}

// pathErr is the cause of a file error without Go's "openat" wording.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
