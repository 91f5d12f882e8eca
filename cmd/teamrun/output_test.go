package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is a stdout whose every write fails, as `> file` on a full disk.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
}

// A command whose output went nowhere does not exit 0, as if the user had
// it (`teamrun session logs ID > saved.txt`, `fingerprint FILE > fp`), nor
// 2, as if the command line were wrong: exit 5, saying so on stderr. A run
// that ends with a code of its own (a failed task) keeps it.
func TestOutputLost(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TEAMRUN_HOME", filepath.Join(dir, "home"))
	t.Setenv("TEAMRUN_STORE", "") // restored after the test; unset meanwhile
	os.Unsetenv("TEAMRUN_STORE")
	spec := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(spec, []byte("agents:\n  w: {shell: 'echo $TEAMRUN_VAR_X; exit $TEAMRUN_VAR_X'}\n"+
		"variables: {x: '0'}\ntasks:\n  a: {description: a, agent: w}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"schema"}, exitStore},
		{[]string{"fingerprint", spec}, exitStore},
		{[]string{"validate", spec}, exitStore},
		{[]string{"completion", "bash"}, exitStore},
		{[]string{"--version"}, exitStore},
		{[]string{"run", spec, "--session", "s1"}, exitStore},
		{[]string{"session", "export", "s1"}, exitStore},
		{[]string{"session", "logs", "s1"}, exitStore},
		{[]string{"run", spec, "--session", "s2", "--var", "x=3"}, exitTaskFailed},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var errOut strings.Builder
			code := run(append([]string{"teamrun"}, tt.args...), strings.NewReader(""), fullDisk{}, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errOut.String())
			}
			if tt.code == exitStore && !strings.Contains(errOut.String(), "teamrun: the output is incomplete: write /dev/stdout: no space left on device") {
				t.Fatalf("stderr does not say the output is incomplete:\n%s", errOut.String())
			}
		})
	}
}
