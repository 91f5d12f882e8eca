package main

import (
	"os"
	"regexp"
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

// Every TEAMRUN_ and OPENAI_ variable that README.md names in backticks is
// in `teamrun help environment`, so that the two never drift: one named
// there as an instance of a pattern (TEAMRUN_VAR_TOPIC) by the pattern
// (TEAMRUN_VAR_<NAME>), a family (TEAMRUN_VAR_*) by one of its own.
func TestEnvironmentTopicNamesReadmeVariables(t *testing.T) {
	// A TEAMRUN_ or OPENAI_ variable as the README writes it: a name, a
	// pattern (TEAMRUN_VAR_<NAME>) or a family (TEAMRUN_*). \b keeps
	// AZURE_OPENAI_API_KEY out: it is no OPENAI_ variable.
	envName := regexp.MustCompile(`\b(?:TEAMRUN|OPENAI)_[A-Z0-9_]*(?:<NAME>|\*)?`)
	// Read by teamrun's own test suite, not by teamrun.
	notTeamrun := map[string]bool{"TEAMRUN_TEST_PG_URL": true}
	topic := envName.FindAllString(helpOf(t, "help", "environment"), -1)
	has := func(name string) bool {
		for _, n := range topic {
			switch {
			case n == name:
				return true
			case strings.HasSuffix(name, "*") && strings.HasPrefix(n, strings.TrimSuffix(name, "*")):
				return true
			case strings.HasSuffix(n, "<NAME>") && strings.HasPrefix(name, strings.TrimSuffix(n, "<NAME>")):
				return true
			}
		}
		return false
	}
	spans := regexp.MustCompile("`[^`\n]+`").FindAllString(readme(t), -1)
	seen := map[string]bool{}
	for _, span := range spans {
		for _, name := range envName.FindAllString(span, -1) {
			if seen[name] || notTeamrun[name] {
				continue
			}
			seen[name] = true
			if !has(name) {
				t.Errorf("README.md names %s (%s); teamrun help environment does not", name, span)
			}
		}
	}
	for _, name := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "TEAMRUN_HOME", "TEAMRUN_SESSION"} {
		if !seen[name] {
			t.Errorf("found no %s in README.md's backticks: the test reads it wrong", name)
		}
	}
}

// Placeholders fill an agent's instructions too (the LLM agent renders
// them), an extension of DESIGN §2's list: every list in README.md of the
// texts they fill names it, where the output_file paragraph once repeated
// DESIGN's shorter list as what teamrun fills.
func TestReadmePlaceholderTextsNameInstructions(t *testing.T) {
	text := strings.Join(strings.Fields(readme(t)), " ")
	lists := 0
	for rest := text; ; {
		i := strings.Index(rest, "role, goal, backstory")
		if i < 0 {
			break
		}
		at := rest[i:]
		rest = at[1:]
		if !strings.Contains(at[:min(len(at), 60)], "expected_output") {
			continue // not the placeholders' texts
		}
		lists++
		if near := at[:min(len(at), 160)]; !strings.Contains(near, "instructions") {
			t.Errorf("README.md lists the texts placeholders fill without instructions: %q", near)
		}
	}
	if lists == 0 {
		t.Error("found no list of the texts placeholders fill in README.md: the test reads it wrong")
	}
}
