package spec_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The crontab line a scheduler file's note prints works when pasted,
// whatever the file is called and wherever it is: run as cron runs it
// (\% made %, the rest given to sh -c), it starts teamrun with the file
// as one argument and a session id the store accepts, the file's name
// made an id's start as a fresh id's is.
func TestPraisonAISchedulerCronLineRuns(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	const src = "framework: praisonai\nagents:\n  - name: monitor\n    llm: m\ntask: Check AI news\nschedule: hourly\n"
	// A teamrun that prints its arguments, one a line.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "teamrun"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, file, prefix string }{
		{"", "sched.yaml", "sched"},
		{"", "price watch.yaml", "price-watch"},
		{"", "prices+eu.yaml", "prices-eu"},
		{"", "preisüberwachung.yaml", "preis-berwachung"},
		{"", ".nightly.yaml", "nightly"},
		{"", "-dash.yaml", "dash"},
		{"it's 100%", "s.yaml", "s"},
		{"a $HOME `x` \"q\" \\%d", "100%%.yaml", "100"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.dir)
			path := filepath.Join(dir, tc.file)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			team, err := spec.Parse(path, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var line string
			for _, n := range team.Notes {
				if _, l, ok := strings.Cut(n.Message, "put this line in crontab: "); ok {
					line = l
				}
			}
			cmd, ok := strings.CutPrefix(line, "0 * * * * ")
			if !ok {
				t.Fatalf("no crontab line for hourly in the notes: %v", team.Notes)
			}
			if strings.Contains(strings.ReplaceAll(cmd, `\%`, ""), "%") {
				t.Fatalf("a %% cron would end the command at: %s", cmd)
			}
			c := exec.Command(sh, "-c", strings.ReplaceAll(cmd, `\%`, "%"))
			c.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
			args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(args) != 6 || args[0] != "run" || args[1] != path || args[2] != "--continue" || args[3] != "--quiet" || args[4] != "--session" {
				t.Fatalf("%s\nstarts teamrun with %q", cmd, args)
			}
			if err := checkpoint.ValidateID(args[5]); err != nil {
				t.Errorf("%s: %v", cmd, err)
			}
			if !strings.HasPrefix(args[5], tc.prefix+"-") {
				t.Errorf("session %q, want it to start %q", args[5], tc.prefix+"-")
			}
		})
	}
}

// A path with a line break cannot be in a crontab line: a warning says
// so, and no line is printed.
func TestPraisonAISchedulerCronLineBreak(t *testing.T) {
	const src = "framework: praisonai\nagents:\n  - name: monitor\n    llm: m\ntask: Check AI news\nschedule: hourly\n"
	team, err := spec.Parse("/jobs/a\nb.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	all := spec.ErrorList(append(team.Warnings, team.Notes...)).Error()
	if strings.Contains(all, "crontab:") || !strings.Contains(all, "give the file a path without a line break") {
		t.Errorf("want no crontab line and the line break named:\n%s", all)
	}
}
