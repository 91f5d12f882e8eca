package filestore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
)

// A log that a full disk cuts is not kept, not even its part: `session
// logs` read the part as all the attempt wrote (an empty stdout, a stderr
// cut at 90112 of 150000 bytes), and the README says such a log is not
// written. The write says why; no later write starts the file again; the
// space it took is given back; a log that fits is kept.
func TestAttemptLogOnFullDisk(t *testing.T) {
	disk := testenv.SmallDisk(t, "64k")
	s, err := Open(disk)
	if err != nil {
		t.Fatal(err)
	}
	l := mustLock(t, s, "s1")

	kept := s.AttemptLog(bg, l, "a", 1, "stdout")
	if _, err := io.WriteString(kept, "fine\n"); err != nil {
		t.Fatal(err)
	}
	cut := s.AttemptLog(bg, l, "a", 1, "stderr")
	chunk := strings.Repeat("e", 4096)
	var werr error
	for i := 0; i < 64 && werr == nil; i++ { // 256 KiB: more than the disk
		_, werr = io.WriteString(cut, chunk)
	}
	if werr == nil || !strings.Contains(werr.Error(), "no space left on device") || !strings.Contains(werr.Error(), "the disk is full") ||
		!strings.Contains(werr.Error(), s.logPath("s1", "a", 1, "stderr")) {
		t.Fatalf("write error %v, want one naming the log and saying the disk is full", werr)
	}
	if _, err := io.WriteString(cut, "more"); err == nil {
		t.Error("a write after the failed one was taken")
	}
	if err := cut.Close(); err != nil {
		t.Errorf("close after the failed write: %v", err)
	}
	if err := kept.Close(); err != nil {
		t.Fatalf("the log that fits: %v", err)
	}
	if _, err := os.Lstat(s.logPath("s1", "a", 1, "stderr")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cut log is there: %v", err)
	}
	if _, err := s.ReadLog(bg, "s1", "a", 1, "stderr"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLog of the cut log: %v, want nothing kept", err)
	}
	if b, err := s.ReadLog(bg, "s1", "a", 1, "stdout"); err != nil || string(b) != "fine\n" {
		t.Errorf("the log that fit: %q, %v", b, err)
	}
	// Its space is free again.
	again := s.AttemptLog(bg, l, "a", 2, "stderr")
	if _, err := io.WriteString(again, strings.Repeat(chunk, 4)); err != nil {
		t.Errorf("a log of 16 KiB after the cut one was removed: %v", err)
	}
	again.Close()
}
