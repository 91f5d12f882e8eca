package spec

import (
	"strings"
	"testing"
)

// TestLLMStreamValues: a stream: the schema refuses names the values it
// takes, whichever way it is wrong.
func TestLLMStreamValues(t *testing.T) {
	spec := func(stream string) string {
		return "llm: {model: m, stream: " + stream + "}\nagents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w}\n"
	}
	tests := []refusal{
		{"yes", spec("yes"), `agents.yaml:1:25: llm.stream: expected true, false or auto, got string "yes"`},
		{"Auto", spec("Auto"), `agents.yaml:1:25: llm.stream: expected true, false or auto, got string "Auto"`},
		{"number", spec("1"), `agents.yaml:1:25: llm.stream: expected true, false or auto, got integer 1`},
	}
	refusedWithLine(t, tests)
}

// TestTokenLimitsRefused: a max_tokens no server reads (2^31 or more) or
// no budget can hold (2^53 or more) is refused at its key, not dropped
// and the request sent without one; the bound is written as a number.
func TestTokenLimitsRefused(t *testing.T) {
	tests := []refusal{
		{"llm.max_tokens", "llm: {model: m, max_tokens: 5000000000}\nagents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w}\n",
			`agents.yaml:1:29: llm.max_tokens: expected at most 2147483647, got integer 5000000000`},
		{"budget.max_tokens", "budget: {max_tokens: 9007199254740993}\nllm: {model: m}\nagents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w}\n",
			`agents.yaml:1:22: budget.max_tokens: expected at most 9007199254740991, got integer 9007199254740993`},
	}
	refusedWithLine(t, tests)
}

// TestBaseURLRefused: a base_url no request can go to is refused at its
// key, wherever an llm is written, showing it as written without its
// credentials: validate and plan refuse it as run does.
func TestBaseURLRefused(t *testing.T) {
	native := func(llm string) string {
		return "llm: {model: m, base_url: " + llm + "}\nagents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w}\n"
	}
	tests := []refusal{
		{"not http", native("'ftp://x'"), `agents.yaml:1:27: llm.base_url: "ftp://x" is not an http or https URL such as http://127.0.0.1:11434/v1`},
		{"no scheme", native("'127.0.0.1:18730/v1'"), `agents.yaml:1:27: llm.base_url: "127.0.0.1:18730/v1" has no scheme: write http://127.0.0.1:18730/v1 (or https://)`},
		{"no scheme, a host name", native("'localhost:11434/v1'"), `agents.yaml:1:27: llm.base_url: "localhost:11434/v1" has no scheme: write http://localhost:11434/v1 (or https://)`},
		{"no host", native("'http://'"), `agents.yaml:1:27: llm.base_url: "http://" names no host: write one such as http://127.0.0.1:11434/v1`},
		{"a port out of range", native("'http://127.0.0.1:99999/v1'"), `agents.yaml:1:27: llm.base_url: "http://127.0.0.1:99999/v1" has the port 99999, which no server listens on: a port is from 1 to 65535`},
		{"credentials not shown", native("'ftp://user:pw@host/v1?api-key=s3cret'"), `agents.yaml:1:27: llm.base_url: "ftp://host/v1" is not an http or https URL such as http://127.0.0.1:11434/v1`},
		{"unparsable, credentials not shown", native("'http://user:pw@[::1/v1?token=s3cret'"), `agents.yaml:1:27: llm.base_url: "http://[::1/v1" is not a URL: write one such as http://127.0.0.1:11434/v1`},
		{"an alias", "models:\n  fast: {model: m, base_url: 'ftp://x'}\nllm: fast\nagents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w}\n",
			`agents.yaml:2:30: models.fast.base_url: "ftp://x" is not an http or https URL such as http://127.0.0.1:11434/v1`},
		{"an agent's", "agents:\n  w:\n    role: W\n    llm:\n      model: m\n      base_url: ftp://x\ntasks:\n  a: {description: d, agent: w}\n",
			`agents.yaml:6:17: agents.w.llm.base_url: "ftp://x" is not an http or https URL such as http://127.0.0.1:11434/v1`},
		{"PraisonAI's api_base", "framework: praisonai\nroles:\n  r:\n    role: R\n    goal: g\n    backstory: b\n    llm: {model: m, api_base: 'localhost:1234/v1'}\n    tasks:\n      t: {description: d, expected_output: e}\n",
			`agents.yaml:7:31: roles.r.llm.api_base: "localhost:1234/v1" has no scheme: write http://localhost:1234/v1 (or https://)`},
	}
	refusedWithLine(t, tests)
}

// TestParseBaseURL: the URLs a request can go to pass as they are.
func TestParseBaseURL(t *testing.T) {
	for _, s := range []string{"http://127.0.0.1:11434/v1", "https://api.openai.com/v1", " http://h/v1/ ", "http://[::1]:8080/v1", "https://u:p@h/v1?api-version=1",
		"http://usr:Zq9@pw@h/v1", // Go reads the user part to the last @ before the path, as ShownURL does
		// An @ in a name=value pair of the query is the query's.
		"http://h/v1?email=a@b.example", "http://127.0.0.1:8080/v1?password=hunter@s3cret", "http://h/v1?a=1&user=me@x.example#frag"} {
		if _, err := ParseBaseURL(s); err != nil {
			t.Errorf("ParseBaseURL(%q): %v", s, err)
		}
	}
}

// A URL refused says what is wrong with it, its credentials not shown:
// a scheme a slash short, a malformed user or password part.
func TestParseBaseURLRefused(t *testing.T) {
	for s, want := range map[string]string{
		"http:/h/mcp":               `"http:/h/mcp" needs two slashes after http:, write http://h/mcp`,
		"https:h/v1":                `"https:h/v1" needs two slashes after https:, write https://h/v1`,
		"http:/u:pw9@h/v1":          `"http:/h/v1" needs two slashes after http:, write http://h/v1`,
		"HTTPS:u:pw9@h":             `"HTTPS:h" needs two slashes after https:, write https://h`,
		"localhost:11434/v1":        `"localhost:11434/v1" has no scheme: write http://localhost:11434/v1 (or https://)`,
		"http//bob:pw9@h/v1":        `"http//h/v1" needs a colon after http, write http://h/v1`,
		"HTTPS//bob:pw9@h":          `"HTTPS//h" needs a colon after https, write https://h`,
		"//bob:pw9@h/v1":            `"//h/v1" has no scheme: write http://h/v1 (or https://)`,
		"https://u:s3cret%ZZ@h/mcp": `"https://h/mcp" has a user or password part (up to the last @, not shown) that a URL does not read as written: percent-encode`,
		// A password holding an unencoded / ? # or @ ends the user part
		// to Go: the rest of it is the host, the path or the query, and
		// was shown whole or in part. The part runs to the last @.
		"http://usr:Zq9/s3cret@h.example/v1":   `"http://h.example/v1" has a user or password part (up to the last @, not shown) that a URL does not read as written: percent-encode`,
		"http://usr:Zq9?s3cret@h.example/v1":   `"http://h.example/v1" has a user or password part`,
		"http://usr:Zq9#s3cret@h.example/v1":   `"http://h.example/v1" has a user or password part`,
		"https://usr:123/s3cret@h.example/mcp": `"https://h.example/mcp" has a user or password part`, // a valid URL to Go: the host usr, port 123
		"http://usr:123?s3cret@h.example":      `"http://h.example" has a user or password part`,
		"http://usr:123?s3 cret@h.example":     `"http://h.example" has a user or password part`,
		// A slash too many: the user part was read as the path.
		"http:///usr:Zq9s3cret@h.example/v1": `"http:///h.example/v1" names no host: it has three slashes after http:, where a URL has two before its host`,
		"http:///h.example/v1":               `"http:///h.example/v1" names no host: it has three slashes after http:, where a URL has two before its host`,
		"http:///usr:Zq9/s3cret@h.example":   `"http:///h.example" has a user or password part`,
		"http//usr:Zq9/s3cret@h.example/v1":  `"http//h.example/v1" needs a colon after http, write http://h.example/v1`,
		"http:/usr:Zq9?s3cret@h.example/v1":  `"http:/h.example/v1" needs two slashes after http:, write http://h.example/v1`,
		"usr:Zq9/s3cret@h.example/v1":        `"h.example/v1" has no scheme: write http://h.example/v1 (or https://)`,
		"ftp://usr:Zq9/s3cret@h.example/v1":  `"ftp://h.example/v1" has a user or password part`,
	} {
		_, err := ParseMCPURL(s)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseMCPURL(%q) = %v, want %s…", s, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "pw9") || strings.Contains(err.Error(), "Zq9")) {
			t.Errorf("ParseMCPURL(%q) shows a secret: %v", s, err)
		}
	}
}

// ShownURL leaves out all from the slashes after the scheme to the last
// @, wherever it is, and the query and fragment: no part of a password
// shows, however it is written.
func TestShownURL(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"},
		{" https://h/v1?api-key=s3cret#frag ", "https://h/v1"},
		{"http://u:s3cret@h/v1?token=s3cret", "http://h/v1"},
		{"http://s3cret@h/v1", "http://h/v1"},
		{"http://u:s3/cret@h/v1", "http://h/v1"},
		{"http://u:s3?cret@h/v1", "http://h/v1"},
		{"http://u:s3#cret@h/v1", "http://h/v1"},
		{"http://u:s3@cret@h/v1", "http://h/v1"},
		{"http:///u:s3cret@h/v1", "http:///h/v1"},
		{"http:/u:s3cret@h/v1", "http:/h/v1"},
		{"http:u:s3cret@h/v1", "http:h/v1"},
		{"HTTP//u:s3cret@h/v1", "HTTP//h/v1"},
		{"//u:s3cret@h/v1", "//h/v1"},
		{"u:s3cret@h/v1", "h/v1"},
		// An @ in the query or the fragment of a URL Go reads is theirs:
		// not a user part, and not shown.
		{"ftp://h/v1?email=a@b.example&api_key=s3cret", "ftp://h/v1"},
		{"ftp://h/v1#x=a@b.example;token=s3cret", "ftp://h/v1"},
		{"ftp://h/v1#a@b.example;token=s3cret", "ftp://b.example"},
		{"http://h/v1?password=hunter@s3cret", "http://h/v1"},
		// One Go cannot read: what follows the @ may be the query's.
		{"ftp://h:x/v1?email=a@b.example&api_key=s3cret", "ftp://b.example"},
	} {
		got := ShownURL(tt.url)
		if got != tt.want || strings.Contains(got, "s3") {
			t.Errorf("ShownURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
