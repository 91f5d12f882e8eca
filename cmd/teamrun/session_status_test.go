package main

import (
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/spec"
)

func TestSessionStatus(t *testing.T) {
	task := func(name, agent string, st checkpoint.Status, errText string) checkpoint.TaskRecord {
		return checkpoint.TaskRecord{Name: name, Agent: agent, Status: st, Error: errText}
	}
	done := task("a", "sh", checkpoint.StatusCompleted, "")
	tests := []struct {
		name    string
		tasks   []checkpoint.TaskRecord
		current string
		held    bool
		kept    []string // records kept for a waiting foreach's instances (Team.Deferred)
		want    string
	}{
		{"all completed", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusCompleted, "")}, "", false, nil, statusDone},
		{"routing skipped one", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusSkipped, "")}, "", false, nil, statusPartial},
		{"a failed task", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusFailed, "exit status 1")}, "b", false, nil, statusFailed},
		{"interrupted by a signal", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusFailed, runner.InterruptedError)}, "b", false, nil, statusInterrupted},
		{"killed while running", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusRunning, "")}, "b", false, nil, statusInterrupted},
		{"held by a run", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusRunning, "")}, "b", true, nil, statusRunning},
		{"waiting for a decision", []checkpoint.TaskRecord{done, task("gate", spec.HumanAgent, checkpoint.StatusPending, ""), task("c", "sh", checkpoint.StatusPending, "")}, "gate", false, nil, statusHalted},
		{"the decision taken, run on", []checkpoint.TaskRecord{done, task("gate", spec.HumanAgent, checkpoint.StatusCompleted, ""), task("c", "sh", checkpoint.StatusCompleted, "")}, "gate", false, nil, statusDone},
		{"a failure beats a halt", []checkpoint.TaskRecord{task("x", "sh", checkpoint.StatusFailed, "boom"), task("gate", spec.HumanAgent, checkpoint.StatusPending, "")}, "gate", false, nil, statusFailed},
		{"halted at a tool call", []checkpoint.TaskRecord{done, task("b", "llm", checkpoint.StatusFailed, "halted for a decision: tool charge was started with {}"), task("c", "sh", checkpoint.StatusPending, "")}, "b", false, nil, statusHalted},
		{"a failure beats a tool halt", []checkpoint.TaskRecord{task("x", "sh", checkpoint.StatusFailed, "boom"), task("b", "llm", checkpoint.StatusFailed, "halted for a decision: tool charge was started with {}")}, "b", false, nil, statusFailed},
		{"the budget held an LLM task back", []checkpoint.TaskRecord{done, task("b", "llm", checkpoint.StatusPending, "")}, "b", false, nil, statusHalted},
		{"stopped before the end", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusPending, "")}, "a", false, nil, statusInterrupted},
		// Not tasks of the run: a run that ended done is done, whatever
		// they hold (a held instance's record is pending).
		{"records kept for a waiting foreach", []checkpoint.TaskRecord{done, task("fe", "foreach:fe", checkpoint.StatusCompleted, ""), task("fe[0]", "sh", checkpoint.StatusPending, ""), task("fe[1]", "sh", checkpoint.StatusFailed, "exit status 1")}, "a", false, []string{"fe[0]", "fe[1]"}, statusDone},
		{"a pending task beside kept records", []checkpoint.TaskRecord{done, task("b", "sh", checkpoint.StatusPending, ""), task("fe[0]", "sh", checkpoint.StatusCompleted, "")}, "a", false, []string{"fe[0]"}, statusInterrupted},
	}
	for _, tt := range tests {
		s := &checkpoint.Session{}
		s.Team.Tasks = tt.tasks
		s.Team.Deferred = tt.kept
		s.Checkpoint.CurrentTask = tt.current
		if got := sessionStatus(s, tt.held); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestCorruptCell(t *testing.T) {
	long := "session c2: /home/u/.teamrun/sessions/c2.json is corrupt: not a session file: team.tasks: expected a list, got the text \"notalist\" and much more\nacross lines; it was left untouched: restore it"
	got := brokenCell(statusCorrupt, long)
	want := "(corrupt: not a session file: team.tasks: expected a list, got the te…)"
	if got != want {
		t.Errorf("brokenCell:\n got %q\nwant %q", got, want)
	}
}
