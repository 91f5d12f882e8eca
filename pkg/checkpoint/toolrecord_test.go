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
	if c, err := WaitingToolCall(s, "work"); err != nil || c.ID != "c2" {
		t.Errorf("WaitingToolCall: %+v, %v", c, err)
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
	if _, err := WaitingToolCall(s, "work"); err == nil {
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

// What an attempt does with a loop log: a loop a limit ended goes on once
// that limit is raised, and otherwise does not start afresh unasked after
// calls of tools that were not idempotent.
func TestToolLogNext(t *testing.T) {
	// A loop of one turn whose call of charge ran, ended on limit (max).
	ended := func(limit string, max int, idempotent bool) *ToolLog {
		var l *ToolLog
		for _, r := range []Record{
			{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 1, Calls: []ToolCall{{ID: "c1", Tool: "charge"}}}},
			{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Idempotent: idempotent}},
			{Kind: ToolFinished, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Result: "ok"}},
			{Kind: ToolLoopEnded, Task: "work", Tool: &ToolStep{Reason: "limit", Limit: limit, Max: max}},
		} {
			l = ApplyTool(l, r)
		}
		return l
	}
	completed := ended("", 0, false)
	tests := []struct {
		name         string
		log          *ToolLog
		turns, calls int
		decision     string
		want         LoopNext
	}{
		{"no log", nil, 10, 100, "", LoopAfresh},
		{"completed", completed, 10, 100, "", LoopAfresh},
		{"max_turns not raised", ended(LimitTurns, 4, false), 4, 100, "", LoopHalts},
		{"max_turns raised", ended(LimitTurns, 4, false), 5, 100, "", LoopResumes},
		{"max_turns lowered", ended(LimitTurns, 4, false), 3, 100, "", LoopHalts},
		{"the other limit raised", ended(LimitCalls, 4, false), 20, 4, "", LoopHalts},
		{"max_tool_calls raised", ended(LimitCalls, 4, false), 10, 5, "", LoopResumes},
		{"decided rerun", ended(LimitCalls, 4, false), 10, 4, DecideRerun, LoopAfresh},
		{"decided rerun, raised too", ended(LimitCalls, 4, false), 10, 8, DecideRerun, LoopAfresh},
		{"only idempotent calls ran", ended(LimitTurns, 4, true), 4, 100, "", LoopAfresh},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.log.Next(tc.turns, tc.calls, tc.decision); got != tc.want {
				t.Errorf("Next = %d, want %d", got, tc.want)
			}
		})
	}
	// Kept across an edit (raising the limit is one), and reopened by the
	// run that goes on with it.
	l := ended(LimitCalls, 4, false)
	if !ToolLogCarries(l, "k1", "k2") || ToolLogCarries(completed, "k1", "k2") {
		t.Error("a loop a limit ended is not kept across an edit, or a completed one is")
	}
	l = ApplyTool(l, Record{Kind: ToolLoopResumed, Task: "work", Tool: &ToolStep{Turn: 1}})
	if !l.Resumable() || l.Limit != "" || l.Max != 0 {
		t.Errorf("resumed log %+v", l)
	}
}

// An edit keeps an unfinished loop in which a call of a tool that was not
// idempotent ran: started afresh, its model could make that call again.
// Only such a loop waits for `decide rerun`, which starts it afresh.
func TestToolLogCarriesEdit(t *testing.T) {
	loop := func(idempotent, done bool, end *ToolStep) *ToolLog {
		recs := []Record{
			{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 1, Calls: []ToolCall{{ID: "c1", Tool: "charge"}}}},
			{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Idempotent: idempotent}},
		}
		if done {
			recs = append(recs, Record{Kind: ToolFinished, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Result: "ok"}})
		}
		if end != nil {
			recs = append(recs, Record{Kind: ToolLoopEnded, Task: "work", Tool: end})
		}
		var l *ToolLog
		for _, r := range recs {
			l = ApplyTool(l, r)
		}
		return l
	}
	// pendingAfter adds to l a second turn whose call of look started,
	// its result not recorded.
	pendingAfter := func(l *ToolLog, idempotent bool) *ToolLog {
		l = ApplyTool(l, Record{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 2, Calls: []ToolCall{{ID: "c2", Tool: "look"}}}})
		return ApplyTool(l, Record{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 2, Call: "c2", Idempotent: idempotent}})
	}
	tests := []struct {
		name                 string
		log                  *ToolLog
		carries, kept, waits bool
		afterRerun           LoopNext
	}{
		{"finished call, not idempotent", loop(false, true, nil), true, true, true, LoopAfresh},
		{"finished call, idempotent", loop(true, true, nil), false, false, false, LoopResumes},
		{"pending call, not idempotent", loop(false, false, nil), true, false, false, LoopResumes},
		// Waits for no decision (it runs again): nothing to keep, as when
		// the idempotent call had finished.
		{"pending call, idempotent", loop(true, false, nil), false, false, false, LoopResumes},
		{"finished call not idempotent, pending idempotent one", pendingAfter(loop(false, true, nil), true), true, true, true, LoopAfresh},
		{"finished call not idempotent, pending one not idempotent", pendingAfter(loop(false, true, nil), false), true, false, false, LoopResumes},
		{"finished idempotent call, pending idempotent one", pendingAfter(loop(true, true, nil), true), false, false, false, LoopResumes},
		{"ended by decide fail", loop(false, true, &ToolStep{Reason: "decided fail", Decision: DecideFail}), false, false, false, LoopAfresh},
		{"ended on a limit", loop(false, true, &ToolStep{Reason: "limit", Limit: LimitTurns, Max: 1}), true, false, true, LoopAfresh},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToolLogCarries(tc.log, "k1", "k2"); got != tc.carries {
				t.Errorf("ToolLogCarries across an edit = %v, want %v", got, tc.carries)
			}
			if got := EditKept(tc.log, "k1", "k2"); got != tc.kept {
				t.Errorf("EditKept = %v, want %v", got, tc.kept)
			}
			if EditKept(tc.log, "k1", "k1") {
				t.Error("EditKept without an edit")
			}
			sess := &Session{ToolLogs: map[string]*ToolLog{"work": tc.log}}
			if got := LoopWaits(sess, "work"); got != tc.waits {
				t.Errorf("LoopWaits = %v, want %v", got, tc.waits)
			}
			if got := tc.log.Next(10, 100, DecideRerun); got != tc.afterRerun {
				t.Errorf("Next after decide rerun = %d, want %d", got, tc.afterRerun)
			}
			// decide takes rerun, fail or unknown only for a call that
			// waits for it: one that started under a tool not idempotent.
			c, err := WaitingToolCall(sess, "work")
			if want := tc.log.PendingCall() != nil && !tc.log.PendingCall().Idempotent; (err == nil) != want || err == nil && c.Idempotent {
				t.Errorf("WaitingToolCall = %+v, %v; want a call: %v", c, err, want)
			}
		})
	}
}

// A task removed from the file keeps, in the session, an unfinished loop
// in which a call of a tool that was not idempotent ran, with the key it
// was recorded under: put back, the task finds it (CarriedLog). A loop
// an edit would not keep goes with the task.
func TestToolLogKeptWhileRemoved(t *testing.T) {
	for _, tc := range []struct {
		name       string
		idempotent bool
		kept       bool
	}{
		{"not idempotent", false, true},
		{"idempotent", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := toolSession(t)
			old.Apply(Record{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 1, Calls: []ToolCall{{ID: "c1", Tool: "charge"}}}})
			old.Apply(Record{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Idempotent: tc.idempotent}})
			old.Apply(Record{Kind: ToolFinished, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Result: "ok"}})
			removed := Continue(old, nil, spec.Sequential, []spec.TaskDef{{ID: 0, Name: "other", Agent: "clerk", Key: "ko"}}, "fp2", time.Now())
			if got := removed.RemovedLog("work") != nil; got != tc.kept {
				t.Fatalf("the session keeps the removed task's loop: %v, want %v", got, tc.kept)
			}
			back := []spec.TaskDef{{ID: 0, Name: "work", Agent: "clerk", Key: "k2"}, {ID: 1, Name: "other", Agent: "clerk", Key: "ko"}}
			lg, oldKey := removed.CarriedLog("work", "k2")
			if (lg != nil) != tc.kept || tc.kept && (oldKey != "k1" || !EditKept(lg, oldKey, "k2")) {
				t.Errorf("put back: log %v recorded under %q, want kept %v under k1", lg != nil, oldKey, tc.kept)
			}
			s := Continue(removed, nil, spec.Sequential, back, "fp", time.Now())
			if l := s.ToolLogs["work"]; (l != nil) != tc.kept || l != nil && l.Key != "" {
				t.Errorf("put back, the session's log is %+v, want kept %v, its key in the record", l, tc.kept)
			}
		})
	}
}

// A loop `decide ... fail` ended starts afresh: plan names the calls of
// tools that were not idempotent that its model may make again, until the
// task completes.
func TestFailedLoopText(t *testing.T) {
	loop := func(idempotent bool, end *ToolStep, completed bool) *ToolLog {
		s := toolSession(t)
		s.Apply(Record{Kind: ToolTurnRecorded, Task: "work", Attempt: 1, Tool: &ToolStep{Turn: 1, Calls: []ToolCall{{ID: "c1", Tool: "charge"}, {ID: "c2", Tool: "charge"}}}})
		s.Apply(Record{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Idempotent: idempotent}})
		s.Apply(Record{Kind: ToolFinished, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c1", Result: "ok"}})
		s.Apply(Record{Kind: ToolStarted, Task: "work", Tool: &ToolStep{Turn: 1, Call: "c2", Idempotent: idempotent}})
		if end != nil {
			s.Apply(Record{Kind: ToolLoopEnded, Task: "work", Tool: end})
		}
		if completed {
			s.Apply(Record{Kind: TaskCompleted, Task: "work", Result: "done"})
		}
		return s.ToolLogs["work"]
	}
	fail := &ToolStep{Reason: "decided fail", Decision: DecideFail}
	for _, tc := range []struct {
		name string
		log  *ToolLog
		want string
	}{
		{"ended by decide fail", loop(false, fail, false), "its tool loop, which `decide ... fail` ended, starts afresh: the model may make again the calls of tools that were not idempotent that ran in it (charge, 2 in all: `SHOW` lists them)"},
		{"only idempotent calls", loop(true, fail, false), ""},
		{"completed since", loop(false, fail, true), ""},
		{"ended on a limit", loop(false, &ToolStep{Reason: "limit", Limit: LimitTurns, Max: 1}, false), ""},
		{"unfinished", loop(false, nil, false), ""},
		{"no log", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FailedLoopText(tc.log, "SHOW"); got != tc.want {
				t.Errorf("FailedLoopText = %q, want %q", got, tc.want)
			}
		})
	}
}
