package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
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

// maxFileName is the longest file name, in bytes, most file systems take
// (NAME_MAX).
const maxFileName = 255

// TaskFileName is a task's name as a file name: its file in
// TEAMRUN_CONTEXT_DIR, its log folder. Every writer and reader of those
// asks here. A name that is a file name as it is stays unchanged; one that
// is not — too long (a 128-character name is up to 512 bytes in UTF-8, a
// foreach instance adds "[12]"), a slash or NUL, not UTF-8, empty or a dot
// name — becomes as much of it as fits, made safe, then "~" and 16 hex
// digits of its SHA-256: stable across runs and hosts, and two names never
// share one.
func TaskFileName(task string) string {
	if task != "" && task != "." && task != ".." && len(task) <= maxFileName &&
		!strings.ContainsAny(task, "/\x00") && utf8.ValidString(task) {
		return task
	}
	sum := sha256.Sum256([]byte(task))
	suffix := "~" + hex.EncodeToString(sum[:8])
	safe := strings.ToValidUTF8(strings.NewReplacer("/", "_", "\x00", "_").Replace(task), "_")
	safe = strings.TrimLeft(safe, ".") // never ".", "..", nor hidden
	if room := maxFileName - len(suffix); len(safe) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(safe[cut]) {
			cut-- // not in the middle of a character
		}
		safe = safe[:cut]
	}
	return safe + suffix
}
