package runner

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// blobStore is the part of a store that keeps results out of line
// (checkpoint.BlobStore); a store without it keeps every result in line.
type blobStore interface {
	PutBlob(ctx context.Context, id string, r io.Reader) (checkpoint.Blob, error)
	OpenBlob(ctx context.Context, id string, b checkpoint.Blob) (io.ReadCloser, error)
}

// BlobOpener reads a result stored out of line, checked as it is read.
type BlobOpener func(ctx context.Context, b checkpoint.Blob) (io.ReadCloser, error)

// blobOpener is the opener of session id's blobs in bs; nil when bs keeps
// none.
func blobOpener(bs blobStore, id string) BlobOpener {
	if bs == nil {
		return nil
	}
	return func(ctx context.Context, b checkpoint.Blob) (io.ReadCloser, error) { return bs.OpenBlob(ctx, id, b) }
}

// withBlob is o holding the result stored out of line as b.
func (o Output) withBlob(b *checkpoint.Blob, open BlobOpener) Output {
	o.Blob, o.open = b, open
	if b != nil {
		o.Raw = ""
	}
	return o
}

// blobTexts are the results stored out of line that a run has read whole
// (checked as they were read: to the end), by reference: the restore's
// check of the results the engine reads (the refuser), the check that
// every restored blob reads back (verifyBlobs) and the engine's take-over
// share one read of each. The engine keeps these texts anyway (its
// schedule holds every result it reads). Output does not carry them: a
// 10,000-task run holds one Output a task.
type blobTexts map[checkpoint.Blob]string

func (o Output) outcome() checkpoint.Outcome { return checkpoint.Outcome{Text: o.Raw, Blob: o.Blob} }

// Size is the result's size in bytes.
func (o Output) Size() int64 {
	if o.Blob != nil {
		return o.Blob.Size
	}
	return int64(len(o.Raw))
}

// Open reads the result, streamed from its blob when it is stored out of
// line: a consumer that copies it (a context file, output_file, stdout)
// never holds it whole.
func (o Output) Open(ctx context.Context) (io.ReadCloser, error) {
	if o.Blob == nil {
		return io.NopCloser(strings.NewReader(o.Raw)), nil
	}
	if o.open == nil {
		return nil, fmt.Errorf("a result stored out of line (%s) in a store that cannot read it", o.Blob.Digest)
	}
	return o.open(ctx, *o.Blob)
}

// Text is the whole result in memory: for the few consumers that read it
// (an LLM's prompt, output_schema, condition, output_variable, foreach).
func (o Output) Text(ctx context.Context) (string, error) {
	if o.Blob == nil {
		return o.Raw, nil
	}
	rc, err := o.Open(ctx)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	var b strings.Builder
	b.Grow(int(o.Blob.Size))
	if _, err := io.Copy(&b, rc); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Verify reads a result stored out of line to its end, so that a damaged
// blob is found before its task counts as restored.
func (o Output) Verify(ctx context.Context) error {
	if o.Blob == nil {
		return nil
	}
	rc, err := o.Open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// readsResult says whether the engine itself reads task t's result (its
// schema, its routes, its output_variable, a repeat's until text): only
// then is a result stored out of line read into memory.
func readsResult(t *spec.Task) bool {
	return t.OutputSchema() != nil || len(t.Condition()) > 0 || t.OutputVariable != "" || t.Expanded().Until != ""
}

// resultText is the text of out the engine reads for task t: "" when it
// reads none of a result stored out of line.
func resultText(ctx context.Context, t *spec.Task, out Output) (string, error) {
	if out.Blob == nil || !readsResult(t) {
		return out.Raw, nil
	}
	return out.Text(ctx)
}

// readResult is resultText read once: a blob's text texts has is not
// read again, and one read is kept there (texts nil: none kept).
func readResult(ctx context.Context, t *spec.Task, out Output, texts blobTexts) (string, error) {
	if out.Blob == nil || !readsResult(t) {
		return out.Raw, nil
	}
	if text, ok := texts[*out.Blob]; ok {
		return text, nil
	}
	text, err := out.Text(ctx)
	if err == nil && texts != nil {
		texts[*out.Blob] = text
	}
	return text, err
}

// blobsOf is store's blob part, nil when it keeps none.
func blobsOf(store checkpoint.Backend) blobStore {
	bs, _ := store.(blobStore)
	return bs
}

// verifyBlobs reads to the end every blob a continuation of sess takes
// over: the results of its completed tasks and of those held for the early
// cut-off. The first that does not read back as written is the error. One
// read already (texts) is not read again; one the engine reads as text
// (readsResult) is kept there for it.
func verifyBlobs(ctx context.Context, bs blobStore, team *spec.Team, sess *checkpoint.Session, r *checkpoint.Restored, texts blobTexts) error {
	type ref struct {
		task string
		blob checkpoint.Blob
	}
	var refs []ref
	for _, t := range sess.Team.Tasks {
		if t.Status == checkpoint.StatusCompleted && t.Blob != nil {
			refs = append(refs, ref{t.Name, *t.Blob})
		}
	}
	if r != nil {
		for n, t := range r.Held {
			if t.Blob != nil {
				refs = append(refs, ref{n, *t.Blob})
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	if bs == nil {
		return fmt.Errorf("%w: session %s holds results stored out of line, which this store cannot read", checkpoint.ErrStore, sess.ID)
	}
	open := blobOpener(bs, sess.ID)
	for _, f := range refs {
		if _, read := texts[f.blob]; read {
			continue
		}
		out := Output{}.withBlob(&f.blob, open)
		if k := team.TaskIndex(f.task); k >= 0 && readsResult(team.Tasks[k]) {
			if _, err := readResult(ctx, team.Tasks[k], out, texts); err != nil {
				return err
			}
			continue
		}
		if err := out.Verify(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlobs prepares sess for a dry run (plan) as a run would read it:
// every result stored out of line of a completed task is read to its end
// (a damaged one is the error run would stop with), and those the engine
// reads as text (readsResult) are put in line, so that routing and
// output_schema decide as in a run.
func ReadBlobs(ctx context.Context, store checkpoint.Backend, team *spec.Team, sess *checkpoint.Session) error {
	open := blobOpener(blobsOf(store), sess.ID)
	for i := range sess.Team.Tasks {
		t := &sess.Team.Tasks[i]
		if t.Blob == nil || t.Status != checkpoint.StatusCompleted {
			continue
		}
		if open == nil {
			return fmt.Errorf("%w: session %s holds results stored out of line, which this store cannot read", checkpoint.ErrStore, sess.ID)
		}
		out := Output{}.withBlob(t.Blob, open)
		if k := team.TaskIndex(t.Name); k >= 0 && readsResult(team.Tasks[k]) {
			text, err := out.Text(ctx)
			if err != nil {
				return err
			}
			t.Result, t.Blob = text, nil
			continue
		}
		if err := out.Verify(ctx); err != nil {
			return err
		}
	}
	return nil
}
