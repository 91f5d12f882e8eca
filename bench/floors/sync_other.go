//go:build !linux

package floors

import "os"

// fdatasync falls back to fsync, as teamrun's file store does where the
// platform has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }
