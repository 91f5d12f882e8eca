package filestore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Project is the .teamrun folder beside a spec file.
type Project struct {
	dir string // the spec's folder
}

// OpenProject is the project of the spec folder dir. Nothing is created
// until something is written.
func OpenProject(dir string) *Project {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &Project{dir: dir}
}

// Dir is the project's spec folder.
func (p *Project) Dir() string { return p.dir }

// Where is the project's state.json, which names its active session.
func (p *Project) Where() string { return p.statePath() }

// stateDir is the project's .teamrun folder.
func (p *Project) stateDir() string { return filepath.Join(p.dir, ".teamrun") }

func (p *Project) statePath() string { return filepath.Join(p.stateDir(), "state.json") }
func (p *Project) auditPath() string { return filepath.Join(p.stateDir(), "audit.log") }

func (p *Project) mkdir() error {
	if err := os.MkdirAll(p.stateDir(), 0o700); err != nil {
		return storeErr("create", p.stateDir(), err)
	}
	return nil
}

// CheckWritable makes sure the run's session can be recorded in the project
// before the session file is created: the .teamrun folder exists (it is
// created when absent) and files can be made in it (state.json is replaced
// by a rename), and audit.log, when there is one, can be appended to.
// Otherwise a run would leave a session file in the store that no project
// names and no audit record mentions.
func (p *Project) CheckWritable() error {
	if err := os.MkdirAll(p.stateDir(), 0o700); err != nil {
		return projectWriteErr("create", p.stateDir(), err)
	}
	if err := canCreateIn(p.stateDir()); err != nil {
		return projectWriteErr("create files in", p.stateDir(), &fs.PathError{Op: "access", Path: p.stateDir(), Err: err})
	}
	f, _, err := regfile.OpenFile(p.auditPath(), os.O_WRONLY|os.O_APPEND|noFollow, 0)
	switch {
	case err == nil:
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return projectWriteErr("write", p.auditPath(), err)
	}
	return nil
}

// ProjectWriteError: the project's .teamrun files cannot be written, found
// before a run created anything. A store error (exit 5), but with its own
// advice: there is no session to --continue.
type ProjectWriteError struct {
	Op   string
	Path string
	Err  error
}

func (e *ProjectWriteError) Error() string {
	kind := fserr.Of(e.Err)
	switch kind {
	case fserr.Link:
		return fmt.Sprintf("cannot %s %s: %s, then run again (no session was created and nothing was run)", e.Op, e.Path, checkpoint.LinkAdvice)
	case fserr.NotDir:
		return fmt.Sprintf("cannot %s %s: it is not a folder; a run records its session in the project's .teamrun folder (state.json, audit.log, config.yml): move that file away, then run again (no session was created and nothing was run)",
			e.Op, e.Path)
	case fserr.IsDir, fserr.NotRegular:
		// Not the folder's owner or permissions: the name is taken.
		why := e.Err
		if kind == fserr.IsDir {
			why = regfile.NotRegular(fs.ModeDir)
		}
		return fmt.Sprintf("cannot %s %s: %v; a run records its session in the project's .teamrun folder (state.json, audit.log) as regular files: move that away, then run again (no session was created and nothing was run)",
			e.Op, e.Path, why)
	}
	fix := "fix that folder's owner or permissions"
	switch kind {
	case fserr.ReadOnly:
		// No owner or permissions fix a read-only mount (a ConfigMap).
		fix = "the file system there is mounted read-only: run a copy of the spec from a writable folder, or keep sessions in PostgreSQL (--store postgres://…), which writes nothing beside the spec"
	case fserr.Full:
		fix = "the disk is full: free some space"
	}
	return fmt.Sprintf("cannot %s %s: %v; a run records its session in the project's .teamrun folder (state.json, audit.log): %s, then run again (no session was created and nothing was run)",
		e.Op, e.Path, e.Err, fix)
}

func (e *ProjectWriteError) Unwrap() []error { return []error{e.Err, checkpoint.ErrStore} }

func projectWriteErr(op, path string, err error) error {
	return &ProjectWriteError{Op: op, Path: path, Err: fserr.Bare(err)}
}

type projectState struct {
	ActiveSession string `json:"active_session"`
}

// Active is the project's active session id, "" when none is set.
func (p *Project) Active(_ context.Context) (string, error) {
	b, err := readFile(p.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", storeErr("read", p.statePath(), err)
	}
	var st projectState
	if err := json.Unmarshal(b, &st); err != nil {
		return "", fmt.Errorf("%s: %v: fix it or remove it (it only names the active session)", p.statePath(), checkpoint.DecodeProblem(b, err, reflect.TypeFor[projectState](), "not the project's state"))
	}
	if st.ActiveSession != "" {
		if err := checkpoint.ValidateID(st.ActiveSession); err != nil {
			return "", fmt.Errorf("%s: active_session: %w", p.statePath(), err)
		}
	}
	return st.ActiveSession, nil
}

// SetActive makes id the active session (atomic write of state.json).
func (p *Project) SetActive(_ context.Context, id string) error {
	if err := checkpoint.ValidateID(id); err != nil {
		return err
	}
	return p.withState(func() error { return p.writeActive(id) })
}

// ClaimActive makes id the active session if state.json still names prev
// ("" for none): read and replaced under the project's lock, so that of
// overlapping claims exactly one sets it and the others read it.
func (p *Project) ClaimActive(ctx context.Context, prev, id string) (string, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return "", err
	}
	var cur string
	err := p.withState(func() error {
		var err error
		if cur, err = p.Active(ctx); err != nil || cur != prev {
			return err
		}
		cur = id
		return p.writeActive(id)
	})
	return cur, err
}

// withState runs f holding the project's lock: an exclusive flock on its
// .teamrun folder (the kernel drops it when its holder dies), which every
// change of state.json takes.
func (p *Project) withState(f func() error) error {
	if err := p.mkdir(); err != nil {
		return err
	}
	d, err := os.Open(p.stateDir())
	if err != nil {
		return storeErr("open", p.stateDir(), err)
	}
	defer d.Close() // closing drops the flock
	if err := flockWait(d); err != nil {
		return storeErr("lock", p.stateDir(), err)
	}
	return f()
}

func (p *Project) writeActive(id string) error {
	b, _ := json.Marshal(projectState{ActiveSession: id})
	_, err := writeAtomic(p.statePath(), append(b, '\n'))
	return err
}

// Audit appends rec (time, pid and user filled in when zero) as one JSON
// line, in one write with O_APPEND so concurrent runs do not interleave.
func (p *Project) Audit(_ context.Context, rec checkpoint.AuditRecord) error {
	rec.Fill()
	if err := p.mkdir(); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	f, _, err := regfile.OpenFile(p.auditPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return storeErr("write", p.auditPath(), err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return storeErr("write", p.auditPath(), err)
	}
	if err := f.Sync(); err != nil {
		return storeErr("sync", p.auditPath(), err)
	}
	return nil
}

// AuditRecords reads the audit log; a torn last line is ignored.
func (p *Project) AuditRecords(_ context.Context) ([]checkpoint.AuditRecord, error) {
	f, _, err := openRead(p.auditPath(), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr("read", p.auditPath(), err)
	}
	defer f.Close()
	var recs []checkpoint.AuditRecord
	r := bufio.NewReader(f)
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return recs, nil // a last line without newline is a torn append
		}
		if err != nil {
			return nil, storeErr("read", p.auditPath(), err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var rec checkpoint.AuditRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not an audit record (%v): fix or remove that line", p.auditPath(), line, checkpoint.DecodeProblem(b, err, reflect.TypeFor[checkpoint.AuditRecord](), "not of an audit record's shape"))
		}
		recs = append(recs, rec)
	}
}
