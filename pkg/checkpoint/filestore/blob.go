package filestore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

var _ checkpoint.BlobStore = (*Store)(nil)

// BlobDir is where session id keeps its results stored out of line:
// <store>/sessions/<id>.blobs, one file per blob named by its sha256.
func (s *Store) BlobDir(id string) string { return filepath.Join(s.dir, id+".blobs") }

// BlobPath is the file of blob b of session id.
func (s *Store) BlobPath(id string, b checkpoint.Blob) string {
	return filepath.Join(s.BlobDir(id), b.Hex())
}

// PutBlob copies r into a temp file of the session's blob folder while
// hashing it, syncs it, and renames it to its sha256: the blob is durable
// (its folder synced too) before its reference is returned, so no record
// names a blob a crash can lose.
func (s *Store) PutBlob(_ context.Context, id string, r io.Reader) (checkpoint.Blob, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return checkpoint.Blob{}, err
	}
	if err := s.makeDir(); err != nil {
		return checkpoint.Blob{}, err
	}
	dir := s.BlobDir(id)
	if err := ownDir(dir); err != nil {
		return checkpoint.Blob{}, err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return checkpoint.Blob{}, storeErr("create", dir, err)
	}
	name, done := tmp.Name(), false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(name)
		}
	}()
	w := checkpoint.NewBlobWriter()
	if _, err := io.Copy(io.MultiWriter(tmp, w), r); err != nil {
		return checkpoint.Blob{}, storeErr("write", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return checkpoint.Blob{}, storeErr("sync", name, err)
	}
	if err := tmp.Close(); err != nil {
		return checkpoint.Blob{}, storeErr("write", name, err)
	}
	b := w.Blob()
	path := s.BlobPath(id, b)
	if err := os.Rename(name, path); err != nil {
		return checkpoint.Blob{}, storeErr("rename", path, err)
	}
	done = true
	if err := syncDir(dir); err != nil {
		return checkpoint.Blob{}, err
	}
	if err := syncDir(s.dir); err != nil {
		return checkpoint.Blob{}, err
	}
	return b, nil
}

// checkBlobDir refuses what stands at session id's <id>.blobs when it is
// no folder: through a symbolic link there, results would be read from,
// and written to, wherever it points. Load checks it before anything of
// the session is read (plan, run, show, export), not when a result is.
func (s *Store) checkBlobDir(id string) error { return folderAt(s.BlobDir(id)) }

// folderAt refuses what stands at dir, a folder teamrun keeps beside a
// session, when it is no folder (a symbolic link, a file); nothing there
// is fine.
func folderAt(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return storeErr("read", dir, err)
	case !fi.IsDir():
		return storeErr("read", dir, notDir{link: fi.Mode()&fs.ModeSymlink != 0})
	}
	return nil
}

// OpenBlob opens blob b of session id (never through a link, be it the
// blob's file or <id>.blobs), its bytes checked against b as they are read.
func (s *Store) OpenBlob(_ context.Context, id string, b checkpoint.Blob) (io.ReadCloser, error) {
	if err := b.Valid(); err != nil {
		return nil, &checkpoint.CorruptError{ID: id, Path: s.Path(id), Err: err}
	}
	if err := s.checkBlobDir(id); err != nil {
		return nil, err
	}
	path := s.BlobPath(id, b)
	f, _, err := openRead(path, noFollow)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &checkpoint.CorruptError{ID: id, Path: path, Err: errors.New("a result stored out of line is missing")}
	}
	if err != nil {
		return nil, storeErr("read", path, err)
	}
	return readCloser{Reader: checkpoint.VerifyBlob(f, b, id, path), Closer: f}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sweepBlobs removes the blobs of session id that keep does not name:
// those of tasks that ran again, and a blob a killed run stored before the
// record that would have named it. The caller holds the session's lock.
func (s *Store) sweepBlobs(id string, keep map[string]checkpoint.Blob) error {
	dir := s.BlobDir(id)
	// Never through a link: its target's files are not ours to remove.
	if err := s.checkBlobDir(id); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return storeErr("read", dir, err)
	}
	names := make(map[string]bool, len(keep))
	for _, b := range keep {
		names[b.Hex()] = true
	}
	for _, e := range entries {
		if names[e.Name()] {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return storeErr("remove", p, err)
		}
	}
	return nil
}
