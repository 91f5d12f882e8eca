package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

var (
	// ErrNotFound: the store has no session with that id.
	ErrNotFound = errors.New("session not found")
	// ErrBadID: a session id breaks the id rule.
	ErrBadID = errors.New("invalid session id")
	// ErrLocked: another run holds the session (the CLI exits 4).
	ErrLocked = errors.New("session is held by another run")
	// ErrExists: Begin was given a new session whose id the store holds.
	ErrExists = errors.New("session already exists")
	// ErrStore: the store cannot be read or written (the CLI exits 5).
	ErrStore = errors.New("session store cannot be read or written")
)

// IDRule is the session id rule, as error messages state it.
const IDRule = "1 to 128 characters of A-Z a-z 0-9 . _ -, not starting with a dot"

// CorruptError is a session file (or its journal) that cannot be decoded.
// Nothing ever overwrites or deletes it on its own.
type CorruptError struct {
	ID   string
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("session %s: %s is corrupt: %v; it was left untouched: restore it from a backup, or delete the session with `teamrun session delete %s`",
		e.ID, e.Path, e.Err, e.ID)
}

func (e *CorruptError) Unwrap() []error { return []error{e.Err, ErrStore} }

// StoreError is an I/O failure on a store file, with what to do about it.
type StoreError struct {
	Op   string // read, write, create, sync, rename, remove
	Path string
	Err  error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("cannot %s %s: %v; %s", e.Op, e.Path, e.Err, advice(e.Err))
}

func (e *StoreError) Unwrap() []error { return []error{e.Err, ErrStore} }

func advice(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk is full: free some space, then rerun with --continue (nothing acknowledged is lost)"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return "check the owner and permissions of the file and its folder (teamrun keeps them 0700/0600)"
	}
	return "check the disk and the folder, then rerun with --continue"
}

func storeErr(op, path string, err error) error {
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &StoreError{Op: op, Path: path, Err: err}
}

// Store is a session store: $TEAMRUN_HOME/sessions.
type Store struct {
	home string
	dir  string
	// compactMin is the journal size below which Record never compacts;
	// tests lower it to compact often.
	compactMin int64
}

// DefaultHome is $TEAMRUN_HOME, else ~/.teamrun.
func DefaultHome() (string, error) {
	if h := os.Getenv("TEAMRUN_HOME"); h != "" {
		return h, nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the session store: set TEAMRUN_HOME (%w)", err)
	}
	return filepath.Join(u, ".teamrun"), nil
}

// Open opens the store at home. It creates nothing: the folders are made
// (0700) by the first write, so a command that fails on bad input leaves no
// store behind.
func Open(home string) (*Store, error) {
	if home == "" {
		return nil, fmt.Errorf("%w: empty store path", ErrStore)
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, storeErr("open", home, err)
	}
	return &Store{home: abs, dir: filepath.Join(abs, "sessions"), compactMin: minCompact}, nil
}

// makeDir creates home and home/sessions (0700) before a write.
func (s *Store) makeDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return storeErr("create", s.dir, err)
	}
	// The sessions folder is teamrun's own: keep it private even when it
	// was made by hand or by an older tool.
	if fi, err := os.Stat(s.dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		_ = os.Chmod(s.dir, 0o700)
	}
	return nil
}

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

// ValidateID checks the session id rule. Ids cannot hold a separator or
// start with a dot, so a session's files always stay inside the store.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty; an id is %s", ErrBadID, IDRule)
	}
	// Positions and lengths count characters, as people read them: "é"
	// is one character at 1, not the byte 'Ã'.
	if n := utf8.RuneCountInString(id); n > 128 {
		return fmt.Errorf("%w: %d characters; an id is %s", ErrBadID, n, IDRule)
	}
	if id[0] == '.' {
		return fmt.Errorf("%w %q: starts with a dot; an id is %s", ErrBadID, id, IDRule)
	}
	pos := 0
	for i, r := range id {
		pos++
		if r < utf8.RuneSelf && idByte(byte(r)) {
			continue
		}
		what := fmt.Sprintf("character %q", r)
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(id[i:]); size == 1 {
				what = fmt.Sprintf("byte 0x%02X (not UTF-8)", id[i])
			}
		}
		return fmt.Errorf("%w %q: %s at %d; an id is %s", ErrBadID, id, what, pos, IDRule)
	}
	return nil
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// NewID is a fresh id <name>-<YYYYMMDD-HHMMSS>-<4 hex>, the name sanitised
// to the id alphabet.
func NewID(teamName string, now time.Time) string {
	var b strings.Builder
	for i := 0; i < len(teamName); i++ {
		if c := teamName[i]; idByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	suffix := "-" + now.UTC().Format("20060102-150405") + "-" + randHex(2)
	if max := 128 - len(suffix); len(name) > max {
		name = name[:max]
	}
	if name == "" {
		name = "session"
	}
	return name + suffix
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Exists reports whether the session file of id exists.
func (s *Store) Exists(id string) (bool, error) {
	if err := ValidateID(id); err != nil {
		return false, err
	}
	_, err := os.Stat(s.Path(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, storeErr("read", s.Path(id), err)
}

func (s *Store) notFound(id string) error {
	return fmt.Errorf("%w: no session %q in %s", ErrNotFound, id, s.dir)
}

// Load reads a session: its snapshot with its journal folded in.
func (s *Store) Load(id string) (*Session, error) {
	data, jdata, err := s.readFiles(id)
	if err != nil {
		return nil, err
	}
	return decodeFiles(id, s.Path(id), data, s.journalPath(id), jdata)
}

// readFiles reads a session's snapshot and journal (nil when there is none).
func (s *Store) readFiles(id string) (data, jdata []byte, err error) {
	if err := ValidateID(id); err != nil {
		return nil, nil, err
	}
	path := s.Path(id)
	data, err = os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, s.notFound(id)
		}
		return nil, nil, storeErr("read", path, err)
	}
	jpath := s.journalPath(id)
	jdata, err = os.ReadFile(jpath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, storeErr("read", jpath, err)
	}
	return data, jdata, nil
}

// Prefetch is a session read and decoded in the background, before its lock
// is taken, so that the decoding overlaps a run's other start-up work (the
// spec's parsing). It is only a guess: LoadPrefetched reads the files again
// under the lock and keeps the decoded session only when they are byte for
// byte the ones decoded.
type Prefetch struct {
	id          string
	done        chan struct{}
	data, jdata []byte
	sess        *Session
}

// PrefetchSession starts reading session id of the store at home. It only
// reads: nothing is created, and any problem is left to LoadPrefetched.
func PrefetchSession(home, id string) *Prefetch {
	if home == "" || ValidateID(id) != nil {
		return nil
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil
	}
	s := &Store{home: abs, dir: filepath.Join(abs, "sessions")}
	p := &Prefetch{id: id, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		data, jdata, err := s.readFiles(id)
		if err != nil {
			return
		}
		if sess, err := decodeFiles(id, s.Path(id), data, s.journalPath(id), jdata); err == nil {
			p.data, p.jdata, p.sess = data, jdata, sess
		}
	}()
	return p
}

// LoadPrefetched is Load, taking p's session when p read session id from
// this store's files as they are now. p may be nil.
func (s *Store) LoadPrefetched(id string, p *Prefetch) (*Session, error) {
	if p == nil || p.id != id {
		return s.Load(id)
	}
	data, jdata, err := s.readFiles(id)
	if err != nil {
		return nil, err
	}
	<-p.done
	if p.sess != nil && bytes.Equal(data, p.data) && bytes.Equal(jdata, p.jdata) {
		sess := p.sess
		p.sess = nil // handed over once
		return sess, nil
	}
	return decodeFiles(id, s.Path(id), data, s.journalPath(id), jdata)
}

// decodeFiles is Load without the I/O: the snapshot with its journal folded.
func decodeFiles(id, path string, data []byte, jpath string, jdata []byte) (*Session, error) {
	sess, err := DecodeSession(id, path, data)
	if err != nil {
		return nil, err
	}
	if len(jdata) > 0 {
		if _, err := foldJournal(sess, jdata); err != nil {
			if errors.Is(err, errForeignJournal) {
				err = fmt.Errorf("%w: snapshot %s", err, path)
			}
			return nil, &CorruptError{ID: id, Path: jpath, Err: err}
		}
	}
	sess.Summarize()
	return sess, nil
}

// Summary is one line of List.
type Summary struct {
	ID        string
	SpecPath  string
	TeamName  string
	CreatedAt time.Time
	UpdatedAt time.Time
	Done      int
	Total     int
	Path      string
	Err       error // the session could not be read; the other fields may be empty
}

// List summarises every session in the store, sorted by id. It reads only
// the head of each file unless a journal holds records not yet folded.
// An unreadable session is listed with Err set rather than failing List.
func (s *Store) List() ([]Summary, error) {
	entries, err := s.readDir()
	if err != nil {
		return nil, err
	}
	journals := map[string]int64{}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		if id, ok := strings.CutSuffix(name, ".json"); ok && ValidateID(id) == nil {
			ids = append(ids, id)
		} else if id, ok := strings.CutSuffix(name, ".journal"); ok {
			if info, err := e.Info(); err == nil {
				journals[id] = info.Size()
			}
		}
	}
	sort.Strings(ids)
	out := make([]Summary, 0, len(ids))
	for _, id := range ids {
		sum := Summary{ID: id, Path: s.Path(id)}
		var sess *Session
		var err error
		if journals[id] > 0 {
			sess, err = s.Load(id)
		} else {
			sess, err = s.readHead(id)
		}
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // deleted meanwhile
			}
			sum.Err = err
		} else {
			sum.SpecPath, sum.TeamName = sess.SpecPath, sess.TeamName
			sum.CreatedAt, sum.UpdatedAt = sess.CreatedAt, sess.UpdatedAt
			sum.Done, sum.Total = sess.Summary.Done, sess.Summary.Total
		}
		out = append(out, sum)
	}
	return out, nil
}

// readHead decodes a session's head: the members before, and including,
// "summary", which the format puts first (Session's field order). A JSON
// decoder reads them as the file's first members and stops there, so List
// does not read the tasks. A file that does not start that way falls back
// to a full Load, which says what is wrong with it.
func (s *Store) readHead(id string) (*Session, error) {
	path := s.Path(id)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, s.notFound(id)
		}
		return nil, storeErr("read", path, err)
	}
	sess, ok := parseHead(id, f)
	f.Close()
	if ok {
		return sess, nil
	}
	return s.Load(id)
}

// parseHead decodes the head members from the start of a session file.
func parseHead(id string, r io.Reader) (*Session, bool) {
	dec := json.NewDecoder(io.LimitReader(r, 64<<10))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var sess Session
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
		case "summary":
			dst = &sess.Summary
		default:
			return nil, false // not the head layout
		}
		if err := dec.Decode(dst); err != nil {
			return nil, false
		}
		if key == "summary" {
			ok := sess.ID == id && checkVersion(sess.FormatVersion) == nil
			return &sess, ok
		}
	}
	return nil, false
}

// Delete removes a session and its helper files. It refuses while a run
// holds the session.
func (s *Store) Delete(id string) error {
	l, err := s.Lock(context.Background(), id, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	found := false
	for _, p := range []string{s.Path(id), s.journalPath(id)} {
		err := os.Remove(p)
		if err == nil {
			found = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return storeErr("remove", p, err)
		}
	}
	for _, p := range s.tempFiles(id) {
		_ = os.Remove(p)
	}
	// Removing the lock file while holding it is safe: lockers check that
	// the file they locked is still the one at the path.
	if err := os.Remove(s.lockPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storeErr("remove", s.lockPath(id), err)
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	if !found {
		return s.notFound(id)
	}
	return nil
}

// tempFiles are the snapshot temp files of id: .<id>.json.tmp-<digits>
// (the digits keep session "a" from matching session "a.json.tmp-1"'s).
func (s *Store) tempFiles(id string) []string {
	prefix := "." + id + ".json.tmp-"
	matches, _ := filepath.Glob(filepath.Join(s.dir, prefix+"*"))
	var out []string
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), prefix)
		if rest != "" && strings.Trim(rest, "0123456789") == "" {
			out = append(out, m)
		}
	}
	return out
}

// Decide records checkpoint.decisions[task] = value under the session's
// lock. It fails at once (ErrLocked) while a run holds the session.
func (s *Store) Decide(ctx context.Context, id, task, value string) error {
	l, err := s.Lock(ctx, id, 0)
	if err != nil {
		return err
	}
	defer l.Release()
	sess, err := s.Load(id)
	if errors.Is(err, ErrNotFound) {
		_ = os.Remove(s.lockPath(id)) // leave no litter for a session that is not there
	}
	if err != nil {
		return err
	}
	if _, ok := sess.Task(task); !ok {
		return fmt.Errorf("session %s has no task %q", id, task)
	}
	now := time.Now().UTC()
	sess.Checkpoint.Decisions[task] = value
	sess.UpdatedAt, sess.Checkpoint.Timestamp = now, now
	if _, _, err := s.writeSnapshot(sess); err != nil {
		return err
	}
	// The snapshot now holds the journal's records under a new epoch.
	if err := os.Remove(s.journalPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storeErr("remove", s.journalPath(id), err)
	}
	return nil
}

// writeSnapshot writes sess atomically under a new epoch: temp file, fsync,
// rename, fsync of the folder. renamed says whether the new file replaced the
// old one (after that the old journal no longer applies).
func (s *Store) writeSnapshot(sess *Session) (size int64, renamed bool, err error) {
	old, oldFolded := sess.Epoch, sess.FoldedEpoch
	sess.Epoch, sess.FoldedEpoch = randHex(8), old
	defer func() {
		if err != nil && !renamed {
			sess.Epoch, sess.FoldedEpoch = old, oldFolded
		}
	}()
	path := s.Path(sess.ID)
	tmp, err := os.CreateTemp(s.dir, "."+sess.ID+".json.tmp-")
	if err != nil {
		return 0, false, storeErr("create", path, err)
	}
	tmpName := tmp.Name()
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return 0, false, storeErr("write", tmpName, err)
	}
	data, err := EncodeSession(sess)
	if err != nil {
		return 0, false, err
	}
	if _, err := tmp.Write(data); err != nil {
		return 0, false, storeErr("write", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return 0, false, storeErr("sync", path, err)
	}
	fi, err := tmp.Stat()
	if err != nil {
		return 0, false, storeErr("write", path, err)
	}
	if err := tmp.Close(); err != nil {
		return 0, false, storeErr("write", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return 0, false, storeErr("rename", path, err)
	}
	renamed = true
	return fi.Size(), true, syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return storeErr("sync", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return storeErr("sync", dir, err)
	}
	return nil
}
