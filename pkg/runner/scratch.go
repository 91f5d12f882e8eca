package runner

import (
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
// is no such folder (no cache folder: HOME unset), and os.TempDir() takes
// its place, unswept.
func scratchOf(store checkpoint.Backend) scratchStore {
	if s, ok := store.(scratchStore); ok {
		return s
	}
	f, ok := localScratchOf(store)
	if !ok {
		return nil
	}
	// The root is made here, 0700, so that a run's own folder is the
	// one made lazily (makePrivateDir); one that cannot be made is
	// os.TempDir() again.
	if os.MkdirAll(f.Root, 0o700) != nil {
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
	f, ok := localScratchOf(store)
	if !ok {
		return nil // nothing was ever kept there
	}
	return f.Sweep(id)
}

// localScratchOf is the local scratch of store's sessions; none without
// a cache folder (HOME unset).
func localScratchOf(store checkpoint.Backend) (checkpoint.ScratchFolders, bool) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return checkpoint.ScratchFolders{}, false
	}
	return checkpoint.LocalScratch(cache, store.Location()), true
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
// scratch, if it has one; a failure is worth a warning, not the run.
func sweepScratch(s scratchStore, l checkpoint.Lock, warn func(string)) {
	if s != nil {
		if err := s.SweepScratch(l); err != nil {
			warn(err.Error())
		}
	}
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
