//go:build unix

package regfile

import "syscall"

// nonBlock makes opening a named pipe return at once instead of waiting
// for a writer (Open refuses it then); a regular file ignores it.
const nonBlock = syscall.O_NONBLOCK
