package filestore

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

func TestProjectActive(t *testing.T) {
	dir := t.TempDir()
	p := OpenProject(dir)
	if id, err := p.Active(bg); err != nil || id != "" {
		t.Fatalf("fresh project: %q %v", id, err)
	}
	if _, err := os.Stat(p.stateDir()); !errors.Is(err, os.ErrNotExist) {
		t.Error("reading created .teamrun")
	}
	for _, id := range []string{"one", "two"} {
		if err := p.SetActive(bg, id); err != nil {
			t.Fatal(err)
		}
		if got, err := p.Active(bg); err != nil || got != id {
			t.Fatalf("Active() = %q %v, want %q", got, err, id)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".teamrun", "state.json"))
	if strings.TrimSpace(string(b)) != `{"active_session":"two"}` {
		t.Errorf("state.json = %s", b)
	}
	if mode(t, p.stateDir()) != 0o700 || mode(t, filepath.Join(p.stateDir(), "state.json")) != 0o600 {
		t.Error("project file modes")
	}
	entries, _ := os.ReadDir(p.stateDir())
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
	for body, want := range map[string]string{
		"{":  "state.json: the JSON ends early (the file is cut short): fix it or remove it",
		"{]": "state.json: not valid JSON at line 1, column 2: fix it or remove it",
		// A bad id (exit 2, ErrBadID below), with the same remedy.
		`{"active_session":"../x"}`: `state.json: active_session: invalid session id "../x": starts with a dot; an id is 1 to 128 characters of A-Z a-z 0-9 . _ -, not starting with a dot: fix it or remove it (it only names the active session)`,
		// Not the json package's "cannot unmarshal number into Go struct field".
		`{"active_session":3}`: "state.json: active_session: expected a text, got the number 3: fix it or remove it",
		`[]`:                   "state.json: expected an object, got a list: fix it or remove it",
	} {
		os.WriteFile(filepath.Join(p.stateDir(), "state.json"), []byte(body), 0o600)
		_, err := p.Active(bg)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go struct") {
			t.Errorf("%s: %v", body, err)
		}
		if errors.Is(err, checkpoint.ErrBadID) != strings.Contains(body, "../x") {
			t.Errorf("%s: %v; ErrBadID only for the bad id", body, err)
		}
	}
}

// A write of state.json sweeps the temp files a writer killed between its
// temp file and the rename left (kill -9: some are empty), as the session
// files' are; what is not such a file, or was written since the write
// took the project's lock (a writer it cannot judge), stays.
func TestProjectSweepsStateTemps(t *testing.T) {
	p := OpenProject(t.TempDir())
	if err := p.SetActive(bg, "one"); err != nil {
		t.Fatal(err)
	}
	long, later := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	files := []struct {
		name  string
		at    time.Time
		swept bool
	}{
		{".state.json.tmp-409619558", long, true},
		{".state.json.tmp-1", long, true},
		{".state.json.tmp-abc", long, false}, // not Stage's
		{".state.json.tmp-", long, false},
		{".other.json.tmp-7", long, false},  // another file's
		{".state.json.tmp-8", later, false}, // written after the lock was taken
	}
	for _, f := range files {
		path := filepath.Join(p.stateDir(), f.name)
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, f.at, f.at); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.SetActive(bg, "two"); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Active(bg); got != "two" || err != nil {
		t.Fatalf("Active = %q, %v", got, err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(p.stateDir(), f.name)); errors.Is(err, fs.ErrNotExist) != f.swept {
			t.Errorf("%s: gone %v, want %v", f.name, err != nil, f.swept)
		}
	}
}

func TestProjectAudit(t *testing.T) {
	p := OpenProject(t.TempDir())
	if recs, err := p.AuditRecords(bg); err != nil || recs != nil {
		t.Fatalf("no log: %v %v", recs, err)
	}
	events := []string{checkpoint.EventCreated, checkpoint.EventResumed, checkpoint.EventCompleted, checkpoint.EventFailed, checkpoint.EventHalted, checkpoint.EventDeleted, checkpoint.EventPruned}
	var wg sync.WaitGroup
	for _, e := range events {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Audit(bg, checkpoint.AuditRecord{Event: e, Session: "s-" + e, Store: "/store"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	recs, err := p.AuditRecords(bg)
	if err != nil || len(recs) != len(events) {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Event] = true
		if r.Session != "s-"+r.Event || r.Store != "/store" || r.PID != os.Getpid() || r.User == "" || r.Time.IsZero() {
			t.Errorf("record %+v", r)
		}
	}
	if len(seen) != len(events) {
		t.Errorf("events %v", seen)
	}
	path := filepath.Join(p.stateDir(), "audit.log")
	if mode(t, path) != 0o600 {
		t.Error("audit.log mode")
	}
	// Each line is one JSON object with the documented keys.
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"time", "event", "session", "store", "pid", "user"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %s lacks %s", line, k)
			}
		}
	}
	// A torn last line (a crash mid-append) is ignored.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"event":"crea`)
	f.Close()
	if recs, err := p.AuditRecords(bg); err != nil || len(recs) != len(events) {
		t.Fatalf("torn line: %d %v", len(recs), err)
	}
	// The next record starts a line of its own: the torn line stays a
	// torn one, skipped in silence, and the record is read.
	if err := p.Audit(bg, checkpoint.AuditRecord{Event: "after", Session: "s-after", Store: "/store"}); err != nil {
		t.Fatal(err)
	}
	recs, err = p.AuditRecords(bg)
	if len(recs) != len(events)+1 || recs[len(recs)-1].Session != "s-after" {
		t.Fatalf("after a torn line: %d records %+v; want %d, the last s-after", len(recs), recs, len(events)+1)
	}
	if err != nil {
		t.Errorf("the torn line, now in the middle: %v; want it ignored", err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "{\"event\":\"crea\n{") {
		t.Errorf("the record after the torn line does not start a line of its own:\n%s", b)
	}
}

// A damaged line of the audit log is skipped, named in the error, and
// the records of every other line are returned: one bad line no longer
// hid every session the log tells of.
func TestAuditRecordsSkipDamaged(t *testing.T) {
	p := OpenProject(t.TempDir())
	path := p.auditPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, log string
		want      int
		err       string
	}{
		{"not JSON", "{\"event\":\"created\"}\nnot json\n{\"event\":\"halted\"}\n", 2,
			"audit.log:2: not an audit record (not valid JSON at line 1, column 2): it was skipped; fix or remove that line"},
		{"another shape", "{\"event\":\"created\"}\n{\"pid\":\"12\"}\n", 1,
			"audit.log:2: not an audit record (pid: expected a whole number, got the text \"12\")"},
		{"several", "x\n{\"event\":\"created\"}\ny\nz\n{}\n", 2,
			"audit.log: lines 1, 3, 4 are not audit records (line 1: not valid JSON at line 1, column 1): they were skipped; fix or remove those lines"},
		{"many", strings.Repeat("x\n", 7) + "{}\n", 1, "lines 1, 2, 3, 4, 5 and 2 more are not audit records"},
		{"sound", "{}\n\n{}\n{\"event\":", 2, ""},
		{"torn in the middle", "{}\n{\"event\":\"cre\n{}\n", 2, ""},
		{"torn record glued to the next", "{}\n{\"time\":\"2026-12-07T00:2{\"event\":\"created\"}\n{}\n", 2, "audit.log:2: not an audit record"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tt.log), 0o600); err != nil {
				t.Fatal(err)
			}
			recs, err := p.AuditRecords(bg)
			if len(recs) != tt.want {
				t.Errorf("%d records; want %d", len(recs), tt.want)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v; want %q", err, tt.err)
			}
		})
	}
}

// TestCheckWritable: a project whose files cannot be written is a store
// error naming the file, found before any session is created. The cases
// use a file or a folder in the way, which stops root too.
func TestCheckWritable(t *testing.T) {
	p := OpenProject(t.TempDir())
	if err := p.CheckWritable(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(p.stateDir()); mode(t, p.stateDir()) != 0o700 || len(entries) != 0 {
		t.Errorf(".teamrun mode %04o, left %v", mode(t, p.stateDir()), entries)
	}
	if err := p.Audit(bg, checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: "s", Store: "/store"}); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckWritable(); err != nil {
		t.Errorf("with an audit log: %v", err)
	}

	tests := []struct {
		name  string
		block func(p *Project) // puts something in the way
		path  string           // the path the error must name
	}{
		{"teamrun is a file", func(p *Project) { os.WriteFile(p.stateDir(), nil, 0o600) }, ".teamrun"},
		{"audit.log is a folder", func(p *Project) { os.MkdirAll(p.auditPath(), 0o700) }, "audit.log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := OpenProject(t.TempDir())
			tc.block(p)
			err := p.CheckWritable()
			if !errors.Is(err, checkpoint.ErrStore) {
				t.Fatalf("err = %v, want a store error", err)
			}
			var pe *ProjectWriteError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "no session was created") {
				t.Errorf("err = %v, want it to name %s and say no session was created", err, tc.path)
			}
		})
	}
}
