package checkpoint

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestProjectActive(t *testing.T) {
	dir := t.TempDir()
	p := OpenProject(dir)
	if id, err := p.Active(); err != nil || id != "" {
		t.Fatalf("fresh project: %q %v", id, err)
	}
	if _, err := os.Stat(p.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Error("reading created .teamrun")
	}
	for _, id := range []string{"one", "two"} {
		if err := p.SetActive(id); err != nil {
			t.Fatal(err)
		}
		if got, err := p.Active(); err != nil || got != id {
			t.Fatalf("Active() = %q %v, want %q", got, err, id)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".teamrun", "state.json"))
	if strings.TrimSpace(string(b)) != `{"active_session":"two"}` {
		t.Errorf("state.json = %s", b)
	}
	if mode(t, p.Dir()) != 0o700 || mode(t, filepath.Join(p.Dir(), "state.json")) != 0o600 {
		t.Error("project file modes")
	}
	entries, _ := os.ReadDir(p.Dir())
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
	for body, want := range map[string]string{"{": "not valid JSON", `{"active_session":"../x"}`: "active_session"} {
		os.WriteFile(filepath.Join(p.Dir(), "state.json"), []byte(body), 0o600)
		if _, err := p.Active(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "state.json") {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestProjectAudit(t *testing.T) {
	p := OpenProject(t.TempDir())
	if recs, err := p.AuditRecords(); err != nil || recs != nil {
		t.Fatalf("no log: %v %v", recs, err)
	}
	events := []string{EventCreated, EventResumed, EventCompleted, EventFailed, EventHalted, EventDeleted, EventPruned}
	var wg sync.WaitGroup
	for _, e := range events {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Audit(AuditRecord{Event: e, Session: "s-" + e, Store: "/store"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	recs, err := p.AuditRecords()
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
	path := filepath.Join(p.Dir(), "audit.log")
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
	if recs, err := p.AuditRecords(); err != nil || len(recs) != len(events) {
		t.Fatalf("torn line: %d %v", len(recs), err)
	}
	// A damaged line in the middle is reported with its line number.
	os.WriteFile(path, []byte("{\"event\":\"created\"}\nnot json\n{\"event\":\"halted\"}\n"), 0o600)
	if _, err := p.AuditRecords(); err == nil || !strings.Contains(err.Error(), "audit.log:2") {
		t.Errorf("damaged line: %v", err)
	}
}

func TestProjectConfig(t *testing.T) {
	p := OpenProject(t.TempDir())
	cfg, err := p.Config()
	if err != nil || cfg.MaxSessionAgeDays != 30 || cfg.LLM != nil {
		t.Fatalf("%+v %v", cfg, err)
	}
	path := p.ConfigPath()
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "max_session_age_days: 30") || mode(t, path) != 0o600 {
		t.Errorf("created config %q mode %04o", b, mode(t, path))
	}
	tests := []struct {
		name, body string
		perm       os.FileMode
		want       string // error part; "" = ok
		days       int
	}{
		{"llm defaults", "max_session_age_days: 7\nllm:\n  model: gpt-4o\n  base_url: http://127.0.0.1:11434/v1\n  api_key_env: MY_KEY\n", 0o600, "", 7},
		{"empty", "", 0o600, "", 30},
		{"group readable", "max_session_age_days: 7\n", 0o640, "chmod 600 " + path, 0},
		{"world readable", "max_session_age_days: 7\n", 0o644, "chmod 600 " + path, 0},
		{"unknown key", "max_session_age: 7\n", 0o600, "max_session_age", 0},
		{"negative", "max_session_age_days: -1\n", 0o600, "positive", 0},
		{"not yaml", "max_session_age_days: [\n", 0o600, "config.yml", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(path, []byte(tc.body), tc.perm)
			os.Chmod(path, tc.perm)
			cfg, err := p.Config()
			if tc.want == "" {
				if err != nil || cfg.MaxSessionAgeDays != tc.days {
					t.Fatalf("%+v %v", cfg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	os.WriteFile(path, []byte("llm:\n  model: m\n  api_key_env: K\n"), 0o600)
	cfg, err = p.Config()
	if err != nil || cfg.LLM == nil || cfg.LLM.Model != "m" || cfg.LLM.APIKeyEnv != "K" {
		t.Fatalf("%+v %v", cfg, err)
	}
}
