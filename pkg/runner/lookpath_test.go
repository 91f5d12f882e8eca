package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PATH is searched once per name in a run, but a program found is looked
// up again once it is gone from there, and a name not found yet is looked
// up every time (a task may install it).
func TestPathCache(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	t.Setenv("PATH", first+string(os.PathListSeparator)+second+string(os.PathListSeparator)+os.Getenv("PATH"))
	prog := func(dir, says string) string {
		p := filepath.Join(dir, "teamrun-test-prog")
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+says+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var paths pathCache
	for _, shell := range []bool{false, true} {
		run := func() (string, error) {
			cs := CommandSpec{Argv: []string{"teamrun-test-prog"}, Paths: &paths, Spool: t.TempDir()}
			if shell {
				cs = CommandSpec{Shell: "teamrun-test-prog", Paths: &paths, Spool: t.TempDir()}
			}
			return RunCommand(context.Background(), nil, cs)
		}
		if _, err := run(); err == nil {
			t.Fatal("a program in no folder of PATH ran")
		}
		second := prog(second, "second")
		if out, err := run(); err != nil || out != "second\n" {
			t.Fatalf("once installed: %q, %v", out, err)
		}
		os.Remove(second)
		first := prog(first, "first")
		if out, err := run(); err != nil || out != "first\n" {
			t.Fatalf("moved: %q, %v", out, err)
		}
		os.Remove(first)
		if _, err := run(); err == nil || !strings.Contains(err.Error(), "teamrun-test-prog") {
			t.Fatalf("removed: %v", err)
		}
	}
}
