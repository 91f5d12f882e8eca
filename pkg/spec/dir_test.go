package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentDir(t *testing.T) {
	root := t.TempDir()
	specDir := filepath.Join(root, "proj")
	for _, d := range []string{specDir, filepath.Join(specDir, "build"), filepath.Join(root, "shared")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(specDir, "agents.yaml")
	tests := []struct {
		name string
		spec string
		want map[string]string // agent -> folder
	}{
		{"default: the spec's folder", "agents: {a: {shell: pwd}}\ntasks: {t: {description: t, agent: a}}\n",
			map[string]string{"a": specDir}},
		{"team dir, relative to the spec", "dir: build\nagents: {a: {shell: pwd}}\ntasks: {t: {description: t, agent: a}}\n",
			map[string]string{"a": filepath.Join(specDir, "build")}},
		{"agent dir over the team's", "dir: build\nagents: {a: {shell: pwd, dir: ../shared}, b: {shell: pwd}}\ntasks: {t: {description: t, agent: a}, u: {description: u, agent: b}}\n",
			map[string]string{"a": filepath.Join(root, "shared"), "b": filepath.Join(specDir, "build")}},
		{"absolute", "agents: {a: {shell: pwd, dir: " + root + "}}\ntasks: {t: {description: t, agent: a}}\n",
			map[string]string{"a": root}},
	}
	for _, tt := range tests {
		team, err := Parse(file, []byte(tt.spec))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if b := team.Agent("b"); b != nil && team.WorkDir != b.Dir {
			t.Errorf("%s: the team's folder %s, its agent without dir: runs in %s", tt.name, team.WorkDir, b.Dir)
		}
		for name, want := range tt.want {
			if got := team.Agent(name).Dir; got != want {
				t.Errorf("%s: agent %s runs in %s, want %s", tt.name, name, got, want)
			}
		}
		if d := team.MissingDirs(); len(d) > 0 {
			t.Errorf("%s: MissingDirs = %v", tt.name, d)
		}
	}

	// A relative spec path resolves against the current folder.
	t.Chdir(specDir)
	team, err := Parse("agents.yaml", []byte("agents: {a: {shell: pwd}}\ntasks: {t: {description: t, agent: a}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := team.Agent("a").Dir; got != specDir {
		t.Errorf("relative spec path: agent runs in %s, want %s", got, specDir)
	}
}

func TestMissingDirs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(filepath.Join(dir, "afile"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	spec := "dir: nowhere\nagents:\n  a: {shell: pwd}\n  b: {shell: pwd}\n  c: {shell: pwd, dir: afile}\n  unused: {shell: pwd, dir: gone}\n" +
		"tasks: {t: {description: t, agent: a}, u: {description: u, agent: b}, v: {description: v, agent: c}}\n"
	team, err := Parse(file, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range team.MissingDirs() {
		got = append(got, d.String())
	}
	want := []string{
		file + ":1:6: dir: nowhere (" + filepath.Join(dir, "nowhere") + ") does not exist: create it, or fix dir", // once for a and b
		file + ":5:24: agents.c.dir: afile (" + filepath.Join(dir, "afile") + ") is not a folder: create it, or fix dir",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("MissingDirs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAgentKeyDir(t *testing.T) {
	key := func(spec string) string {
		team, err := Parse("/p/agents.yaml", []byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		return team.AgentKey("a", nil)
	}
	plain := key("agents: {a: {shell: pwd}}\ntasks: {t: {description: t, agent: a}}\n")
	inBuild := key("agents: {a: {shell: pwd, dir: build}}\ntasks: {t: {description: t, agent: a}}\n")
	teamBuild := key("dir: build\nagents: {a: {shell: pwd}}\ntasks: {t: {description: t, agent: a}}\n")
	moved, err := Parse("/elsewhere/agents.yaml", []byte("agents: {a: {shell: pwd, dir: build}}\ntasks: {t: {description: t, agent: a}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if plain == inBuild {
		t.Error("dir: is part of the agent's definition, but the key did not change")
	}
	if inBuild != teamBuild {
		t.Error("the same folder from the team's dir: gives another key than the agent's own")
	}
	if moved.AgentKey("a", nil) != inBuild {
		t.Error("the key changed with the spec's absolute folder (a moved checkout)")
	}
}
