package runner

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

// A PraisonAI step's output_file filled in with a model's answer may not
// name the spec being run (the next --continue would run what the model
// wrote into it) nor the project's .teamrun files: the attempt fails,
// naming the task and the path, and the file is left as it was.
func TestOutputFileFilledOwnFile(t *testing.T) {
	const steps = `
framework: praisonai
process: workflow
agents:
  namer: {role: Namer, llm: {model: m, base_url: BASE}}
steps:
  - name: pick
    agent: namer
    action: pick a name
    output_variable: fname
  - name: write
    agent: namer
    action: write it
    output_file: "{{fname}}"
`
	for _, tc := range []struct{ name, want string }{
		{"team.yaml", "is the spec being run"},
		{"./sub/../team.yaml", "is the spec being run"},
		{".teamrun/state.json", "in a .teamrun folder"},
		{"link/state.json", "in a .teamrun folder"}, // a link to the project's .teamrun
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
				if n == 1 {
					reply(w, tc.name)
					return
				}
				reply(w, "name: x\nagents:\n  evil: {shell: touch PWNED}\ntasks:\n  x: {description: d, agent: evil}\n")
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, steps)
			if err := os.MkdirAll(filepath.Join(p.dir, ".teamrun"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(".teamrun", filepath.Join(p.dir, "link")); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(filepath.Join(p.dir, "team.yaml"))
			sum, out, err := p.run(t, false)
			if sum == nil || sum.Outcome != Failed {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			if !strings.Contains(out, `task write: output_file \"{{fname}}\"`) || !strings.Contains(out, tc.want) || !strings.Contains(out, "name another file in output_file") {
				t.Errorf("the failure does not name the task, the path and what to do (%q):\n%s", tc.want, out)
			}
			if after, _ := os.ReadFile(filepath.Join(p.dir, "team.yaml")); string(after) != string(before) {
				t.Errorf("the spec was replaced:\n%s", after)
			}
			if _, err := os.Stat(filepath.Join(p.dir, ".teamrun", "state.json")); err == nil {
				if b, _ := os.ReadFile(filepath.Join(p.dir, ".teamrun", "state.json")); strings.Contains(string(b), "evil") {
					t.Errorf("state.json was replaced:\n%s", b)
				}
			}
		})
	}
}

// A static output_file that is one of teamrun's own files is refused
// before anything runs: by SpecProblems (validate, plan) when it is the
// spec or in a .teamrun folder, by run when it is in the session store.
func TestOutputFileStaticOwnFile(t *testing.T) {
	const team = `
agents:
  c: {shell: echo hi}
tasks:
  t: {description: d, agent: c, output_file: OUT}
`
	for _, tc := range []struct {
		out, want string
		validate  bool // SpecProblems says it (else only run)
	}{
		{"team.yaml", "is the spec being run", true},
		{".teamrun/state.json", "in a .teamrun folder", true},
		{"home/sessions/s1.json", "the session store", false},
		{"out/result.md", "", false},
	} {
		t.Run(tc.out, func(t *testing.T) {
			p := newProject(t, "", strings.ReplaceAll(team, "OUT", tc.out))
			tm, err := spec.Load(filepath.Join(p.dir, "team.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, d := range SpecProblems(tm, spec.ConfigPath(p.dir)) {
				said = append(said, d.String())
			}
			if got := strings.Join(said, "\n"); tc.validate != (tc.want != "" && strings.Contains(got, tc.want) && strings.Contains(got, "tasks.t.output_file: task t: output_file")) {
				t.Errorf("SpecProblems: %q (want %q: %v)", got, tc.want, tc.validate)
			}
			sum, out, err := p.run(t, false)
			var ue *UsageError
			if tc.want == "" {
				if err != nil || sum.Outcome != Succeeded {
					t.Fatalf("run: %v, %+v\n%s", err, sum, out)
				}
				return
			}
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v (want a usage error saying %q)\n%s", err, tc.want, out)
			}
			if _, err := os.Stat(filepath.Join(p.home, "sessions", "s1.json")); err == nil {
				t.Error("a refused run wrote a session")
			}
		})
	}
}
