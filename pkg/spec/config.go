package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/regfile"
)

// Config is a project's .teamrun/config.yml: settings beside the spec,
// whatever store keeps the sessions.
type Config struct {
	MaxSessionAgeDays int
	LLM               *LLMDefault
	// Prices are per model name (as an llm names it, or a models: alias):
	// what an agent whose spec gives no price costs.
	Prices map[string]*Price
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

// ErrStreamSpec is ProjectDir's error for a spec with no folder of its own.
var ErrStreamSpec = errors.New("a spec read from a stream (stdin, <(…)) has no folder for the project's state (.teamrun), nor for its tasks to run in: save it to a file in the project's folder and give that file")

// ErrEmptyPath is the error for a spec path that is empty (`teamrun run
// "$SPEC"` with SPEC unset).
var ErrEmptyPath = errors.New("the spec's FILE is empty: name the file (e.g. agents.yaml)")

// ProjectDir is the project folder of the spec at path, absolute: the
// folder that holds it, where .teamrun/ (state.json, audit.log,
// config.yml) is kept and the tasks run. A stream has no folder of its own
// (`-`, /dev/stdin, a process substitution's /dev/fd/N, /proc/self/fd/N, a
// terminal): its would be /dev or /proc, someone else's, so it is
// ErrStreamSpec, for every command that reads or writes the project
// folder. A FIFO made in a folder is that folder's spec.
func ProjectDir(path string) (string, error) {
	if path == "" {
		return "", ErrEmptyPath // not the current folder's parent
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(abs)
	if path == "-" || dir == "/dev" || under(dir, "/dev/fd") || under(dir, "/dev/pts") || under(dir, "/proc") {
		return "", fmt.Errorf("%s: %w", path, ErrStreamSpec)
	}
	return dir, nil
}

// under reports whether dir is root or inside it.
func under(dir, root string) bool {
	return dir == root || strings.HasPrefix(dir, root+"/")
}

// ConfigPath is the project config of the spec folder dir.
func ConfigPath(dir string) string { return filepath.Join(dir, ".teamrun", "config.yml") }

// EnsureConfig reads a project's config.yml (ConfigPath), creating it
// (0600, its folder 0700) when absent. A config that group or others can
// access is refused with the fix.
func EnsureConfig(path string) (Config, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return defaultConfigValue(), fmt.Errorf("cannot create %s: %w", filepath.Dir(path), err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.WriteString(defaultConfig)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return defaultConfigValue(), fmt.Errorf("cannot write %s: %w", path, werr)
			}
			return defaultConfigValue(), nil
		}
		if !errors.Is(err, fs.ErrExist) { // else another run just made it
			return defaultConfigValue(), fmt.Errorf("cannot create %s: %w", path, err)
		}
	}
	return ReadConfig(path)
}

// ReadConfig reads a project's config.yml like EnsureConfig but never creates it:
// without one the defaults apply. For commands that must write nothing,
// such as a dry run.
func ReadConfig(path string) (Config, error) {
	cfg := defaultConfigValue()
	f, fi, err := regfile.Open(path, 0)
	if noConfig(err) {
		return cfg, nil
	}
	if errors.Is(err, regfile.ErrNotRegular) {
		// A named pipe read the usual way waited for a writer for ever.
		return cfg, fmt.Errorf("cannot read %s: %w; the project's config is a regular file: move that away (and find out who put it there), and a run makes a new one", path, err)
	}
	if err != nil {
		err = fserr.Bare(err) // the path is said once
		return cfg, fmt.Errorf("cannot read %s: %w; check the owner and permissions of the file and its folder (teamrun keeps them 0600/0700)", path, err)
	}
	defer f.Close()
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return cfg, fmt.Errorf("%s can be accessed by group or others (mode %04o); it may hold LLM settings: run `chmod 600 %s`", path, perm, path)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return cfg, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return parseConfig(path, b)
}

// noConfig reports whether err, of a stat of config.yml, says there is
// none: absent, or .teamrun is no folder (a run refuses that folder
// itself, exit 5, when it checks that it can write there).
func noConfig(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
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
		line, msg := YAMLError(err, b) // as a spec's: the same parser, the same line fix
		return cfg, &ConfigError{Path: path, Line: line, Col: 1, Msg: "not valid YAML: " + msg}
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty, or only comments
	}
	d := configDecoder{path: path}
	configKeys := []string{"max_session_age_days", "llm", "prices"}
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
		case "prices":
			cfg.Prices = d.prices(v)
		}
	}
	return cfg, errors.Join(d.errs...)
}

// prices reads `prices:`, a mapping of model names to {input, output,
// cached_input}: US dollars per million tokens, as a spec's llm.price.
func (d *configDecoder) prices(v *yaml.Node) map[string]*Price {
	const key = "prices"
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil
	case v.Kind != yaml.MappingNode:
		d.errorf(v, key, "expected model names, each with {input: N, output: N} in US dollars per million tokens; got %s", describeNode(v))
		return nil
	}
	out := map[string]*Price{}
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, pv := resolveAlias(v.Content[i]), resolveAlias(v.Content[i+1])
		if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
			d.errorf(k, key, "a key must be a model name, got %s", describeNode(k))
			continue
		}
		path := JoinKey(key, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, path, "given twice (first at line %d): keep one", line)
			continue
		}
		seen[k.Value] = k.Line
		if pv.Kind != yaml.MappingNode {
			d.errorf(pv, path, "expected {input: N, output: N} in US dollars per million tokens (cached_input optional), got %s", describeNode(pv))
			continue
		}
		p, ok := &Price{}, true
		var have []string
		for pk, nv := range d.mapping(pv, path, []string{"input", "output", "cached_input"}) {
			n, good := d.dollars(nv, JoinKey(path, pk.Value))
			if !good {
				ok = false
				continue
			}
			have = append(have, pk.Value)
			switch pk.Value {
			case "input":
				p.Input = n
			case "output":
				p.Output = n
			case "cached_input":
				p.CachedInput = &n
			}
		}
		for _, req := range []string{"input", "output"} {
			if !slices.Contains(have, req) && ok {
				d.errorf(pv, path, "missing required key %q (US dollars per million tokens)", req)
				ok = false
			}
		}
		if ok {
			out[k.Value] = p
		}
	}
	return out
}

// dollars reads a price: a number of at least 0.
func (d *configDecoder) dollars(v *yaml.Node, key string) (float64, bool) {
	var f float64
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || v.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.errorf(v, key, "expected a number of US dollars per million tokens, got %s", describeNode(v))
		return 0, false
	}
	if f < 0 {
		d.errorf(v, key, "expected at least 0, got %s", v.Value)
		return 0, false
	}
	if f > MaxPrice {
		d.errorf(v, key, "expected at most %d, got %s", MaxPrice, v.Value)
		return 0, false
	}
	return f, true
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
			path := JoinKey(prefix, k.Value)
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
		if LooksLikeKey(v.Value) {
			d.errorf(v, key, "%s", pastedValue)
			return nil
		}
		return &LLMDefault{Model: v.Value}
	case v.Kind != yaml.MappingNode:
		d.errorf(v, key, "expected a model name, or a mapping with model, base_url and api_key_env; got %s", describeNode(v))
		return nil
	}
	l := &LLMDefault{}
	for k, val := range d.mapping(v, key, []string{"model", "base_url", "api_key_env"}) {
		path := JoinKey(key, k.Value)
		if val.Kind != yaml.ScalarNode || val.Tag != "!!str" || strings.TrimSpace(val.Value) == "" {
			d.errorf(val, path, "expected a text, got %s%s", describeNode(val), quoteHint(val))
			continue
		}
		switch k.Value {
		case "model":
			if LooksLikeKey(val.Value) {
				d.errorf(val, path, "%s", pastedValue)
				continue
			}
			l.Model = val.Value
		case "base_url":
			if _, err := ParseBaseURL(val.Value); err != nil {
				d.errorf(val, path, "%v", err)
			}
			l.BaseURL = val.Value
		case "api_key_env":
			if p := KeyNameProblem(val.Value); p != "" {
				d.errorf(val, path, "%s", p)
				continue
			}
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
	return quoteAdvice(n.Value, "")
}

// JoinKey is the dotted key path of key under prefix, as messages print it.
func JoinKey(prefix, key string) string {
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
		case LooksLikeKey(n.Value):
			return keyShown
		}
		return strconv.Quote(n.Value)
	}
	return "an unknown value"
}

// ApplyProjectConfig gives LLM agents without any llm setting the default
// model of the project config at path, as run, plan and validate all do, so
// that agent definitions (and so the per-task keys) agree. It reads the
// config only when it exists (found): it writes nothing.
func (t *Team) ApplyProjectConfig(path string) (found bool, err error) {
	if _, err := os.Stat(path); noConfig(err) {
		return false, nil
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		return true, err
	}
	if cfg.LLM != nil {
		t.FillLLM(LLM{Model: cfg.LLM.Model, BaseURL: cfg.LLM.BaseURL, APIKeyEnv: cfg.LLM.APIKeyEnv})
	}
	t.FillPrices(cfg.Prices)
	return true, nil
}

// FillPrices gives LLM agents whose spec sets no price the one prices
// names for their alias, else for their model: the spec's own price
// wins. The budget's warning about unpriced agents then names those left.
func (t *Team) FillPrices(prices map[string]*Price) {
	if len(prices) == 0 {
		return
	}
	for _, a := range t.Agents {
		if a.Kind != LLMAgent || a.LLM == nil || a.LLM.Price != nil {
			continue
		}
		p, ok := prices[a.LLM.Alias]
		if !ok || a.LLM.Alias == "" {
			p, ok = prices[a.LLM.Model]
		}
		if ok {
			c := *a.LLM // an llm may be shared with other agents
			pc := *p
			c.Price = &pc
			a.LLM = &c
		}
	}
	if t.Budget == nil {
		return
	}
	msg, still := t.unpricedWarning()
	key := t.Budget.CostKey()
	t.Warnings = slices.DeleteFunc(t.Warnings, func(d Diagnostic) bool { return d.Path == key && !still })
	for i := range t.Warnings {
		if t.Warnings[i].Path == key {
			t.Warnings[i].Message = msg
		}
	}
}
