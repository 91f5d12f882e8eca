package main

import (
	"os"
	"strings"
	"testing"
)

// readme is the repository's README.md, which the help must agree with.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// helpOf is what `teamrun ARGS…` prints on stdout, its words separated by
// single spaces (the help wraps its lines where it likes).
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut strings.Builder
	if code := run(append([]string{"teamrun"}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("teamrun %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return strings.Join(strings.Fields(out.String()), " ")
}

// Exit 3 has one cause per kind of runner.Halt: a human task, a tool call a
// crash left unsettled (Tool), the budget (Budget) and a tool loop a limit
// ended (Loop). `run --help` and README's exit-code table each name all of
// them: they once named the first two only, and a budget halt's exit 3
// read as a mistake.
func TestExitThreeNamesEveryHalt(t *testing.T) {
	var row string
	for _, line := range strings.Split(readme(t), "\n") {
		if strings.HasPrefix(line, "| 3 |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal(`README.md has no "| 3 |" row in its exit-code table`)
	}
	help := helpOf(t, "run", "--help")
	_, help, _ = strings.Cut(help, "3 halted")
	help, _, _ = strings.Cut(help, ", 4 ")
	for _, cause := range []string{"human", "crash left unsettled", "budget", "max_turns", "max_tool_calls"} {
		for _, src := range []struct{ name, text string }{{"README's exit-code table", row}, {"run --help's exit 3", help}} {
			if !strings.Contains(src.text, cause) {
				t.Errorf("%s does not name %q:\n%s", src.name, cause, src.text)
			}
		}
	}
}
