package filestore

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
)

// A large snapshot is prefetched outside the heap and unmapped as soon as
// it is decoded, before Load compares the files with it (their hash):
// the session decoded from it refers to none of it (it is the one Load
// decodes from the heap). Held until Load, it stayed in a restore's peak
// RSS beside the spec's parse.
func TestPrefetchOutsideHeap(t *testing.T) {
	s := newStore(t)
	var unmapped atomic.Int32
	s.testStep = func(step string) {
		if step == "prefetch unmapped" {
			unmapped.Add(1)
		}
	}
	l := mustLock(t, s, "big")
	mustBegin(t, s, l, bigSession("big", 2000))
	if fi, err := os.Stat(s.Path("big")); err != nil || fi.Size() < outsideHeapFrom {
		t.Fatalf("the snapshot is too small for the test: %v %v", fi, err)
	}
	s.Prefetch("big")
	p := s.prefetched
	<-p.done
	if runtime.GOOS == "linux" && unmapped.Swap(0) == 0 {
		t.Fatal("the prefetched snapshot is still mapped once decoded, or was read into the heap")
	}
	got, err := s.Load(bg, "big")
	if err != nil || got != p.sess {
		t.Fatalf("the prefetched session was not taken: %v", err)
	}
	want, err := s.Load(bg, "big") // nothing prefetched: read into the heap
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Clone(), want.Clone()) {
		t.Error("the session decoded from the unmapped snapshot differs from Load's")
	}

	// Closed while it still reads, or replaced by another Prefetch: the
	// read unmaps the snapshot all the same when it is over.
	for _, end := range []func(){func() { s.Close() }, func() { s.Prefetch("none") }} {
		s.Prefetch("big")
		p := s.prefetched
		end()
		<-p.done
		if runtime.GOOS == "linux" && unmapped.Swap(0) == 0 {
			t.Error("a prefetch no Load takes was left mapped")
		}
	}
}

// readOutsideHeap reads a file of the size it was told, and gives up on
// one that grew (then the file is read the usual way).
func TestReadOutsideHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no mapping of its own outside Linux")
	}
	content := bytes.Repeat([]byte("0123456789abcdef"), 200_000)
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		size int64
		ok   bool
	}{
		{"its size", int64(len(content)), true},
		{"grew since", int64(len(content)) - 10, false},
		{"shrank since", int64(len(content)) + 10, false},
		{"empty", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			data, release, ok := readOutsideHeap(f, tt.size)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			defer release()
			if !bytes.Equal(data, content) || cap(data) != len(content) {
				t.Errorf("read %d bytes (cap %d) that differ from the file's %d", len(data), cap(data), len(content))
			}
		})
	}
}
