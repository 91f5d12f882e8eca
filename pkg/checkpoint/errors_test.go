package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// A store error names the path once and says what to do about its cause;
// Retryable says whether the command is then run again (the command says
// how).
func TestStoreErrorAdvice(t *testing.T) {
	const p = "/h/sessions/s1.json"
	tests := []struct {
		name      string
		err       error
		want      string
		retryable bool
	}{
		{"full disk", &fs.PathError{Op: "write", Path: p, Err: syscall.ENOSPC},
			"cannot write " + p + ": no space left on device; the disk is full: free some space", true},
		// A read-only mount is no matter of owner or permissions.
		{"read-only", &fs.PathError{Op: "open", Path: p, Err: syscall.EROFS},
			"cannot write " + p + ": read-only file system; the file system there is mounted read-only: point the store (--store, $TEAMRUN_STORE or $TEAMRUN_HOME) at a writable folder, or mount it read-write", true},
		// A folder where a file goes is said as a special file is.
		{"a folder", &fs.PathError{Op: "open", Path: p, Err: syscall.EISDIR},
			"cannot write " + p + ": a folder, not a regular file; teamrun keeps only regular files there: move it out of the store (and find out who put it there)", false},
		{"permission", &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES},
			"cannot write " + p + ": permission denied; check the owner and permissions of the file and its folder (teamrun keeps them 0700/0600)", false},
		// Said once, as what it is, not as ELOOP's "too many levels of
		// symbolic links".
		{"symbolic link", &fs.PathError{Op: "open", Path: p, Err: syscall.ELOOP},
			"cannot write " + p + ": it is a symbolic link, and teamrun never writes through one: remove the link (and find out who made it)", false},
		{"disk", syscall.EIO,
			"cannot write " + p + ": input/output error; check the disk and the folder", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("saving: %w", NewStoreError("write", p, tt.err))
			if got := err.Error(); got != "saving: "+tt.want {
				t.Errorf("got  %s\nwant saving: %s", got, tt.want)
			}
			if strings.Count(err.Error(), p) != 1 {
				t.Errorf("%v names the path more than once", err)
			}
			if Retryable(err) != tt.retryable {
				t.Errorf("Retryable(%v) = %v", err, !tt.retryable)
			}
		})
	}
}

// retryableCause stands for what a store wraps in an UnfinishedError: the
// lost lock's own error, which says a retry fits (a run's).
type retryableCause struct{}

func (retryableCause) Error() string   { return "the connection holding the session's lock was lost" }
func (retryableCause) Retryable() bool { return true }

// A removal cut off midway says so, once; whether the command is done
// again is Retryable's, as for any store failure — except a clean-up
// (Leftover), whose leftover is removed by prune, not by doing the command
// again (its cause's Retryable notwithstanding); Own makes it prune's.
func TestUnfinishedErrorAdvice(t *testing.T) {
	cut := &UnfinishedError{Store: "PostgreSQL store pg", Op: "delete session s1", Cause: "lost", Err: retryableCause{}}
	if got, want := cut.Error(), "PostgreSQL store pg: delete session s1: lost; whether it was done is unknown: wait until the server answers again"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !Retryable(fmt.Errorf("pruning: %w", cut)) {
		t.Error("a removal cut off midway is not Retryable")
	}
	cleanup := &UnfinishedError{Store: "PostgreSQL store pg", Op: "remove session s1 and its lock", Cause: "lost",
		Leftover: "what is left of it is a lock with no session", Err: retryableCause{}}
	if got, want := cleanup.Error(), "PostgreSQL store pg: remove session s1 and its lock: lost; whether it was done is unknown: what is left of it is a lock with no session: `teamrun session prune` removes it once it is older than the cut-off"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if Retryable(cleanup) {
		t.Error("a clean-up cut off midway is Retryable: the command would be run again for what prune removes")
	}
	own := Own(fmt.Errorf("pruning: %w", cleanup))
	if !Retryable(own) || strings.Contains(own.Error(), "session prune") || !strings.Contains(own.Error(), "remove session s1 and its lock: lost; whether it was done is unknown: wait until") {
		t.Errorf("Own(clean-up) = %v, Retryable %v; want the removal prune's own, to do again", own, Retryable(own))
	}
	if other := fmt.Errorf("x"); Own(other) != other {
		t.Error("Own changed an error that is no UnfinishedError")
	}
}

// The commands the store's messages give to paste work for a session
// whose id starts with "-", which teamrun would otherwise read as a flag.
func TestMessagesCommandsPaste(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"corrupt", (&CorruptError{ID: "-x", Path: "/h/sessions/-x.json", Err: fmt.Errorf("bad")}).Error(), "`teamrun session delete -- -x`"},
		{"corrupt, plain id", (&CorruptError{ID: "s1", Path: "/h/sessions/s1.json", Err: fmt.Errorf("bad")}).Error(), "`teamrun session delete s1`"},
		{"unreadable in prune", unreadable("-x", fmt.Errorf("bad"), nil), "`teamrun session delete -- -x`"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, tt.want) {
			t.Errorf("%s: %s\ndoes not contain %s", tt.name, tt.got, tt.want)
		}
	}
}

// lazyWrap formats its message when printed, as the wrappers between a
// store's error and the command's end do (runner.StoreError).
type lazyWrap struct{ err error }

func (e lazyWrap) Error() string { return "cannot write the checkpoint: " + e.err.Error() }
func (e lazyWrap) Unwrap() error { return e.err }

// The commands a store's errors tell name the store the command line gave
// (NameStore), wherever the error sits in the tree it ends with; without
// --store they name none.
func TestNameStore(t *testing.T) {
	store := []string{"--store", "/srv/other"}
	corrupt := func() *CorruptError {
		return &CorruptError{ID: "s1", Path: "/srv/other/sessions/s1.json", Err: fmt.Errorf("bad")}
	}
	cleanup := func() *UnfinishedError {
		return &UnfinishedError{Store: "PostgreSQL store pg", Op: "remove session s1 and its lock", Cause: "lost", Leftover: "a lock is left"}
	}
	tests := []struct {
		name  string
		err   error
		words []string
		want  string
	}{
		{"corrupt", corrupt(), store, "`teamrun session delete s1 --store /srv/other`"},
		{"corrupt, no --store", corrupt(), nil, "`teamrun session delete s1`"},
		{"corrupt, wrapped", lazyWrap{corrupt()}, store, "`teamrun session delete s1 --store /srv/other`"},
		{"corrupt, joined", errors.Join(fmt.Errorf("first"), lazyWrap{corrupt()}), store, "`teamrun session delete s1 --store /srv/other`"},
		{"a clean-up cut short", cleanup(), store, "`teamrun session prune --store /srv/other` removes it"},
		{"a clean-up, as prune's own", Own(cleanup()), store, "wait until the server answers again"},
		{"unreadable in prune", errors.New(unreadable("s1", corrupt(), store)), nil,
			"delete the session with `teamrun session delete s1 --store /srv/other`): inspect it, then `teamrun session delete s1 --store /srv/other`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NameStore(tt.err, tt.words)
			if got := tt.err.Error(); !strings.HasSuffix(got, tt.want) && !strings.Contains(got, tt.want+" ") {
				t.Errorf("got  %s\nwant it to hold %s", got, tt.want)
			}
		})
	}
	NameStore(nil, store) // nothing to name: no panic
}
