package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

func TestCompletionTarget(t *testing.T) {
	cmds := []*cli.Command{{
		Name:      "run",
		ArgsUsage: "FILE",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "rerun", Usage: "run `TASK` again"},
			&cli.StringFlag{Name: "session", Usage: "the session `ID`"},
			&cli.StringFlag{Name: "store", Usage: "the store `URL`"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
			&cli.BoolFlag{Name: "json"},
		},
	}, {
		Name:        "session",
		Subcommands: []*cli.Command{{Name: "show", ArgsUsage: "[ID]", Flags: []cli.Flag{&cli.StringFlag{Name: "store"}, &cli.BoolFlag{Name: "json"}}}},
	}}
	tests := []struct {
		line []string
		done []string
		want completing
	}{
		// A flag waiting for its value: the value, the flag not among the finished words.
		{[]string{"run", "a.yaml", "--rerun"}, []string{"run", "a.yaml"}, completing{value: "rerun"}},
		{[]string{"run", "a.yaml", "--rerun", ""}, []string{"run", "a.yaml"}, completing{value: "rerun"}},
		{[]string{"run", "a.yaml", "--store", "DIR", "--session", ""}, []string{"run", "a.yaml", "--store", "DIR"}, completing{value: "session"}},
		// --flag=…: its value, given with the flag.
		{[]string{"run", "--session=ni"}, []string{"run"}, completing{value: "session", eq: true}},
		{[]string{"run", "a.yaml", "-o="}, []string{"run", "a.yaml"}, completing{value: "o", eq: true}},
		// A flag being typed: its name.
		{[]string{"run", "a.yaml", "--jso"}, []string{"run", "a.yaml"}, completing{flagName: true}},
		{[]string{"session", "show", "-"}, []string{"session", "show"}, completing{flagName: true}},
		// After a finished flag ("" follows it), arguments: a switch, or a flag with its value.
		{[]string{"session", "show", "--json", ""}, []string{"session", "show", "--json"}, completing{}},
		{[]string{"session", "show", "--store=DIR", ""}, []string{"session", "show", "--store=DIR"}, completing{}},
		{[]string{"run", "-o=F", ""}, []string{"run", "-o=F"}, completing{}},
		{[]string{"session", "show", "--store", "DIR", ""}, []string{"session", "show", "--store", "DIR"}, completing{}},
		{[]string{"session", "show", ""}, []string{"session", "show"}, completing{}},
		// An older script's line, without "": its last word is finished.
		{[]string{"session", "show"}, []string{"session", "show"}, completing{}},
		{[]string{"nosuch", "--rerun", ""}, []string{"nosuch", "--rerun"}, completing{}},
		{[]string{}, []string{}, completing{}},
	}
	for _, tt := range tests {
		done, want := completionTarget(cmds, tt.line)
		if !slices.Equal(done, tt.done) || want != tt.want {
			t.Errorf("completionTarget(%q) = %q, %+v; want %q, %+v", tt.line, done, want, tt.done, tt.want)
		}
	}
}

// The line's flags count wherever they stand, as when the command runs:
// the context urfave/cli parses has them before the arguments.
func TestCompletionContext(t *testing.T) {
	app := newApp(iostreams.Test(nil, io.Discard, io.Discard), nil)
	tests := []struct {
		done []string
		want []string
	}{
		{[]string{"run", "a.yaml", "--store", "DIR"}, []string{"teamrun", "run", "--store", "DIR", "a.yaml"}},
		{[]string{"session", "logs", "s1", "--store", "DIR"}, []string{"teamrun", "session", "logs", "--store", "DIR", "s1"}},
		{[]string{"session", "--store", "DIR", "show"}, []string{"teamrun", "session", "show", "--store", "DIR"}},
		// Refused by normalizeArgs (given twice): as it stands.
		{[]string{"run", "a.yaml", "--session", "a", "--session", "b"}, []string{"teamrun", "run", "a.yaml", "--session", "a", "--session", "b"}},
	}
	for _, tt := range tests {
		if got := completionContext(app.Commands, "teamrun", tt.done); !slices.Equal(got, tt.want) {
			t.Errorf("completionContext(%q) = %q; want %q", tt.done, got, tt.want)
		}
	}
}

func TestOffer(t *testing.T) {
	values := []string{"nightly-1", "-dash", "", "step one", "$(id)", "tab\there", "two\nlines"}
	var b bytes.Buffer
	offer(&b, "", values)
	if got, want := b.String(), "nightly-1\nstep one\n$(id)\n"; got != want {
		t.Errorf("offer alone = %q; want %q", got, want)
	}
	b.Reset()
	offer(&b, "--session=", values[:2])
	if got, want := b.String(), "--session=nightly-1\n--session=-dash\n"; got != want {
		t.Errorf("offer after a prefix = %q; want %q", got, want)
	}
}

// A FIFO as the FILE on the line: completing a TASK gives nothing at
// once, where reading it held the shell until a writer came.
func TestTaskNamesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	specPath := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(specPath, []byte("agents: {a: {shell: echo}}\ntasks:\n  fetch: {description: f, agent: a}\n  report: {description: r, agent: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := taskNames(specPath); !slices.Equal(got, []string{"fetch", "report"}) {
		t.Errorf("taskNames(team.yaml) = %q", got)
	}
	got := make(chan []string, 1)
	go func() { got <- taskNames(fifo) }()
	select {
	case names := <-got:
		if len(names) != 0 {
			t.Errorf("taskNames(fifo) = %q; want nothing", names)
		}
	case <-time.After(10 * time.Second):
		// Unblock the read so that the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("taskNames blocked on a FIFO")
	}
}
