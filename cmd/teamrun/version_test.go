package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"module version and clean tree", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-03-01T10:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			true, "v1.2.3 (revision abc123 of 2026-03-01T10:00:00Z) go1.26.8 " + platform},
		{"checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}},
			true, "(devel) (revision abc123, dirty) go1.26.8 " + platform},
		{"no vcs stamp", &debug.BuildInfo{GoVersion: "go1.26.8"}, true, "(devel) (no VCS revision) go1.26.8 " + platform},
		{"no build info", nil, false, "unknown (no build information) " + runtime.Version() + " " + platform},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionString(tc.info, tc.ok); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestVersionFromBuild builds teamrun from a git repository holding this
// checkout's files, as a user's `go install ./cmd/teamrun` does, and checks
// --version names its revision, then the dirty flag once a file changed. (Go
// stamps nothing in a git worktree, whose .git is a file, so the test copies.)
func TestVersionFromBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	src := strings.TrimSpace(string(top))
	repo := filepath.Join(t.TempDir(), "teamrun")
	files := run(src, nil, "git", "ls-files", "--cached", "--others", "--exclude-standard")
	for _, f := range strings.Split(files, "\n") {
		data, err := os.ReadFile(filepath.Join(src, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}
	run(repo, nil, "git", "init", "--quiet")
	run(repo, nil, "git", "add", "-A")
	run(repo, git, "git", "commit", "--quiet", "-m", "test build")
	rev := run(repo, nil, "git", "rev-parse", "HEAD")
	clone := repo
	bin := filepath.Join(t.TempDir(), "teamrun")
	build := func() string {
		run(clone, []string{"GOFLAGS=-buildvcs=true"}, "go", "build", "-o", bin, "./cmd/teamrun")
		return run(clone, nil, bin, "--version")
	}
	got := build()
	want := regexp.MustCompile(`^teamrun version (\(devel\)|v\S+) \(revision ` + rev + ` of \S+\) go1\.\S+ ` + runtime.GOOS + "/" + runtime.GOARCH + `$`)
	if !want.MatchString(got) {
		t.Errorf("clean clone: got %q, want it to match %s", got, want)
	}
	if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := build(); !strings.Contains(got, "revision "+rev) || !strings.Contains(got, ", dirty)") {
		t.Errorf("changed clone: got %q, want revision %s and the dirty flag", got, rev)
	}
}
