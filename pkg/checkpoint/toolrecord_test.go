package checkpoint

import (
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

func toolSession(t *testing.T) *Session {
	t.Helper()
	defs := []spec.TaskDef{{ID: 0, Name: "work", Agent: "clerk", Key: "k1"}}
	return NewSession("s1", "/x/team.yaml", "team", spec.Sequential, defs, "fp", time.Unix(0, 0))
}

func TestToolRecordsFold(t *testing.T) {
	s := toolSession(t)
	s.Checkpoint.Decisions["work"] = DecideRerun
	recs := []Record{
		{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 1, Content: "let me", Calls: []ToolCall{
			{ID: "c1", Tool: "charge", Arguments: `{"amount":5}`}, {ID: "c2", Tool: "note", Arguments: `{}`}}}},
		{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Name: "charge"}},
		{Kind: ToolFinished, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Name: "charge", Result: "ok", Millis: 3}},
		{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c2", Name: "note", Decision: DecideRerun}},
		{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 7, Call: "zz"}}, // a turn the log lacks: ignored
	}
	for _, r := range recs {
		// Through the wire, as a journal line would go.
		p, err := EncodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRecord(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(back)
	}
	lg := s.ToolLogs["work"]
	if lg == nil || lg.Attempt != 1 || len(lg.Turns) != 1 || lg.Turns[0].Content != "let me" {
		t.Fatalf("log %+v", lg)
	}
	c1, c2 := lg.Turns[0].Calls[0], lg.Turns[0].Calls[1]
	if !c1.Done || c1.Result != "ok" || c1.Millis != 3 || c1.Pending() {
		t.Errorf("c1 %+v", c1)
	}
	if !c2.Pending() || c2.Decision != DecideRerun || lg.PendingCall().ID != "c2" {
		t.Errorf("c2 %+v", c2)
	}
	if _, ok := s.Checkpoint.Decisions["work"]; ok {
		t.Error("the decision a start settled was not consumed")
	}
	if c, err := PendingToolCall(s, "work"); err != nil || c.ID != "c2" {
		t.Errorf("PendingToolCall: %+v, %v", c, err)
	}
	// The clone is deep: the journal hands out copies.
	cl := s.clone()
	cl.ToolLogs["work"].Turns[0].Calls[0].Result = "changed"
	if s.ToolLogs["work"].Turns[0].Calls[0].Result != "ok" {
		t.Error("clone shares the tool log")
	}
	// Completing the task ends the loop: nothing is left to resume or decide.
	s.Apply(Record{Kind: TaskCompleted, Task: "work", Result: "done"})
	if lg.Resumable() || lg.Ended != "completed" {
		t.Errorf("after completion: %+v", lg)
	}
	if _, err := PendingToolCall(s, "work"); err == nil {
		t.Error("a completed task still waits for a decision")
	}
	// A new first turn replaces the log.
	s.Apply(Record{Kind: ToolTurnRecorded, Task: "work", Attempt: 3, Tool: &ToolStep{Turn: 1, Calls: []ToolCall{{ID: "n1", Tool: "note"}}}})
	if nl := s.ToolLogs["work"]; nl.Attempt != 3 || len(nl.Turns) != 1 || nl.Turns[0].Calls[0].ID != "n1" || nl.Ended != "" {
		t.Errorf("new log %+v", nl)
	}
}

func TestToolRecordsInvalid(t *testing.T) {
	for _, r := range []Record{
		{Kind: ToolTurnRecorded, Task: "work"},
		{Kind: ToolTurnRecorded, Task: "work", Tool: &ToolStep{Turn: 1}},
		{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1}},
		{Kind: ToolFinished, Tool: &ToolStep{Turn: 1, Call: "c"}},
	} {
		if _, err := EncodeRecord(r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

// A continued session keeps a task's tool log only while the task's key
// (its agent's and tools' definitions included) is unchanged.
func TestToolLogsCarried(t *testing.T) {
	old := toolSession(t)
	old.Apply(Record{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 1, Calls: []ToolCall{{ID: "c1", Tool: "charge"}}}})
	same := []spec.TaskDef{{ID: 0, Name: "work", Agent: "clerk", Key: "k1"}}
	if s := Continue(old, nil, spec.Sequential, same, "fp", time.Now()); s.ToolLogs["work"] == nil {
		t.Error("an unchanged task lost its tool log")
	}
	edited := []spec.TaskDef{{ID: 0, Name: "work", Agent: "clerk", Key: "k2"}}
	if s := Continue(old, nil, spec.Sequential, edited, "fp", time.Now()); s.ToolLogs["work"] != nil {
		t.Error("an edited task kept its tool log")
	}
}
