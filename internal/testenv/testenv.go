// Package testenv decides, in one place, what a test does when a server
// or tool it needs is absent: on a developer's machine it skips, saying
// how to provide it; under CI=true it fails, as .ci/run must have
// provided it and a skip there would pass CI without the test.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// PostgresURL is the URL of the test PostgreSQL cluster, which
// `.ci/pg.sh start` starts and prints.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return Getenv(t, "TEAMRUN_TEST_PG_URL", `start a cluster with eval "$(.ci/pg.sh start)"`)
}

// LLMBaseURL is the base URL (…/v1) of the real OpenAI-compatible test
// server: Ollama with the tiny models of ../shared/llm, which .ci/run
// starts.
func LLMBaseURL(t testing.TB) string {
	t.Helper()
	return Getenv(t, "OPENAI_BASE_URL", "start the local test server (../shared/llm/README.md)")
}

// Getenv is the value of the environment variable name, which the test
// needs; how says how to set it.
func Getenv(t testing.TB, name, how string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		absent(t, "%s is unset: %s", name, how)
	}
	return v
}

// LookPath is the path of the program tool, which the test needs.
func LookPath(t testing.TB, tool string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		absent(t, "this test needs %s: %v", tool, err)
	}
	return path
}

func absent(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: .ci/run must provide it)", args...)
		return
	}
	t.Skipf(format, args...)
}
