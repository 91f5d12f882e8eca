package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
// is no such folder (localRoots: none can be made), and os.TempDir() takes
// its place, unswept: warn says so.
func scratchOf(store checkpoint.Backend, warn func(string)) scratchStore {
	if s, ok := store.(scratchStore); ok {
		return s
	}
	var errs []string
	for _, r := range localRoots(store) {
		// The root is made here, 0700, so that a run's own folder is the
		// one made lazily (makePrivateDir).
		err := r.err
		if err == nil {
			err = r.make()
		}
		if err == nil {
			return localScratch{r.ScratchFolders}
		}
		errs = append(errs, err.Error())
	}
	warn(fmt.Sprintf("no local folder for this run's scratch (%s): its context folders go to %s, and what a killed run leaves is not swept; set XDG_CACHE_HOME (or HOME) to a writable folder", strings.Join(errs, "; "), os.TempDir()))
	return nil
}

// RemoveScratch removes what the runs of session id left on this machine,
// once the session is deleted: the local scratch of a store that is no
// local folder, wherever a run kept it (localRoots). The file store
// removes its own with the session.
func RemoveScratch(store checkpoint.Backend, id string) error {
	if _, own := store.(scratchStore); own {
		return nil
	}
	var errs []error
	for _, r := range localRoots(store) {
		if fi, err := os.Stat(r.Root); r.err != nil || err != nil || !fi.IsDir() || r.own != "" && ownFolder(r.own, false) != nil {
			continue // nothing was ever kept there
		}
		errs = append(errs, r.Sweep(id))
	}
	return errors.Join(errs...)
}

// localRoot is a folder a store that is no local folder may keep its
// sessions' scratch in, on the machine that runs; err says why it cannot.
type localRoot struct {
	checkpoint.ScratchFolders
	// own is a folder of this user's that Root is in, in a folder that
	// others write too (the system's temporary folder): it must be this
	// user's alone before anything is made or removed below it.
	own string
	err error
}

// make makes the root (0700), its own folder first.
func (r localRoot) make() error {
	if r.own != "" {
		if err := ownFolder(r.own, true); err != nil {
			return err
		}
	}
	return os.MkdirAll(r.Root, 0o700)
}

// localRoots are where a store that is no local folder keeps its sessions'
// scratch, in the order a run tries them: below the user's cache folder
// (os.UserCacheDir), unless that is in a home folder that is not there (a
// service account's HOME=/nonexistent under cron: a home is not made, by
// root neither); then below a folder of this user's own in the system's
// temporary folder. Either is swept by the session's next run.
func localRoots(store checkpoint.Backend) []localRoot {
	cache, err := os.UserCacheDir()
	if home, herr := os.UserHomeDir(); err == nil && herr == nil && strings.HasPrefix(cache, filepath.Clean(home)+string(filepath.Separator)) {
		if _, serr := os.Stat(home); errors.Is(serr, fs.ErrNotExist) {
			err = fmt.Errorf("the home folder %s does not exist", home)
		}
	}
	own := filepath.Join(os.TempDir(), tempName())
	return []localRoot{
		{ScratchFolders: checkpoint.LocalScratch(cache, store.Location()), err: err},
		{ScratchFolders: checkpoint.LocalScratch(own, store.Location()), own: own},
	}
}

// ownFolder checks that dir is a folder of this user's that no one else
// may write or read, not a link: in the system's temporary folder anyone
// may have made it first. make: it is made (0700) when it is not there.
func ownFolder(dir string, make bool) error {
	if make {
		if err := os.Mkdir(dir, 0o700); err == nil || !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || !privateToMe(fi) {
		return fmt.Errorf("%s is not a folder of this user's alone (a link, another user's, or open to others): remove it", dir)
	}
	return nil
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
