package tools_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// loadTools loads the top-level tools of a spec, as the runner gets them.
func loadTools(t *testing.T, yaml string) []*spec.Tool {
	t.Helper()
	team, err := spec.Parse("agents.yaml", []byte(yaml+"agents:\n  a: {llm: m}\ntasks:\n  t: {description: d, agent: a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return team.Tools
}

func realRunner() tools.Runner {
	return func(ctx context.Context, p tools.Proc) ([]byte, error) {
		out, err := runner.RunCommand(ctx, nil, runner.CommandSpec{Shell: p.Shell, Argv: p.Argv, Stdin: p.Stdin, Env: p.Env,
			Dir: p.Dir, Timeout: p.Timeout, StdoutLimit: p.StdoutLimit})
		return []byte(out), err
	}
}

func TestCommandTool(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	set := &tools.Set{Run: realRunner(), Dir: dir, Env: []string{"TEAMRUN_TASK=now", "TEAMRUN_SESSION=s1"}, Tools: loadTools(t, strings.ReplaceAll(`
tools:
  echo_args:
    parameters: {type: object, properties: {zone: {type: string}, n: {type: integer}, flag: {type: boolean}, list: {type: array}}, required: [zone]}
    shell: 'touch MARKER; echo "zone=$TEAMRUN_ARG_ZONE n=$TEAMRUN_ARG_N flag=$TEAMRUN_ARG_FLAG list=${TEAMRUN_ARG_LIST-unset} task=$TEAMRUN_TASK session=$TEAMRUN_SESSION"; cat'
  fails:
    shell: 'echo partial; echo broken >&2; exit 3'
  deploy:
    parameters: {type: object, properties: {dry_run: {type: boolean, const: true}}, required: [dry_run]}
    shell: 'touch MARKER; echo "dry_run=$TEAMRUN_ARG_DRY_RUN"'
  slow:
    shell: 'sleep 5'
    timeout: 100ms
  chatty:
    command: [head, -c, "100000", /dev/zero]
`, "MARKER", marker))}
	tests := []struct {
		name, tool, args string
		wantErr          bool
		want             []string
		ran              bool
	}{
		{"arguments on stdin and in the environment", "echo_args", `{"zone":"UTC","n":3,"flag":true,"list":[1]}`, false,
			[]string{"zone=UTC n=3 flag=true list=unset task=now session=s1", `{"flag":true,"list":[1],"n":3,"zone":"UTC"}`}, true},
		{"arguments that fail the schema", "echo_args", `{"zone":7}`, true,
			[]string{"do not match its parameters", "at /zone"}, false},
		{"a required argument missing", "echo_args", `{}`, true, []string{"missing properties: 'zone'"}, false},
		{"arguments that are not JSON", "echo_args", `{"zone":`, true, []string{"are not JSON"}, false},
		{"arguments that are not an object", "echo_args", `["UTC"]`, true, []string{"must be a JSON object"}, false},
		{"an unknown tool", "get_tme", `{}`, true, []string{`there is no tool "get_tme"; the tools are: echo_args, fails, deploy, slow, chatty`}, false},
		{"an undeclared argument that would reach the tool under a declared one's name", "deploy", `{"dry_run":true,"dry~run":false}`, true,
			[]string{`the arguments "dry_run" and "dry~run" of deploy both reach it as TEAMRUN_ARG_DRY_RUN`, `call it again with only "dry_run"`}, false},
		{"two undeclared arguments of one name", "deploy", `{"dry_run":true,"x-y":1,"X_Y":2}`, true, []string{`"X_Y" and "x-y"`}, false},
		{"a declared argument alone", "deploy", `{"dry_run":true}`, false, []string{"dry_run=true"}, true},
		{"a non-zero exit", "fails", ``, true, []string{"exit status 3: broken", "output:\npartial"}, false},
		{"a timeout", "slow", `{}`, true, []string{"timed out after 100ms"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			res := call(t, set, tc.tool, tc.args)
			if res.IsError != tc.wantErr {
				t.Errorf("IsError %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result %q lacks %q", res.Content, w)
				}
			}
			if _, err := os.Stat(marker); (err == nil) != tc.ran {
				t.Errorf("the tool ran: %v, want %v", err == nil, tc.ran)
			}
		})
	}
	t.Run("output capped", func(t *testing.T) {
		res := call(t, set, "chatty", "")
		if res.IsError || len(res.Content) > tools.MaxOutput+100 || !strings.Contains(res.Content, "[teamrun: the output was cut at 32768 bytes]") {
			t.Errorf("IsError %v, %d bytes, tail %q", res.IsError, len(res.Content), res.Content[max(0, len(res.Content)-60):])
		}
	})
	t.Run("a stopped run is no result", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		tl, args, bad := set.Check(tools.Call{Name: "slow", Arguments: "{}"})
		if bad != nil {
			t.Fatal(bad.Content)
		}
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		if _, err := set.Execute(ctx, tl, args); !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	})
}

func call(t *testing.T, set *tools.Set, name, args string) tools.Result {
	t.Helper()
	tl, parsed, bad := set.Check(tools.Call{ID: "c1", Name: name, Arguments: args})
	if bad != nil {
		return *bad
	}
	res, err := set.Execute(context.Background(), tl, parsed)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBuiltinFileTools(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link"))
	os.Symlink(outside, filepath.Join(dir, "away"))
	// The folder as the spec names it may itself be reached by a link.
	realDir := dir
	dir = filepath.Join(t.TempDir(), "linked")
	os.Symlink(realDir, dir)
	var builtins []*spec.Tool
	for _, n := range []string{"read_file", "write_file", "list_files", "execute_command"} {
		builtins = append(builtins, spec.BuiltinTool(n))
	}
	set := &tools.Set{Run: realRunner(), Dir: dir, Tools: builtins}
	tests := []struct {
		name, tool, args string
		wantErr          bool
		want             string
	}{
		{"read", "read_file", `{"path":"notes.txt"}`, false, "hello"},
		{"write in a new folder", "write_file", `{"path":"out/report.md","content":"# Report"}`, false, "wrote 8 bytes to out/report.md"},
		{"read what was written", "read_file", `{"path":"out/report.md"}`, false, "# Report"},
		{"list", "list_files", `{}`, false, "away\nlink\nnotes.txt\nout/\n"},
		{"read outside by ..", "read_file", `{"path":"../secret"}`, true, "is outside the folder the file tools may use"},
		{"write outside by an absolute path", "write_file", `{"path":"` + filepath.Join(outside, "x") + `","content":"x"}`, true, "is outside the folder"},
		{"read outside by a symbolic link", "read_file", `{"path":"link"}`, true, `path "link" leads out of the folder the file tools may use (` + dir + `) through a symbolic link`},
		{"write outside through a linked folder", "write_file", `{"path":"away/x","content":"x"}`, true, `path "away/x" leads out of the folder the file tools may use`},
		{"list outside through a linked folder", "list_files", `{"path":"away"}`, true, `path "away" leads out of the folder`},
		{"a missing file", "read_file", `{"path":"nope.txt"}`, true, "cannot read nope.txt: no such file or directory"},
		// Models often send absolute paths: one inside the folder is taken
		// as the path relative to it.
		{"write by an absolute path inside", "write_file", `{"path":"` + filepath.Join(dir, "abs", "x.txt") + `","content":"abs"}`, false, "wrote 3 bytes to abs/x.txt"},
		{"read by an absolute path inside", "read_file", `{"path":"` + filepath.Join(dir, "abs", "x.txt") + `"}`, false, "abs"},
		{"list the folder by its absolute path", "list_files", `{"path":"` + dir + `"}`, false, "abs/\naway\n"},
		{"read by the folder's real path", "read_file", `{"path":"` + filepath.Join(realDir, "notes.txt") + `"}`, false, "hello"},
		{"read outside by an absolute path with ..", "read_file", `{"path":"` + dir + `/../` + filepath.Base(outside) + `/secret"}`, true, "is outside the folder the file tools may use (" + dir + "): give a path inside it, relative to it or absolute"},
		{"read outside by an absolute path through a link", "read_file", `{"path":"` + filepath.Join(dir, "link") + `"}`, true, `path "link" leads out of the folder`},
		{"execute_command without allow", "execute_command", `{"command":"echo hi"}`, true, "not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, tc.tool, tc.args)
			if res.IsError != tc.wantErr || !strings.Contains(res.Content, tc.want) {
				t.Errorf("IsError %v, content %q; want IsError %v and %q", res.IsError, res.Content, tc.wantErr, tc.want)
			}
			if strings.Contains(res.Content, "s3cret") {
				t.Error("a file outside the folder was read")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a file outside the folder was written")
	}
	set.Allow = []string{"execute_command"}
	if res := call(t, set, "execute_command", `{"command":"echo hi; pwd -P"}`); res.IsError || res.Content != "hi\n"+realDir+"\n" {
		t.Errorf("execute_command with allow: %+v", res)
	}
}

// The file tools never write teamrun's own files: the spec being run,
// anything in a .teamrun folder, the session store; not by another name
// (a symbolic or hard link) either. Reading them is allowed: none holds a
// secret.
func TestFileToolsGuarded(t *testing.T) {
	dir := t.TempDir()
	spec1 := filepath.Join(dir, "agents.yaml")
	home := filepath.Join(dir, "home")
	for path, text := range map[string]string{spec1: "name: t\n", filepath.Join(dir, ".teamrun", "config.yml"): "max_session_age_days: 30\n",
		filepath.Join(home, "sessions", "s1.json"): "{}", filepath.Join(dir, "notes.txt"): "hi"} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(text), 0o600)
	}
	os.Symlink("agents.yaml", filepath.Join(dir, "spec-link.yaml"))
	os.Symlink(".teamrun", filepath.Join(dir, "cfg"))
	os.Symlink(".teamrun/new.yml", filepath.Join(dir, "dangling"))
	os.Link(spec1, filepath.Join(dir, "hard.yaml"))
	set := &tools.Set{Run: realRunner(), Dir: dir, Tools: []*spec.Tool{spec.BuiltinTool("write_file"), spec.BuiltinTool("read_file")},
		Guarded: []tools.Guard{{Path: spec1, What: "the spec being run"}, {Path: home, What: "the session store"}}}
	tests := []struct {
		name, tool, path string
		want             string // "" for a write that is allowed
	}{
		{"the spec", "write_file", "agents.yaml", "agents.yaml is the spec being run: the file tools do not write teamrun's own files"},
		{"the spec through a symbolic link", "write_file", "spec-link.yaml", "spec-link.yaml is the spec being run"},
		{"the spec through a hard link", "write_file", "hard.yaml", "hard.yaml is the spec being run"},
		{"config.yml", "write_file", ".teamrun/config.yml", "is in a .teamrun folder"},
		{"a new file in .teamrun", "write_file", ".teamrun/x", "is in a .teamrun folder"},
		{"a .teamrun folder made anew", "write_file", "sub/.teamrun/config.yml", "is in a .teamrun folder"},
		{"another spelling", "write_file", ".TeamRun/config.yml", "is in a .teamrun folder"},
		{"config.yml through a linked folder", "write_file", "cfg/config.yml", "is in a .teamrun folder"},
		{"a dangling link into .teamrun", "write_file", "dangling", "is in a .teamrun folder"},
		{"the session store", "write_file", "home/sessions/s1.json", "is the session store"},
		{"a new file in the session store", "write_file", "home/x", "is the session store"},
		// An absolute path inside the folder is guarded as the relative one.
		{"the spec by an absolute path", "write_file", spec1, "agents.yaml is the spec being run"},
		{"the spec by an absolute path with ..", "write_file", dir + "/sub/../agents.yaml", "agents.yaml is the spec being run"},
		{"the spec by an absolute hard link", "write_file", filepath.Join(dir, "hard.yaml"), "hard.yaml is the spec being run"},
		{"config.yml by an absolute path", "write_file", filepath.Join(dir, ".teamrun", "config.yml"), ".teamrun/config.yml is in a .teamrun folder"},
		{"config.yml by an absolute linked folder", "write_file", filepath.Join(dir, "cfg", "config.yml"), "is in a .teamrun folder"},
		{"the session store by an absolute path", "write_file", filepath.Join(home, "sessions", "s1.json"), "is the session store"},
		{"an ordinary file by an absolute path", "write_file", filepath.Join(dir, "notes.txt"), ""},
		{"an ordinary file", "write_file", "notes.txt", ""},
		{"a file named like the spec elsewhere", "write_file", "sub/agents.yaml", ""},
		{"reading config.yml", "read_file", ".teamrun/config.yml", ""},
		{"reading the spec", "read_file", "agents.yaml", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, tc.tool, fmt.Sprintf(`{"path":%q,"content":"pwned"}`, tc.path))
			if tc.want == "" {
				if res.IsError {
					t.Errorf("refused: %s", res.Content)
				}
				return
			}
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("result %q, want an error with %q", res.Content, tc.want)
			}
		})
	}
	for _, path := range []string{spec1, filepath.Join(dir, ".teamrun", "config.yml"), filepath.Join(home, "sessions", "s1.json")} {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), "pwned") {
			t.Errorf("%s was written", path)
		}
	}
	for _, path := range []string{filepath.Join(dir, ".teamrun", "new.yml"), filepath.Join(dir, ".teamrun", "x"), filepath.Join(dir, "sub", ".teamrun"), filepath.Join(home, "x")} {
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("%s was made", path)
		}
	}
}

// A tool's output is text for the model: each byte that is part of no
// UTF-8 character is U+FFFD, as in an answer (a "?" there could not be
// told from one the tool printed), counted for the warning; and the cut
// at MaxOutput never falls inside a character, which would leave its
// first bytes to be mended so.
func TestToolOutputNotUTF8(t *testing.T) {
	as := func(n int) string { return fmt.Sprintf(`head -c %d /dev/zero | tr "\000" a; `, n) }
	set := &tools.Set{Run: realRunner(), Dir: t.TempDir(), Tools: loadTools(t, `
tools:
  latin1: {shell: 'printf "caf\351 \377\376?\n"'}
  cut_in_char: {shell: '`+as(tools.MaxOutput-1)+`printf "\303\251 more"'}
  cut_in_4byte: {shell: '`+as(tools.MaxOutput-2)+`printf "\360\237\230\200 more"'}
  cut_after_char: {shell: '`+as(tools.MaxOutput-2)+`printf "\303\251 more"'}
  cut_at_bad_byte: {shell: '`+as(tools.MaxOutput-1)+`printf "\377\251 more"'}
`)}
	note := fmt.Sprintf("\n[teamrun: the output was cut at %d bytes]", tools.MaxOutput)
	a := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		tool, want string
		bad        int
	}{
		{"latin1", "caf\uFFFD \uFFFD\uFFFD?\n", 3},
		{"cut_in_char", a(tools.MaxOutput-1) + note, 0},
		{"cut_in_4byte", a(tools.MaxOutput-2) + note, 0},
		{"cut_after_char", a(tools.MaxOutput-2) + "é" + note, 0},
		{"cut_at_bad_byte", a(tools.MaxOutput-1) + "\uFFFD" + note, 1},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := call(t, set, tc.tool, "{}")
			if res.IsError || res.Content != tc.want || res.NotUTF8 != tc.bad {
				t.Errorf("IsError %v, NotUTF8 %d (want %d), content ends %q, want it to end %q",
					res.IsError, res.NotUTF8, tc.bad, res.Content[max(0, len(res.Content)-70):], tc.want[max(0, len(tc.want)-70):])
			}
		})
	}
}
