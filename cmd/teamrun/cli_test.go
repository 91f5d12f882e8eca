package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// TestDurationArg: the words a duration flag takes as its value are those
// written as a duration (parseDuration's syntax), good or bad, and bare
// numbers; a FILE or a flag is none.
func TestDurationArg(t *testing.T) {
	for _, tc := range []struct {
		word string
		want bool
	}{
		{"1s", true}, {"1d", true}, {"+7d", true}, {"1h30m", true}, {".5h", true}, {"0", true},
		{"-5s", true}, {"-1d", true}, {"1.5d", true}, {"200000d", true}, {"5", true},
		{"agents.yaml", false}, {"1x", false}, {"d", false}, {"", false}, {"--json", false}, {"-", false}, {"soon", false},
	} {
		if got := durationArg(tc.word); got != tc.want {
			t.Errorf("durationArg(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
}

// TestSubcommandHelpLine: a help flag before a session subcommand is that
// subcommand's help, as after it, whatever flags stand around it.
func TestSubcommandHelpLine(t *testing.T) {
	app := newApp(iostreams.Test(nil, io.Discard, io.Discard), nil)
	for _, tc := range []struct {
		line, want, errMatch string
	}{
		{line: "session --help list", want: "teamrun session list --help"},
		{line: "session -h decide", want: "teamrun session decide -h"},
		{line: "session --store /x --help list", want: "teamrun session list --store /x --help"},
		{line: "session --help --store=/x show", want: "teamrun session show --help --store=/x"},
		{line: "session --json --help list", want: "teamrun session list --json --help"},
		{line: "session --help help list", want: "teamrun session list --help"},
		{line: "session list --help", want: "teamrun session list --help"},
		{line: "session --help", want: "teamrun session --help"},
		{line: "session --help nothing", errMatch: `no help topic "nothing" in teamrun session`},
		{line: "session --store /x --help nothing", errMatch: `no help topic "nothing" in teamrun session`},
	} {
		got, err := normalizeArgs(app.Commands, append([]string{"teamrun"}, strings.Fields(tc.line)...))
		switch {
		case tc.errMatch != "":
			if err == nil || !strings.Contains(err.Error(), tc.errMatch) {
				t.Errorf("%s: %q, %v; want an error saying %q", tc.line, got, err, tc.errMatch)
			}
		case err != nil || !slices.Equal(got, strings.Fields(tc.want)):
			t.Errorf("%s: %q, %v; want %s", tc.line, got, err, tc.want)
		}
	}
}
