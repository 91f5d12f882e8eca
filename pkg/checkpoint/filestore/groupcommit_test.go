package filestore

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Records that arrive while a sync is in flight share the next one, and
// none of them is acknowledged before that sync returned.
func TestGroupCommit(t *testing.T) {
	const n = 8
	s := newStore(t)
	var names []taskSpec
	for i := range n {
		names = append(names, taskSpec{name: fmt.Sprintf("t%d", i)})
	}
	ds := defs(names...)
	l := mustLock(t, s, "gc")
	j := mustBegin(t, s, l, sessionFor("gc", ds))

	var mu sync.Mutex
	syncs, synced := 0, 0 // syncs begun, syncs returned
	hold := make(chan struct{})
	s.datasync = func(f *os.File) error {
		mu.Lock()
		syncs++
		first := syncs == 1
		mu.Unlock()
		if first {
			<-hold // the first sync stays in flight until the rest queued
		}
		err := fdatasync(f)
		mu.Lock()
		synced++
		mu.Unlock()
		return err
	}
	acked := make(chan int, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	record := func(i int) {
		defer wg.Done()
		err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: ds[i].Name})
		mu.Lock()
		done := synced
		mu.Unlock()
		if err != nil {
			errs <- err
			return
		}
		acked <- done
	}
	wg.Add(1)
	go record(0)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return syncs == 1 })
	for i := 1; i < n; i++ {
		wg.Add(1)
		go record(i)
	}
	waitFor(t, func() bool { j.Mu.Lock(); defer j.Mu.Unlock(); return j.commit.Queued() == n-1 })
	close(hold)
	wg.Wait()
	close(errs)
	close(acked)
	for err := range errs {
		t.Fatal(err)
	}
	for done := range acked {
		if done == 0 {
			t.Error("a record was acknowledged before any sync returned")
		}
	}
	if syncs != 2 {
		t.Fatalf("%d records took %d syncs; want 2 (one in flight, one for the %d that queued)", n, syncs, n-1)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Load(bg, "gc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if tk, _ := sess.Task(d.Name); tk.Status != checkpoint.StatusRunning {
			t.Errorf("%s: %s", d.Name, tk.Status)
		}
	}
}

func sessionFor(id string, ds []spec.TaskDef) *checkpoint.Session {
	return checkpoint.NewSession(id, "/p/agents.yaml", "team", spec.Sequential, ds, fp(ds), t0)
}

// waitFor polls cond: the goroutines it waits for block on channels, so
// there is nothing to be told by; it gives up after a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 60000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never held")
}
