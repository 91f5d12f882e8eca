package runner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// scratchStore keeps each session's scratch (context folders, variables
// files, the record of a run's processes) where what a killed run left is
// the session's to sweep. The file store keeps it beside the session's
// files; for any other store it is a local folder (localScratch).
type scratchStore interface {
	ScratchDir(id string) string
	// SweepScratch removes what earlier runs left; l holds the session.
	SweepScratch(l checkpoint.Lock) error
}

// homeWarner is a store whose folder may be open to other users (the file
// store's $TEAMRUN_HOME made by hand): HomeWarning says so, or "".
type homeWarner interface {
	HomeWarning() string
}

// localScratch is the scratch of a store that is no local folder (a
// database): checkpoint.LocalScratch, on the machine that runs.
type localScratch struct{ checkpoint.ScratchFolders }

func (s localScratch) ScratchDir(id string) string { return s.Dir(id) }

func (s localScratch) SweepScratch(l checkpoint.Lock) error { return s.Sweep(l.ID()) }

// scratchOf is where store's sessions keep their scratch; nil when there
// is no such folder (no cache folder, or one that cannot be made), and
// os.TempDir() takes its place, unswept: warn says so.
func scratchOf(store checkpoint.Backend, warn func(string)) scratchStore {
	if s, ok := store.(scratchStore); ok {
		return s
	}
	f, err := localScratchOf(store)
	if err == nil {
		// The root is made here, 0700, so that a run's own folder is the
		// one made lazily (makePrivateDir).
		err = os.MkdirAll(f.Root, 0o700)
	}
	if err != nil {
		warn(fmt.Sprintf("no local folder for this run's scratch (%v): its context folders go to %s, and what a killed run leaves is not swept; set XDG_CACHE_HOME (or HOME) to a writable folder", err, os.TempDir()))
		return nil
	}
	return localScratch{f}
}

// RemoveScratch removes what the runs of session id left on this machine,
// once the session is deleted: the local scratch of a store that is no
// local folder. The file store removes its own with the session.
func RemoveScratch(store checkpoint.Backend, id string) error {
	if _, own := store.(scratchStore); own {
		return nil
	}
	f, err := localScratchOf(store)
	if err != nil {
		return nil // nothing was ever kept there
	}
	return f.Sweep(id)
}

// localScratchOf is the local scratch of store's sessions; an error
// without a cache folder (HOME unset).
func localScratchOf(store checkpoint.Backend) (checkpoint.ScratchFolders, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return checkpoint.ScratchFolders{}, err
	}
	return checkpoint.LocalScratch(cache, store.Location()), nil
}

// scratchDir is the folder of session id's scratch; "" means
// os.TempDir().
func scratchDir(s scratchStore, id string) string {
	if s != nil {
		return s.ScratchDir(id)
	}
	return ""
}

// sweepScratch removes what earlier runs of the session left in its
// scratch, if it has one; a failure is worth a warning, not the run. It
// returns the warning; one the same as said (the sweep at a run's start
// failed as the one at its end does: a read-only folder) is given once.
func sweepScratch(s scratchStore, l checkpoint.Lock, warn func(string), said string) string {
	if s == nil {
		return ""
	}
	err := s.SweepScratch(l)
	if err == nil {
		return ""
	}
	if err.Error() != said {
		warn(err.Error())
	}
	return err.Error()
}

// procsRecord is where a run of session id writes down its tasks'
// processes (Groups.Subreap), for the next run's killOrphans; "" (no
// record) when there is no scratch.
func procsRecord(s scratchStore, id string) string {
	dir := scratchDir(s, id)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "procs")
}
