package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/internal/shellcmd"
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
	// ErrNotRegular: where a store keeps a file there is something else
	// (a named pipe, a device, a folder), which teamrun never puts there.
	ErrNotRegular = regfile.ErrNotRegular
	// ErrBadLocation: the store's location (--store, TEAMRUN_STORE) is
	// malformed, a mistake of usage (the CLI exits 2): nothing was opened.
	ErrBadLocation = errors.New("bad session store location")
	// ErrClosed: a journal was handed records after its Close, a bug of
	// its caller (a run closes its journal last). Every store says it
	// with JournalClosed.
	ErrClosed = errors.New("Record after Close")
	// ErrMaybeWritten: a write failed after it was sent, and the store
	// cannot tell whether it was committed (the connection was cut before
	// the answer came, and the server could not be asked since): what it
	// carried may be in the session.
	ErrMaybeWritten = errors.New("the write may have been committed")
	// ErrLost: the run's lock is gone while it ran (PostgreSQL: its
	// connection was lost or another run took the session over; files:
	// its lock file was removed or replaced). It wraps ErrStore (the CLI
	// exits 5); the run never writes again.
	ErrLost = fmt.Errorf("%w: the run lost its session", ErrStore)
)

// JournalClosed is ErrClosed for the journal of session id.
func JournalClosed(id string) error {
	return fmt.Errorf("checkpoint: session %s: %w", id, ErrClosed)
}

// IDRule is the session id rule, as error messages state it.
const IDRule = "1 to 128 characters of A-Z a-z 0-9 . _ -, not starting with a dot"

// StoreNamer is an error whose message tells a teamrun command to paste
// about the store the error came from (delete a session there, list its
// sessions). NameStore gives that command the --store words of the
// command line that met the error (cmdline.Store; none when it named no
// store, and the same environment finds the same store again): without
// them, pasted, a `session delete` removed the session of the default
// store, not of the one the command was given.
type StoreNamer interface {
	NameStore(words []string)
}

// NameStore gives words to every StoreNamer in err's tree: the one place
// a command names its store in the commands its errors tell. A wrapper
// that formats its message when made (fmt.Errorf) keeps the words it
// found then, so such errors are wrapped by types that format when
// printed, or not at all, on their way to the command.
func NameStore(err error, words []string) {
	if n, ok := err.(StoreNamer); ok {
		n.NameStore(words)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		NameStore(u.Unwrap(), words)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			NameStore(e, words)
		}
	}
}

// CorruptError is a session file (or its journal) that cannot be decoded.
// Nothing ever overwrites or deletes it on its own.
type CorruptError struct {
	ID   string
	Path string
	Err  error
	// Store is the --store words of the delete command it tells (NameStore).
	Store []string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("session %s: %s is corrupt: %v; it was left untouched: restore it from a backup, or delete the session with `%s`",
		e.ID, e.Path, e.Err, shellcmd.Command("session delete", nil, []string{e.ID}, e.Store))
}

func (e *CorruptError) Unwrap() []error { return []error{e.Err, ErrStore} }

// NameStore is StoreNamer's.
func (e *CorruptError) NameStore(words []string) { e.Store = words }

// StoreError is an I/O failure on a store file, with what to do about it.
type StoreError struct {
	Op   string // read, write, create, sync, rename, remove
	Path string
	Err  error
	// Home marks the store's own folders, which teamrun makes where the
	// store is configured (~/.teamrun by default): when they cannot be
	// made, the fix is as often another place for the store (a container
	// whose $HOME is / and not its user's) as another owner.
	Home bool
}

func (e *StoreError) Error() string {
	advice, _ := e.advice()
	if fserr.Of(e.Err) == fserr.Link {
		// The advice says what it is: "it is a symbolic link, …".
		return fmt.Sprintf("cannot %s %s: %s", e.Op, e.Path, advice)
	}
	return fmt.Sprintf("cannot %s %s: %v; %s", e.Op, e.Path, e.Err, advice)
}

func (e *StoreError) Unwrap() []error { return []error{e.Err, ErrStore} }

// Retryable: the advice is a fix to make before the command is run again
// (Retryable).
func (e *StoreError) Retryable() bool {
	_, again := e.advice()
	return again
}

// LinkAdvice is what to do about a symbolic link where teamrun writes.
const LinkAdvice = "it is a symbolic link, and teamrun never writes through one: remove the link (and find out who made it)"

// DanglingLinkError is a symbolic link on the way to the store's folder
// that points at nothing: mkdir says only "file exists".
type DanglingLinkError struct{ Link, Target string }

func (e *DanglingLinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link to %s, a folder that does not exist", e.Link, e.Target)
}

// advice is what to do about e; again: then run the command again.
func (e *StoreError) advice() (advice string, again bool) {
	if _, ok := errors.AsType[*DanglingLinkError](e.Err); ok {
		return "create that folder, or point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) at one that exists", true
	}
	switch fserr.Of(e.Err) {
	case fserr.Full:
		return "the disk is full: free some space", true
	case fserr.Link:
		return LinkAdvice, false
	case fserr.NotRegular:
		return "teamrun keeps only regular files there: move it out of the store (and find out who put it there)", false
	case fserr.ReadOnly:
		// No owner or permission fixes a read-only mount.
		return "the file system there is mounted read-only: point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) at a writable folder, or mount it read-write", true
	case fserr.Permission:
		if e.Home {
			return "point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) at a folder this user can write, or fix the owner and permissions of the folder it is made in", false
		}
		return "check the owner and permissions of the file and its folder (teamrun keeps them 0700/0600)", false
	case fserr.NotDir:
		// TEAMRUN_HOME=/etc/passwd: no disk to check, no run to resume.
		return "a part of that path is a file, not a folder: point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) or the project at a folder", false
	}
	return "check the disk and the folder", true
}

// Retryable reports whether err's advice is a fix to make before doing
// again what failed ("free some space"). How to do it again is the
// command's to say, after the whole message: a run reruns with
// --continue, a list is listed again; a store cannot tell them apart.
func Retryable(err error) bool {
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// NewStoreError is StoreError for an operation on path, unwrapping the
// os error so the message names the path once.
func NewStoreError(op, path string, err error) error {
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	err = fserr.Bare(err)
	if fserr.Of(err) == fserr.Link {
		// Where the error is told without its advice (a cell of session
		// list), "too many levels of symbolic links" (ELOOP) said nothing.
		err = symlinkError{err}
	}
	if fserr.Of(err) == fserr.IsDir {
		// A folder where a file goes: said as the special files are, with
		// what to do, not "is a directory; check the disk".
		err = regfile.NotRegular(fs.ModeDir)
	}
	return &StoreError{Op: op, Path: path, Err: err}
}

// UnfinishedError is a removal (of a session, of a lock with no session)
// that its store's connection was cut from midway (pg_terminate_backend, a
// restart): whether it was done is unknown. Doing it again finishes it,
// and how is the command's to say, as for any store failure (Retryable):
// a delete is run again, a prune is. The one difference is Leftover.
type UnfinishedError struct {
	Store string // "PostgreSQL store <location>"
	Op    string // what was being removed: "delete session x"
	Cause string // why the connection went, with no secret in it
	// Leftover, when set, is what may be left, which `session prune`
	// removes, for a removal that was no command's purpose but a clean-up
	// after it (a run's or an import's Discard of a session it gave up):
	// doing the command again would not remove it, so it is not
	// Retryable. A command whose purpose the removal is (prune) drops it
	// (Own).
	Leftover string
	Err      error
	// Paste is the --store words of the prune command it tells
	// (NameStore).
	Paste []string
}

func (e *UnfinishedError) Error() string {
	what := "wait until the server answers again" // then the command's again
	if e.Leftover != "" {
		what = fmt.Sprintf("%s: `%s` removes it once it is older than the cut-off", e.Leftover, shellcmd.Command("session prune", nil, nil, e.Paste))
	}
	return fmt.Sprintf("%s: %s: %s; whether it was done is unknown: %s", e.Store, e.Op, e.Cause, what)
}

func (e *UnfinishedError) Unwrap() []error { return []error{e.Err, ErrStore} }

// NameStore is StoreNamer's.
func (e *UnfinishedError) NameStore(words []string) { e.Paste = words }

// Retryable: doing the command again finishes the removal, unless it was a
// clean-up (Leftover).
func (e *UnfinishedError) Retryable() bool { return e.Leftover == "" }

// Own is err with the clean-up of an UnfinishedError made the command's
// own purpose (prune removing a lock with no session through Discard):
// doing the command again finishes it. Any other error is returned as it
// is.
func Own(err error) error {
	var u *UnfinishedError
	if !errors.As(err, &u) || u.Leftover == "" {
		return err
	}
	own := *u
	own.Leftover = ""
	return &own
}

// symlinkError is an error of a symbolic link where teamrun keeps a file
// or folder, said as what it is.
type symlinkError struct{ err error }

func (symlinkError) Error() string   { return "a symbolic link" }
func (e symlinkError) Unwrap() error { return e.err }
