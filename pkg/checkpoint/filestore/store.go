package filestore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/atomicfile"
)

// Store is a session store: $TEAMRUN_HOME/sessions.
type Store struct {
	home string
	dir  string
	// compactMin is the journal size below which Record never compacts;
	// tests lower it to compact often.
	compactMin int64
	// datasync makes a journal's appends durable (fdatasync); tests
	// replace it to hold a sync in flight.
	datasync func(*os.File) error
	// testStep, when set, is called at the steps tests interleave with: a
	// background compaction's ("staged": both files written, before the
	// switch; "renamed": between the snapshot's rename and the journal's),
	// Begin's ("begin staged": its snapshot and journal written, neither
	// renamed; "begin renamed": one renamed, not the other; "begun": both),
	// Close's ("folded": its snapshot renamed, before the journal's removal)
	// and a read's ("snapshot read": before its journal is read; "prefetch
	// unmapped": a prefetch read outside the heap let its snapshot go). Tests
	// hold a step there or take a crash image of the folder.
	testStep func(step string)

	mu         sync.Mutex
	prefetched *prefetch
}

var _ checkpoint.Backend = (*Store)(nil)

// Location is the folder holding the session files, as messages and audit
// records name the store.
func (s *Store) Location() string { return s.dir }

// Close lets go of a prefetch no Load took (a snapshot still being read
// is unmapped once decoded); every file is closed after use.
func (s *Store) Close() error {
	s.mu.Lock()
	s.prefetched = nil
	s.mu.Unlock()
	return nil
}

// Project is the .teamrun folder of the spec folder dir.
func (s *Store) Project(dir string) checkpoint.ProjectState { return OpenProject(dir) }

// Open opens the store at home. It creates nothing: the folders are made
// (0700) by the first write, so a command that fails on bad input leaves no
// store behind.
func Open(home string) (*Store, error) {
	if home == "" {
		return nil, fmt.Errorf("%w: empty store path", checkpoint.ErrStore)
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, storeErr("open", home, err)
	}
	return &Store{home: abs, dir: filepath.Join(abs, "sessions"), compactMin: minCompact, datasync: fdatasync}, nil
}

// makeDir creates home and home/sessions (0700) before a write.
func (s *Store) makeDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			err = cmp.Or(danglingLink(s.dir), err)
		}
		err := storeErr("create", s.dir, err)
		var se *checkpoint.StoreError
		if errors.As(err, &se) {
			se.Home = true
		}
		return err
	}
	// The sessions folder is teamrun's own: keep it private even when it
	// was made by hand or by an older tool.
	// A link there is the user's doing: its target is left alone.
	if fi, err := os.Lstat(s.dir); err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 != 0 {
		_ = os.Chmod(s.dir, 0o700)
	}
	return nil
}

// danglingLink is the symbolic link on dir's way that points at nothing,
// nil when there is none.
func danglingLink(dir string) error {
	for p := dir; ; p = filepath.Dir(p) {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				target, _ := os.Readlink(p)
				return &checkpoint.DanglingLinkError{Link: p, Target: target}
			}
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// ownDir makes folder dir (0700) unless it is there, and refuses what is
// not a folder in its place: what teamrun writes in a symbolic link put
// there would go wherever it points (<id>.blobs, <id>.logs).
func ownDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return storeErr("create", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return storeErr("create", dir, err)
	}
	if !fi.IsDir() {
		return storeErr("create", dir, notDir{link: fi.Mode()&fs.ModeSymlink != 0})
	}
	return nil
}

// notDir is something else where teamrun keeps a folder; a link is said
// as the links O_NOFOLLOW refuses are (ELOOP: fserr.Link, LinkAdvice).
type notDir struct{ link bool }

func (notDir) Error() string { return "not a folder" }

func (e notDir) Is(target error) bool { return e.link && target == syscall.ELOOP }

// readDir lists the sessions folder; a store nothing was written to yet
// is empty.
func (s *Store) readDir() ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr("read", s.dir, err)
	}
	return entries, nil
}

// Home is the store's folder.
func (s *Store) Home() string { return s.home }

// Dir is the folder holding the session files.
func (s *Store) Dir() string { return s.dir }

// Path is the session file of id (whether or not it exists).
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *Store) journalPath(id string) string { return filepath.Join(s.dir, id+".journal") }
func (s *Store) lockPath(id string) string    { return filepath.Join(s.dir, id+".lock") }

// Exists reports whether the session file of id exists. Something else
// in its place (a folder, a symbolic link, dangling or not) is an error,
// as to Load: opened as Load opens it. A new run told the session exists
// would be sent to --continue, which Load refuses; one told it does not
// would be refused by Begin ("already exists"), and an import would
// leave the blobs it stored.
func (s *Store) Exists(_ context.Context, id string) (bool, error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return false, err
	}
	f, _, err := openRead(s.Path(id), sessionFiles)
	switch {
	case err == nil:
		f.Close()
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, storeErr("read", s.Path(id), err)
}

func (s *Store) notFound(id string) error {
	return fmt.Errorf("%w: no session %q in %s", checkpoint.ErrNotFound, id, s.dir)
}

// Load reads a session: its snapshot with its journal folded in.
func (s *Store) Load(_ context.Context, id string) (*checkpoint.Session, error) {
	if sess := s.takePrefetched(id); sess != nil {
		return sess, nil
	}
	data, jdata, _, err := s.readFiles(id, false)
	if err != nil {
		return nil, err
	}
	return decodeFiles(id, s.Path(id), data, s.journalPath(id), jdata, nil)
}

// readFiles reads a session's snapshot and journal (nil when there is none).
// A run that compacts meanwhile renames a new snapshot and then a new
// journal into place; a journal read after the snapshot was replaced can
// belong to the newer one, so the pair is read again until the snapshot
// in place before the reads is still in place after them (a snapshot is
// only ever replaced by a rename, so that is the one read).
//
// outside reads a large snapshot outside Go's heap where it can
// (readOutsideHeap); release then unmaps it, and data must not be read
// after (unmap). release is nil when data is in the heap.
func (s *Store) readFiles(id string, outside bool) (data, jdata []byte, release func(), err error) {
	if err := checkpoint.ValidateID(id); err != nil {
		return nil, nil, nil, err
	}
	path, jpath := s.Path(id), s.journalPath(id)
	for attempt := 0; ; attempt++ {
		var snap fs.FileInfo
		data, snap, release, err = readWithInfo(path, sessionFiles, outside)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, nil, s.notFound(id)
			}
			return nil, nil, nil, storeErr("read", path, err)
		}
		s.step("snapshot read")
		jdata, _, _, err = readWithInfo(jpath, sessionFiles, false)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			unmap(release)
			return nil, nil, nil, storeErr("read", jpath, err)
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(snap, now) || attempt == maxReadAttempts-1 {
			if err := s.checkBlobDir(id); err != nil {
				unmap(release)
				return nil, nil, nil, err
			}
			return data, jdata, release, nil
		}
		unmap(release)
	}
}

// outsideHeapFrom is the size from which a prefetched snapshot is read
// outside the heap: below it the mapping costs more than it gives back.
const outsideHeapFrom = 1 << 20

// openRead opens a store file to read it, refusing (ErrNotRegular) what
// is no regular file: a named pipe called s1.json would make the read
// wait for a writer for ever, and the command with it, deaf to SIGTERM.
// flags adds to O_RDONLY (noFollow).
func openRead(path string, flags int) (*os.File, fs.FileInfo, error) {
	return regfile.Open(path, flags)
}

// sessionFiles are openRead's flags for a session's file and journal:
// never read through a symbolic link (ELOOP: LinkAdvice), which Begin
// refuses to replace and Delete removes; a dangling one read as "no
// session" where `run` and import said "already exists".
const sessionFiles = noFollow

// readFile is os.ReadFile of a store file, through openRead.
func readFile(path string) ([]byte, error) {
	data, _, _, err := readWithInfo(path, 0, false)
	return data, err
}

// unmap calls release, what unmaps a snapshot read outside the heap (nil:
// read into it).
func unmap(release func()) {
	if release != nil {
		release()
	}
}

// readWithInfo is os.ReadFile (through openRead) that also returns the
// read file's FileInfo: the identity of the very file read, taken from
// its descriptor; outside reads one of outsideHeapFrom bytes or more
// outside the heap where it can, and release unmaps it (else it is nil).
func readWithInfo(path string, flags int, outside bool) ([]byte, fs.FileInfo, func(), error) {
	f, fi, err := openRead(path, flags)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if outside && fi.Size() >= outsideHeapFrom {
		if data, release, ok := readOutsideHeap(f, fi.Size()); ok {
			return data, fi, release, nil
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, nil, nil, err
		}
	}
	var b bytes.Buffer
	b.Grow(int(fi.Size()) + bytes.MinRead) // read at its size, never regrown
	if _, err := b.ReadFrom(f); err != nil {
		return nil, nil, nil, err
	}
	return b.Bytes(), fi, nil, nil
}

// maxReadAttempts bounds readFiles against a run compacting without pause;
// after them the last pair read is decoded and any mismatch reported.
const maxReadAttempts = 8

// prefetch is a session read and decoded in the background, before its
// lock is taken, so that the decoding overlaps a run's other start-up work
// (the spec's parsing). It is only a guess: Load reads the files again and
// keeps the decoded session only when they hold what was decoded, the
// same bytes (their hash, snap and journal).
type prefetch struct {
	id            string
	done          chan struct{}
	seed          maphash.Seed
	snap, journal content
	sess          *checkpoint.Session
}

// content is what Load compares a prefetched file with: its size and
// hash, or that there was none. Not the bytes themselves: kept until Load,
// the snapshot (6 MiB of a 10,000-task session) stayed in the peak RSS of
// a restore's loading, beside the spec's parse, long after it was
// decoded. The hash is maphash's, with a seed of this process's own: what
// changes a file between the prefetch and Load is another run rewriting
// it, whose bytes nothing chooses to collide with a seed they cannot
// know. It hashes a 6 MiB snapshot in 0.7-1.5 ms here, SHA-256 in 5-9
// (twice: the prefetch's and Load's, both on the way to the first task).
type content struct {
	exists bool
	size   int64
	sum    uint64
}

// contentOf is data's content under seed; nil data: no file.
func contentOf(seed maphash.Seed, data []byte) content {
	if data == nil {
		return content{}
	}
	return content{exists: true, size: int64(len(data)), sum: maphash.Bytes(seed, data)}
}

// Prefetch starts reading session id for the next Load of it. It only
// reads: nothing is created, and any problem is left to Load.
func (s *Store) Prefetch(id string) {
	if checkpoint.ValidateID(id) != nil {
		return
	}
	p := &prefetch{id: id, done: make(chan struct{}), seed: maphash.MakeSeed()}
	s.mu.Lock()
	s.prefetched = p
	s.mu.Unlock()
	go func() {
		defer close(p.done)
		data, jdata, release, err := s.readFiles(id, true)
		if err != nil {
			return
		}
		// No decoded value refers to data (the decoders copy what they
		// keep): it goes as soon as it is decoded, and a snapshot mapped
		// outside the heap a part at a time as the decoder is done with
		// it (dropRead), summed first.
		defer func() {
			if release != nil {
				release()
				s.step("prefetch unmapped")
			}
		}()
		snap, journal := contentOf(p.seed, data), contentOf(p.seed, jdata)
		var drop func(upto int)
		if release != nil {
			drop = func(upto int) { dropRead(data, upto) }
		}
		sess, err := decodeFiles(id, s.Path(id), data, s.journalPath(id), jdata, drop)
		if err != nil {
			return
		}
		p.snap, p.journal, p.sess = snap, journal, sess
	}()
}

// Prefetched is the session of id as Prefetch decoded it (nil: none),
// to read only and at once: Load may hand it over later. It may be out of
// date (nothing is locked yet): good for what a session's later runs do
// not undo, such as a start value stored redacted.
func (s *Store) Prefetched(id string) *checkpoint.Session {
	s.mu.Lock()
	p := s.prefetched
	s.mu.Unlock()
	if p == nil || p.id != id {
		return nil
	}
	<-p.done
	return p.sess
}

// takePrefetched is the prefetched session of id when its files now hold
// what it was decoded from; it is handed over once.
func (s *Store) takePrefetched(id string) *checkpoint.Session {
	s.mu.Lock()
	p := s.prefetched
	if p != nil && p.id == id {
		s.prefetched = nil
	}
	s.mu.Unlock()
	if p == nil || p.id != id {
		return nil
	}
	<-p.done
	if p.sess == nil || checkpoint.ValidateID(id) != nil || !sameContent(s.Path(id), p.seed, p.snap) || !sameContent(s.journalPath(id), p.seed, p.journal) {
		return nil
	}
	return p.sess
}

// sameContent reports whether the file at path holds exactly want; a file
// that does not exist holds no content. Any error is false: Load reads it
// again.
func sameContent(path string, seed maphash.Seed, want content) bool {
	f, fi, err := openRead(path, sessionFiles)
	if errors.Is(err, fs.ErrNotExist) {
		return !want.exists
	}
	if err != nil {
		return false // openRead closed it
	}
	defer f.Close()
	if !want.exists || fi.Size() != want.size {
		return false
	}
	var h maphash.Hash
	h.SetSeed(seed)
	if n, err := io.CopyBuffer(&h, f, make([]byte, 64<<10)); err != nil || n != want.size {
		return false
	}
	return h.Sum64() == want.sum
}

// decodeFiles is Load without the I/O: the snapshot with its journal folded.
// jdata nil: there is no journal file (an empty one is not nil). drop is
// DecodeSessionDropping's (nil: data is kept whole).
func decodeFiles(id, path string, data []byte, jpath string, jdata []byte, drop func(upto int)) (*checkpoint.Session, error) {
	sess, err := checkpoint.DecodeSessionDropping(id, path, data, drop)
	if err != nil {
		return nil, err
	}
	// A journal only ever goes in place whole, its header synced, by a
	// rename (switchTo), and goes only once a snapshot that does not say
	// the run records on absorbed it (Close): read with a snapshot that
	// says so (as readFiles reads them), a journal with its header is
	// there, whatever instant a crash hit.
	if sess.JournalOpen && jdata == nil {
		return nil, lostJournal(id, path, jpath, "it is missing", "was it deleted or moved? put it back")
	}
	if jdata != nil {
		if _, err := foldJournal(sess, jdata); err != nil {
			switch {
			case errors.Is(err, errNoHeader):
				return nil, lostJournal(id, path, jpath, "it has no header (it is empty, or cut inside its first line)", "was it emptied or cut short, by a copy or a sync tool? put the whole file back")
			case errors.Is(err, errForeignJournal):
				err = fmt.Errorf("%w: snapshot %s", err, path)
			}
			return nil, checkpoint.Undecodable(id, jpath, err)
		}
		sess.JournalLeft = len(jdata) > 0
	}
	sess.JournalOpen = false
	// A snapshot without an epoch (hand-made, or a format-1 file of a
	// tool that wrote none) is a session loaded all the same: with one, a
	// run continues it, where Begin refuses a session that has none (not
	// loaded: a new one) over a file that is there.
	if sess.Epoch == "" {
		sess.Epoch = checkpoint.RandHex(8)
	}
	sess.Summarize()
	return sess, nil
}

// lostJournal is the damage of a journal a snapshot that says the run
// records on in it (journal_open) cannot be read with: what happened to
// it, and what to do. Read as a session with nothing recorded, the tasks
// it finished would run, and be paid for, again.
func lostJournal(id, path, jpath, what, advice string) error {
	return &checkpoint.CorruptError{ID: id, Path: jpath, Err: fmt.Errorf(
		"%s: the snapshot beside it (%s) was written by a run that went on recording its tasks there, and nothing folded it in since (%s)", what, filepath.Base(path), advice)}
}

// readHead decodes a session's head: the members before, and including,
// "summary", which the format puts first (Session's field order). A JSON
// decoder reads them as the file's first members and stops there, so List
// does not decode the tasks; it checks the checksum over all of them, so
// that a file damaged past its head is not listed as a good one. A file
// that does not start that way, or has no checksum where its format wants
// one, falls back to a full Load, which says what is wrong with it.
func (s *Store) readHead(id string) (*checkpoint.Session, error) {
	path := s.Path(id)
	data, _, _, err := readWithInfo(path, sessionFiles, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, s.notFound(id)
		}
		return nil, storeErr("read", path, err)
	}
	checked, err := checkpoint.VerifyChecksum(data)
	if err != nil {
		return nil, &checkpoint.CorruptError{ID: id, Path: path, Err: err}
	}
	if err := s.checkBlobDir(id); err != nil {
		return nil, err
	}
	sess, ok := parseHead(id, bytes.NewReader(data))
	// A snapshot whose journal is still open is only as good as that
	// journal: Load reads the two together and says when it is gone.
	if ok && !sess.JournalOpen && (checked || sess.FormatVersion < 2) {
		return sess, nil
	}
	return s.Load(context.Background(), id)
}

// parseHead decodes the head members from the start of a session file.
func parseHead(id string, r io.Reader) (*checkpoint.Session, bool) {
	dec := json.NewDecoder(io.LimitReader(r, 64<<10))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var sess checkpoint.Session
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var dst any
		switch key {
		case "format_version":
			dst = &sess.FormatVersion
		case "session_id":
			dst = &sess.ID
		case "spec_path":
			dst = &sess.SpecPath
		case "team_name":
			dst = &sess.TeamName
		case "created_at":
			dst = &sess.CreatedAt
		case "updated_at":
			dst = &sess.UpdatedAt
		case "journal_open":
			dst = &sess.JournalOpen
		case "summary":
			dst = &sess.Summary
		default:
			return nil, false // not the head layout
		}
		if err := dec.Decode(dst); err != nil {
			return nil, false
		}
		if key == "summary" {
			ok := sess.ID == id && checkpoint.CheckVersion(sess.FormatVersion) == nil
			return &sess, ok
		}
	}
	return nil, false
}

// Delete removes a session and its helper files. It refuses while a run
// holds the session.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := checkpoint.ValidateID(id); err != nil {
		return err
	}
	// No session: said without taking its lock, whose file would be made
	// (and removed again) by a command that writes nothing (exit 2), and
	// refused on a read-only store.
	if !s.mayExist(id) {
		return s.notFound(id)
	}
	l, err := s.lock(ctx, id, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	found, err := s.remove(id)
	if err != nil {
		return err
	}
	if !found {
		return s.notFound(id)
	}
	return nil
}

// mayExist is false when neither the session's file nor its journal is
// there (remove's found); anything else, an error included, is left to
// remove to say under the lock.
func (s *Store) mayExist(id string) bool {
	for _, p := range []string{s.Path(id), s.journalPath(id)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// Discard removes the session cl holds, if it was written, with its lock
// file, and releases cl.
func (s *Store) Discard(_ context.Context, cl checkpoint.Lock) error {
	l, _ := cl.(*FileLock)
	if l == nil || !l.held() || l.store.dir != s.dir {
		return fmt.Errorf("checkpoint: Discard without holding the session's lock")
	}
	defer l.Release()
	l.mu.Lock()
	l.dropping = true // its own removal is no loss of the lock
	l.mu.Unlock()
	_, err := s.remove(l.id)
	return err
}

// remove removes session id and everything kept beside it, its lock file
// last; the caller holds its lock. found: its snapshot or journal was there.
func (s *Store) remove(id string) (found bool, err error) {
	for _, p := range []string{s.Path(id), s.journalPath(id)} {
		// What teamrun never puts there (a folder, a pipe) is not its to
		// remove: an empty folder went in silence as if it were the
		// session, a full one failed as "directory not empty".
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			return found, storeErr("remove", p, regfile.NotRegular(fi.Mode()))
		}
		err := os.Remove(p)
		if err == nil {
			found = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return found, storeErr("remove", p, err)
		}
	}
	for _, p := range s.tempFiles(id) {
		_ = os.Remove(p)
	}
	if err := s.sweepScratch(id); err != nil {
		return found, err
	}
	if err := s.removeBlobs(id); err != nil {
		return found, err
	}
	if err := s.removeLogs(id); err != nil {
		return found, err
	}
	// Removing the lock file while holding it is safe: lockers check that
	// the file they locked is still the one at the path.
	if err := os.Remove(s.lockPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return found, storeErr("remove", s.lockPath(id), err)
	}
	return found, syncDir(s.dir)
}

// tempFiles are the temp files of id's snapshots and journals that were
// never renamed: .<id>.json.tmp-<digits>, .<id>.journal.tmp-<digits> (the
// digits keep session "a" from matching session "a.json.tmp-1"'s).
func (s *Store) tempFiles(id string) []string {
	var out []string
	for _, prefix := range []string{"." + id + ".json.tmp-", "." + id + ".journal.tmp-"} {
		matches, _ := filepath.Glob(filepath.Join(s.dir, prefix+"*"))
		for _, m := range matches {
			rest := strings.TrimPrefix(filepath.Base(m), prefix)
			if rest != "" && strings.Trim(rest, "0123456789") == "" {
				out = append(out, m)
			}
		}
	}
	return out
}

// writeSnapshot writes sess atomically under a new epoch: temp file, fsync,
// rename, fsync of the folder. renamed says whether the new file replaced the
// old one (after that the old journal no longer applies). A run's end
// writes its last snapshot so (open false); Begin stages its first one.
func (s *Store) writeSnapshot(sess *checkpoint.Session, open bool) (size int64, renamed bool, err error) {
	st, size, undo, err := s.stageSnapshot(sess, open)
	if err != nil {
		return 0, false, err
	}
	if err := st.Rename(); err != nil {
		undo()
		return 0, false, atomicErr(err)
	}
	return size, true, syncDir(s.dir)
}

// stageSnapshot writes sess under a new epoch, which absorbs its old one
// (folded_epoch), to a temp file beside its snapshot and fsyncs it; undo
// gives sess its old epochs back, for a staged file that is never renamed
// (once renamed, the old journal no longer applies). open: a run goes on
// recording in the new epoch's journal (journal_open).
func (s *Store) stageSnapshot(sess *checkpoint.Session, open bool) (st *atomicfile.Staged, size int64, undo func(), err error) {
	old, oldFolded, oldRecords := sess.Epoch, sess.FoldedEpoch, sess.FoldedRecords
	undo = func() { sess.Epoch, sess.FoldedEpoch, sess.FoldedRecords = old, oldFolded, oldRecords }
	sess.Epoch, sess.FoldedEpoch, sess.FoldedRecords = checkpoint.RandHex(8), old, 0
	sess.JournalOpen = open
	// Streamed to the file: a large session is never encoded whole.
	st, err = atomicfile.StageWith(s.Path(sess.ID), func(w io.Writer) error {
		size, err = checkpoint.WriteSession(w, sess)
		return err
	}, 0o600)
	sess.JournalOpen = false
	if err != nil {
		undo()
		return nil, 0, nil, atomicErr(err)
	}
	return st, size, undo, nil
}

// writeAtomic is atomicfile.Write (0600) with the store's errors.
func writeAtomic(path string, data []byte) (renamed bool, err error) {
	return writeAtomicWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomicWith is atomicfile.WriteWith (0600) with the store's errors.
func writeAtomicWith(path string, write func(io.Writer) error) (renamed bool, err error) {
	err = atomicfile.WriteWith(path, write, 0o600)
	var ae *atomicfile.Error
	if errors.As(err, &ae) {
		return ae.Renamed, atomicErr(err)
	}
	return err == nil, err
}

// atomicErr is an atomicfile error as the store words it.
func atomicErr(err error) error {
	var ae *atomicfile.Error
	if errors.As(err, &ae) {
		return storeErr(ae.Op, ae.Path, ae.Err)
	}
	return err
}

func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return storeErr("sync", dir, err)
	}
	return nil
}

func storeErr(op, path string, err error) error { return checkpoint.NewStoreError(op, path, err) }
