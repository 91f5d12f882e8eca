package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

func TestRelative(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"},
		{9 * time.Second, "just now"},
		{-5 * time.Second, "just now"},
		{42 * time.Second, "42s ago"},
		{5 * time.Minute, "5m ago"},
		{3*time.Hour + 59*time.Minute, "3h ago"},
		{47 * time.Hour, "47h ago"},
		{3 * 24 * time.Hour, "3d ago"},
		{90 * 24 * time.Hour, "3mo ago"},
		{3 * 365 * 24 * time.Hour, "3y ago"},
		{-2 * time.Minute, "in 2m"},
	} {
		if got := relative(tc.d); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestFormatWhen(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	at := now.Add(-90 * time.Minute).In(time.FixedZone("X", 3600))
	if got, want := formatWhen(at, now, false), "2026-03-04T10:30:00Z"; got != want {
		t.Errorf("pipe: got %q, want %q", got, want)
	}
	if got, want := formatWhen(at, now, true), "1h ago"; got != want {
		t.Errorf("terminal: got %q, want %q", got, want)
	}
	if got := formatWhen(time.Time{}, now, false); got != "-" {
		t.Errorf("zero time: got %q", got)
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
		msg  string
	}{
		{in: "7d", want: 7 * 24 * time.Hour},
		{in: "0d", want: 0},
		{in: "36h", want: 36 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: " 1h30m ", want: 90 * time.Minute},
		{in: "", bad: true},
		{in: "d", bad: true},
		{in: "-3d", bad: true},
		{in: "-1h", bad: true},
		{in: "soon", bad: true},
		{in: "1.5d", bad: true},
		{in: "106751d", want: 106751 * 24 * time.Hour},
		// Would wrap around to a few minutes and prune every session.
		{in: "106752d", bad: true},
		{in: "200000d", bad: true, msg: "longer than teamrun can count"},
		{in: "99999999999999999999d", bad: true, msg: "longer than teamrun can count"},
		// Well formed, past what a time.Duration holds: not "not a duration".
		{in: "2562048h", bad: true, msg: "longer than teamrun can count: use at most 106751d"},
		{in: "2562047h", want: 2562047 * time.Hour},
		{in: "soon", bad: true, msg: `"soon" is not a duration: use e.g. 7d, 36h or 90m`},
		{in: "-99999999999999999999d", bad: true, msg: "is not a duration"},
		{in: "-9999999999h", bad: true, msg: "is not a duration"},
		{in: "+2d", want: 48 * time.Hour},
		{in: "0", want: 0},
		{in: ".5h", want: 30 * time.Minute},
		{in: ".h", bad: true, msg: "is not a duration"},
		{in: "1.5d", bad: true, msg: "is not a duration"},
	} {
		got, err := parseAge(tc.in)
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("parseAge(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.msg)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestPrintListTerminal(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	l := listJSON{Store: "/h/sessions", Sessions: []listEntry{
		{ID: "a", Spec: "/p/agents.yaml", TasksDone: 9, TasksTotal: 12, Status: statusInterrupted, Updated: now.Add(-3 * time.Hour), Active: true},
		{ID: "c", Error: "session c: /h/sessions/c.json is corrupt: not a session file: not valid JSON at line 1, column 9; it was left untouched", Status: statusCorrupt},
		{ID: "bb", Spec: "/p/other.yaml", TasksDone: 1, TasksTotal: 1, Status: statusDone, Updated: now.Add(-50 * 24 * time.Hour)},
	}, Missing: []checkpoint.Absent{{ID: "gone", Created: checkpoint.AuditRecord{Event: "created", Time: now, Store: "/x/sessions", User: "u", PID: 3}}}}
	var tty, pipe strings.Builder
	if err := printList(&tty, l, "", now, true); err != nil {
		t.Fatal(err)
	}
	// The corrupt row is its id and one cell: it widens no column but
	// ID. So is a missing session's: its id stands in the ID column.
	want := "  ID    STATUS       TASKS  UPDATED  SPEC\n" +
		"* a     interrupted  9/12   3h ago   /p/agents.yaml\n" +
		"  c     (corrupt: not a session file: not valid JSON at line 1, column 9)\n" +
		"  bb    done         1/1    50d ago  /p/other.yaml\n" +
		"! gone  missing from /h/sessions (audit.log: created gone at 2026-03-04T12:00:00Z in /x/sessions by u (pid 3))\n"
	if tty.String() != want {
		t.Errorf("terminal:\n%s\nwant:\n%s", tty.String(), want)
	}
	if err := printList(&pipe, l, "", now, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pipe.String(), "* a     interrupted  9/12   2026-03-04T09:00:00Z  /p/agents.yaml\n") {
		t.Errorf("pipe:\n%s", pipe.String())
	}
}

// TestCommandArgs: flags anywhere on the line, through normalizeArgs, as run
// parses every command line.
func TestCommandArgs(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		want     string // the arguments left, then the flags' values
		help     bool
		errMatch string
	}{
		{args: []string{"a.yaml"}, want: "[a.yaml] json=false session= vars= wait="},
		{args: []string{"a.yaml", "--json", "--session", "s1"}, want: "[a.yaml] json=true session=s1 vars= wait="},
		{args: []string{"--json", "a.yaml", "--session=s1"}, want: "[a.yaml] json=true session=s1 vars= wait="},
		{args: []string{"a.yaml", "--var", "k=v,w", "--var=x=1"}, want: "[a.yaml] json=false session= vars=k=v,w x=1 wait="},
		{args: []string{"a.yaml", "--", "--json"}, want: "[a.yaml --json] json=false session= vars= wait="},
		{args: []string{"--wait", "1s", "a.yaml"}, want: "[a.yaml] json=false session= vars= wait=1s"},
		{args: []string{"a.yaml", "--wait=2m"}, want: "[a.yaml] json=false session= vars= wait=2m0s"},
		{args: []string{"--wait", "a.yaml"}, want: "[a.yaml] json=false session= vars= wait=2562047h47m16.854775807s"},
		{args: []string{"a.yaml", "--wait", "abc"}, errMatch: `--wait: "abc" is not a duration`},
		// One rule for --wait and --older-than: whole days, and no wrap-around.
		{args: []string{"a.yaml", "--wait=1d"}, want: "[a.yaml] json=false session= vars= wait=24h0m0s"},
		{args: []string{"a.yaml", "--wait=3000000h"}, errMatch: `--wait: "3000000h" is longer than teamrun can count`},
		{args: []string{"a.yaml", "--wait", "--json"}, want: "[a.yaml] json=true session= vars= wait=2562047h47m16.854775807s"},
		{args: []string{"a.yaml", "-h"}, help: true},
		{args: []string{"--help", "a.yaml"}, help: true},
		{args: []string{"a.yaml", "--nope"}, errMatch: "unknown flag --nope"},
		{args: []string{"a.yaml", "--sesion", "x"}, errMatch: `Did you mean "--session"?`},
		{args: []string{"a.yaml", "--session"}, errMatch: "--session needs a value"},
		{args: []string{"a.yaml", "--json=maybe"}, errMatch: `--json: want true or false (or the flag alone), got "maybe"`},
		// The word after a flag that needs a value is never a flag: `--session
		// $ID --json` with ID unset is refused, not a session named --json.
		{args: []string{"a.yaml", "--session", "--json"}, errMatch: `--session needs a value, but --json follows it, a flag of teamrun plan (a variable left unset?): give the value, and one that starts with "-" as --session=-x (see teamrun plan --help)`},
		{args: []string{"a.yaml", "--session", "-h"}, errMatch: `--session needs a value, but -h follows it`},
		{args: []string{"a.yaml", "-session", "--wait"}, errMatch: `-session needs a value, but --wait follows it`},
		{args: []string{"a.yaml", "--session", "-x"}, errMatch: `--session needs a value, but the word after it starts with "-", which reads as a flag: give such a value as --session=-x (see teamrun plan --help)`},
		{args: []string{"a.yaml", "--session", "--", "b.yaml"}, errMatch: `--session needs a value, but the word after it starts with "-"`},
		{args: []string{"a.yaml", "--var", "--x=1"}, errMatch: `--var needs a value, but the word after it starts with "-"`},
		{args: []string{"a.yaml", "--session=-x"}, want: "[a.yaml] json=false session=-x vars= wait="},
		{args: []string{"a.yaml", "--session=--json"}, want: "[a.yaml] json=false session=--json vars= wait="},
		{args: []string{"a.yaml", "--session", "-"}, want: "[a.yaml] json=false session=- vars= wait="},
		// A negative number is a number flag's value, refused saying what it wants.
		{args: []string{"a.yaml", "--limit", "-1"}, errMatch: `--limit: want a whole number ≥ 1, got "-1"`},
		{args: []string{"a.yaml", "--limit", "--json"}, errMatch: `--limit needs a value, but --json follows it`},
		// parseDuration's syntax decides which words --wait takes, before
		// the FILE too: whole days, and a negative or too long duration
		// for Set to refuse.
		{args: []string{"--wait", "1d", "a.yaml"}, want: "[a.yaml] json=false session= vars= wait=24h0m0s"},
		{args: []string{"--wait", "+2d", "a.yaml"}, want: "[a.yaml] json=false session= vars= wait=48h0m0s"},
		{args: []string{"--wait", "-1d", "a.yaml"}, errMatch: `--wait: "-1d" is not a duration`},
		{args: []string{"--wait", "200000d", "a.yaml"}, errMatch: `--wait: "200000d" is longer than teamrun can count`},
		{args: []string{"--wait", "1.5d", "a.yaml"}, errMatch: `--wait: "1.5d" is not a duration`},
		{args: []string{"--wait", "1x", "a.yaml"}, want: "[1x a.yaml] json=false session= vars= wait=2562047h47m16.854775807s"},
	} {
		var got string
		vars := &varsFlag{}
		wait := &waitFlag{}
		var out strings.Builder
		app := &cli.App{Name: "t", Writer: &out, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {}, Commands: []*cli.Command{{
			Name: "plan", ArgsUsage: "FILE",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "session"},
				&cli.GenericFlag{Name: "var", Value: vars}, &cli.GenericFlag{Name: "wait", Value: wait},
				&cli.GenericFlag{Name: "limit", Value: &posIntFlag{}}},
			Action: action(func(c *cli.Context, args []string) error {
				got = fmt.Sprintf("%v json=%v session=%s vars=%s wait=%s", args, c.Bool("json"), c.String("session"), vars, wait)
				return nil
			}),
		}}}
		wireCommands(app.Commands)
		args, err := normalizeArgs(app.Commands, append([]string{"t", "plan"}, tc.args...))
		if err == nil {
			err = app.Run(args)
		}
		switch {
		case tc.errMatch != "":
			if err == nil || !strings.Contains(err.Error(), tc.errMatch) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.errMatch)
			}
		case tc.help:
			if err != nil || !strings.Contains(out.String(), "USAGE:") || got != "" {
				t.Errorf("%v: help not shown (err %v, ran %q)", tc.args, err, got)
			}
		case err != nil || got != tc.want:
			t.Errorf("%v: got %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

// TestOddLines: no command line makes normalizeArgs or the completion's
// reading of it panic — every command path of teamrun, followed by every
// line of up to three odd words (empty, a lone dash, "--", "=", flags with
// and without values, "help"). `run a.yaml --wait ""` once read the first
// byte of the empty word.
func TestOddLines(t *testing.T) {
	app := newApp(iostreams.Test(nil, io.Discard, io.Discard), nil)
	words := []string{"", "-", "--", "=", "-=", "--=", "a.yaml", "help", "h", "--help", "-v", "--wait", "--wait=",
		"--session", "--session=", "--store", "--json", "--var", "-o", "--nothing", "list", "é", "x"}
	var paths [][]string
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(slices.Clip(prefix), c.Name)
			paths = append(paths, p)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	paths = append(paths, nil, []string{"help"})
	lines := 0
	for _, p := range paths {
		var tails func(line []string, n int)
		tails = func(line []string, n int) {
			full := append([]string{"teamrun"}, line...)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("teamrun %q: panic: %v", line, r)
					}
				}()
				lines++
				_, _ = normalizeArgs(app.Commands, slices.Clone(full))
				commandAt(app.Commands, slices.Clone(line))
				done, _ := completionTarget(app.Commands, slices.Clone(line))
				completionContext(app.Commands, "teamrun", done)
			}()
			if n == 0 {
				return
			}
			for _, w := range words {
				tails(append(slices.Clip(line), w), n-1)
			}
		}
		tails(p, 3)
	}
	if lines < 1000 {
		t.Fatalf("only %d lines tried", lines)
	}
}
