package testenv

import (
	"strings"
	"testing"
)

// recorder is a testing.TB whose Skipf and Fatalf only record; the real
// ones would end the calling test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = format }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = format }

func TestGetenv(t *testing.T) {
	for _, tc := range []struct {
		name, ci, value      string
		wantSkip, wantFailed bool
	}{
		{name: "set", value: "postgres://x", ci: "true"},
		{name: "unset on a developer's machine", wantSkip: true},
		{name: "unset under CI", ci: "true", wantFailed: true},
		{name: "unset, CI not true", ci: "1", wantSkip: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			t.Setenv("TESTENV_PROBE", tc.value)
			r := &recorder{TB: t}
			if got := Getenv(r, "TESTENV_PROBE", "how"); got != tc.value {
				t.Errorf("Getenv = %q, want %q", got, tc.value)
			}
			if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFailed {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tc.wantSkip, tc.wantFailed)
			}
			if tc.wantFailed && !strings.Contains(r.failed, "CI=true") {
				t.Errorf("the failure %q does not say that CI=true made it one", r.failed)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	t.Setenv("CI", "true")
	r := &recorder{TB: t}
	if LookPath(r, "teamrun-no-such-tool"); r.failed == "" {
		t.Error("a missing tool under CI=true did not fail the test")
	}
	t.Setenv("CI", "")
	r = &recorder{TB: t}
	if LookPath(r, "teamrun-no-such-tool"); r.skipped == "" {
		t.Error("a missing tool outside CI did not skip the test")
	}
}
