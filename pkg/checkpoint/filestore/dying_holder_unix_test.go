//go:build unix

package filestore

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A lock whose note names a process that is gone, but whose flock the
// kernel has not dropped yet (a holder killed with kill -9 an instant
// ago, still exiting, as a crash loop's --continue meets it), is taken
// once it is dropped: not "held by another run" that names nobody.
func TestLockOfDyingHolder(t *testing.T) {
	s := newStore(t)
	// A pid that is gone: a process that ran and was reaped.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	f, err := os.OpenFile(s.lockPath("s1"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if _, err := f.WriteString(`{"pid":` + strconv.Itoa(gone.Process.Pid) + `,"host":"` + host + `"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	// The dying holder's descriptor closes while the new run looks: after
	// its first look at the note (~250 ms), as a forked task process that
	// had not exec'd yet closes its copy in its own time.
	time.AfterFunc(600*time.Millisecond, func() { f.Close() })
	l, err := s.Lock(context.Background(), "s1", 0)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	l.Release()
}
