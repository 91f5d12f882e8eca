package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/teamrun/teamrun/pkg/spec"
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

// CheckWritable makes sure the run's session can be recorded in the project
// before the session file is created: the .teamrun folder exists (it is
// created when absent) and files can be made in it (state.json is replaced
// by a rename), and audit.log, when there is one, can be appended to.
// Otherwise a run would leave a session file in the store that no project
// names and no audit record mentions.
func (p *Project) CheckWritable() error {
	if err := os.MkdirAll(p.Dir(), 0o700); err != nil {
		return projectWriteErr("create", p.Dir(), err)
	}
	probe, err := os.CreateTemp(p.Dir(), ".probe-")
	if err != nil {
		return projectWriteErr("create files in", p.Dir(), err)
	}
	probe.Close()
	os.Remove(probe.Name())
	f, err := os.OpenFile(p.auditPath(), os.O_WRONLY|os.O_APPEND, 0)
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
	return fmt.Sprintf("cannot %s %s: %v; a run records its session in the project's .teamrun folder (state.json, audit.log): fix that folder's owner or permissions, then run again (no session was created and nothing was run)",
		e.Op, e.Path, e.Err)
}

func (e *ProjectWriteError) Unwrap() []error { return []error{e.Err, ErrStore} }

func projectWriteErr(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &ProjectWriteError{Op: op, Path: path, Err: err}
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
		return "", fmt.Errorf("%s: %v: fix it or remove it (it only names the active session)", p.statePath(), problem(b, err, reflect.TypeFor[projectState](), "not the project's state"))
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
		if errors.Is(err, io.EOF) {
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
			return nil, fmt.Errorf("%s:%d: not an audit record (%v): fix or remove that line", p.auditPath(), line, problem(b, err, reflect.TypeFor[AuditRecord](), "not of an audit record's shape"))
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
	MaxSessionAgeDays int
	LLM               *LLMDefault
}

// LLMDefault is the project's default model settings; never a key itself.
type LLMDefault struct {
	Model     string
	BaseURL   string
	APIKeyEnv string
}

// DefaultMaxSessionAgeDays is what a new config says.
const DefaultMaxSessionAgeDays = 30

// maxSessionAgeDays is the most days a time.Duration can count: more would
// wrap around to a negative age, and prune would take every session.
const maxSessionAgeDays = int(math.MaxInt64 / int64(24*time.Hour))

const defaultConfig = "# teamrun project settings\nmax_session_age_days: 30\n"

// ConfigError is one problem in config.yml, at a line and column.
type ConfigError struct {
	Path      string
	Line, Col int
	Key       string // the key path, e.g. "llm.model"; "" for the file as a whole
	Msg       string // what is wrong and what to do
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.Path, e.Line, e.Col, e.Key, e.Msg)
}

// Config reads .teamrun/config.yml, creating it (0600) when absent. A
// config that group or others can access is refused with the fix.
func (p *Project) Config() (Config, error) {
	path := p.ConfigPath()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := p.mkdir(); err != nil {
			return defaultConfigValue(), err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.WriteString(defaultConfig)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return defaultConfigValue(), storeErr("write", path, werr)
			}
			return defaultConfigValue(), nil
		}
		if !errors.Is(err, fs.ErrExist) { // else another run just made it
			return defaultConfigValue(), storeErr("create", path, err)
		}
	}
	return p.ReadConfig()
}

// ReadConfig reads .teamrun/config.yml like Config but never creates it:
// without one the defaults apply. For commands that must write nothing,
// such as a dry run.
func (p *Project) ReadConfig() (Config, error) {
	path := p.ConfigPath()
	cfg := defaultConfigValue()
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
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
	return parseConfig(path, b)
}

func defaultConfigValue() Config { return Config{MaxSessionAgeDays: DefaultMaxSessionAgeDays} }

// parseConfig decodes config.yml through yaml.Node rather than into the
// struct, so that every problem carries its line and column and is worded
// for the user instead of by yaml.v3 (which names Go types). All problems
// are reported at once, joined.
func parseConfig(path string, b []byte) (Config, error) {
	cfg := defaultConfigValue()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		line, msg := spec.YAMLError(err, b) // as a spec's: the same parser, the same line fix
		return cfg, &ConfigError{Path: path, Line: line, Col: 1, Msg: "not valid YAML: " + msg}
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty, or only comments
	}
	d := configDecoder{path: path}
	configKeys := []string{"max_session_age_days", "llm"}
	root := resolveAlias(doc.Content[0])
	switch {
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
		return cfg, nil
	case root.Kind != yaml.MappingNode:
		d.errorf(root, "", "expected settings as `key: value` lines (%s), got %s", strings.Join(configKeys, ", "), describeNode(root))
		return cfg, errors.Join(d.errs...)
	}
	for k, v := range d.mapping(root, "", configKeys) {
		switch k.Value {
		case "max_session_age_days":
			if n, ok := d.days(v); ok {
				cfg.MaxSessionAgeDays = n
			}
		case "llm":
			cfg.LLM = d.llm(v)
		}
	}
	return cfg, errors.Join(d.errs...)
}

// configDecoder collects config.yml's problems while it walks the nodes.
type configDecoder struct {
	path string
	errs []error
}

func (d *configDecoder) errorf(n *yaml.Node, key, format string, args ...any) {
	d.errs = append(d.errs, &ConfigError{Path: d.path, Line: n.Line, Col: n.Column, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// mapping yields m's known keys and their values; an unknown or repeated
// key is a problem and is left out. prefix is the key path of m ("" at the
// top).
func (d *configDecoder) mapping(m *yaml.Node, prefix string, known []string) func(yield func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		seen := map[string]int{}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := resolveAlias(m.Content[i]), resolveAlias(m.Content[i+1])
			path := joinKey(prefix, k.Value)
			switch {
			case k.Kind != yaml.ScalarNode:
				d.errorf(k, prefix, "a key must be a name (one of %s), got %s", strings.Join(known, ", "), describeNode(k))
				continue
			case prefix == "llm" && k.Value == "api_key":
				d.errorf(k, path, "an API key never goes into config.yml: put it in an environment variable and name that variable in llm.api_key_env")
				continue
			case !slices.Contains(known, k.Value):
				where := ""
				if prefix != "" {
					where = " in " + prefix
				}
				d.errorf(k, "", "unknown key %q%s (known: %s)", k.Value, where, strings.Join(known, ", "))
				continue
			}
			if line, dup := seen[k.Value]; dup {
				d.errorf(k, path, "given twice (first at line %d): keep one", line)
				continue
			}
			seen[k.Value] = k.Line
			if !yield(k, v) {
				return
			}
		}
	}
}

// days reads max_session_age_days: a whole, positive number of days.
func (d *configDecoder) days(v *yaml.Node) (int, bool) {
	const key = "max_session_age_days"
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
		got := describeNode(v)
		if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			got = strconv.Quote(v.Value)
		}
		d.errorf(v, key, "expected a whole number of days, got %s", got)
		return 0, false
	}
	var n int64
	if err := v.Decode(&n); err != nil || n > int64(maxSessionAgeDays) {
		d.errorf(v, key, "expected at most %d days, got %s", maxSessionAgeDays, v.Value)
		return 0, false
	}
	if n <= 0 {
		d.errorf(v, key, "expected a positive number of days, got %d", n)
		return 0, false
	}
	return int(n), true
}

// llm reads the default model settings: a mapping of model, base_url and
// api_key_env, or a model name alone, as a spec's llm may be.
func (d *configDecoder) llm(v *yaml.Node) *LLMDefault {
	const key = "llm"
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil
	case v.Kind == yaml.ScalarNode:
		if v.Tag != "!!str" || strings.TrimSpace(v.Value) == "" {
			d.errorf(v, key, "expected a model name, or a mapping with model, base_url and api_key_env; got %s%s", describeNode(v), quoteHint(v))
			return nil
		}
		return &LLMDefault{Model: v.Value}
	case v.Kind != yaml.MappingNode:
		d.errorf(v, key, "expected a model name, or a mapping with model, base_url and api_key_env; got %s", describeNode(v))
		return nil
	}
	l := &LLMDefault{}
	for k, val := range d.mapping(v, key, []string{"model", "base_url", "api_key_env"}) {
		path := joinKey(key, k.Value)
		if val.Kind != yaml.ScalarNode || val.Tag != "!!str" || strings.TrimSpace(val.Value) == "" {
			d.errorf(val, path, "expected a text, got %s%s", describeNode(val), quoteHint(val))
			continue
		}
		switch k.Value {
		case "model":
			l.Model = val.Value
		case "base_url":
			l.BaseURL = val.Value
		case "api_key_env":
			l.APIKeyEnv = val.Value
		}
	}
	return l
}

// quoteHint tells how to write a number or true/false meant as a text.
func quoteHint(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!str" || n.Tag == "!!null" {
		return ""
	}
	return fmt.Sprintf(" (if that is meant as a text, quote it: %q)", n.Value)
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// resolveAlias follows a YAML alias (*name) to the node it names.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describeNode names a value's kind in user terms, for "got ..." texts.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch {
		case n.Tag == "!!null":
			return "nothing"
		case strings.TrimSpace(n.Value) == "":
			return "an empty text"
		case n.Tag != "!!str":
			return n.Value // a number or true/false, as written
		}
		return strconv.Quote(n.Value)
	}
	return "an unknown value"
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
