package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

func TestElsewhereNotes(t *testing.T) {
	defs := []spec.TaskDef{{ID: 0, Name: "a", Key: "ka"}, {ID: 1, Name: "b", Key: "kb"}}
	cases := []struct {
		name string
		recs []checkpoint.Record
		want []string
	}{
		{"running on another host", []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Host: "node-a", PGID: 321}},
			[]string{"task a may still be running on host node-a (pgid 321); teamrun cannot stop it there; running it again"}},
		{"no process group on record", []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Host: "node-a"}},
			[]string{"task a may still be running on host node-a; teamrun cannot stop it there; running it again"}},
		{"running on this host: the orphan sweep's", []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Host: "here", PGID: 321}}, nil},
		{"started by an older teamrun", []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a"}}, nil},
		{"ended there", []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Host: "node-a", PGID: 1},
			{Kind: checkpoint.TaskCompleted, Task: "a", Result: "ok"}}, nil},
		{"two, one of them elsewhere", []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Host: "here", PGID: 5},
			{Kind: checkpoint.TaskStarted, Task: "b", Host: "node-b", PGID: 6}},
			[]string{"task b may still be running on host node-b (pgid 6); teamrun cannot stop it there; running it again"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := checkpoint.NewSession("s1", "/x/team.yaml", "team", spec.Workflow, defs, "fp", time.Unix(0, 0))
			for _, r := range c.recs {
				s.Apply(r)
			}
			if got := elsewhereNotes(s, "here"); !slices.Equal(got, c.want) {
				t.Errorf("notes %q, want %q", got, c.want)
			}
		})
	}
}

// TestStartedRecordsCarryHost: the run's started records name this host
// and the run's process group.
func TestStartedRecordsCarryHost(t *testing.T) {
	r := &journalRecorder{host: "node-x", pgid: 99}
	r.j = fakeTasks{}
	recs, err := r.records(Event{Type: TaskStarted, Task: "a", Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Host != "node-x" || recs[0].PGID != 99 {
		t.Fatalf("records %+v", recs)
	}
	// What an LLM attempt counts should it never end rides on its start.
	u := &checkpoint.Usage{UnknownRequests: 1, InterruptedEstimatedTokens: 9}
	if recs, err = r.records(Event{Type: TaskStarted, Task: "a", Attempt: 1, Unended: u}); err != nil || len(recs) != 1 || recs[0].Usage != u {
		t.Fatalf("records %+v, %v: want the start's estimate", recs, err)
	}
}

// fakeTasks is a journal that knows no task yet.
type fakeTasks struct{ checkpoint.Journal }

func (fakeTasks) Task(string) (checkpoint.TaskRecord, bool) { return checkpoint.TaskRecord{}, false }

// A task a kill cut off after it paid for requests is told: one whose tool
// loop the run resumes replays its recorded turns, not paid again; any
// other runs again, and what it asks again is paid again, by the rule the
// run applies (a decision to start afresh, an agent without tools now), or
// does not run (removed from the file).
func TestPaidAgainNotes(t *testing.T) {
	defs := []spec.TaskDef{{ID: 0, Name: "a", Key: "ka", Agent: "w"}}
	tool := &spec.Tool{Name: "t"}
	withTools := &spec.Team{Agents: []*spec.Agent{{Name: "w", Kind: spec.LLMAgent, Tools: []*spec.Tool{tool}}}}
	without := &spec.Team{Agents: []*spec.Agent{{Name: "w", Kind: spec.LLMAgent}}}
	paid := []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Attempt: 1},
		{Kind: checkpoint.RequestPaid, Task: "a", Usage: &checkpoint.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110,
			Calls: []checkpoint.Call{{Model: "m", Attempt: 1, Status: 200, PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}}}}
	turns := []checkpoint.Record{
		{Kind: checkpoint.ToolTurnRecorded, Task: "a", Attempt: 1, Tool: &checkpoint.ToolStep{Turn: 1, Calls: []checkpoint.ToolCall{{ID: "c1", Tool: "t", Arguments: "{}"}}}},
		{Kind: checkpoint.ToolStarted, Task: "a", Attempt: 1, Tool: &checkpoint.ToolStep{Turn: 1, Call: "c1", Name: "t"}},
		{Kind: checkpoint.ToolFinished, Task: "a", Attempt: 1, Tool: &checkpoint.ToolStep{Turn: 1, Call: "c1", Name: "t", Result: "ok"}},
	}
	const cut = "task a was cut off in attempt 1 after paying for 110 tokens (cost unknown), which the session's totals count: "
	looped := append(slices.Clone(paid), turns...)
	// A start that counts a request it may have under way (NoEnd).
	unended := &checkpoint.Usage{UnknownRequests: 1, InterruptedEstimatedTokens: 40,
		Calls: []checkpoint.Call{{Model: "m", Attempt: 1, Outcome: checkpoint.CallInterrupted, UsageUnknown: true, EstimatedTokens: 40, NoEnd: true}}}
	started := []checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "a", Attempt: 1, Usage: unended}}
	startedPaid := append(slices.Clone(started), paid[1:]...)
	const underWay = "with a request that may have been under way, counted as 1 interrupted request of unknown usage (estimated from its size: 40 tokens), which the session's totals count: "
	cases := []struct {
		name     string
		recs     []checkpoint.Record
		carried  bool // the continued session carries the task's loop
		team     *spec.Team
		decision string
		removed  bool
		want     []string
	}{
		{"no tool loop", paid, false, withTools, "", false, []string{cut + "it runs again, and what it asks again is paid again"}},
		{"a loop that resumes", looped, true, withTools, "", false,
			[]string{cut + "its tool loop resumes after turn 1: the recorded turns are replayed, not paid again; what it asks after them is paid"}},
		// The task's definition changed: the loop starts afresh.
		{"a loop not carried", looped, false, withTools, "", false, []string{cut + "it runs again, and what it asks again is paid again"}},
		{"nothing paid", paid[:1], false, withTools, "", false, nil},
		{"a request under way", started, false, withTools, "", false,
			[]string{"task a was cut off in attempt 1 " + underWay + "it runs again, and what it asks again is paid again"}},
		{"paid, and a request under way", startedPaid, false, withTools, "", false,
			[]string{"task a was cut off in attempt 1 after paying for 110 tokens (cost unknown) and " + underWay + "it runs again, and what it asks again is paid again"}},
		{"decided rerun", looped, true, withTools, checkpoint.DecideRerun, false,
			[]string{cut + `its tool loop starts afresh (decision "rerun" recorded), and what it asks again is paid again`}},
		{"agent without tools now", looped, true, without, "", false,
			[]string{cut + "it runs again without its tool loop (its agent runs no tools now), and what it asks again is paid again"}},
		{"removed from the file", looped, true, withTools, "", true, []string{cut + "it is removed from the file: it does not run"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := checkpoint.NewSession("s1", "/x/team.yaml", "team", spec.Workflow, defs, "fp", time.Unix(0, 0))
			for _, r := range c.recs {
				s.Apply(r)
			}
			nextDefs := defs
			if c.removed {
				nextDefs = nil
			}
			next := checkpoint.NewSession("s1", "/x/team.yaml", "team", spec.Workflow, nextDefs, "fp", time.Unix(0, 0))
			if c.carried {
				next.ToolLogs = s.ToolLogs
			}
			if c.decision != "" {
				next.Checkpoint.Decisions["a"] = c.decision
			}
			if got := paidAgainNotes(s, next, c.team); !slices.Equal(got, c.want) {
				t.Errorf("notes %q\nwant  %q", got, c.want)
			}
		})
	}
}
