//go:build unix

package runner

import "syscall"

// noFollow makes an open fail (ELOOP) on a symbolic link: teamrun never
// writes through one (an attempt's logs included).
const noFollow = syscall.O_NOFOLLOW
