//go:build unix

package pgstore

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// deadHere reports whether h is a process of this host that no longer runs
// (or is a zombie its parent has not reaped).
func deadHere(h *checkpoint.HeldError) bool {
	if h == nil || h.PID <= 0 {
		return false
	}
	if host, _ := os.Hostname(); host != h.Host {
		return false
	}
	if err := syscall.Kill(h.PID, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(h.PID) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z' || stat[i+2] == 'X'
	}
	return false
}
