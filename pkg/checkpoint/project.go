package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Audit events.
const (
	EventCreated   = "created"
	EventResumed   = "resumed"
	EventCompleted = "completed"
	EventFailed    = "failed"
	EventHalted    = "halted"
	EventDeleted   = "deleted"
	EventPruned    = "pruned"
	// EventMissing: state.json named a session absent from the store.
	EventMissing = "missing"
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

// Dir is the project's .teamrun folder.
func (p *Project) Dir() string { return filepath.Join(p.dir, ".teamrun") }

func (p *Project) statePath() string  { return filepath.Join(p.Dir(), "state.json") }
func (p *Project) auditPath() string  { return filepath.Join(p.Dir(), "audit.log") }
func (p *Project) ConfigPath() string { return filepath.Join(p.Dir(), "config.yml") }

func (p *Project) mkdir() error {
	if err := os.MkdirAll(p.Dir(), 0o700); err != nil {
		return storeErr("create", p.Dir(), err)
	}
	return nil
}

type projectState struct {
	ActiveSession string `json:"active_session"`
}

// Active is the project's active session id, "" when none is set.
func (p *Project) Active() (string, error) {
	b, err := os.ReadFile(p.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", storeErr("read", p.statePath(), err)
	}
	var st projectState
	if err := json.Unmarshal(b, &st); err != nil {
		return "", fmt.Errorf("%s is not valid JSON (%v): fix it or remove it (it only names the active session)", p.statePath(), err)
	}
	if st.ActiveSession != "" {
		if err := ValidateID(st.ActiveSession); err != nil {
			return "", fmt.Errorf("%s: active_session: %w", p.statePath(), err)
		}
	}
	return st.ActiveSession, nil
}

// SetActive makes id the active session (atomic write of state.json).
func (p *Project) SetActive(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	if err := p.mkdir(); err != nil {
		return err
	}
	b, _ := json.Marshal(projectState{ActiveSession: id})
	return writeFileAtomic(p.statePath(), append(b, '\n'))
}

// AuditRecord is one line of .teamrun/audit.log.
type AuditRecord struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"`
	Session string    `json:"session"`
	Store   string    `json:"store"`
	PID     int       `json:"pid"`
	User    string    `json:"user"`
	Detail  string    `json:"detail,omitempty"`
}

// Audit appends rec (time, pid and user filled in when zero) as one JSON
// line, in one write with O_APPEND so concurrent runs do not interleave.
func (p *Project) Audit(rec AuditRecord) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	if rec.PID == 0 {
		rec.PID = os.Getpid()
	}
	if rec.User == "" {
		rec.User = currentUser()
	}
	if err := p.mkdir(); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	f, err := os.OpenFile(p.auditPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
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
func (p *Project) AuditRecords() ([]AuditRecord, error) {
	f, err := os.Open(p.auditPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr("read", p.auditPath(), err)
	}
	defer f.Close()
	var recs []AuditRecord
	r := bufio.NewReader(f)
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if err == io.EOF {
			return recs, nil // a last line without newline is a torn append
		}
		if err != nil {
			return nil, storeErr("read", p.auditPath(), err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var rec AuditRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not an audit record (%v): fix or remove that line", p.auditPath(), line, err)
		}
		recs = append(recs, rec)
	}
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Getuid())
}

// Config is .teamrun/config.yml.
type Config struct {
	MaxSessionAgeDays int         `yaml:"max_session_age_days"`
	LLM               *LLMDefault `yaml:"llm,omitempty"`
}

// LLMDefault is the project's default model settings; never a key itself.
type LLMDefault struct {
	Model     string `yaml:"model,omitempty"`
	BaseURL   string `yaml:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env,omitempty"`
}

// DefaultMaxSessionAgeDays is what a new config says.
const DefaultMaxSessionAgeDays = 30

const defaultConfig = "# teamrun project settings\nmax_session_age_days: 30\n"

// Config reads .teamrun/config.yml, creating it (0600) when absent. A
// config that group or others can access is refused with the fix.
func (p *Project) Config() (Config, error) {
	path := p.ConfigPath()
	cfg := Config{MaxSessionAgeDays: DefaultMaxSessionAgeDays}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := p.mkdir(); err != nil {
			return cfg, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.WriteString(defaultConfig)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return cfg, storeErr("write", path, werr)
			}
			return cfg, nil
		}
		if !errors.Is(err, fs.ErrExist) { // else another run just made it
			return cfg, storeErr("create", path, err)
		}
		fi, err = os.Stat(path)
	}
	if err != nil {
		return cfg, storeErr("read", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return cfg, fmt.Errorf("%s can be accessed by group or others (mode %04o); it may hold LLM settings: run `chmod 600 %s`", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, storeErr("read", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%s: %v", path, err)
	}
	if cfg.MaxSessionAgeDays <= 0 {
		return cfg, fmt.Errorf("%s: max_session_age_days: expected a positive number of days, got %d", path, cfg.MaxSessionAgeDays)
	}
	return cfg, nil
}

// writeFileAtomic replaces path with data: temp file, fsync, rename, fsync
// of the folder. Readers see the old or the new file, never a mix.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return storeErr("create", path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return storeErr("write", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return storeErr("sync", path, err)
	}
	if err := tmp.Close(); err != nil {
		return storeErr("write", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return storeErr("rename", path, err)
	}
	ok = true
	return syncDir(dir)
}
