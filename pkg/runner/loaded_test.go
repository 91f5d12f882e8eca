package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// Options.Loaded is called once per run, after the spec and session are
// loaded and before the first task runs; a foreach expansion (a later pass)
// does not call it again, and a run that restores every task, running
// none, does not call it at all.
func TestLoadedCalledOnceBeforeTheFirstTask(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	spec := `name: t
agents:
  w: {shell: "touch ` + mark + `; echo '[\"x\",\"y\"]'"}
  each: {command: ["true"]}
tasks:
  list: {description: list, agent: w, output_variable: xs}
  per:
    description: "{item}"
    agent: each
    foreach: {over: xs}
`
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cont := range []bool{false, true} {
		calls, ranBefore := 0, false
		var out bytes.Buffer
		sum, err := Run(context.Background(), Options{
			SpecPath: filepath.Join(dir, "team.yaml"), Continue: cont, Session: "s1", Mode: ModeJSON,
			IO: iostreams.Test(nil, &out, &out), Home: filepath.Join(dir, "home"), Getenv: func(string) string { return "" },
			Loaded: func() {
				calls++
				if _, err := os.Stat(mark); err == nil {
					ranBefore = true
				}
			},
		})
		if err != nil || sum.Outcome != Succeeded {
			t.Fatalf("continue=%v: %v, %+v\n%s", cont, err, sum, out.String())
		}
		want := 1
		if cont {
			want = 0 // the session is done: every task is restored, none runs
			if sum.Ran != 0 || sum.Restored == 0 {
				t.Fatalf("continue of a done session ran %d tasks, restored %d", sum.Ran, sum.Restored)
			}
		}
		if calls != want || ranBefore {
			t.Errorf("continue=%v: Loaded called %d times (want %d), after a task ran: %v", cont, calls, want, ranBefore)
		}
		os.Remove(mark)
	}
}

// Options.Parsed is called once per run, as soon as the spec is parsed:
// before Loaded and before any task runs, for a new session and a
// continued one alike; a spec that does not parse never calls it.
func TestParsedCalledOnceBeforeLoaded(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	good := `name: t
agents:
  w: {shell: "touch ` + mark + `"}
tasks:
  a: {description: a, agent: w}
  b: {description: b, agent: w}
`
	for _, tc := range []struct {
		name, spec string
		cont       bool
		want       int
	}{
		{"new session", good, false, 1},
		{"continued", good, true, 1},
		{"a spec that does not parse", "name: t\ntasks: [\n", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte(tc.spec), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(mark)
			var order []string
			var out bytes.Buffer
			_, err := Run(context.Background(), Options{
				SpecPath: filepath.Join(dir, "team.yaml"), Continue: tc.cont, Session: "s1", Mode: ModeJSON,
				IO: iostreams.Test(nil, &out, &out), Home: filepath.Join(dir, "home"), Getenv: func(string) string { return "" },
				Parsed: func() {
					if _, err := os.Stat(mark); err == nil {
						order = append(order, "a task ran")
					}
					order = append(order, "parsed")
				},
				Loaded: func() { order = append(order, "loaded") },
			})
			if (err == nil) != (tc.want == 1) {
				t.Fatalf("%v\n%s", err, out.String())
			}
			want := []string{}
			if tc.want == 1 {
				want = append(want, "parsed")
				if !tc.cont {
					want = append(want, "loaded") // the continued session is done: nothing runs
				}
			}
			if strings.Join(order, ", ") != strings.Join(want, ", ") {
				t.Errorf("calls: %q, want %q", order, want)
			}
		})
	}
}
