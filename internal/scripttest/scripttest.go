// Package scripttest holds the settings of the end-to-end CLI scripts in
// testdata/script: their environment, conditions and commands. Two test
// binaries run them: cmd/teamrun's, against the file store, with its own
// binary as teamrun; and this package's, against a real PostgreSQL, with
// a teamrun built from the checkout (and pgloop's, its fault scripts 20
// times over). Binaries of their own, so each pass has its own time limit
// and they run side by side.
package scripttest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/pgstore"
)

// PostgresParams are the settings of the scripts in dir with the sessions
// in a real PostgreSQL: each script gets a schema of its own, dropped at
// the end; setup then prepares each script further.
// Without TEAMRUN_TEST_PG_URL the test skips, except under CI=true.
func PostgresParams(t *testing.T, dir string, setup func(*testscript.Env) error) testscript.Params {
	raw := testenv.PostgresURL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var schemas []string
	t.Cleanup(func() { DropSchemas(t, raw, schemas) })
	return Params(dir, true, func(env *testscript.Env) error {
		schema := RandomSchema()
		mu.Lock()
		schemas = append(schemas, schema)
		mu.Unlock()
		su := *u
		q := su.Query()
		q.Set("schema", schema)
		su.RawQuery = q.Encode()
		env.Setenv("TEAMRUN_STORE", su.String())
		// STORE is what the store calls itself in messages: its URL
		// without the password; PGPASSWORD_TEST is that password, which no
		// output may show.
		s, err := pgstore.Open(context.Background(), su.String())
		if err != nil {
			return err
		}
		env.Setenv("STORE", s.Location())
		// SCRATCH holds the sessions' <id>.scratch folders: on this
		// machine, below the cache folder, for a store that is no folder.
		env.Setenv("SCRATCH", checkpoint.LocalScratch(env.WorkDir+"/.cache", s.Location()).Root)
		s.Close()
		pw, _ := u.User.Password()
		env.Setenv("PGPASSWORD_TEST", pw)
		// For the fault scripts: the schema, the server as psql reaches
		// it, and the store with a wrong password.
		env.Setenv("PG_SCHEMA", schema)
		env.Setenv("PG_SCHEMA_VERSION", strconv.Itoa(pgstore.SchemaVersion))
		env.Setenv("PG_ADMIN_URL", raw)
		bad := su
		bad.User = url.UserPassword(u.User.Username(), "wrong-"+pw)
		env.Setenv("PG_BAD_PASSWORD_URL", bad.String())
		if setup != nil {
			return setup(env)
		}
		return nil
	})
}

// RandomSchema is a name for a schema of a test's own.
func RandomSchema() string {
	b := make([]byte, 6)
	_, _ = crand.Read(b)
	return "s_" + hex.EncodeToString(b)
}

// DropSchemas removes the tests' schemas from the server at raw.
func DropSchemas(t *testing.T, raw string, schemas []string) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Logf("dropping the tests' schemas: %v", err)
		return
	}
	defer c.Close(ctx)
	for _, s := range schemas {
		if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", s, err)
		}
	}
}

// Params are the settings of the scripts in dir; pg says the store is
// PostgreSQL (the [pgstore] condition).
func Params(dir string, pg bool, setup func(*testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TEAMRUN_HOME", env.WorkDir+"/.teamrun-home")
			env.Setenv("STORE", env.WorkDir+"/.teamrun-home/sessions")
			env.Setenv("SCRATCH", env.WorkDir+"/.teamrun-home/sessions")
			// The cache folder (os.UserCacheDir) is the script's own.
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/.cache")
			env.Setenv("PGPASSWORD_TEST", "no password in the file store")
			env.Setenv("NO_COLOR", "1")
			if setup != nil {
				return setup(env)
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "pgstore":
				return pg, nil
			case "root": // permissions do not stop root's reads and writes
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"fakellm":  cmdFakeLLM,
			"flipeach": cmdFlipEach,
			"pgtables": cmdPGTables,
		},
	}
}

// cmdExitcode runs `exitcode N prog args...` and fails unless prog exits
// with status N; stdout and stderr stay available to later assertions.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdPGTables makes the tables of the PostgreSQL store TEAMRUN_STORE
// names, as its first write does (a lock taken and let go, which leaves
// no row), for a script that puts rows there with psql before teamrun
// wrote anything: opening the store makes nothing.
func cmdPGTables(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgtables")
	}
	ctx := context.Background()
	s, err := pgstore.Open(ctx, ts.Getenv("TEAMRUN_STORE"))
	if err != nil {
		ts.Fatalf("pgtables: %v", err)
	}
	defer s.Close()
	l, err := s.Lock(ctx, "pgtables", 0)
	if err != nil {
		ts.Fatalf("pgtables: %v", err)
	}
	if err := l.Release(); err != nil {
		ts.Fatalf("pgtables: %v", err)
	}
}

// cmdFlipEach runs `flipeach N FILE program [args...]`: N times, it changes
// one random byte of FILE, runs the program, and fails unless it exits 5
// naming FILE on stderr and leaving the damaged FILE exactly as it was; then
// FILE is put back. A damaged session is never restored as good.
func cmdFlipEach(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: flipeach N FILE program [args...]")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("flipeach: %q is not a number", args[0])
	}
	path := ts.MkAbs(args[1])
	orig, err := os.ReadFile(path)
	if err != nil {
		ts.Fatalf("flipeach: %v", err)
	}
	defer os.WriteFile(path, orig, 0o600)
	rng := rand.New(rand.NewPCG(uint64(len(orig)), 1))
	for range n {
		damaged := bytes.Clone(orig)
		i := rng.IntN(len(damaged))
		damaged[i] ^= byte(1 + rng.IntN(255))
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			ts.Fatalf("flipeach: %v", err)
		}
		err := ts.Exec(args[2], args[3:]...)
		stderr := ts.ReadFile("stderr")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 5 {
			ts.Fatalf("byte %d changed (%q -> %q): %s exited %v, want 5\n%s", i, orig[i], damaged[i], args[2], err, stderr)
		}
		if !strings.Contains(stderr, path) {
			ts.Fatalf("byte %d changed: the error does not name %s:\n%s", i, path, stderr)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, damaged) {
			ts.Fatalf("byte %d changed: %s was modified by the run", i, path)
		}
	}
}

// cmdFakeLLM starts an OpenAI-compatible server for the rest of the
// script and points OPENAI_BASE_URL at it. Each answer is "ok" with 1,000
// prompt and 100 completion tokens, except that a request whose user
// message contains the text of $WORK/fail.txt (when that file exists) gets
// an answer cut at max_tokens, 100 + 10 tokens: a failed attempt that was
// paid for; and one whose user message contains the name of a file in
// $WORK/replies (the first in name order) gets that file's text, or the
// user message itself when the text is ECHO (to show what a step read).
//
// `fakellm FILE` answers from FILE instead: its answers in order, apart
// on lines of "===", the last one again once they are used up. An answer
// is the body sent as it is: JSON, or server-sent events when it starts
// with "data:", where a line "!cut" ends the connection there (a stream
// that broke off); a first line "Content-Type: TYPE" sends it so labelled.
// {AUTH} in an answer becomes the request's
// Authorization header (a proxy that echoes the request). The key the
// script set in OPENAI_API_KEY stays. `fakellm -turns FILE` answers a
// request with the answer numbered by the assistant messages it holds
// (the first when none), as a model that reads its conversation does: a
// loop started afresh gets the first answer again, a resumed one the next.
// While $WORK/requests exists, each request appends a line to it, "turn
// N", N being 1 + the assistant messages it holds: what was asked (and
// paid for) how often. A request that finds $WORK/hold takes it (renames
// it $WORK/held) and is answered only once $WORK/held is removed: a call
// under way, for as long as the script needs (later requests are answered
// at once).
func cmdFakeLLM(ts *testscript.TestScript, neg bool, args []string) {
	byTurn := len(args) == 2 && args[0] == "-turns"
	if byTurn {
		args = args[1:]
	}
	if neg || len(args) > 1 {
		ts.Fatalf("usage: fakellm [-turns] [FILE]")
	}
	var script []string
	if len(args) == 1 {
		for _, a := range strings.Split(ts.ReadFile(args[0]), "\n===\n") {
			script = append(script, strings.TrimSpace(a)+"\n")
		}
	}
	var mu sync.Mutex
	served := 0
	failFile := ts.MkAbs("fail.txt")
	repliesDir := ts.MkAbs("replies")
	requests := ts.MkAbs("requests")
	hold, held := ts.MkAbs("hold"), ts.MkAbs("held")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		if f, err := os.OpenFile(requests, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			turn := 1
			for _, m := range req.Messages {
				if m.Role == "assistant" {
					turn++
				}
			}
			mu.Lock()
			fmt.Fprintf(f, "turn %d\n", turn)
			mu.Unlock()
			f.Close()
		}
		if os.Rename(hold, held) == nil {
			waitRemoved(r.Context(), held)
		}
		if script != nil {
			mu.Lock()
			n := served
			if byTurn {
				n = 0
				for _, m := range req.Messages {
					if m.Role == "assistant" {
						n++
					}
				}
			}
			a := script[min(n, len(script)-1)]
			served++
			mu.Unlock()
			scriptedAnswer(w, strings.ReplaceAll(a, "{AUTH}", r.Header.Get("Authorization")))
			return
		}
		last := ""
		if n := len(req.Messages); n > 0 {
			last = req.Messages[n-1].Content
		}
		content, finish, prompt, completion := "ok", "stop", 1000, 100
		if entries, err := os.ReadDir(repliesDir); err == nil { // sorted by name
			for _, e := range entries {
				if !strings.Contains(last, e.Name()) {
					continue
				}
				if b, err := os.ReadFile(filepath.Join(repliesDir, e.Name())); err == nil {
					content = string(b)
					if strings.TrimSpace(content) == "ECHO" {
						content = last
					}
				}
				break
			}
		}
		if f, err := os.ReadFile(failFile); err == nil && strings.Contains(last, strings.TrimSpace(string(f))) {
			content, finish, prompt, completion = "cut", "length", 100, 10
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
			content, finish, prompt, completion, prompt+completion)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	if script == nil {
		ts.Setenv("OPENAI_API_KEY", "")
	}
}

// waitRemoved returns once path is gone or ctx is done (the client left).
func waitRemoved(ctx context.Context, path string) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scriptedAnswer sends one answer of a fakellm script.
func scriptedAnswer(w http.ResponseWriter, a string) {
	ctype := ""
	if rest, ok := strings.CutPrefix(a, "Content-Type: "); ok {
		// A server (or a proxy) that labels its answer so.
		ctype, a, _ = strings.Cut(rest, "\n")
		w.Header().Set("Content-Type", ctype)
	}
	if !strings.HasPrefix(a, "data:") {
		if ctype == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		io.WriteString(w, a)
		return
	}
	if ctype == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	events, _, cut := strings.Cut(a, "\n!cut\n")
	io.WriteString(w, events+"\n")
	w.(http.Flusher).Flush()
	if cut {
		panic(http.ErrAbortHandler) // the connection ends mid-stream
	}
}

// PostgresScripts are the settings of the scripts in dir with a
// PostgreSQL store and, first on PATH, a teamrun built from this checkout
// as a user builds it.
func PostgresScripts(t *testing.T, dir string) testscript.Params {
	bin := buildTeamrun(t)
	p := PostgresParams(t, dir, func(env *testscript.Env) error {
		env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
		return nil
	})
	return p
}

// buildTeamrun builds ./cmd/teamrun into a folder of the test's and
// returns that folder. It skips (fails under CI=true) without PostgreSQL
// before paying for the build.
func buildTeamrun(t *testing.T) string {
	t.Helper()
	testenv.PostgresURL(t)
	goTool := testenv.LookPath(t, "go")
	dir := t.TempDir()
	cmd := exec.Command(goTool, "build", "-o", filepath.Join(dir, "teamrun"), "github.com/teamrun/teamrun/cmd/teamrun")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/teamrun: %v\n%s", err, out)
	}
	return dir
}
