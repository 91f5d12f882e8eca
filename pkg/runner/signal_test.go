package runner

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// SIGQUIT stops a run as the others do, unless GOTRACEBACK=crash asks for
// Go's own dump of every goroutine, to debug a teamrun that hangs.
func TestInterruptSignals(t *testing.T) {
	for _, tc := range []struct {
		gotraceback string
		quit        bool
	}{
		{"", true},
		{"all", true},
		{"single", true},
		{"crash", false},
	} {
		t.Run("GOTRACEBACK="+tc.gotraceback, func(t *testing.T) {
			t.Setenv("GOTRACEBACK", tc.gotraceback)
			sigs := interruptSignals()
			for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
				if !slices.Contains(sigs, os.Signal(s)) {
					t.Errorf("%v not caught", s)
				}
			}
			if got := slices.Contains(sigs, os.Signal(syscall.SIGQUIT)); got != tc.quit {
				t.Errorf("SIGQUIT caught: %v, want %v", got, tc.quit)
			}
			if got := ExitCodeOf(syscall.SIGQUIT); got != 131 {
				t.Errorf("ExitCodeOf(SIGQUIT) = %d, want 131", got)
			}
		})
	}
}
