package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/ownfiles"
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

// outputFileFailure is err, task's output_file at path that could not be
// written, as the attempt's error. A full disk (or quota) is the disk's
// failure, not the task's, as a file in the session's scratch folder is
// (scratchFailure: exit 5, no retry spent, and --continue runs the task
// again): a retry could not write it either, and an LLM task's would pay
// for its answer again. Anything else (a folder in its place, the
// permissions) fails the attempt: the spec names the file.
func outputFileFailure(task, path string, err error) error {
	var errno syscall.Errno
	if fserr.Of(err) != fserr.Full || !errors.As(err, &errno) {
		return err
	}
	return scratchFailure("the output_file of task "+task, path, errno, true)
}

// restoreOutputFile writes the result task i took over (restored, kept,
// or reused by the early cut-off) to its output_file (where the state it
// starts from puts it) when the file is missing, and warns when it
// cannot: what a run would have written is there, one the user edited is
// left alone. The one place both ways of taking a result over write it.
func (e *Engine) restoreOutputFile(ctx context.Context, i int) {
	tk := e.Team.Tasks[i]
	if tk.OutputFile() == "" {
		return
	}
	path, err := e.outputPath(tk, e.stateFor(i))
	if err == nil {
		if _, serr := os.Lstat(path); serr == nil || !errors.Is(serr, fs.ErrNotExist) {
			return // there (or unknowable): a file the user edited is theirs
		}
		err = writeOutput(ctx, path, e.out(i), e.Started)
	}
	if err != nil {
		e.observe(Event{Time: e.now(), Type: RunWarning, Index: -1, Session: e.Session,
			Message: fmt.Sprintf("task %s was restored but its %v", tk.Name, err)})
	}
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

// ownOutputFile refuses path, where task tk's output_file puts it, when it
// is one of teamrun's own files (ownfiles.Of): replaced, the spec being run
// would have the next --continue run what a model wrote, and a session
// file or the project's state would be lost. One a filled-in value picks is
// refused when it is written, a static one before anything runs.
func ownOutputFile(team *spec.Team, tk *spec.Task, path string, guards []ownfiles.Guard) error {
	// A .teamrun folder counts from the spec's folder on, in the path as
	// written and where its links lead (another project's .teamrun reached
	// through a link to it).
	dir := filepath.Dir(team.File)
	name := fromFolder(dir, path)
	real := ownfiles.RenameTarget(path)
	why := ownfiles.Of(real, guards, name, fromFolder(ownfiles.Resolve(dir), real))
	if why == "" {
		return nil
	}
	written := fmt.Sprintf("output_file %q", tk.OutputFile())
	if abs, err := filepath.Abs(path); err == nil && abs != real {
		written += fmt.Sprintf(" (through a link: %s)", real)
	} else if filepath.Clean(tk.OutputFile()) != filepath.Clean(name) {
		written += fmt.Sprintf(" (%s)", path)
	}
	return fmt.Errorf("task %s: %s is %s: teamrun never writes a result over its own files; name another file in output_file", tk.Name, written, why)
}

// fromFolder is path from dir on when it is inside dir, else path.
func fromFolder(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// ownOutputFiles are the tasks whose output_file as written is one of
// teamrun's own files: validate, plan and run refuse them. What a PraisonAI
// step's {{NAME}}s are filled with is checked as it is written.
func ownOutputFiles(team *spec.Team, guards []ownfiles.Guard) []spec.Diagnostic {
	var out []spec.Diagnostic
	for _, tk := range team.Tasks {
		if tk.OutputFile() == "" {
			continue
		}
		path, err := team.OutputPath(tk, nil)
		if err != nil {
			continue // said when it is written
		}
		if err := ownOutputFile(team, tk, path, guards); err != nil {
			out = append(out, spec.Diagnostic{File: team.File, Line: tk.Pos.Line, Column: tk.Pos.Column, Path: tk.KeyPath() + ".output_file", Message: err.Error()})
		}
	}
	return out
}

// outputPath is where t's output_file goes with state (Team.OutputPath),
// refused when it is one of teamrun's own files (ownOutputFile).
func (e *Engine) outputPath(t *spec.Task, state map[string]any) (string, error) {
	path, err := e.Team.OutputPath(t, state)
	if err == nil {
		err = ownOutputFile(e.Team, t, path, e.Guarded)
	}
	return path, err
}
