package checkpoint

import (
	"errors"
	"reflect"
	"testing"
)

// A prefetched session is used only when the files under the lock are the
// ones it decoded; otherwise LoadPrefetched is Load.
func TestLoadPrefetched(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "p")
	j := mustBegin(t, s, l, bigSession("p", 20))
	record(t, j, Record{Kind: TaskStarted, Task: "task-00003"})

	same := func(t *testing.T, got *Session, err error) {
		t.Helper()
		want, werr := s.Load("p")
		if err != nil || werr != nil {
			t.Fatalf("LoadPrefetched: %v, Load: %v", err, werr)
		}
		got.index, want.index = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("LoadPrefetched differs from Load:\n%+v\n%+v", got.Team.Tasks[3], want.Team.Tasks[3])
		}
	}

	t.Run("unchanged", func(t *testing.T) {
		p := PrefetchSession(s.Home(), "p")
		<-p.done
		if p.sess == nil {
			t.Fatal("nothing prefetched")
		}
		decoded := p.sess
		got, err := s.LoadPrefetched("p", p)
		if got != decoded {
			t.Error("the prefetched session was not used")
		}
		same(t, got, err)
	})
	t.Run("changed after the prefetch", func(t *testing.T) {
		p := PrefetchSession(s.Home(), "p")
		<-p.done
		stale := p.sess
		record(t, j, Record{Kind: TaskCompleted, Task: "task-00003", Result: "new"})
		got, err := s.LoadPrefetched("p", p)
		if got == stale {
			t.Error("a stale prefetch was used")
		}
		same(t, got, err)
		if tk, _ := got.Task("task-00003"); tk.Result != "new" {
			t.Errorf("result %q, want the record written after the prefetch", tk.Result)
		}
	})
	t.Run("another id, none, missing", func(t *testing.T) {
		got, err := s.LoadPrefetched("p", PrefetchSession(s.Home(), "other"))
		same(t, got, err)
		got, err = s.LoadPrefetched("p", nil)
		same(t, got, err)
		p := PrefetchSession(s.Home(), "missing")
		if _, err := s.LoadPrefetched("missing", p); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing session: %v", err)
		}
		if PrefetchSession(s.Home(), "../x") != nil || PrefetchSession("", "p") != nil {
			t.Error("a bad id or no home is prefetched")
		}
	})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
