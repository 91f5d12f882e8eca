package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// BlobThreshold is the size over which a result is stored out of line, as
// a blob: once, content-addressed and checksummed, the snapshot and the
// journal record carrying only its reference. Below it a result is kept in
// the session's JSON as before.
const BlobThreshold = 1 << 20

// blobKey marks a result stored out of line: {"$blob": "sha256:<hex>",
// "size": N}. A user's mapping of that shape is escaped like every other
// ($map), so none reads as a reference.
const blobKey = "$blob"

// Blob is the reference to a result stored out of line: the sha256 of its
// bytes (its name in the store) and its size.
type Blob struct {
	Digest string `json:"digest"` // "sha256:<64 hex>", as Digest writes it
	Size   int64  `json:"size"`
}

// Hex is the blob's name in a store: the hex of its sha256.
func (b Blob) Hex() string { return strings.TrimPrefix(b.Digest, "sha256:") }

// Valid says whether b is a reference a store can hold.
func (b Blob) Valid() error {
	h, ok := strings.CutPrefix(b.Digest, "sha256:")
	if !ok || len(h) != 2*sha256.Size || strings.ToLower(h) != h {
		return fmt.Errorf("blob reference %q is not sha256:<64 lower-case hex>", b.Digest)
	}
	if _, err := hex.DecodeString(h); err != nil {
		return fmt.Errorf("blob reference %q is not sha256:<64 lower-case hex>", b.Digest)
	}
	if b.Size < 0 {
		return fmt.Errorf("blob %s has a negative size", b.Digest)
	}
	return nil
}

// BlobStore is what a backend that keeps blobs offers; it is optional (a
// backend without it keeps every result in line). Consumers define the
// part they use.
type BlobStore interface {
	// PutBlob stores what r yields as a blob of session id and returns
	// its reference once it is durable: a record may name it only then.
	// Storing a blob the session has is harmless.
	PutBlob(ctx context.Context, id string, r io.Reader) (Blob, error)
	// OpenBlob reads a blob of session id. The reader checks the bytes
	// against the reference as they come: damage is a *CorruptError
	// naming where the blob is, at the latest when the end is read.
	OpenBlob(ctx context.Context, id string, b Blob) (io.ReadCloser, error)
}

// Blobs are the blobs s refers to, by digest: what a store keeps for it.
func (s *Session) Blobs() map[string]Blob {
	out := map[string]Blob{}
	for _, t := range s.Team.Tasks {
		for _, b := range []*Blob{t.Blob, t.PreviousOutcome().Blob} {
			if b != nil {
				out[b.Digest] = *b
			}
		}
	}
	return out
}

// formatOf is the format sess is written in: 3 when it refers to a blob
// (an older teamrun then says it is newer, rather than damaged), else 2.
func formatOf(s *Session) int {
	for _, t := range s.Team.Tasks {
		if t.Blob != nil || t.PreviousOutcome().Blob != nil {
			return 3
		}
	}
	return 2
}

// BlobWriter hashes and counts what is written through it, for a store
// that copies a blob while it names it.
type BlobWriter struct {
	h hash.Hash
	n int64
}

// NewBlobWriter starts a blob.
func NewBlobWriter() *BlobWriter { return &BlobWriter{h: sha256.New()} }

func (w *BlobWriter) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.n += int64(len(p))
	return len(p), nil
}

// Blob is the reference of what was written.
func (w *BlobWriter) Blob() Blob {
	return Blob{Digest: "sha256:" + hex.EncodeToString(w.h.Sum(nil)), Size: w.n}
}

// VerifyBlob wraps r, the stored bytes of blob b of session id (where names
// the file or row), so that a reader gets an error instead of the end when
// they do not match b: more or fewer bytes, or another sha256.
func VerifyBlob(r io.Reader, b Blob, id, where string) io.Reader {
	return &verifier{r: r, want: b, w: NewBlobWriter(), id: id, where: where}
}

type verifier struct {
	r         io.Reader
	want      Blob
	w         *BlobWriter
	id, where string
	err       error
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.w.Write(p[:n])
	if v.w.n > v.want.Size {
		v.err = v.corrupt(fmt.Errorf("it holds more than the %d bytes recorded", v.want.Size))
		return 0, v.err
	}
	if errors.Is(err, io.EOF) {
		got := v.w.Blob()
		switch {
		case got.Size != v.want.Size:
			v.err = v.corrupt(fmt.Errorf("it holds %d bytes, %d recorded", got.Size, v.want.Size))
		case got.Digest != v.want.Digest:
			v.err = v.corrupt(fmt.Errorf("its checksum does not match its name (%s): it was changed or damaged", got.Digest))
		default:
			v.err = io.EOF
		}
		return n, v.err
	}
	if err != nil {
		v.err = err
	}
	return n, err
}

func (v *verifier) corrupt(err error) error {
	return &CorruptError{ID: v.id, Path: v.where, Err: fmt.Errorf("a result stored out of line: %w", err)}
}

// Preview is the start of a result for a listing: at most n bytes of it
// (of the blob when it is stored out of line) and its size.
func Preview(ctx context.Context, store BlobStore, id string, t TaskRecord, n int) (string, int64, error) {
	if t.Blob == nil {
		if len(t.Result) > n {
			return t.Result[:n], int64(len(t.Result)), nil
		}
		return t.Result, int64(len(t.Result)), nil
	}
	if store == nil {
		return "", t.Blob.Size, fmt.Errorf("session %s: task %s's result is stored out of line (%s), which this store cannot read", id, t.Name, t.Blob.Digest)
	}
	rc, err := store.OpenBlob(ctx, id, *t.Blob)
	if err != nil {
		return "", t.Blob.Size, err
	}
	defer rc.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", t.Blob.Size, err
	}
	// The rest is read too, so that a damaged blob is never shown as good.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return "", t.Blob.Size, err
	}
	return string(head[:k]), t.Blob.Size, nil
}

// result is a task's result as stored: text in line, or a reference to a
// blob.
type result struct {
	text text
	blob *Blob
}

type blobWire struct {
	Digest string `json:"$blob"`
	Size   int64  `json:"size"`
}

func (r result) MarshalJSON() ([]byte, error) {
	if r.blob != nil {
		return json.Marshal(blobWire{Digest: r.blob.Digest, Size: r.blob.Size})
	}
	return r.text.MarshalJSON()
}

func (r *result) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' && bytes.Contains(b, []byte(`"`+blobKey+`"`)) {
		var w blobWire
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&w); err != nil {
			return fmt.Errorf("expected a result or {%q: \"sha256:...\", \"size\": N}: %w", blobKey, err)
		}
		bl := Blob(w)
		if err := bl.Valid(); err != nil {
			return err
		}
		r.blob = &bl
		return nil
	}
	return r.text.UnmarshalJSON(b)
}

// Outcome is a task's result as compared: its text, or the reference of
// its blob, or that it was skipped (a route or condition chose another
// way). A result has one form (in line up to BlobThreshold, a blob over
// it), so equal results are equal Outcomes.
type Outcome struct {
	Text    string
	Blob    *Blob
	Skipped bool
}

// Same says whether o and p are byte-identical results. A text and a blob
// compare by sha256 (a result taken in line by a store without blobs, or
// held in memory by the run that stored it).
func (o Outcome) Same(p Outcome) bool {
	switch {
	case o.Skipped || p.Skipped:
		return o.Skipped == p.Skipped
	case o.Blob != nil && p.Blob != nil:
		return *o.Blob == *p.Blob
	case o.Blob != nil:
		return o.Blob.Size == int64(len(p.Text)) && o.Blob.Digest == Digest(p.Text)
	case p.Blob != nil:
		return p.Same(o)
	}
	return o.Text == p.Text
}

// Outcome is t's result as compared.
func (t TaskRecord) Outcome() Outcome {
	if t.Status == StatusSkipped {
		return Outcome{Skipped: true}
	}
	return Outcome{Text: t.Result, Blob: t.Blob}
}

// InlineBlobs puts every result of s stored out of line back in line,
// read (and checked) from bs: a session as one self-contained document
// (session export).
func InlineBlobs(ctx context.Context, bs BlobStore, s *Session) error {
	for i := range s.Team.Tasks {
		t := &s.Team.Tasks[i]
		prev := t.PreviousOutcome()
		for _, f := range []struct {
			text *string
			blob **Blob
		}{{&t.Result, &t.Blob}, {&prev.Text, &prev.Blob}} {
			if *f.blob == nil {
				continue
			}
			if bs == nil {
				return fmt.Errorf("%w: session %s holds results stored out of line, which this store cannot read", ErrStore, s.ID)
			}
			text, err := ReadBlob(ctx, bs, s.ID, **f.blob)
			if err != nil {
				return err
			}
			*f.text, *f.blob = text, nil
		}
		t.Previous = previous(prev.Text, prev.Blob, t.previousKey()) // a copy may share the one it had
	}
	return nil
}

// OutlineBlobs stores every result of s over BlobThreshold out of line in
// bs, durable before s names it (session import). bs nil leaves s as it is.
func OutlineBlobs(ctx context.Context, bs BlobStore, s *Session) error {
	if bs == nil {
		return nil
	}
	for i := range s.Team.Tasks {
		t := &s.Team.Tasks[i]
		prev := t.PreviousOutcome()
		for _, f := range []struct {
			text *string
			blob **Blob
		}{{&t.Result, &t.Blob}, {&prev.Text, &prev.Blob}} {
			if *f.blob != nil || len(*f.text) <= BlobThreshold {
				continue
			}
			b, err := bs.PutBlob(ctx, s.ID, strings.NewReader(*f.text))
			if err != nil {
				return err
			}
			*f.text, *f.blob = "", &b
		}
		t.Previous = previous(prev.Text, prev.Blob, t.previousKey()) // a copy may share the one it had
	}
	return nil
}

// ReadBlob is blob b of session id whole, checked.
func ReadBlob(ctx context.Context, bs BlobStore, id string, b Blob) (string, error) {
	rc, err := bs.OpenBlob(ctx, id, b)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	var sb strings.Builder
	sb.Grow(int(b.Size))
	if _, err := io.Copy(&sb, rc); err != nil {
		return "", err
	}
	return sb.String(), nil
}
