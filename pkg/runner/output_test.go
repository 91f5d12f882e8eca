package runner

import (
	"bytes"

	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

func TestDescribe(t *testing.T) {
	ms := func(d time.Duration) *Millis { return millis(d) }
	tests := []struct {
		ev   Event
		want string
	}{
		{Event{Type: TaskStarted, Task: "a", Attempt: 1}, "started   a"},
		{Event{Type: TaskStarted, Task: "a", Attempt: 3}, "started   a (attempt 3)"},
		{Event{Type: TaskCompleted, Task: "a", Elapsed: ms(1500 * time.Millisecond), Usage: &Usage{TotalTokens: 42, UnpricedTokens: 42}}, "completed a in 1.5s (42 tokens, cost unknown)"},
		{Event{Type: TaskCompleted, Task: "a", Usage: &Usage{TotalTokens: 51200, CostUSD: 0.014}}, "completed a (51,200 tokens, $0.014)"},
		{Event{Type: TaskFailed, Task: "a", Attempt: 2, Elapsed: ms(3 * time.Millisecond), Error: "exit status 1:\nline one\nline two"}, "failed    a in 3ms (attempt 2): exit status 1: | line one | line two"},
		// A human task makes no attempts: no number, as plan says it.
		{Event{Type: TaskFailed, Task: "review", Agent: "human", Error: `decision "approve" is not one of the options yes, no`}, `failed    review: decision "approve" is not one of the options yes, no`},
		{Event{Type: TaskRetrying, Task: "a", Attempt: 1, Error: "boom", Delay: ms(2 * time.Second)}, "retrying  a: attempt 1 failed: boom; retrying in 2s"},
		{Event{Type: TaskSkipped, Task: "b", Reason: "review routed \"no\" elsewhere"}, "skipped   b: review routed \"no\" elsewhere"},
		{Event{Type: TaskRestored, Task: "a"}, "restored  a"},
		{Event{Type: TaskInterrupted, Task: "a"}, "stopped   a: not completed"},
		{Event{Type: TaskCompleted, Task: "a", Elapsed: ms(991699 * time.Nanosecond)}, "completed a in 992µs"},
		{Event{Type: TaskCompleted, Task: "a", Elapsed: ms(2*time.Millisecond + 400*time.Microsecond)}, "completed a in 2ms"},
	}
	for _, tt := range tests {
		if got := describe(tt.ev, style{}); got != tt.want {
			t.Errorf("describe(%s)\n got %q\nwant %q", tt.ev.Type, got, tt.want)
		}
	}
	if got := describe(Event{Type: TaskCompleted, Task: "a"}, style{on: true}); got != "\x1b[32mcompleted\x1b[0m a" {
		t.Errorf("coloured: %q", got)
	}
}

func TestReporters(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []Event{
		{Time: at, Type: TaskStarted, Task: "a", Attempt: 1, Session: "s"},
		{Time: at, Type: RunWarning, Message: "careful"},
		{Time: at, Type: TaskCompleted, Task: "a", Result: "out", Session: "s"},
		{Time: at, Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Succeeded, Total: 1, Ran: 1, Resume: "teamrun run x.yaml --continue --session s",
			Outputs: []TaskOutput{{Task: "a", Result: "out"}}}},
	}
	t.Run("plain", func(t *testing.T) {
		var out, errw bytes.Buffer
		r := NewReporter(iostreams.Test(nil, &out, &errw), ModeAuto)
		for _, ev := range events {
			r.Observe(ev)
		}
		r.Close()
		want := "2026-01-02T03:04:05Z started   a\n2026-01-02T03:04:05Z completed a\n── output of a ──\nout\n" +
			"summary done: 0 restored, 1 ran, 0 failed, 0 skipped of 1 tasks in 0s\nsession: s\nresume:  teamrun run x.yaml --continue --session s\n"
		if out.String() != want {
			t.Fatalf("plain output:\n%s", out.String())
		}
		if errw.String() != "teamrun: warning: careful\n" {
			t.Fatalf("stderr %q", errw.String())
		}
	})
	t.Run("quiet", func(t *testing.T) {
		var out, errw bytes.Buffer
		r := NewReporter(iostreams.Test(nil, &out, &errw), ModeQuiet)
		for _, ev := range events {
			r.Observe(ev)
		}
		if out.Len() != 0 || errw.String() != "teamrun: warning: careful\n" {
			t.Fatalf("quiet success printed %q / %q", out.String(), errw.String())
		}
		r.Observe(Event{Type: RunInfo, Message: "no session s yet: starting it"})
		r.Observe(Event{Type: TaskFailed, Task: "a", Error: "boom"})
		r.Observe(Event{Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Failed, FailedTasks: []string{"a"},
			Resume: "teamrun run x.yaml --continue --session s", Outputs: []TaskOutput{{Task: "b", Result: "out"}}}})
		// stdout stays empty; stderr has the failure and how to resume, not the outputs.
		want := "teamrun: warning: careful\nteamrun: task a failed: boom\nsummary failed: a: 0 restored, 0 ran, 0 failed, 0 skipped of 0 tasks in 0s\n" +
			"session: s\nresume:  teamrun run x.yaml --continue --session s\n"
		if out.Len() != 0 || errw.String() != want {
			t.Fatalf("quiet failure printed %q / %q", out.String(), errw.String())
		}
	})
	t.Run("plain failure", func(t *testing.T) {
		fail := []Event{
			{Time: at, Type: RunInfo, Message: "no session s yet: starting it"},
			{Time: at, Type: TaskFailed, Task: "a", Attempt: 1, Error: "boom"},
			{Time: at, Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Failed, FailedTasks: []string{"a"}, Resume: "R"}},
		}
		log := "2026-01-02T03:04:05Z note: no session s yet: starting it\n2026-01-02T03:04:05Z failed    a (attempt 1): boom\n" +
			"summary failed: a: 0 restored, 0 ran, 0 failed, 0 skipped of 0 tasks in 0s\nsession: s\nresume:  R\n"
		alsoErr := "teamrun: task a failed: boom\nsummary failed: a: 0 restored, 0 ran, 0 failed, 0 skipped of 0 tasks in 0s\nsession: s\nresume:  R\n"
		var out, errw bytes.Buffer
		r := NewReporter(iostreams.Test(nil, &out, &errw), ModeAuto)
		for _, ev := range fail {
			r.Observe(ev)
		}
		if out.String() != log || errw.String() != alsoErr {
			t.Fatalf("plain failure printed\n%q\n/ %q", out.String(), errw.String())
		}
		// One stream for both (2>&1): each line once.
		var both bytes.Buffer
		r = NewReporter(iostreams.Test(nil, &both, &both), ModeAuto)
		for _, ev := range fail {
			r.Observe(ev)
		}
		if both.String() != log {
			t.Fatalf("one stream for both printed\n%q", both.String())
		}
	})
	t.Run("json", func(t *testing.T) {
		var out bytes.Buffer
		r := NewReporter(iostreams.Test(nil, &out, &out), ModeJSON)
		for _, ev := range events {
			r.Observe(ev)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(events) {
			t.Fatalf("%d lines for %d events:\n%s", len(lines), len(events), out.String())
		}
		var first map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
			t.Fatal(err)
		}
		if first["event"] != "task_started" || first["task"] != "a" || first["time"] != "2026-01-02T03:04:05Z" || first["session"] != "s" {
			t.Fatalf("first event %v", first)
		}
	})
	t.Run("live", func(t *testing.T) {
		var out bytes.Buffer
		ios := iostreams.Test(nil, &out, &out)
		ios.SetTerminal(80, true)
		r := NewReporter(ios, ModeAuto)
		for _, ev := range append([]Event{{Time: at, Type: RunStarted, Tasks: 1}}, events...) {
			r.Observe(ev)
		}
		r.Close()
		s := out.String()
		for _, want := range []string{"0/1 done, 1 running", "\n  a \x1b[2m", "\r\x1b[1A\x1b[J", "\x1b[32mcompleted\x1b[0m a", "\x1b[1msummary\x1b[0m \x1b[32mdone\x1b[0m"} {
			if !strings.Contains(s, want) {
				t.Errorf("live output lacks %q:\n%q", want, s)
			}
		}
	})
}

// TestHaltText: the summary says what a halted run waits for, each kind of
// halt in its own words.
func TestHaltText(t *testing.T) {
	human := &Halt{Task: "approve", Command: "teamrun session decide s approve VALUE", Options: []string{"yes", "no"}}
	tool := &Halt{Task: "work", Tool: "charge", Arguments: `{"amount":5}`, Command: "teamrun session decide s work VALUE", Options: []string{"rerun", "fail", "unknown"}}
	budget := &Halt{Task: "three", Budget: "the session has used 10 tokens", Commands: []string{"teamrun session decide s budget raise=N"}}
	budget2 := &Halt{Task: "four", Budget: "the session has used 10 tokens", Commands: []string{"teamrun session decide s budget raise=N"}}
	tests := []struct {
		name  string
		halts []*Halt
		want  string
	}{
		{"none recorded", nil, "halted for a human decision"},
		{"human", []*Halt{human}, "halted for a human decision"},
		{"tool", []*Halt{tool}, `halted for a decision on task work's call of tool charge with {"amount":5} (teamrun session decide s work rerun|fail|unknown)`},
		{"budget, two tasks", []*Halt{budget, budget2}, "halted for a larger budget (teamrun session decide s budget raise=N)"},
		{"human and tool", []*Halt{human, tool}, `halted for a human decision and a decision on task work's call of tool charge with {"amount":5} (teamrun session decide s work rerun|fail|unknown)`},
	}
	for _, tc := range tests {
		if got := haltText(tc.halts); got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// TestReportersControlSequences checks that what a server or a model sent
// reaches a terminal without its control sequences (the error of a failed
// task, -v lines, the output block), and a pipe byte for byte where it is
// the task's output.
func TestReportersControlSequences(t *testing.T) {
	const (
		answer  = "before \x1b[2J\x1b]0;PWNED\x07 line1\rOVER\nline2\x1b[31mred\b\b end\n"
		escaped = `before \x1b[2J\x1b]0;PWNED\x07 line1\x0dOVER` + "\n" + `line2\x1b[31mred\x08\x08 end` + "\n"
		failure = "HTTP 400 Bad Request: bad \x1b]0;PWNED\x07\x1b[2J request"
		failEsc = `bad \x1b]0;PWNED\x07\x1b[2J request`
		raw     = "\x1b]0;PWNED"
	)
	events := []Event{
		{Type: TaskStarted, Task: "a", Attempt: 1},
		{Type: TaskLine, Task: "a", Stream: "stdout", Message: "line2\x1b[31mred"},
		{Type: TaskCompleted, Task: "a"},
		{Type: TaskFailed, Task: "b", Attempt: 1, Error: failure},
		{Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Failed, FailedTasks: []string{"b"}, Outputs: []TaskOutput{{Task: "a", Result: answer}}}},
	}
	t.Run("terminal", func(t *testing.T) {
		var out bytes.Buffer
		ios := iostreams.Test(nil, &out, &out)
		ios.SetTerminal(200, false)
		r := NewReporter(ios, ModeAuto)
		for _, ev := range events {
			r.Observe(ev)
		}
		r.Close()
		got := out.String()
		if strings.Contains(got, raw) || strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\x1b[31mred") || strings.Contains(got, "\b") {
			t.Errorf("a control sequence from the server reached the terminal:\n%q", got)
		}
		for _, want := range []string{escaped, failEsc, `a | line2\x1b[31mred`} {
			if !strings.Contains(got, want) {
				t.Errorf("the terminal does not show %q:\n%q", want, got)
			}
		}
	})
	t.Run("pipe", func(t *testing.T) {
		var out, errw bytes.Buffer
		r := NewReporter(iostreams.Test(nil, &out, &errw), ModeAuto)
		for _, ev := range events {
			r.Observe(ev)
		}
		r.Close()
		if got := out.String(); !strings.Contains(got, "── output of a ──\n"+answer) || !strings.Contains(got, "a | line2\x1b[31mred\n") {
			t.Errorf("a pipe does not get the output byte for byte:\n%q", got)
		}
		// A message is no output: escaped wherever it goes.
		failed := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "failed    b") {
				failed = l
			}
		}
		for _, got := range []string{failed, errw.String()} {
			if strings.Contains(got, raw) || !strings.Contains(got, failEsc) {
				t.Errorf("the failure is not escaped: %q", got)
			}
		}
	})
}

// --json writes each text a task's bytes fill as the session's JSON does
// (checkpoint.Text): one that is not UTF-8 as {"$base64": …}, read back
// byte for byte, never with U+FFFD in its place.
func TestJSONEventBytes(t *testing.T) {
	const raw = "caf\xe9\xff <b>\n"
	tests := []struct {
		name string
		ev   Event
		get  func(m map[string]json.RawMessage) json.RawMessage
	}{
		{"result", Event{Type: TaskCompleted, Task: "a", Result: raw}, func(m map[string]json.RawMessage) json.RawMessage { return m["result"] }},
		{"error", Event{Type: TaskFailed, Task: "a", Error: raw}, func(m map[string]json.RawMessage) json.RawMessage { return m["error"] }},
		{"line", Event{Type: TaskLine, Task: "a", Stream: "stdout", Message: raw}, func(m map[string]json.RawMessage) json.RawMessage { return m["message"] }},
		{"delta", Event{Type: TaskDelta, Task: "a", Delta: raw}, func(m map[string]json.RawMessage) json.RawMessage { return m["delta"] }},
		{"halt", Event{Type: RunHalted, Task: "ok", Halt: &Halt{Session: "s", Task: "ok", Description: raw, Command: "c"}},
			func(m map[string]json.RawMessage) json.RawMessage {
				var h map[string]json.RawMessage
				if json.Unmarshal(m["halt"], &h) != nil || string(h["task"]) != `"ok"` {
					return nil
				}
				return h["description"]
			}},
		{"summary's halt", Event{Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Halted, Halts: []*Halt{{Session: "s", Task: "ok", Description: raw}}}},
			func(m map[string]json.RawMessage) json.RawMessage {
				var s struct {
					Halts []map[string]json.RawMessage `json:"halts"`
				}
				if err := json.Unmarshal(m["summary"], &s); err != nil || len(s.Halts) != 1 {
					return nil
				}
				return s.Halts[0]["description"]
			}},
		{"output", Event{Type: RunFinished, Summary: &Summary{Session: "s", Outcome: Succeeded, Outputs: []TaskOutput{{Task: "a", Result: raw}}}},
			func(m map[string]json.RawMessage) json.RawMessage {
				var s struct {
					Outputs []map[string]json.RawMessage `json:"outputs"`
				}
				if err := json.Unmarshal(m["summary"], &s); err != nil || len(s.Outputs) != 1 {
					return nil
				}
				return s.Outputs[0]["result"]
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			r := NewReporter(iostreams.Test(nil, &out, &out), ModeJSON)
			StreamDeltas(r)
			r.Observe(tt.ev)
			var m map[string]json.RawMessage
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			if m["event"] == nil || m["task"] == nil && tt.ev.Task != "" {
				t.Fatalf("the event's other fields are lost: %s", out.String())
			}
			field := tt.get(m)
			if !bytes.HasPrefix(field, []byte(`{"$base64":`)) {
				t.Fatalf("%s, want {\"$base64\": …}", field)
			}
			var back checkpoint.Text
			if err := json.Unmarshal(field, &back); err != nil || string(back) != raw {
				t.Fatalf("read back %q (%v), want %q", back, err, raw)
			}
		})
	}
}

// An event whose texts are UTF-8, nearly every one, costs --json no more
// allocations than encoding it does: the look for bytes that are not
// UTF-8 allocates nothing.
func TestJSONEventUTF8Allocs(t *testing.T) {
	ev := Event{Time: time.Now(), Type: TaskCompleted, Session: "s", Task: "a", Agent: "w", Attempt: 1, Result: "café <b>\n", Elapsed: millis(time.Second)}
	enc := json.NewEncoder(io.Discard)
	encode := testing.AllocsPerRun(200, func() { _ = enc.Encode(ev) })
	r := NewReporter(iostreams.Test(nil, io.Discard, io.Discard), ModeJSON)
	if got := testing.AllocsPerRun(200, func() { r.Observe(ev) }); got > encode {
		t.Errorf("Observe: %v allocations an event, encoding it %v", got, encode)
	}
}
