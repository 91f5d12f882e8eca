package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ScratchFolders are the sessions' scratch folders (context folders,
// variables files, the record of a run's processes): Root/<id>.scratch,
// one per session, so that what a killed run left is found and removed by
// the next run of that session, or with the session. The file store keeps
// them beside its session files; a store that is no local folder keeps
// them on the machine that runs (LocalScratch).
type ScratchFolders struct{ Root string }

// Dir is session id's scratch folder.
func (f ScratchFolders) Dir(id string) string { return filepath.Join(f.Root, id+".scratch") }

// Sweep removes session id's scratch folder and everything in it. The
// caller holds the session (its lock), or the session is gone: a run under
// way owns its scratch.
func (f ScratchFolders) Sweep(id string) error {
	// RemoveAll removes a symlink put in the folder's place, not its target.
	dir := f.Dir(id)
	if err := os.RemoveAll(dir); err != nil {
		return NewStoreError("remove", dir, fmt.Errorf("the scratch folder of session %s: %w", id, err))
	}
	return nil
}

// LocalScratch are the scratch folders, on this machine, of the sessions of
// the store shown as location (its URL without the password): below the
// user's cache folder (os.UserCacheDir), teamrun/scratch/<key>, the key a
// digest of location, so two stores' namesake sessions never share one.
// Nothing is made here: the run makes the folders (0700) when it needs them.
func LocalScratch(cacheDir, location string) ScratchFolders {
	sum := sha256.Sum256([]byte(location))
	return ScratchFolders{Root: filepath.Join(cacheDir, "teamrun", "scratch", hex.EncodeToString(sum[:8]))}
}

// TaskFileName is a task's name as a file name (a context file, a log
// folder): unchanged unless it holds a slash or NUL or is a dot name.
func TaskFileName(task string) string {
	if task == "" || task == "." || task == ".." || strings.ContainsAny(task, "/\x00") {
		return strings.NewReplacer("/", "_", "\x00", "_").Replace(strings.Trim(task, ".")) + "_"
	}
	return task
}
