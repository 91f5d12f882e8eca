package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestFlagValues(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(specPath, []byte("agents: {a: {shell: echo}}\ntasks:\n  fetch: {description: f, agent: a}\n  report: {description: r, agent: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := func() []string { return []string{"nightly-1", "nightly-2"} }
	cmds := []*cli.Command{{
		Name: "run",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "rerun", Usage: "run `TASK` again"},
			&cli.StringFlag{Name: "session", Usage: "the session `ID`"},
			&cli.StringFlag{Name: "reuse", Value: "strict"},
			&cli.StringFlag{Name: "var", Usage: "`KEY=VALUE`"},
			&cli.BoolFlag{Name: "json"},
		},
	}}
	tests := []struct {
		line []string
		want []string
		ok   bool
	}{
		{[]string{"run", specPath, "--rerun"}, []string{"fetch", "report"}, true},
		{[]string{"run", "--rerun", "--json", specPath}, nil, false}, // ends with no flag
		{[]string{"run", "--json", specPath, "--rerun=re"}, []string{"--rerun=fetch", "--rerun=report"}, true},
		{[]string{"run", "--rerun"}, nil, true},                                  // no FILE yet: nothing to offer
		{[]string{"run", filepath.Join(dir, "none.yaml"), "--rerun"}, nil, true}, // a spec that does not load
		{[]string{"run", specPath, "--reuse"}, []string{"strict", "unchanged"}, true},
		{[]string{"run", specPath, "--session"}, []string{"nightly-1", "nightly-2"}, true},
		{[]string{"run", "--session=ni"}, []string{"--session=nightly-1", "--session=nightly-2"}, true},
		{[]string{"run", specPath, "--var"}, nil, true}, // a value only the user knows
		{[]string{"run", specPath, "--json"}, nil, false},
		{[]string{"run", specPath, "--jso"}, nil, false}, // a flag being typed: urfave/cli's
		{[]string{"nosuch", "--rerun"}, nil, false},
	}
	for _, tt := range tests {
		got, ok := flagValues(cmds, tt.line, ids)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("flagValues(%q) = %q, %v; want %q, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}
