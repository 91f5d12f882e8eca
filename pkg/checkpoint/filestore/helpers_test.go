package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// taskSpec is a hand-built task for tests; defs computes keys the way the
// spec package does in spirit: own fields + agent key + context keys.
type taskSpec struct {
	name, agent, desc string
	context           []string
}

// bg is the context of calls that are never cancelled.
var bg = context.Background()

func defs(tasks ...taskSpec) []spec.TaskDef {
	keys := map[string]string{}
	out := make([]spec.TaskDef, len(tasks))
	for i, t := range tasks {
		agent := t.agent
		if agent == "" {
			agent = "writer"
		}
		d := spec.TaskDef{ID: i, Name: t.name, Agent: agent, Description: t.desc, ExpectedOutput: "text",
			Context: t.context, AgentKey: hash("agent:" + agent)}
		parts := []string{d.Name, d.Agent, d.Description, d.ExpectedOutput, d.AgentKey}
		for _, c := range t.context {
			parts = append(parts, keys[c])
		}
		d.Key = hash(strings.Join(parts, "\x00"))
		keys[d.Name] = d.Key
		out[i] = d
	}
	return out
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// fp stands in for spec.FingerprintOf: any stable function of the fields.
func fp(ds []spec.TaskDef) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%d|%s|%s|%s|%s\n", d.ID, d.Name, d.Agent, d.Description, d.ExpectedOutput)
	}
	return hash(b.String())
}

// seed is the seed example: draft, then polish reading draft.
func seed() []spec.TaskDef {
	return defs(taskSpec{name: "draft", desc: "Write the intro about Go"},
		taskSpec{name: "polish", desc: "Polish the draft", context: []string{"draft"}})
}

// chain12 is a 12-task sequential team: each task reads the previous one.
func chain12(changed ...int) []spec.TaskDef {
	var ts []taskSpec
	for i := 1; i <= 12; i++ {
		t := taskSpec{name: fmt.Sprintf("t%02d", i), desc: fmt.Sprintf("step %d", i)}
		for _, c := range changed {
			if c == i {
				t.desc += " (edited)"
			}
		}
		if i > 1 {
			t.context = []string{fmt.Sprintf("t%02d", i-1)}
		}
		ts = append(ts, t)
	}
	return defs(ts...)
}

var t0 = time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Most tests write session files by hand: the store's folder exists,
	// as after its first run.
	if err := s.makeDir(); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustLock(t testing.TB, s *Store, id string) *FileLock {
	t.Helper()
	l, err := s.lock(bg, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release() })
	return l
}

func mustBegin(t testing.TB, s *Store, l *FileLock, sess *checkpoint.Session) *FileJournal {
	t.Helper()
	j, err := s.Begin(bg, l, sess)
	if err != nil {
		t.Fatal(err)
	}
	return j.(*FileJournal)
}

func record(t testing.TB, j *FileJournal, recs ...checkpoint.Record) {
	t.Helper()
	for _, r := range recs {
		if err := j.Record(r); err != nil {
			t.Fatalf("Record(%s %s): %v", r.Kind, r.Task, err)
		}
	}
}

func complete(task, result string) []checkpoint.Record {
	return []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: task}, {Kind: checkpoint.TaskCompleted, Task: task, Result: result}}
}

// runSession records a finished (or partly finished) run of ds in a store
// and returns the loaded session.
func runSession(t testing.TB, s *Store, id string, ds []spec.TaskDef, done int) *checkpoint.Session {
	t.Helper()
	if err := s.Delete(bg, id); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatal(err)
	}
	l := mustLock(t, s, id)
	defer l.Release()
	j := mustBegin(t, s, l, checkpoint.NewSession(id, "/p/agents.yaml", "team", spec.Sequential, ds, fp(ds), t0))
	for i, d := range ds[:done] {
		record(t, j, complete(d.Name, "out-"+d.Name)...)
		_ = i
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Load(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

var errENOSPC = syscall.ENOSPC

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
