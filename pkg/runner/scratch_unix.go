//go:build unix

package runner

import (
	"os"
	"strconv"
	"syscall"
)

// tempName is the name of this user's own folder in the system's
// temporary folder, one per user id.
func tempName() string { return "teamrun-" + strconv.Itoa(os.Getuid()) }

// privateToMe reports whether the file fi describes is this user's and
// no one else's: no other user may read or write it.
func privateToMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0
}
