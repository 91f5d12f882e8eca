package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/pkg/checkpoint/atomicfile"
	"github.com/teamrun/teamrun/pkg/spec"
)

// writeOutputFile writes a result to path atomically: a reader sees the
// old file or the new one, never half of it, and a crash leaves no torn
// file under the name. Then it removes the temp files of path written
// before runStart (zero: none), which a run killed while it wrote path
// left beside it.
func writeOutputFile(path string, result io.Reader, runStart time.Time) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output_file %s: %w", path, fserr.Bare(err))
	}
	if err := atomicfile.WriteFrom(path, result, 0o644); err != nil {
		var ae *atomicfile.Error
		if errors.As(err, &ae) {
			return fmt.Errorf("output_file %s: cannot %s it: %w", path, ae.Op, ae.Err)
		}
		return fmt.Errorf("output_file %s: %w", path, err)
	}
	atomicfile.Sweep(path, runStart)
	return nil
}

// restoreOutputFile writes a restored task's result to its output_file
// (where state puts it) when the file is missing, and says why when it
// cannot; "" when there is nothing to say.
func restoreOutputFile(ctx context.Context, team *spec.Team, tk *spec.Task, state map[string]any, out Output, runStart time.Time) string {
	if tk.OutputFile() == "" {
		return ""
	}
	path, err := team.OutputPath(tk, state)
	if err != nil {
		return fmt.Sprintf("task %s was restored but its %v", tk.Name, err)
	}
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return "" // there (or unknowable): a file the user edited is theirs
	}
	if err := writeOutput(ctx, path, out, runStart); err != nil {
		return fmt.Sprintf("task %s was restored but its %v", tk.Name, err)
	}
	return ""
}

// writeOutput writes out to the output_file path, streamed from its blob
// when it is stored out of line.
func writeOutput(ctx context.Context, path string, out Output, runStart time.Time) error {
	rc, err := out.Open(ctx)
	if err != nil {
		return fmt.Errorf("output_file %s: %w", path, err)
	}
	defer rc.Close()
	return writeOutputFile(path, rc, runStart)
}

// schemaObject is an output_schema to send as response_format: only an
// object schema can be (true and false are checked locally alone).
func schemaObject(s any) map[string]any {
	m, _ := s.(map[string]any)
	return m
}
