//go:build !unix

package filestore

import "os"

// canCreateIn tells whether files can be made in dir, by making one.
func canCreateIn(dir string) error {
	probe, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return err
	}
	probe.Close()
	return os.Remove(probe.Name())
}
