package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// testBlobs: a result stored out of line comes back byte for byte through
// its reference, survives the journal and the snapshot, is removed with
// the session and when no task names it, and a damaged one is a
// *CorruptError, never good bytes.
func testBlobs(t *testing.T, h Harness) {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	bs, ok := s.(checkpoint.BlobStore)
	if !ok {
		t.Skipf("%T keeps no blobs", s)
	}
	big := strings.Repeat("0123456789abcdef", (checkpoint.BlobThreshold+7)/16) + "\xff tail"
	ds := defs(2)
	l := lock(t, s, "bl")
	j := begin(t, s, l, newSession("bl", ds))
	b, err := bs.PutBlob(bg, "bl", strings.NewReader(big))
	if err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	if want := checkpoint.Digest(big); b.Digest != want || b.Size != int64(len(big)) {
		t.Fatalf("PutBlob = %+v, want %s of %d bytes", b, want, len(big))
	}
	again, err := bs.PutBlob(bg, "bl", strings.NewReader(big))
	if err != nil || again != b {
		t.Fatalf("the same content again: %+v, %v; want %+v", again, err, b)
	}
	orphan, err := bs.PutBlob(bg, "bl", strings.NewReader(big+"x"))
	if err != nil {
		t.Fatal(err)
	}
	record(t, j,
		checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t00"},
		checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t00", Blob: &b},
	)
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t01", Result: "x", Blob: &b}); err == nil {
		t.Error("a record with a result and a blob was accepted")
	}
	// In the journal, then folded into the snapshot.
	for _, when := range []string{"journal", "snapshot"} {
		got := load(t, s, "bl")
		tk, _ := got.Task("t00")
		if tk.Status != checkpoint.StatusCompleted || tk.Result != "" || tk.Blob == nil || *tk.Blob != b {
			t.Fatalf("%s: t00 = status %s, result %q, blob %+v; want completed by reference %+v", when, tk.Status, tk.Result, tk.Blob, b)
		}
		if n := len(tk.History); n == 0 || tk.History[n-1].Digest != b.Digest {
			t.Errorf("%s: history %+v, want the blob's digest", when, tk.History)
		}
		if got := readBlob(t, bs, "bl", b); got != big {
			t.Fatalf("%s: blob read back differs (%d bytes, want %d)", when, len(got), len(big))
		}
		if when == "journal" {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A new run of the session: the blob no task names is gone, the one
	// t00 names stays.
	old := load(t, s, "bl")
	r := checkpoint.Restore(old, ds, spec.FingerprintOf(ds), checkpoint.ReuseStrict)
	j = begin(t, s, l, checkpoint.Continue(old, r, spec.Sequential, ds, spec.FingerprintOf(ds), time.Now()))
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if rc, err := bs.OpenBlob(bg, "bl", orphan); err == nil {
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err == nil {
			t.Error("a blob no record names outlived the next run's Begin")
		}
	}
	if got := readBlob(t, bs, "bl", b); got != big {
		t.Fatal("the blob of a restored task was removed")
	}
	// Damage is found, never read as good.
	if h.DamageBlob != nil {
		h.DamageBlob(t, s, "bl", b)
		rc, err := bs.OpenBlob(bg, "bl", b)
		if err == nil {
			var buf bytes.Buffer
			_, err = io.Copy(&buf, rc)
			rc.Close()
		}
		var ce *checkpoint.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, checkpoint.ErrStore) {
			t.Fatalf("a damaged blob read: %v, want a *CorruptError", err)
		}
	}
	l.Release()
	if err := s.Delete(bg, "bl"); err != nil {
		t.Fatal(err)
	}
	if rc, err := bs.OpenBlob(bg, "bl", b); err == nil {
		rc.Close()
		t.Error("a deleted session's blob is still there")
	}
}

// testBlobsAtOnce: tasks of one session that end with the same large
// result store it at the same moment; a blob is named by its content, so
// each gets that one blob, and none fails for another being written.
func testBlobsAtOnce(t *testing.T, h Harness) {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	bs, ok := s.(checkpoint.BlobStore)
	if !ok {
		t.Skipf("%T keeps no blobs", s)
	}
	const writers = 4
	for round := range 5 {
		big := strings.Repeat(fmt.Sprintf("round %d ", round), checkpoint.BlobThreshold/8+1)
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			got   [writers]checkpoint.Blob
			errs  [writers]error
		)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = bs.PutBlob(bg, "same", strings.NewReader(big))
			}()
		}
		close(start)
		wg.Wait()
		want := checkpoint.Digest(big)
		for i := range writers {
			if errs[i] != nil || got[i].Digest != want {
				t.Fatalf("round %d, writer %d of %d storing the same content at once: %+v, %v; want blob %s", round, i, writers, got[i], errs[i], want)
			}
		}
		if back := readBlob(t, bs, "same", got[0]); back != big {
			t.Fatalf("round %d: read back %d bytes, want %d", round, len(back), len(big))
		}
	}
}

func readBlob(t *testing.T, bs checkpoint.BlobStore, id string, b checkpoint.Blob) string {
	t.Helper()
	rc, err := bs.OpenBlob(bg, id, b)
	if err != nil {
		t.Fatalf("OpenBlob: %v", err)
	}
	defer rc.Close()
	var buf strings.Builder
	if _, err := io.Copy(&buf, rc); err != nil {
		t.Fatalf("reading blob %s: %v", b.Digest, err)
	}
	return buf.String()
}
