package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// ScratchDir is where the runs of session id keep their scratch (context
// folders, variables files): <store>/sessions/<id>.scratch, the session's
// own, so that what a killed run left there is found and removed by the
// next run of the session, or with the session. List skips folders.
func (s *Store) ScratchDir(id string) string { return s.scratch().Dir(id) }

func (s *Store) scratch() checkpoint.ScratchFolders { return checkpoint.ScratchFolders{Root: s.dir} }

// SweepScratch removes what earlier runs of l's session left beside its
// files: the scratch folder and the temp files of snapshots never renamed
// (a run killed while writing one). l must hold the session's lock: a run
// under way owns them. Delete must do the same (sweepScratch) once the
// session's files are gone (under its lock).
func (s *Store) SweepScratch(lock checkpoint.Lock) error {
	l, ok := lock.(*FileLock)
	if !ok || l == nil || !l.held() || l.store.dir != s.dir {
		return errors.New("filestore: SweepScratch without holding the session's lock")
	}
	return s.sweepScratch(l.id)
}

func (s *Store) sweepScratch(id string) error {
	for _, p := range s.tempFiles(id) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storeErr("remove", p, err)
		}
	}
	return s.scratch().Sweep(id)
}

// removeBlobs removes the session's blob folder, with the session.
func (s *Store) removeBlobs(id string) error {
	dir := s.BlobDir(id)
	if err := os.RemoveAll(dir); err != nil {
		return storeErr("remove", dir, fmt.Errorf("the results of session %s stored out of line: %w", id, err))
	}
	return nil
}
