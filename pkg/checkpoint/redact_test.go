package checkpoint

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

const redactKey = "sk-test-SECRETKEY-0123456789"

func redactTest(s string) string { return strings.ReplaceAll(s, redactKey, "[REDACTED]") }

// A session's Redact applies to every text its snapshot and its journal
// records store (the shared state and initial state, nested values
// included, descriptions, results, errors, variables, memory), while the
// session in memory and the records applied to it keep the real texts.
func TestRedactAtWrite(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	defs := []spec.TaskDef{{Name: "a", Agent: "w", Description: "use " + redactKey, ExpectedOutput: "about " + redactKey, Key: "k", OwnKey: "o"}}
	s := NewSession("s1", "team.yaml", "t", spec.Workflow, defs, "fp", at)
	s.Team.State = map[string]any{"token": redactKey, "list": []any{"x " + redactKey, 3}, "m": map[string]any{"in": redactKey}}
	s.Team.InitialState = map[string]any{"token": redactKey}
	task := &s.Team.Tasks[0]
	task.Status, task.Result, task.Error = StatusFailed, "said "+redactKey, "failed on "+redactKey
	task.Variables = map[string]any{"out": redactKey}
	task.History = []Attempt{{N: 1, Start: at, End: &at, Outcome: StatusFailed, Error: "failed on " + redactKey}}
	task.Previous = &PreviousResult{Outcome: Outcome{Text: "before " + redactKey}}
	s.Memory = map[string][]Message{"w": {{Role: "user", Content: "use " + redactKey, Task: "a"}}}
	s.Redact = redactTest

	data, err := EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(redactKey)) {
		t.Fatalf("the snapshot holds the key:\n%s", data)
	}
	back, err := DecodeSession("s1", "test", data)
	if err != nil {
		t.Fatal(err)
	}
	bt := back.Team.Tasks[0]
	for _, got := range []any{back.Team.State["token"], back.Team.InitialState["token"], bt.Description, bt.Variables["out"], bt.History[0].Error, back.Memory["w"][0].Content} {
		if !strings.Contains(got.(string), "[REDACTED]") {
			t.Errorf("stored %q, not redacted", got)
		}
	}
	// In memory, what the run uses stays real; the attempt's digest, the
	// task's keys and its name are never touched.
	if s.Team.State["token"] != redactKey || s.Team.State["list"].([]any)[0] != "x "+redactKey || task.Description != "use "+redactKey ||
		s.Memory["w"][0].Content != "use "+redactKey || task.History[0].Error != "failed on "+redactKey || task.Previous.Text != "before "+redactKey {
		t.Errorf("the session in memory was redacted: %+v", s)
	}
	if bt.Key != "k" || bt.OwnKey != "o" || bt.Name != "a" {
		t.Errorf("identifiers changed: %+v", bt)
	}

	v := &FoldedView{Sess: s}
	rec := Record{Kind: TaskCompleted, Task: "a", Result: "r " + redactKey, Variables: map[string]any{"out": redactKey},
		Agent: "w", Messages: []Message{{Role: "assistant", Content: "got " + redactKey, Task: "a"}}}
	rec.State = rec.Variables
	b, err := v.Prepare([]Record{rec})
	if err != nil {
		t.Fatal(err)
	}
	if p := b.Payloads[0]; bytes.Contains(p, []byte(redactKey)) || !bytes.Contains(p, []byte("got [REDACTED]")) {
		t.Errorf("the record's payload holds the key, or no redacted turn: %s", p)
	}
	if r := b.Records[0]; r.Result != "r "+redactKey || r.State["out"] != redactKey || r.Messages[0].Content != "got "+redactKey {
		t.Errorf("the record applied in memory was redacted: %+v", r)
	}
}

// The session stores the rendered texts redacted; the own key is over the
// real ones: a text that differs under the same own key is no change to
// report, nor a foreach instance to run again.
func TestRedactedTextIsNoChange(t *testing.T) {
	rec := TaskRecord{Name: "a", Agent: "w", Description: "use [REDACTED]", ExpectedOutput: "about [REDACTED]", Key: "k", OwnKey: "o"}
	tests := []struct {
		name   string
		def    spec.TaskDef
		fields []string
	}{
		{"same own key", spec.TaskDef{Name: "a", Agent: "w", Description: "use " + redactKey, ExpectedOutput: "about " + redactKey, Key: "k", OwnKey: "o"}, nil},
		{"edited", spec.TaskDef{Name: "a", Agent: "w", Description: "use it", ExpectedOutput: "about " + redactKey, Key: "k2", OwnKey: "o2"}, []string{"description", "expected_output"}},
		{"no own key recorded", spec.TaskDef{Name: "a", Agent: "w", Description: "use " + redactKey, ExpectedOutput: "about [REDACTED]", Key: "k", OwnKey: "o"}, []string{"description"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rec
			if tt.name == "no own key recorded" {
				r.OwnKey = ""
			}
			if got := definitionChanges(nil, &r, tt.def); !slices.Equal(got, tt.fields) {
				t.Errorf("changes %q, want %q", got, tt.fields)
			}
		})
	}
}
