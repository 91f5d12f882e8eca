package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/teamrun/teamrun/internal/scripttest"
)

func TestMain(m *testing.M) {
	// Tests that need the real binary in a place testscript does not give
	// (a pseudo-terminal) run the test binary itself as teamrun.
	// The MCP crash tests run it as a stdio MCP server (tools_crash_test.go),
	// started by a teamrun that is this binary too: checked first.
	if os.Getenv("TEAMRUN_TEST_MCP_SERVER") == "1" {
		serveCrashMCP()
		os.Exit(0)
	}
	if os.Getenv("TEAMRUN_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"teamrun": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end CLI tests in testdata/script against the
// real binary, the way users run it, with the sessions in the file store;
// internal/scripttest runs them again with a PostgreSQL store.
func TestScripts(t *testing.T) {
	testscript.Run(t, scripttest.Params("../../testdata/script", false, nil))
}
