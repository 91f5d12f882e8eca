package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
)

func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	spans := []span{
		{task: "fetch", attempt: 1, start: at(0), end: at(5), outcome: "completed"},
		{task: "a-much-longer-name", attempt: 3, start: at(5), end: at(10), outcome: "failed"},
		{task: "tiny", attempt: 1, start: at(2), end: at(2), outcome: "completed"},
		{task: "died", attempt: 2, start: at(7.5), outcome: "no end recorded"},
	}
	var out bytes.Buffer
	printTimeline(&out, spans, 78, false) // leaves 10 columns for the bars
	want := `timeline (from 2026-03-01T10:00:00Z, 10s in all):
  TASK                ATTEMPT  START  DURATION  OUTCOME
  fetch               1        +0s    5s        completed        |#####     |
  a-much-longer-name  3        +5s    5s        failed           |     #####|
  tiny                1        +2s    0s        completed        |  #       |
  died                2        +7.5s  -         no end recorded  |       ???|
`
	if out.String() != want {
		t.Errorf("timeline:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printTimeline(&out, spans[:1], 59, true)
	if !strings.Contains(out.String(), "|██████████|") {
		t.Errorf("a terminal gets block bars:\n%s", out.String())
	}
	for _, lw := range []int{40, 80, 200} {
		out.Reset()
		printTimeline(&out, spans, lw, false)
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[2:] {
			n := len([]rune(l))
			if lw >= 80 && n > lw-1 || n > max(lw-1, 78) {
				t.Errorf("width %d: a line of %d columns: %q", lw, n, l)
			}
		}
	}
}

func TestSpansOf(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	tests := []struct {
		name string
		task checkpoint.TaskRecord
		want []span
	}{
		{"every attempt from the history",
			checkpoint.TaskRecord{Name: "t", Status: checkpoint.StatusCompleted, Attempts: 5, StartedAt: at(9), FinishedAt: at(10), History: []checkpoint.Attempt{
				{N: 1, Start: *at(0), End: at(1), Outcome: checkpoint.StatusFailed, Error: "exit status 3"},
				{N: 2, Start: *at(2), End: at(3), Outcome: checkpoint.StatusFailed, Error: runner.InterruptedError},
				{N: 3, Start: *at(4), Outcome: checkpoint.StatusRunning},
				{N: 4, Start: *at(5), End: at(6), Outcome: checkpoint.StatusFailed, Error: checkpoint.HaltedErrorPrefix + "tool charge"},
				{N: 5, Start: *at(9), End: at(10), Outcome: checkpoint.StatusCompleted},
			}},
			[]span{
				{task: "t", attempt: 1, start: *at(0), end: *at(1), outcome: "failed"},
				{task: "t", attempt: 2, start: *at(2), end: *at(3), outcome: "interrupted"},
				{task: "t", attempt: 3, start: *at(4), outcome: "no end recorded"},
				{task: "t", attempt: 4, start: *at(5), end: *at(6), outcome: "halted"},
				{task: "t", attempt: 5, start: *at(9), end: *at(10), outcome: "completed"},
			}},
		{"an end before the start is no end",
			checkpoint.TaskRecord{Name: "t", Attempts: 1, History: []checkpoint.Attempt{{N: 1, Start: *at(5), End: at(4), Outcome: checkpoint.StatusFailed}}},
			[]span{{task: "t", attempt: 1, start: *at(5), outcome: "failed"}}},
		{"a session from before the history: the last attempt",
			checkpoint.TaskRecord{Name: "t", Status: checkpoint.StatusFailed, Error: runner.InterruptedError, Attempts: 2, StartedAt: at(3), FinishedAt: at(4)},
			[]span{{task: "t", attempt: 2, start: *at(3), end: *at(4), outcome: "interrupted"}}},
		{"never ran", checkpoint.TaskRecord{Name: "t", Status: checkpoint.StatusPending}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &checkpoint.Session{}
			s.Team.Tasks = []checkpoint.TaskRecord{tt.task}
			got := spansOf(s)
			if len(got) != len(tt.want) {
				t.Fatalf("spans %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("span %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
