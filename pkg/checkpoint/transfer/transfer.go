// Package transfer moves a session between stores as one JSON document:
// the snapshot every backend stores (checkpoint.EncodeSession), with every
// acknowledged transition folded in. Any backend exports; any imports.
package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Export is session id of b as one JSON document.
func Export(ctx context.Context, b checkpoint.Backend, id string) ([]byte, error) {
	sess, err := b.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	// Results stored out of line travel in the document: it is the whole
	// session, whatever store reads it.
	bs, _ := b.(checkpoint.BlobStore)
	if err := checkpoint.InlineBlobs(ctx, bs, sess); err != nil {
		return nil, err
	}
	return checkpoint.EncodeSession(sess)
}

// Import stores the session in data (what Export wrote; where names it in
// errors) in b under its own id, and returns that id. It never replaces a
// session b has (checkpoint.ErrExists), and refuses while a run holds the
// id (a *checkpoint.HeldError).
func Import(ctx context.Context, b checkpoint.Backend, where string, data []byte) (string, error) {
	var head struct {
		ID string `json:"session_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&head)
	var syntax *json.SyntaxError
	object := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
	switch {
	case object && (errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syntax)):
		what := "it ends before its JSON does"
		if syntax != nil {
			what = fmt.Sprintf("its JSON breaks off at byte %d", syntax.Offset)
		}
		return "", &DocumentError{fmt.Errorf("%s is damaged: %s (cut short, or edited); nothing was imported: export the session again from the store that has it (teamrun session export ID -o FILE), or import an intact copy", where, what)}
	case err != nil || head.ID == "":
		return "", &DocumentError{fmt.Errorf("%s is not a session that teamrun session export wrote (no session_id)", where)}
	}
	if err := checkpoint.ValidateID(head.ID); err != nil {
		return "", &DocumentError{fmt.Errorf("%s: session_id: %w", where, err)}
	}
	sess, err := checkpoint.DecodeSession(head.ID, where, data)
	var ce *checkpoint.CorruptError
	if errors.As(err, &ce) {
		// A store's advice (delete the session) is wrong here: the
		// document is damaged, and this store has no such session.
		return "", &DocumentError{fmt.Errorf("%s is damaged: %v; nothing was imported: export session %s again from the store that has it (%s), or import an intact copy", where, ce.Err, head.ID, shellcmd.Command("session export", nil, []string{head.ID}, []string{"-o", "FILE"}))}
	}
	if err != nil {
		return "", &DocumentError{err}
	}
	for _, t := range sess.Team.Tasks {
		if t.Blob != nil || t.PreviousOutcome().Blob != nil {
			return "", &DocumentError{fmt.Errorf("%s: task %s refers to a result stored out of line in another store; export the session with teamrun session export, which puts it in the document", where, t.Name)}
		}
	}
	l, err := b.Lock(ctx, sess.ID, 0)
	if err != nil {
		return "", err
	}
	defer l.Release()
	// Exists before the blobs: they go beside a session only when it is
	// imported.
	if ok, err := b.Exists(ctx, sess.ID); err != nil {
		return "", err
	} else if ok {
		return "", &ExistsError{ID: sess.ID, Location: b.Location()}
	}
	bs, _ := b.(checkpoint.BlobStore)
	if err := checkpoint.OutlineBlobs(ctx, bs, sess); err != nil {
		return "", discard(ctx, b, l, err)
	}
	// Not loaded from b: Begin refuses to replace a session b already has.
	sess.Epoch, sess.FoldedEpoch = "", ""
	j, err := b.Begin(ctx, l, sess)
	if err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			// Not discarded: Discard would remove the session there, and
			// the blobs stored may be its own. Exists refuses what Begin
			// would take for a session (a link there, say), so only a
			// session made by no teamrun run since then gets here.
			return "", &ExistsError{ID: sess.ID, Location: b.Location()}
		}
		return "", discard(ctx, b, l, err)
	}
	if err := j.Close(); err != nil {
		return "", err
	}
	return sess.ID, nil
}

// discard removes, under the import's lock l, the results the import
// stored out of line before it failed with err: with no session to name
// them nothing would list or remove them. A lock lost with its connection
// cannot remove them; then its trace stays (a lock with no session, as a
// killed import leaves), and session prune removes both: the lost lock's
// error is err again, not worth a second telling.
func discard(ctx context.Context, b checkpoint.Backend, l checkpoint.Lock, err error) error {
	if derr := b.Discard(context.WithoutCancel(ctx), l); derr != nil && !errors.Is(derr, err) {
		return errors.Join(err, &removingError{derr})
	}
	return err
}

// removingError is what the import's clean-up (discard) met. Its message
// is made when printed, so the prune it may tell names the store the
// command was given (checkpoint.NameStore).
type removingError struct{ err error }

func (e *removingError) Error() string { return "removing what the import stored: " + e.err.Error() }
func (e *removingError) Unwrap() error { return e.err }

// DocumentError: the document given to Import is not a readable session
// (the store was not touched).
type DocumentError struct{ Err error }

func (e *DocumentError) Error() string { return e.Err.Error() }
func (e *DocumentError) Unwrap() error { return e.Err }

// ExistsError: the store at Location already has session ID, which an
// import never replaces (checkpoint.ErrExists).
type ExistsError struct {
	ID       string
	Location string
	// Store is the --store words of the delete command it tells
	// (checkpoint.NameStore): pasted without them, it deleted the session
	// from the default store instead.
	Store []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%v: session %s is already in %s; delete it there first (%s) to replace it",
		checkpoint.ErrExists, e.ID, e.Location, shellcmd.Command("session delete", nil, []string{e.ID}, e.Store))
}

func (e *ExistsError) Unwrap() error { return checkpoint.ErrExists }

// NameStore is checkpoint.StoreNamer's.
func (e *ExistsError) NameStore(words []string) { e.Store = words }
