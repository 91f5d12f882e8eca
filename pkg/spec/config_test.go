package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectConfig(t *testing.T) {
	dir := t.TempDir()
	path := ConfigPath(dir)
	cfg, err := EnsureConfig(path)
	if err != nil || cfg.MaxSessionAgeDays != 30 || cfg.LLM != nil {
		t.Fatalf("%+v %v", cfg, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "max_session_age_days: 30") || mode(t, path) != 0o600 {
		t.Errorf("created config %q mode %04o", b, mode(t, path))
	}
	tests := []struct {
		name, body string
		perm       os.FileMode
		want       string // error part; "" = ok
		days       int
	}{
		{"llm defaults", "max_session_age_days: 7\nllm:\n  model: gpt-4o\n  base_url: http://127.0.0.1:11434/v1\n  api_key_env: MY_KEY\n", 0o600, "", 7},
		{"empty", "", 0o600, "", 30},
		{"group readable", "max_session_age_days: 7\n", 0o640, "chmod 600 " + path, 0},
		{"world readable", "max_session_age_days: 7\n", 0o644, "chmod 600 " + path, 0},
		{"unknown key", "max_session_age: 7\n", 0o600, path + `:1:1: unknown key "max_session_age" (known: max_session_age_days, llm, prices)`, 0},
		{"negative", "max_session_age_days: -1\n", 0o600, "positive", 0},
		{"not yaml", "max_session_age_days: [\n", 0o600, path + ":1:1: not valid YAML: did not find expected node content", 0},
		{"llm model name", "llm: tiny\n", 0o600, "", 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(path, []byte(tc.body), tc.perm)
			os.Chmod(path, tc.perm)
			cfg, err := EnsureConfig(path)
			if tc.want == "" {
				if err != nil || cfg.MaxSessionAgeDays != tc.days {
					t.Fatalf("%+v %v", cfg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	os.WriteFile(path, []byte("llm:\n  model: m\n  api_key_env: K\n"), 0o600)
	cfg, err = EnsureConfig(path)
	if err != nil || cfg.LLM == nil || cfg.LLM.Model != "m" || cfg.LLM.APIKeyEnv != "K" {
		t.Fatalf("%+v %v", cfg, err)
	}
}

// TestConfigErrors: every config.yml problem names the file, line, column
// and key and says what is expected, in user terms (no Go or yaml.v3 type
// names), all problems at once.
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	path := ConfigPath(dir)
	os.MkdirAll(filepath.Dir(path), 0o700)
	tests := []struct {
		name, body string
		want       []string // the lines of the error, after "path:"
	}{
		{"days not a number", "max_session_age_days: abc\n",
			[]string{`1:23: max_session_age_days: expected a whole number of days, got "abc"`}},
		{"days a fraction", "max_session_age_days: 1.5\n",
			[]string{`1:23: max_session_age_days: expected a whole number of days, got "1.5"`}},
		{"days a list", "max_session_age_days: [1]\n",
			[]string{`1:23: max_session_age_days: expected a whole number of days, got a list`}},
		{"days empty", "max_session_age_days:\n",
			[]string{`1:22: max_session_age_days: expected a whole number of days, got nothing`}},
		{"days zero", "max_session_age_days: 0\n",
			[]string{`1:23: max_session_age_days: expected a positive number of days, got 0`}},
		{"days overflow", "max_session_age_days: 200000\n",
			[]string{`1:23: max_session_age_days: expected at most 106751 days, got 200000`}},
		{"unknown key", "bogus: 1\n",
			[]string{`1:1: unknown key "bogus" (known: max_session_age_days, llm, prices)`}},
		{"unknown llm key", "llm:\n  model: m\n  temprature: 1\n",
			[]string{`3:3: unknown key "temprature" in llm (known: model, base_url, api_key_env)`}},
		{"api key", "llm: {model: m, api_key: k}\n",
			[]string{`1:17: llm.api_key: an API key never goes into config.yml: put it in an environment variable and name that variable in llm.api_key_env`}},
		{"a key pasted as api_key_env", "llm: {model: m, api_key_env: sk-LIVESECRET-9876543210abcd}\n",
			[]string{`1:30: llm.api_key_env: ` + pastedKey}},
		{"llm a list", "llm: [m]\n",
			[]string{`1:6: llm: expected a model name, or a mapping with model, base_url and api_key_env; got a list`}},
		{"llm model a mapping", "llm: {model: {name: m}}\n",
			[]string{`1:14: llm.model: expected a text, got a mapping`}},
		{"llm a number", "llm: 5\n",
			[]string{`1:6: llm: expected a model name, or a mapping with model, base_url and api_key_env; got 5 (if that is meant as a text, quote it: "5")`}},
		{"llm model true", "llm:\n  model: true\n",
			[]string{`2:10: llm.model: expected a text, got true (if that is meant as a text, quote it: "true")`}},
		{"llm model empty", "llm:\n  model:\n",
			[]string{`2:9: llm.model: expected a text, got nothing`}},
		// The rule a spec's base_url is held to (ParseBaseURL).
		{"llm base_url without a scheme", "llm: {model: m, base_url: 'localhost:11434/v1'}\n",
			[]string{`1:27: llm.base_url: "localhost:11434/v1" has no scheme: write http://localhost:11434/v1 (or https://)`}},
		{"prices a list", "prices: [1]\n",
			[]string{`1:9: prices: expected model names, each with {input: N, output: N} in US dollars per million tokens; got a list`}},
		{"price a number", "prices:\n  gpt-4o: 5\n",
			[]string{`2:11: prices.gpt-4o: expected {input: N, output: N} in US dollars per million tokens (cached_input optional), got 5`}},
		{"price without output", "prices:\n  gpt-4o: {input: 2.5}\n",
			[]string{`2:11: prices.gpt-4o: missing required key "output" (US dollars per million tokens)`}},
		{"price negative", "prices:\n  gpt-4o: {input: -1, output: 10}\n",
			[]string{`2:19: prices.gpt-4o.input: expected at least 0, got -1`}},
		// A price whose cost would overflow (+Inf cannot be recorded).
		{"price too high", "prices:\n  gpt-4o: {input: 1, output: 1e307}\n",
			[]string{`2:30: prices.gpt-4o.output: expected at most 1000000, got 1e307`}},
		{"price a text", "prices:\n  gpt-4o: {input: cheap, output: 10}\n",
			[]string{`2:19: prices.gpt-4o.input: expected a number of US dollars per million tokens, got "cheap"`}},
		{"price unknown key", "prices:\n  gpt-4o: {input: 1, outptu: 10}\n",
			[]string{`2:22: unknown key "outptu" in prices.gpt-4o (known: input, output, cached_input)`,
				`2:11: prices.gpt-4o: missing required key "output" (US dollars per million tokens)`}},
		{"price twice", "prices:\n  m: {input: 1, output: 2}\n  m: {input: 1, output: 2}\n",
			[]string{`3:3: prices.m: given twice (first at line 2): keep one`}},
		{"twice", "max_session_age_days: 3\nmax_session_age_days: 4\n",
			[]string{`2:1: max_session_age_days: given twice (first at line 1): keep one`}},
		// The line of the problem, as for a spec (yaml.v3 numbers parser
		// errors one line short).
		{"not YAML", "a: 1\nb: [1, 2\nc: 3\n",
			[]string{`2:1: not valid YAML: did not find expected ',' or ']'`}},
		{"not YAML, indented", "max_session_age_days: 30\nllm:\n  model: x\n bad: [1\n",
			[]string{`4:1: not valid YAML: did not find expected key`}},
		{"not a mapping", "- 30\n",
			[]string{"1:1: expected settings as `key: value` lines (max_session_age_days, llm, prices), got a list"}},
		{"several", "max_session_age_days: abc\nbogus: 1\nllm: {api_key: k}\n",
			[]string{
				`1:23: max_session_age_days: expected a whole number of days, got "abc"`,
				`2:1: unknown key "bogus" (known: max_session_age_days, llm, prices)`,
				`3:7: llm.api_key: an API key never goes into config.yml: put it in an environment variable and name that variable in llm.api_key_env`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = path + ":" + w
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Errorf("not a *ConfigError: %#v", err)
			}
		})
	}
}

// TestConfigLLM: llm is a mapping of defaults, or a model name alone as in
// a spec.
func TestConfigLLM(t *testing.T) {
	dir := t.TempDir()
	path := ConfigPath(dir)
	os.MkdirAll(filepath.Dir(path), 0o700)
	for body, want := range map[string]*LLMDefault{
		"llm: tiny\n": {Model: "tiny"},
		"llm: {model: m, base_url: http://h/v1, api_key_env: K}\n": {Model: "m", BaseURL: "http://h/v1", APIKeyEnv: "K"},
		"llm:\n":                              nil,
		"# only a comment\n":                  nil,
		"x: &d 7\nmax_session_age_days: *d\n": nil, // an alias resolves; x is still unknown
	} {
		os.WriteFile(path, []byte(body), 0o600)
		cfg, err := ReadConfig(path)
		if strings.HasPrefix(body, "x:") {
			if err == nil || !strings.Contains(err.Error(), `unknown key "x"`) || cfg.MaxSessionAgeDays != 7 {
				t.Errorf("%q: %+v %v", body, cfg, err)
			}
			continue
		}
		if err != nil || (want == nil) != (cfg.LLM == nil) || (want != nil && *want != *cfg.LLM) {
			t.Errorf("%q: %+v %v", body, cfg.LLM, err)
		}
	}
}

// TestConfigPrices: prices: gives agents without a price in the spec the
// config's, by alias or model name; the spec's own price wins, and the
// budget's warning about unpriced agents names only those left.
func TestConfigPrices(t *testing.T) {
	dir := t.TempDir()
	path := ConfigPath(dir)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("prices:\n  gpt-4o-mini: {input: 0.15, cached_input: 0.075, output: 0.6}\n  fast: {input: 1, output: 2}\n"), 0o600)
	specPath := filepath.Join(dir, "team.yaml")
	os.WriteFile(specPath, []byte(`models:
  fast: {model: other}
  own: {model: gpt-4o-mini, price: {input: 9, output: 9}}
budget: {max_cost_usd: 1}
agents:
  byname: {role: A, llm: gpt-4o-mini}
  byalias: {role: B, llm: fast}
  spec: {role: C, llm: own}
  none: {role: D, llm: unpriced-model}
tasks:
  a: {description: A, agent: byname}
  b: {description: B, agent: byalias}
  c: {description: C, agent: spec}
  d: {description: D, agent: none}
`), 0o600)
	team, err := Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Warnings) != 1 || !strings.Contains(team.Warnings[0].Message, "agents byname, byalias, none have no price") {
		t.Fatalf("warnings before the config: %v", team.Warnings)
	}
	if _, err := team.ApplyProjectConfig(path); err != nil {
		t.Fatal(err)
	}
	want := map[string]*Price{"byname": {Input: 0.15, Output: 0.6}, "byalias": {Input: 1, Output: 2}, "spec": {Input: 9, Output: 9}, "none": nil}
	for _, a := range team.Agents {
		w := want[a.Name]
		got := a.LLM.Price
		if (w == nil) != (got == nil) || (w != nil && (got.Input != w.Input || got.Output != w.Output)) {
			t.Errorf("agent %s: price %+v, want %+v", a.Name, got, w)
		}
	}
	for _, a := range team.Agents {
		if a.Name == "byname" && (a.LLM.Price.CachedInput == nil || *a.LLM.Price.CachedInput != 0.075) {
			t.Errorf("cached_input not taken: %+v", a.LLM.Price)
		}
	}
	if len(team.Warnings) != 1 || !strings.Contains(team.Warnings[0].Message, "agents none have no price") || team.Warnings[0].Line != 4 {
		t.Errorf("warnings after the config: %v", team.Warnings)
	}
}

// TestReadConfigWritesNothing: a missing config gives the defaults and is
// not created (a dry run writes nothing).
func TestReadConfigWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := ConfigPath(dir)
	cfg, err := ReadConfig(path)
	if err != nil || cfg.MaxSessionAgeDays != DefaultMaxSessionAgeDays || cfg.LLM != nil {
		t.Fatalf("%+v %v", cfg, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadConfig created %s", filepath.Dir(path))
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestProjectDir: a spec's project folder is the one that holds it, but a
// stream's would be /dev or /proc, someone else's: refused for every
// command that reads or writes .teamrun.
func TestProjectDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		path, want string // want "" is ErrStreamSpec
	}{
		{"agents.yaml", dir},
		{"sub/agents.yaml", filepath.Join(dir, "sub")},
		{"/srv/nightly/agents.yaml", "/srv/nightly"},
		{"/dev/shm/agents.yaml", "/dev/shm"}, // a folder of files
		{"", ""},                             // not the current folder's parent
		{"-", ""},
		{"/dev/stdin", ""},
		{"/dev/fd/63", ""},
		{"/proc/self/fd/0", ""},
		{"/dev/pts/0", ""},
		{"/dev/tty", ""},
	} {
		got, err := ProjectDir(tc.path)
		if tc.path == "" {
			if !errors.Is(err, ErrEmptyPath) {
				t.Errorf(`ProjectDir("") = %q, %v; want ErrEmptyPath`, got, err)
			}
			continue
		}
		if tc.want == "" {
			if !errors.Is(err, ErrStreamSpec) || !strings.HasPrefix(err.Error(), tc.path+": ") {
				t.Errorf("ProjectDir(%q) = %q, %v; want ErrStreamSpec naming the path", tc.path, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ProjectDir(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
}
