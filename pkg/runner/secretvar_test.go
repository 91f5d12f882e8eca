package runner

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// An LLM agent's key passed as a --var (a command task needs it) reaches
// the shared state, the rendered descriptions and the agent's memory: the
// task and the model get the real value, while the session (snapshot and
// journal, during the run and after), the project's files, the output and
// the resume command hold none of it, nor of the base URL's query-string
// credential. Continued with the --var, the session restores fully;
// without it, it is bad usage, not a run with the redaction marker.
func TestKeyInVarNeverWritten(t *testing.T) {
	const key = "sk-test-SECRETKEY-0123456789abcdef"
	const query = "QUERYSECRET777"
	f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) { reply(w, "noted") }}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, "")
	got, journal := filepath.Join(p.dir, "got.txt"), filepath.Join(p.dir, "journal-copy")
	p.write(t, srv.URL, `
agents:
  w: {role: W, memory: true, llm: {model: m, base_url: "BASE?api-key=`+query+`", api_key_env: MY_KEY}}
  c: {shell: 'printf %s "$TEAMRUN_VAR_TOKEN" > `+got+`; cat `+filepath.Join(p.home, "sessions", "s1.journal")+` > `+journal+`'}
tasks:
  a: {description: "use {token} and {q}", expected_output: "about {token}", agent: w}
  b: {description: "store {token}", agent: c}
`)
	p.env["MY_KEY"] = key
	run := func(vars map[string]string) (*Summary, string, error) {
		var out bytes.Buffer
		sum, err := Run(context.Background(), Options{
			SpecPath: filepath.Join(p.dir, "team.yaml"), Continue: true, Session: "s1", Mode: ModeJSON, Verbose: true,
			IO: iostreams.Test(nil, &out, &out), Home: p.home, Vars: vars,
			Getenv: func(k string) string { return p.env[k] },
		})
		return sum, out.String(), err
	}
	vars := map[string]string{"token": key, "q": query}
	sum, out, err := run(vars)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != key {
		t.Errorf("the command got %q (%v), not the key", b, err)
	}
	if msgs := f.request(0).Messages; !strings.Contains(msgs[len(msgs)-1].Content, "use "+key+" and "+query) {
		t.Errorf("the model was sent %+v, not the rendered description", msgs)
	}
	if want := `--var 'q=[REDACTED]' --var token="$MY_KEY"`; !strings.Contains(sum.Resume, want) {
		t.Errorf("resume command %q, want it to hold %s", sum.Resume, want)
	}
	files := append(filesUnder(t, filepath.Join(p.home, "sessions")), journal, filepath.Join(p.dir, ".teamrun", "audit.log"), filepath.Join(p.dir, ".teamrun", "state.json"))
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(key[8:16])) || bytes.Contains(b, []byte(query)) {
			t.Errorf("%s holds the key or the query's credential:\n%s", path, b)
		}
	}
	if b, _ := os.ReadFile(journal); !bytes.Contains(b, []byte("use [REDACTED] and [REDACTED]")) {
		t.Errorf("the journal of the run holds no memory turn, redacted: the test does not test it:\n%s", b)
	}
	if strings.Contains(out, key[8:16]) || strings.Contains(out, query) {
		t.Errorf("the output holds the key:\n%s", out)
	}
	sess := p.session(t)
	if v := sess.Team.InitialState["token"]; v != "[REDACTED]" {
		t.Errorf("initial state token = %v", v)
	}

	sum, out, err = run(vars)
	if err != nil || sum.Restored != 2 || sum.Ran != 0 {
		t.Fatalf("continued with the --var: %v, %+v\n%s", err, sum, out)
	}
	_, out, err = run(nil)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "variable q: session s1 stores its value with a key redacted") {
		t.Fatalf("continued without the --var: %v\n%s", err, out)
	}
}

// varArg names a key by the variable that holds it, so that the pasted
// resume command gives the run the real value; what no variable holds
// whole (an MCP header, a piece of a key) is redacted.
func TestVarArg(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	secrets := []teamSecret{{value: key, env: "MY_KEY"}, {value: "header-token-77", env: ""}, {value: "short", env: "SHORT"}}
	tests := []struct{ k, v, want string }{
		{"topic", "Go 1.26", `'topic=Go 1.26'`},
		{"token", key, `token="$MY_KEY"`},
		{"auth", "Bearer " + key, `'auth=Bearer '"$MY_KEY"`},
		{"two", key + "," + key + "!", `two="$MY_KEY","$MY_KEY"'!'`},
		{"head", "x header-token-77", `'head=x [REDACTED]'`},
		{"piece", key[:12], `'piece=[REDACTED]'`},
		{"short", "short", `short=short`}, // too short to be redacted anywhere
	}
	for _, tt := range tests {
		if got := varArg(tt.k, tt.v, secrets); got != tt.want {
			t.Errorf("varArg(%q, %q) = %s, want %s", tt.k, tt.v, got, tt.want)
		}
	}
}
