package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Held reports who holds the session's lock without creating anything: nil
// when no run holds it. A session that never had a lock file is not held.
// The lock is probed (taken and dropped at once) only when the last holder
// named in the lock file may still be alive. The probe reads only: a store
// on a read-only mount, or shared read-only, is asked who holds it too.
func (s *Store) Held(_ context.Context, id string) (*checkpoint.HeldError, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, err
	}
	path := s.lockPath(id)
	f, _, err := regfile.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr("read", path, err)
	}
	defer f.Close() // closing drops the probe's flock at once
	// A probe that takes the flock, however briefly, could make a run that
	// starts at that instant fail with exit 4. The note names the last
	// holder: when that process is gone from this host, nobody holds the
	// lock, and no probe is needed.
	var note checkpoint.Holder
	buf := make([]byte, 512)
	if n, _ := f.ReadAt(buf, 0); n > 0 && json.Unmarshal(bytes.TrimSpace(buf[:n]), &note) == nil && note.PID > 0 {
		if host, _ := os.Hostname(); host == note.Host && !alive(note.PID) {
			return nil, nil
		}
	}
	ok, err := probe(f)
	if err != nil {
		return nil, storeErr("lock", path, err)
	}
	if ok {
		return nil, nil
	}
	h := readHolder(f)
	return &checkpoint.HeldError{ID: id, PID: h.PID, Host: h.Host, Started: h.Started}, nil
}

// Entries is List with each session's file time, sorted by id. It reads the
// same heads as List, several at a time: listing a big store is bound by
// opening files, not by decoding them.
func (s *Store) List(_ context.Context) ([]checkpoint.Entry, error) {
	dirents, err := s.readDir()
	if err != nil {
		return nil, err
	}
	files := make(map[string]fs.DirEntry, len(dirents))
	var ids []string
	for _, d := range dirents {
		name := d.Name()
		files[name] = d
		if strings.HasPrefix(name, ".") {
			continue
		}
		// A folder named <id>.json is listed too, as unreadable (its
		// entry says what it is): passed over, the session it stands for
		// vanished from the list in silence.
		if id, ok := strings.CutSuffix(name, ".json"); ok && checkpoint.ValidateID(id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := make([]checkpoint.Entry, len(ids))
	keep := make([]bool, len(ids))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(8, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i], keep[i] = s.entry(ids[i], files)
			}
		}()
	}
	for i := range ids {
		work <- i
	}
	close(work)
	wg.Wait()
	kept := out[:0]
	for i, e := range out {
		if keep[i] {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// entry summarises one session as List does: the head of its file, or the
// whole session when its journal holds records not folded yet.
func (s *Store) entry(id string, files map[string]fs.DirEntry) (checkpoint.Entry, bool) {
	e := checkpoint.Entry{Summary: checkpoint.Summary{ID: id, Path: s.Path(id)}}
	var journal int64
	for _, name := range []string{id + ".json", id + ".journal"} {
		d, ok := files[name]
		if !ok {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue
		}
		if fi.ModTime().After(e.Touched) {
			e.Touched = fi.ModTime()
		}
		if name == id+".journal" {
			journal = fi.Size()
		}
	}
	var sess *checkpoint.Session
	var err error
	if journal > 0 {
		sess, err = s.Load(context.Background(), id)
	} else {
		sess, err = s.readHead(id)
	}
	if err != nil {
		if errors.Is(err, checkpoint.ErrNotFound) {
			return e, false // deleted meanwhile
		}
		e.Err = err
		return e, true
	}
	e.SpecPath, e.TeamName = sess.SpecPath, sess.TeamName
	e.CreatedAt, e.UpdatedAt = sess.CreatedAt, sess.UpdatedAt
	e.Done, e.Total = sess.Summary.Done, sess.Summary.Total
	return e, true
}

// OrphanLocks lists the sessions the folder keeps a lock file or other
// helpers of but no session file (<id>.lock, <id>.journal, … without
// <id>.json), each dated by the newest of them: a lock's note is written
// when it is taken and emptied when released. What is left besides a
// lock is named in Left: a journal a delete cut short between its two
// removals left, which no command read again.
func (s *Store) OrphanLocks(_ context.Context) ([]checkpoint.OrphanLock, error) {
	dirents, err := s.readDir()
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(dirents))
	for _, d := range dirents {
		names[d.Name()] = true
	}
	// What is kept beside a session's file, in the order Leftovers names
	// it; folder says it is one (else a file).
	helpers := [...]struct {
		suffix, what string
		folder       bool
	}{
		{".journal", "journal", false},
		{".blobs", "stored results", true},
		{".logs", "logs", true},
		{".scratch", "scratch folder", true},
		{".lock", "lock", false},
	}
	found := map[string]*checkpoint.OrphanLock{}
	kinds := map[string]*[len(helpers)]bool{} // id -> which of helpers
	for _, d := range dirents {
		for k, h := range helpers {
			id, ok := strings.CutSuffix(d.Name(), h.suffix)
			// What teamrun never puts there (a folder named <id>.lock)
			// is not its to remove.
			if !ok || names[id+".json"] || d.IsDir() != h.folder || checkpoint.ValidateID(id) != nil {
				continue
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile
			}
			if err != nil {
				return nil, storeErr("read", filepath.Join(s.dir, d.Name()), err)
			}
			o := found[id]
			if o == nil {
				o = &checkpoint.OrphanLock{ID: id}
				found[id], kinds[id] = o, new([len(helpers)]bool)
			}
			kinds[id][k] = true
			if fi.ModTime().After(o.Touched) {
				o.Touched = fi.ModTime()
			}
		}
	}
	out := make([]checkpoint.OrphanLock, 0, len(found))
	for id, o := range found {
		for k, h := range helpers {
			if kinds[id][k] {
				o.Left = append(o.Left, h.what)
			}
		}
		if checkpoint.Leftovers(o.Left) == "" {
			o.Left = nil // a lock alone
		}
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Head is the entry of one session, as List has it.
func (s *Store) Head(_ context.Context, id string) (checkpoint.Entry, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return checkpoint.Entry{}, err
	}
	files := map[string]fs.DirEntry{}
	for _, name := range []string{id + ".json", id + ".journal"} {
		if fi, err := os.Lstat(filepath.Join(s.dir, name)); err == nil {
			files[name] = fs.FileInfoToDirEntry(fi)
		}
	}
	if files[id+".json"] == nil {
		return checkpoint.Entry{}, s.notFound(id)
	}
	e, ok := s.entry(id, files)
	if !ok {
		return checkpoint.Entry{}, s.notFound(id)
	}
	return e, nil
}
