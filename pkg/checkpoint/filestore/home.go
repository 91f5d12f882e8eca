package filestore

import (
	"fmt"
	"os"
)

// HomeWarning says, when the store's folder exists and other users may
// enter or read it (made by hand, say, at 0755), that it should be
// private; "" otherwise. teamrun makes the folder 0700 itself, and keeps
// sessions/ private, but does not change the mode of a folder it did not
// make: it may be one the user shares on purpose.
func (s *Store) HomeWarning() string {
	fi, err := os.Stat(s.home)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("the session store %s is open to other users (mode %#o): run chmod 700 %s to keep them out; teamrun made only sessions/ private",
		s.home, fi.Mode().Perm(), s.home)
}
