package bench

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
)

// compare.sh quotes a figure only for a contender that succeeded: one that
// fails stops the script, naming its command and exit status. Its restore
// figures alone (ONLY=restore) need neither go-task nor the start-up
// probes, so the script runs here in a few seconds.
func TestCompareStopsAtAFailingContender(t *testing.T) {
	testenv.LookPath(t, "bash")
	testenv.LookPath(t, "bc")
	dir := t.TempDir()
	bin := build(t, dir)
	for _, tc := range []struct {
		name, failOn string
		wantErr      bool
	}{
		{"all succeed", "", false},
		{"the restored rerun fails", "--continue", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A wrapper that exits 5 when given failOn, and else runs teamrun.
			wrapper := filepath.Join(t.TempDir(), "teamrun")
			script := "#!/bin/sh\n"
			if tc.failOn != "" {
				script += `for a in "$@"; do [ "$a" = ` + tc.failOn + ` ] && { echo simulated failure >&2; exit 5; }; done` + "\n"
			}
			script += `exec ` + bin + ` "$@"` + "\n"
			if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "compare.sh")
			cmd.Env = append(os.Environ(), "ONLY=restore", "BIG=0", "ROUNDS=1",
				"WORK="+filepath.Join(t.TempDir(), "work"), "TEAMRUN="+wrapper)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if strings.Contains(stderr.String(), "needs bash 5") {
				t.Skip(stderr.String())
			}
			figure := strings.Contains(stdout.String(), "fully restored 1,000-task rerun, ms")
			if !tc.wantErr {
				if err != nil || !figure {
					t.Fatalf("compare.sh: %v, figure printed: %v\nstdout:\n%s\nstderr:\n%s", err, figure, &stdout, &stderr)
				}
				return
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("compare.sh: %v, want exit status 1\nstderr:\n%s", err, &stderr)
			}
			want := "compare.sh: exit status 5 from: trun run "
			if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "--continue --session done1k") {
				t.Errorf("stderr does not name the failed command (%q…):\n%s", want, &stderr)
			}
			if figure {
				t.Errorf("a figure was printed for a failed contender:\n%s", &stdout)
			}
		})
	}
}
