package pgstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

func TestProjectKey(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ env, dir, want string }{
		{env: "nightly", dir: dir, want: "nightly"},
		{env: "", dir: dir, want: dir},
		{env: "  ", dir: dir, want: dir},
		{env: "\t", dir: dir, want: dir},
		{env: "", dir: ".", want: func() string { a, _ := filepath.Abs("."); return a }()},
	}
	for _, tt := range tests {
		t.Setenv("TEAMRUN_PROJECT", tt.env)
		got, err := ProjectKey(tt.dir)
		if err != nil || got != tt.want {
			t.Errorf("TEAMRUN_PROJECT=%q ProjectKey(%q) = %q, %v; want %q", tt.env, tt.dir, got, err, tt.want)
		}
	}
}

// A folder reached through a symbolic link is the same project as the
// folder itself: the rows a run given one path wrote are the rows of a run
// given the other. A key is the path a run was given, so a project's own
// rows win, and a key that is a name (TEAMRUN_PROJECT) or a path not on
// this machine is never another folder's.
func TestProjectThroughLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone") // another machine's checkout
	tests := []struct {
		name    string
		rows    map[string]string // project key -> active session
		named   string            // TEAMRUN_PROJECT of the second run
		dir     string            // its folder
		want    string            // the active session it finds
		audited string            // the key its audit record goes under
	}{
		{name: "the link after the folder", rows: map[string]string{real: "s1"}, dir: link, want: "s1", audited: real},
		{name: "the folder after the link", rows: map[string]string{link: "s1"}, dir: real, want: "s1", audited: link},
		{name: "its own rows first", rows: map[string]string{link: "via-link", real: "own"}, dir: real, want: "own", audited: real},
		{name: "a path not here is another folder", rows: map[string]string{gone: "elsewhere"}, dir: real, want: "", audited: real},
		{name: "a named project is its name's", rows: map[string]string{real: "s1"}, named: "nightly", dir: link, want: "", audited: "nightly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, testStoreURL(t))
			ctx := context.Background()
			t.Setenv("TEAMRUN_PROJECT", "")
			if err := s.ready(ctx); err != nil { // the tables, as a run's first write makes them
				t.Fatal(err)
			}
			for key, id := range tt.rows { // as runs given those paths wrote them
				if _, err := s.pool.Exec(ctx, s.q(`INSERT INTO {s}.projects VALUES ($1, $2, now())`), key, id); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("TEAMRUN_PROJECT", tt.named)
			p := s.Project(tt.dir)
			if got, err := p.Active(ctx); err != nil || got != tt.want {
				t.Errorf("Active = %q, %v; want %q", got, err, tt.want)
			}
			if err := p.Audit(ctx, checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: "audited"}); err != nil {
				t.Fatal(err)
			}
			var key string
			if err := s.pool.QueryRow(ctx, s.q(`SELECT project_key FROM {s}.audit WHERE session_id = 'audited'`)).Scan(&key); err != nil || key != tt.audited {
				t.Errorf("audited under %q, %v; want %q", key, err, tt.audited)
			}
		})
	}
}

func TestProjectState(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	ctx := context.Background()
	t.Setenv("TEAMRUN_PROJECT", "")
	a, b := s.Project("/specs/a"), s.Project("/specs/b")
	if id, err := a.Active(ctx); err != nil || id != "" {
		t.Fatalf("Active of a new project = %q, %v", id, err)
	}
	for _, id := range []string{"first", "second"} {
		if err := a.SetActive(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SetActive(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetActive(ctx, "../evil"); err == nil {
		t.Error("SetActive took an invalid id")
	}
	if id, err := a.Active(ctx); err != nil || id != "second" {
		t.Errorf("Active(a) = %q, %v; want second", id, err)
	}
	if id, err := b.Active(ctx); err != nil || id != "other" {
		t.Errorf("Active(b) = %q, %v; want other", id, err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	want := []checkpoint.AuditRecord{
		{Time: at, Event: "started", Session: "first", Store: s.Location(), PID: 7, User: "ci"},
		{Time: at.Add(time.Second), Event: checkpoint.EventDecided, Session: "first", Store: s.Location(), PID: 8, User: "ci", Detail: "review=approve"},
	}
	for _, rec := range want {
		if err := a.Audit(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Audit(ctx, checkpoint.AuditRecord{Event: "started", Session: "other"}); err != nil {
		t.Fatal(err)
	}
	got, err := a.AuditRecords(ctx)
	if err != nil || len(got) != len(want) {
		t.Fatalf("AuditRecords(a) = %+v, %v", got, err)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Event != want[i].Event || got[i].Detail != want[i].Detail || got[i].PID != want[i].PID {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	gotB, err := b.AuditRecords(ctx)
	if err != nil || len(gotB) != 1 || gotB[0].PID == 0 || gotB[0].Time.IsZero() {
		t.Errorf("AuditRecords(b) = %+v, %v; want one record with its pid and time filled in", gotB, err)
	}
}

func TestProjectKeySharedAcrossFolders(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	ctx := context.Background()
	t.Setenv("TEAMRUN_PROJECT", "nightly")
	a, b := s.Project("/mnt/pod-a/spec"), s.Project("/mnt/pod-b/spec")
	if err := a.SetActive(ctx, "night-1"); err != nil {
		t.Fatal(err)
	}
	if id, err := b.Active(ctx); err != nil || id != "night-1" {
		t.Errorf("another folder of project nightly sees %q, %v", id, err)
	}
	if a.Dir() != "/mnt/pod-a/spec" || !strings.Contains(a.Where(), "project nightly") {
		t.Errorf("Dir %q Where %q", a.Dir(), a.Where())
	}
}

// A project named by TEAMRUN_PROJECT spans checkouts in other folders (a
// CronJob's pod on another node): its active session, started from one,
// is --continue's from another whose spec has the same file name; a spec
// of another name in it still gets its own.
func TestResolveActiveAcrossCheckouts(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	ctx := context.Background()
	t.Setenv("TEAMRUN_PROJECT", "nightly")
	l, j := begin(t, s, "night-1", 2) // its spec: /specs/agents.yaml
	j.Close()
	l.Release()
	if err := s.Project("/specs").SetActive(ctx, "night-1"); err != nil {
		t.Fatal(err)
	}
	b := s.Project("/mnt/pod-b/specs")
	a, err := checkpoint.ResolveActive(ctx, s, b, "/mnt/pod-b/specs/agents.yaml")
	if err != nil || a.ID != "night-1" || len(a.Notes) != 0 {
		t.Errorf("the same spec from another checkout: %+v, %v; want night-1 and no note", a, err)
	}
	a, err = checkpoint.ResolveActive(ctx, s, b, "/mnt/pod-b/specs/other.yaml")
	if err != nil || a.ID == "night-1" || len(a.Notes) == 0 {
		t.Errorf("another spec of the project: %+v, %v; want not night-1, and a note", a, err)
	}
}

// Projects named by TEAMRUN_PROJECT share one spec folder's path (every
// pod mounts /specs): a prune in project weekly never removes project
// nightly's active session, whose spec folder is its own.
func TestPruneKeepsNamedProjectsActive(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	ctx := context.Background()
	for _, id := range []string{"night-1", "week-old"} {
		l, j := begin(t, s, id, 1) // its spec: /specs/agents.yaml
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	t.Setenv("TEAMRUN_PROJECT", "nightly")
	if err := s.Project("/specs").SetActive(ctx, "night-1"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEAMRUN_PROJECT", "weekly")
	stale, _, err := checkpoint.Prune(ctx, s, s.Project("/specs"), checkpoint.PruneOptions{Before: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, st := range stale {
		got[st.ID] = st.Reason
		if st.Removed {
			got[st.ID] = "removed"
		}
	}
	if got["night-1"] != "the active session of project nightly" || got["week-old"] != "removed" {
		t.Errorf("prune in project weekly: %q", got)
	}
	if ok, err := s.Exists(ctx, "night-1"); !ok || err != nil {
		t.Errorf("project nightly's active session is gone: %v", err)
	}
}

// started writes a session of specPath, updated at, as a run in project
// TEAMRUN_PROJECT=project ("": the spec's folder) writes it.
func started(t *testing.T, s *Store, id, specPath, project string, at time.Time) {
	t.Helper()
	t.Setenv("TEAMRUN_PROJECT", project)
	cl, err := s.Lock(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Release()
	sess := checkpoint.NewSession(id, specPath, "team", spec.Sequential, taskDefs(2), "fp1", at)
	j, err := s.Begin(context.Background(), cl, sess)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// --continue falls back, when the project's active session is another
// spec's (or missing), to the newest session of this project and this
// spec, by sameSpec's rule: in a project named by TEAMRUN_PROJECT, one
// started from another checkout of a spec of the same file name, and never
// another project's, though its spec has the very same path.
func TestResolveActiveFallbackIsTheProjects(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	type sess struct{ id, spec, project string }
	tests := []struct {
		name      string
		sessions  []sess // oldest first
		project   string // TEAMRUN_PROJECT of the run
		active    string // the project's active session
		dir, spec string // the run's
		want      string // "": a new session
	}{
		{name: "named project, the spec mounted elsewhere",
			sessions: []sess{{"night-1", "/mnt/pod-a/specs/nightly.yaml", "p"}, {"hour-1", "/mnt/pod-a/specs/hourly.yaml", "p"}},
			project:  "p", active: "hour-1", dir: "/mnt/pod-b/specs", spec: "/mnt/pod-b/specs/nightly.yaml", want: "night-1"},
		{name: "named project, active session missing",
			sessions: []sess{{"night-1", "/mnt/pod-a/specs/nightly.yaml", "p"}},
			project:  "p", active: "gone", dir: "/mnt/pod-b/specs", spec: "/mnt/pod-b/specs/nightly.yaml", want: "night-1"},
		{name: "another project's session of the same path",
			sessions: []sess{{"x-night", "/specs/nightly.yaml", "teamX"}, {"y-hour", "/specs/hourly.yaml", "teamY"}},
			project:  "teamY", active: "y-hour", dir: "/specs", spec: "/specs/nightly.yaml", want: ""},
		{name: "another project's, the active session missing",
			sessions: []sess{{"x-night", "/specs/nightly.yaml", "teamX"}},
			project:  "teamY", active: "gone", dir: "/specs", spec: "/specs/nightly.yaml", want: ""},
		{name: "a named project's session is not the folder's",
			sessions: []sess{{"x-night", "/specs/nightly.yaml", "teamX"}, {"hour", "/specs/hourly.yaml", ""}},
			project:  "", active: "hour", dir: "/specs", spec: "/specs/nightly.yaml", want: ""},
		{name: "the folder's project, the newest of its spec",
			sessions: []sess{{"old", "/specs/nightly.yaml", ""}, {"new", "/specs/nightly.yaml", ""}, {"x-night", "/specs/nightly.yaml", "teamX"}, {"hour", "/specs/hourly.yaml", ""}},
			project:  "", active: "hour", dir: "/specs", spec: "/specs/nightly.yaml", want: "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, testStoreURL(t))
			ctx := context.Background()
			for i, se := range tt.sessions {
				started(t, s, se.id, se.spec, se.project, at.Add(time.Duration(i)*time.Minute))
			}
			t.Setenv("TEAMRUN_PROJECT", tt.project)
			p := s.Project(tt.dir)
			if err := p.SetActive(ctx, tt.active); err != nil {
				t.Fatal(err)
			}
			a, err := checkpoint.ResolveActive(ctx, s, p, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != tt.want || a.Adopted != (tt.want != "") {
				t.Errorf("ResolveActive = %+v; want %q", a, tt.want)
			}
		})
	}
}

// A session row an older teamrun wrote has no project: the migration takes
// it from the audit record of its creation, and one it cannot place still
// counts as the project of its spec's folder.
func TestMigrateSessionProjects(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	started(t, s, "x-night", "/specs/nightly.yaml", "teamX", at)
	if err := s.Project("/specs").Audit(ctx, checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: "x-night"}); err != nil {
		t.Fatal(err)
	}
	started(t, s, "unaudited", "/specs/nightly.yaml", "teamX", at.Add(time.Minute))
	s.Close()
	adminExec(t, raw, fmt.Sprintf(`UPDATE %[1]s.sessions SET project_key = NULL; ALTER TABLE %[1]s.sessions DROP COLUMN project_key;
		UPDATE %[1]s.schema_version SET version = 4`, s.cfg.schema))

	s = openStore(t, raw)
	got := map[string]string{}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		got[e.ID] = e.Project
	}
	if got["x-night"] != "teamX" || got["unaudited"] != "" {
		t.Errorf("projects after the migration: %q; want x-night in teamX, unaudited in none", got)
	}
	t.Setenv("TEAMRUN_PROJECT", "")
	p := s.Project("/specs")
	if err := p.SetActive(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if a, err := checkpoint.ResolveActive(ctx, s, p, "/specs/nightly.yaml"); err != nil || a.ID != "unaudited" {
		t.Errorf("the folder's project falls back to %+v, %v; want unaudited, its folder's", a, err)
	}
}
