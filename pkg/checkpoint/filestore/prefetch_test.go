package filestore

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A prefetched session is used only when the files under the lock are the
// ones it decoded; otherwise LoadPrefetched is Load.
func TestLoadPrefetched(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "p")
	j := mustBegin(t, s, l, bigSession("p", 20))
	record(t, j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "task-00003"})

	same := func(t *testing.T, got *checkpoint.Session, err error) {
		t.Helper()
		want, werr := s.Load(bg, "p")
		if err != nil || werr != nil {
			t.Fatalf("LoadPrefetched: %v, Load: %v", err, werr)
		}
		if !reflect.DeepEqual(got.Clone(), want.Clone()) {
			t.Fatalf("LoadPrefetched differs from Load:\n%+v\n%+v", got.Team.Tasks[3], want.Team.Tasks[3])
		}
	}

	t.Run("unchanged", func(t *testing.T) {
		s.Prefetch("p")
		p := s.prefetched
		<-p.done
		if p.sess == nil {
			t.Fatal("nothing prefetched")
		}
		decoded := p.sess
		got, err := s.Load(bg, "p")
		if got != decoded {
			t.Error("the prefetched session was not used")
		}
		same(t, got, err)
	})
	t.Run("changed after the prefetch", func(t *testing.T) {
		s.Prefetch("p")
		p := s.prefetched
		<-p.done
		stale := p.sess
		record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "task-00003", Result: "new"})
		got, err := s.Load(bg, "p")
		if got == stale {
			t.Error("a stale prefetch was used")
		}
		same(t, got, err)
		if tk, _ := got.Task("task-00003"); tk.Result != "new" {
			t.Errorf("result %q, want the record written after the prefetch", tk.Result)
		}
	})
	t.Run("snapshot changed in place, same size", func(t *testing.T) {
		s.Prefetch("p")
		p := s.prefetched
		<-p.done
		was, err := os.ReadFile(s.Path("p"))
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Clone(was)
		i := bytes.Index(data, []byte("task-00003"))
		data[i] = 'T' // the checksum no longer matches: Load must say so
		if err := os.WriteFile(s.Path("p"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(s.Path("p"), was, 0o600)
		if got, err := s.Load(bg, "p"); !errors.As(err, new(*checkpoint.CorruptError)) {
			t.Errorf("Load of a changed snapshot: %v, %v; want a CorruptError, not the prefetch", got != nil, err)
		}
	})
	t.Run("another id, none, missing", func(t *testing.T) {
		s.Prefetch("other")
		got, err := s.Load(bg, "p")
		same(t, got, err)
		got, err = s.Load(bg, "p")
		same(t, got, err)
		s.Prefetch("missing")
		if _, err := s.Load(bg, "missing"); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("missing session: %v", err)
		}
		s.Prefetch("../x")
		if s.prefetched != nil && s.prefetched.id == "../x" {
			t.Error("a bad id is prefetched")
		}
	})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
