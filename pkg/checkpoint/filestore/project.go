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
	"time"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/atomicfile"
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
		return "", fmt.Errorf("%s: %v: %s", p.statePath(), checkpoint.DecodeProblem(b, err, reflect.TypeFor[projectState](), "not the project's state"), stateRemedy)
	}
	if st.ActiveSession != "" {
		if err := checkpoint.ValidateID(st.ActiveSession); err != nil {
			// Still a bad id (exit 2), whoever reads it.
			return "", fmt.Errorf("%s: active_session: %w: %s", p.statePath(), err, stateRemedy)
		}
	}
	return st.ActiveSession, nil
}

// stateRemedy is what to do about a state.json that cannot be read.
const stateRemedy = "fix it or remove it (it only names the active session)"

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
// change of state.json takes. Under it, the temp files of state.json
// written before it was taken are swept: what a writer killed while it
// held the lock (kill -9 between its temp file and the rename) left, as
// the session files' and output_file's are.
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
	atomicfile.Sweep(p.statePath(), time.Now())
	return f()
}

func (p *Project) writeActive(id string) error {
	b, _ := json.Marshal(projectState{ActiveSession: id})
	_, err := writeAtomic(p.statePath(), append(b, '\n'))
	return err
}

// Audit appends rec (time, pid and user filled in when zero) as one JSON
// line, in one write with O_APPEND so concurrent runs do not interleave.
// A log whose last line was torn (a crash, a full disk mid-append) gets
// the record on a line of its own: glued to the torn one, the record was
// lost and the line read as damage.
func (p *Project) Audit(_ context.Context, rec checkpoint.AuditRecord) error {
	rec.Fill()
	if err := p.mkdir(); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	f, _, err := regfile.OpenFile(p.auditPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return storeErr("write", p.auditPath(), err)
	}
	defer f.Close()
	line := append(b, '\n')
	if endsUnfinished(f) {
		// Two runs that both find it unfinished leave a blank line
		// between their records, which AuditRecords skips.
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return storeErr("write", p.auditPath(), err)
	}
	if err := f.Sync(); err != nil {
		return storeErr("sync", p.auditPath(), err)
	}
	return nil
}

// endsUnfinished says whether f's last byte is not a newline: its last
// line was cut short. What cannot be read counts as finished.
func endsUnfinished(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false
	}
	var last [1]byte
	_, err = f.ReadAt(last[:], fi.Size()-1)
	return err == nil && last[0] != '\n'
}

// cutShort says whether line is the start of a JSON object that ends too
// soon: what an append a crash or a full disk cut short leaves, which the
// next record (Audit) ends with a newline. Not damage: its record is lost,
// not changed.
func cutShort(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var v any
	return errors.Is(json.NewDecoder(bytes.NewReader(line)).Decode(&v), io.ErrUnexpectedEOF)
}

// maxNamedLines bounds the damaged lines an AuditRecords error names.
const maxNamedLines = 5

// AuditRecords reads the audit log; a torn append is ignored, be it the
// last line or one the next record ended (cutShort). A damaged line is
// skipped, not the whole log: the records of every other line are
// returned with an error naming it (the callers warn).
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
	var bad []int
	var first error
	r := bufio.NewReader(f)
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break // a last line without newline is a torn append
		}
		if err != nil {
			return nil, storeErr("read", p.auditPath(), err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var rec checkpoint.AuditRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			if cutShort(b) {
				continue // a torn append that the next record's newline ended
			}
			if first == nil {
				first = checkpoint.DecodeProblem(b, err, reflect.TypeFor[checkpoint.AuditRecord](), "not of an audit record's shape")
			}
			bad = append(bad, line)
			continue
		}
		recs = append(recs, rec)
	}
	if len(bad) == 0 {
		return recs, nil
	}
	if len(bad) == 1 {
		return recs, fmt.Errorf("%s:%d: not an audit record (%v): it was skipped; fix or remove that line", p.auditPath(), bad[0], first)
	}
	lines := fmt.Sprint(bad[0])
	for _, n := range bad[1:min(len(bad), maxNamedLines)] {
		lines += fmt.Sprintf(", %d", n)
	}
	if len(bad) > maxNamedLines {
		lines += fmt.Sprintf(" and %d more", len(bad)-maxNamedLines)
	}
	return recs, fmt.Errorf("%s: lines %s are not audit records (line %d: %v): they were skipped; fix or remove those lines", p.auditPath(), lines, bad[0], first)
}
