//go:build !unix

package runner

import "os"

// tempName is the name of teamrun's folder in the user's temporary
// folder, which is the user's own where there are no user ids.
func tempName() string { return "teamrun" }

// privateToMe is true where the user's temporary folder is the user's
// own and modes do not say who may read a folder.
func privateToMe(os.FileInfo) bool { return true }
