package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// crashImage copies the store's files as they are on disk now into a new
// store: what a SIGKILL at this instant leaves behind.
func crashImage(t *testing.T, s *Store) *Store {
	t.Helper()
	img := newStore(t)
	if err := img.makeDir(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(img.dir, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

// waitCompacted waits until no compaction is under way.
func waitCompacted(j *FileJournal) {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	for j.compacting {
		j.commit.Wait()
	}
}

// snapshotHead is the epoch members of a session file.
func snapshotHead(t *testing.T, path string) (epoch, folded string, records int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Epoch   string `json:"journal_epoch"`
		Folded  string `json:"folded_epoch"`
		Records int    `json:"folded_records"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	return h.Epoch, h.Folded, h.Records
}

// journalHead is a journal file's epoch and its number of records.
func journalHead(t *testing.T, path string) (string, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	payloads, _, err := journalLines(data)
	if err != nil || len(payloads) == 0 {
		t.Fatalf("journal %s: %v", path, err)
	}
	var h journalHeader
	if err := json.Unmarshal(payloads[0], &h); err != nil {
		t.Fatal(err)
	}
	return h.Epoch, len(payloads) - 1
}

// recordUntil records completions (1 KiB results, cycling over names)
// until a compaction starts, then waits for it to reach held; want
// collects each task's last result.
func recordUntil(t *testing.T, j *FileJournal, names []string, held <-chan struct{}, want map[string]string) int {
	t.Helper()
	for i := 0; i < 100000; i++ {
		name := names[i%len(names)]
		res := fmt.Sprintf("%06d %s", i, kib)
		record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: name, Result: res})
		want[name] = res
		j.Mu.Lock()
		started := j.compacting
		j.Mu.Unlock()
		if started {
			<-held
			return i + 1
		}
	}
	t.Fatal("the journal never compacted")
	return 0
}

// compactTeam is a session of 100 done tasks with 1 KiB results (a
// snapshot of ~130 KiB, so that records written during a compaction stay
// well within the journal's allowance) and its task names.
func compactTeam(t *testing.T, s *Store, id string) (*FileJournal, []string) {
	sess := bigSession(id, 100)
	names := make([]string, len(sess.Team.Tasks))
	for i := range names {
		names[i] = sess.Team.Tasks[i].Name
	}
	return mustBegin(t, s, mustLock(t, s, id), sess), names
}

func checkResults(t *testing.T, sess *checkpoint.Session, want map[string]string) {
	t.Helper()
	for name, res := range want {
		if tk, ok := sess.Task(name); !ok || tk.Result != res {
			t.Fatalf("%s lost its acknowledged result (has %.10q, want %.10q)", name, tk.Result, res)
		}
	}
}

// Compaction runs beside the records: while its snapshot is written (held
// here), Record goes on appending and returns; the records written
// meanwhile move into the new epoch's journal with the switch.
func TestCompactionDoesNotStallRecord(t *testing.T) {
	s := newStore(t)
	s.compactMin = 1
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.testStep = func(step string) {
		if step == "staged" {
			once.Do(func() { close(held); <-release })
		}
	}
	j, names := compactTeam(t, s, "bg")
	oldEpoch := j.Sess.Epoch
	want := map[string]string{}
	n := recordUntil(t, j, names, held, want)

	// Held mid-compaction: records still go through.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := n; i < n+5; i++ {
			name := names[i%len(names)]
			res := fmt.Sprintf("during %d", i)
			if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: name, Result: res}); err != nil {
				t.Error(err)
				return
			}
			want[name] = res
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadlock guard, not a timing check
		close(release)
		t.Fatal("Record waited for the compaction's snapshot")
	}
	// A crash now leaves the old snapshot and journal: all there.
	back, err := crashImage(t, s).Load(bg, "bg")
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, back, want)

	close(release)
	waitCompacted(j)
	epoch, folded, absorbed := snapshotHead(t, s.Path("bg"))
	jepoch, records := journalHead(t, s.journalPath("bg"))
	if epoch == oldEpoch || folded != oldEpoch || jepoch != epoch {
		t.Fatalf("epochs after the switch: snapshot %q after %q, journal %q (was %q)", epoch, folded, jepoch, oldEpoch)
	}
	if absorbed == 0 || records < 5 {
		t.Errorf("the snapshot absorbed %d records, the new journal holds %d (want ≥ 5 written during the compaction)", absorbed, records)
	}
	if w := j.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %v", w)
	}
	back, err = s.Load(bg, "bg")
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, back, want)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if back, err = s.Load(bg, "bg"); err != nil {
		t.Fatal(err)
	}
	checkResults(t, back, want)
	if tmp := s.tempFiles("bg"); len(tmp) > 0 {
		t.Errorf("temp files left: %v", tmp)
	}
}

// A crash between the compaction's two renames leaves the new snapshot
// beside the old journal, which holds records the snapshot does not (they
// arrived while it was written). Load applies them; the next run's Begin
// moves them into a journal of its epoch before anything can drop them,
// even when it crashes right after its own first snapshot.
func TestCrashBetweenCompactionRenames(t *testing.T) {
	s := newStore(t)
	s.compactMin = 1
	held, release := make(chan struct{}), make(chan struct{})
	var img *Store
	var once sync.Once
	s.testStep = func(step string) {
		switch step {
		case "staged":
			once.Do(func() { close(held); <-release })
		case "renamed":
			if img == nil {
				img = crashImage(t, s)
			}
		}
	}
	j, names := compactTeam(t, s, "mid")
	want := map[string]string{}
	n := recordUntil(t, j, names, held, want)
	for i := n; i < n+3; i++ {
		name := names[i%len(names)]
		res := fmt.Sprintf("during %d", i)
		record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: name, Result: res})
		want[name] = res
	}
	close(release)
	waitCompacted(j)
	if img == nil {
		t.Fatal("the compaction never reached its renames")
	}
	j.Close()

	epoch, folded, absorbed := snapshotHead(t, img.Path("mid"))
	jepoch, records := journalHead(t, img.journalPath("mid"))
	if jepoch != folded || absorbed == 0 || records < absorbed+3 {
		t.Fatalf("not the window under test: snapshot %q after %q absorbing %d; journal %q with %d records", epoch, folded, absorbed, jepoch, records)
	}
	sess, err := img.Load(bg, "mid")
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, sess, want)

	// Crash 2: the next run's Begin is killed at any of its steps, the
	// session as loaded (session decide) or continued (run --continue).
	for _, continued := range []bool{false, true} {
		s := crashImage(t, img)
		sess, err := s.Load(bg, "mid")
		if err != nil {
			t.Fatal(err)
		}
		if continued {
			ds := bigDefs(len(names))
			sess = checkpoint.Continue(sess, checkpoint.Restore(sess, ds, "fp", checkpoint.ReuseStrict), spec.Sequential, ds, "fp", t0)
		}
		images := beginImages(t, s, sess)
		for _, step := range beginSteps {
			back, err := images[step].Load(bg, "mid")
			if err != nil {
				t.Fatalf("continued %v: after crash 2 at %q: %v", continued, step, err)
			}
			checkResults(t, back, want)
		}
		// And a run that goes on from there keeps everything.
		s = images["begin renamed"]
		back, err := s.Load(bg, "mid")
		if err != nil {
			t.Fatal(err)
		}
		j2 := mustBegin(t, s, mustLock(t, s, "mid"), back)
		record(t, j2, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: names[0], Result: "last"})
		if err := j2.Close(); err != nil {
			t.Fatal(err)
		}
		if back, err = s.Load(bg, "mid"); err != nil {
			t.Fatal(err)
		}
		after := maps.Clone(want)
		after[names[0]] = "last"
		checkResults(t, back, after)
	}
}

// The old journal beside a snapshot that absorbed part of it must still
// hold that part: fewer records is damage, never a silent restart.
func TestFoldedJournalTooShort(t *testing.T) {
	s := newStore(t)
	ds := seed()
	l := mustLock(t, s, "short")
	j := mustBegin(t, s, l, checkpoint.NewSession("short", "a.yaml", "t", spec.Sequential, ds, fp(ds), t0))
	record(t, j, complete(ds[0].Name, "one")...)
	journal, err := os.ReadFile(s.journalPath("short"))
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot that claims to have absorbed three of the journal's two records.
	sess := j.Session()
	sess.FoldedRecords = 0
	if _, _, err := s.writeSnapshot(sess, true); err != nil {
		t.Fatal(err)
	}
	sess.FoldedRecords = 3
	data, err := checkpoint.EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path("short"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.journalPath("short"), journal, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Load(bg, "short")
	var ce *checkpoint.CorruptError
	if !errors.As(err, &ce) || ce.Path != s.journalPath("short") || !strings.Contains(err.Error(), "records were lost") {
		t.Fatalf("Load: %v", err)
	}
	if got, _ := os.ReadFile(s.journalPath("short")); !bytes.Equal(got, journal) {
		t.Error("the damaged journal was changed")
	}
}

// A reader beside a live run: a compaction that replaces both files
// between the reader's snapshot read and its journal read must not make
// the session look corrupt (the journal is the newer snapshot's); Load
// reads the pair again and has every acknowledged result.
func TestLoadDuringCompaction(t *testing.T) {
	s := newStore(t)
	j, names := compactTeam(t, s, "live")
	defer j.Close()
	want := map[string]string{}
	for i := 0; i < 20; i++ {
		res := fmt.Sprintf("before %d", i)
		record(t, j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: names[i], Result: res})
		want[names[i]] = res
	}
	oldEpoch := j.Sess.Epoch
	reads := 0
	s.testStep = func(step string) {
		if step != "snapshot read" {
			return
		}
		reads++
		if reads == 1 {
			s.compactMin = 1
			held := make(chan struct{})
			close(held)
			recordUntil(t, j, names, held, want)
			waitCompacted(j)
		}
	}
	sess, err := s.Load(bg, "live")
	if err != nil {
		t.Fatal(err)
	}
	if j.Session().Epoch == oldEpoch {
		t.Fatal("no compaction ran between the reads")
	}
	if reads < 2 {
		t.Fatalf("the pair was read %d time(s); a replaced snapshot was not noticed", reads)
	}
	checkResults(t, sess, want)
}

// Close does not sync the journal's removal: a crash can bring the journal
// back beside the final snapshot. It must change nothing: Load ignores it
// (the snapshot absorbed it whole) and the next run replaces it.
func TestJournalBackAfterClose(t *testing.T) {
	s := newStore(t)
	l := mustLock(t, s, "back")
	ds := chain12()
	j := mustBegin(t, s, l, checkpoint.NewSession("back", "a.yaml", "team", spec.Sequential, ds, fp(ds), t0))
	for _, d := range ds[:5] {
		record(t, j, complete(d.Name, "r "+d.Name)...)
	}
	old, err := os.ReadFile(s.journalPath("back"))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.journalPath("back")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("journal still there after Close: %v", err)
	}
	if err := os.WriteFile(s.journalPath("back"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	sess := loadDone(t, s, "back", 5)
	// The next run: Begin replaces the stale journal, its records go on.
	j2 := mustBegin(t, s, l, sess)
	record(t, j2, complete(ds[5].Name, "r "+ds[5].Name)...)
	loadDone(t, s, "back", 6)
	j2.Close()
}

// A new session's Begin puts its journal in place before its snapshot (an
// older teamrun's, empty, with its name only). A crash between them leaves
// a journal and no snapshot: no session, and a new run of it starts as if
// none were there.
func TestEmptyJournalWithoutSnapshot(t *testing.T) {
	s := newStore(t)
	if err := s.makeDir(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.journalPath("early"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(bg, "early"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Load beside an empty journal: %v, want not found", err)
	}
	ds := chain12()
	j := mustBegin(t, s, mustLock(t, s, "early"), checkpoint.NewSession("early", "a.yaml", "team", spec.Sequential, ds, fp(ds), t0))
	record(t, j, complete(ds[0].Name, "r")...)
	loadDone(t, s, "early", 1)
	j.Close()
}

// loadDone loads session id and checks that it has done tasks done.
func loadDone(t *testing.T, s *Store, id string, done int) *checkpoint.Session {
	t.Helper()
	sess, err := s.Load(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Summary.Done != done {
		t.Fatalf("session %s: %d tasks done, want %d", id, sess.Summary.Done, done)
	}
	return sess
}
