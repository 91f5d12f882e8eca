package plan

import (
	"slices"
	"time"

	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/cmdline"
	"github.com/teamrun/teamrun/pkg/spec"
)

const base = `
process: workflow
agents:
  sh: {shell: cat}
  other: {shell: cat}
tasks:
  fetch: {description: fetch, agent: sh}
  build: {description: build, agent: sh, context: [fetch]}
  gate:
    description: ship?
    agent: human
    context: [build]
    options: [yes, no]
    condition: {"yes": [ship], "no": [fix]}
  ship: {description: ship, agent: sh, context: [gate]}
  fix: {description: fix, agent: sh, context: [gate]}
  after: {description: after, agent: sh, context: [fix]}
`

type team struct {
	t    *spec.Team
	defs []spec.TaskDef
	fp   string
}

func load(t *testing.T, yaml string) team {
	t.Helper()
	tm, err := spec.Parse("agents.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	defs := tm.TaskDefs(tm.InitialState(nil))
	return team{tm, defs, spec.FingerprintOf(defs)}
}

// rec sets a task's state in a session: status, result or error, attempts.
type rec struct {
	status   checkpoint.Status
	result   string
	attempts int
}

func session(tm team, recs map[string]rec, decisions map[string]string) *checkpoint.Session {
	s := checkpoint.NewSession("s1", "/p/agents.yaml", "t", tm.t.Process, tm.defs, tm.fp, testTime)
	for i := range s.Team.Tasks {
		r, ok := recs[s.Team.Tasks[i].Name]
		if !ok {
			continue
		}
		t := &s.Team.Tasks[i]
		t.Status, t.Attempts = r.status, r.attempts
		if r.status == checkpoint.StatusFailed {
			t.Error = r.result
		} else {
			t.Result = r.result
		}
	}
	for k, v := range decisions {
		s.Checkpoint.Decisions[k] = v
	}
	return s
}

func TestMake(t *testing.T) {
	orig := load(t, base)
	done := rec{checkpoint.StatusCompleted, "ok", 1}
	allDone := map[string]rec{"fetch": done, "build": done, "gate": {checkpoint.StatusCompleted, "yes", 0}, "ship": done,
		"fix": {checkpoint.StatusSkipped, "", 0}, "after": {checkpoint.StatusSkipped, "", 0}}
	edit := func(from, to string) team { return load(t, strings.Replace(base, from, to, 1)) }

	tests := []struct {
		name    string
		spec    team
		sess    *checkpoint.Session
		reuse   checkpoint.Reuse
		kind    string
		want    map[string]string // task: "action: reason prefix"
		removed []string
	}{
		{
			name: "no session", spec: orig, kind: "none",
			want: map[string]string{
				"fetch": "run: no checkpoint: new session",
				"gate":  "run: no checkpoint: new session; no decision yet: the run halts here (exit 3) until `teamrun session decide ID gate VALUE`",
				"ship":  "run: no checkpoint: new session; only if gate routes to it",
			},
		},
		{
			name: "failed, interrupted, pending decision", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": {checkpoint.StatusFailed, "exit status 3: boom\nmore", 2}}, nil),
			want: map[string]string{
				"fetch": "restore: fingerprint " + orig.fp + " matches; completed last time",
				"build": "run: failed last time (attempt 2): exit status 3: boom",
				"gate":  "run: not run yet; no decision yet: the run halts here (exit 3) until `teamrun session decide s1 gate VALUE`",
				"ship":  "run: not run yet; only if gate routes to it",
			},
		},
		{
			name: "halted in the middle (a tool call)", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": {checkpoint.StatusFailed, checkpoint.HaltedErrorPrefix + "tool rm was started with {} without a recorded result", 2}}, nil),
			want: map[string]string{"build": "run: halted last time (attempt 2): tool rm was started with {} without a recorded result"},
		},
		// What the budget does now, NoteBudget says: the reason recorded
		// then is not cut to a line at the point that explains it.
		{
			name: "halted in the middle (the budget)", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": {checkpoint.StatusFailed, checkpoint.BudgetHaltPrefix +
				"the session has spent $0.004 and the next request may cost up to $0.010124 more (its prompt and max_tokens), budget.max_cost_usd is $0.012", 2}}, nil),
			want: map[string]string{"build": "run: halted last time (attempt 2) for the budget"},
		},
		{
			name: "interrupted", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": {checkpoint.StatusRunning, "", 1}}, nil),
			want: map[string]string{"build": "run: interrupted last time (attempt 1 was running)"},
		},
		{
			name: "stopped by a signal", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": {checkpoint.StatusFailed, checkpoint.InterruptedError, 1}}, nil),
			want: map[string]string{"build": "run: interrupted last time (attempt 1)"},
		},
		{
			name: "decision recorded routes", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": done}, map[string]string{"gate": "no"}),
			want: map[string]string{
				"gate":  `run: not run yet; decision "no" recorded: the task completes with it`,
				"ship":  `skip: gate's recorded decision "no" routes elsewhere`,
				"fix":   "run: not run yet",
				"after": "run: not run yet",
			},
		},
		{
			name: "restored routes; skipped tasks stay skipped", spec: orig, kind: "full",
			sess: session(orig, allDone, nil),
			want: map[string]string{
				"gate":  "restore: fingerprint",
				"ship":  "restore: fingerprint",
				"fix":   `skip: gate's restored result "yes" routes elsewhere`,
				"after": "skip: every task it reads would be skipped",
			},
		},
		{
			name: "restored result matching no route decides again", spec: orig, kind: "full",
			sess: session(orig, map[string]rec{"fetch": done, "build": done, "gate": {checkpoint.StatusCompleted, "maybe", 0}}, nil),
			want: map[string]string{
				"gate": `run: its restored result "maybe" matches none of its condition's values ("yes", "no")`,
				"ship": "run: not run yet; only if gate routes to it",
			},
		},
		{
			name: "description changed, strict", spec: edit("build: {description: build,", "build: {description: build twice,"), kind: "partial",
			sess: session(orig, allDone, nil),
			want: map[string]string{
				"fetch": "run: completed last time, but the task set changed: --reuse strict restores no output; --reuse unchanged would restore this one",
				"build": "run: changed since the checkpoint: description",
				"ship":  "run: downstream of changed task build",
			},
		},
		{
			name: "description changed, unchanged reused", spec: edit("build: {description: build,", "build: {description: build twice,"), kind: "per-task",
			reuse: checkpoint.ReuseUnchanged, sess: session(orig, allDone, nil),
			want: map[string]string{
				"fetch": "restore: unchanged",
				"build": "run: changed since the checkpoint: description",
				"gate":  "run: downstream of changed task build; will run only if build's output changes (else its recorded result is reused: early cut-off); no decision yet",
				"ship":  "run: downstream of changed task build; will run only if gate's output changes (else its recorded result is reused: early cut-off); only if gate routes to it",
			},
		},
		{
			name: "agent changed", spec: edit("fetch: {description: fetch, agent: sh}", "fetch: {description: fetch, agent: other}"), kind: "per-task",
			reuse: checkpoint.ReuseUnchanged, sess: session(orig, allDone, nil),
			want: map[string]string{
				"fetch": "run: changed since the checkpoint: agent",
				"build": "run: downstream of changed task fetch",
			},
		},
		{
			name: "context changed only: the fingerprint still matches", spec: edit("build: {description: build, agent: sh, context: [fetch]}", "build: {description: build, agent: sh, context: []}"), kind: "full",
			sess: session(orig, allDone, nil),
			want: map[string]string{
				"build": "restore: fingerprint " + orig.fp + " matches; completed last time (its context changed since; the fingerprint does not cover it)",
			},
		},
		{
			name: "task removed", spec: edit("  after: {description: after, agent: sh, context: [fix]}\n", ""), kind: "per-task",
			reuse: checkpoint.ReuseUnchanged, sess: session(orig, allDone, nil),
			want:    map[string]string{"fetch": "restore: unchanged", "after": "skip: removed from the file"},
			removed: []string{"after"},
		},
		{
			name: "task added", spec: edit("  after:", "  lint: {description: lint, agent: sh, context: [build]}\n  after:"), kind: "per-task",
			reuse: checkpoint.ReuseUnchanged, sess: session(orig, allDone, nil),
			want: map[string]string{"lint": "run: added to the file since the checkpoint", "fetch": "restore: unchanged"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Make(tc.spec.t, tc.spec.defs, tc.spec.fp, tc.sess, checkpoint.Choice{Reuse: tc.reuse}, cmdline.Where{})
			if p.Restore != tc.kind {
				t.Fatalf("restore %s, want %s", p.Restore, tc.kind)
			}
			got := map[string]Step{}
			for _, s := range p.Steps {
				got[s.Task] = s
			}
			for task, want := range tc.want {
				s, ok := got[task]
				if !ok {
					t.Errorf("no step for %s", task)
					continue
				}
				if line := string(s.Action) + ": " + s.Reason; !strings.HasPrefix(line, want) {
					t.Errorf("%s:\n got %s\nwant %s…", task, line, want)
				}
			}
			for _, r := range tc.removed {
				if !got[r].Removed {
					t.Errorf("%s not marked removed", r)
				}
			}
			if n := p.Count(Restore) + p.Count(Run) + p.Count(Skip); n != len(p.Steps) {
				t.Errorf("counts %d of %d steps", n, len(p.Steps))
			}
		})
	}
}

var testTime = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const toolsBase = `
tools:
  get_time: {description: time, shell: date, idempotent: true}
  note: {shell: 'cat >> notes'}
agents:
  clock: {llm: m, tools: [get_time, note]}
tasks:
  now: {description: what time is it, agent: clock}
`

// plan says which of an agent's tools changed when its definition did.
func TestPlanNamesChangedTool(t *testing.T) {
	old := load(t, toolsBase)
	sess := session(old, map[string]rec{"now": {status: checkpoint.StatusCompleted, result: "noon", attempts: 1}}, nil)
	for _, a := range old.t.Agents {
		sess.Team.Agents = append(sess.Team.Agents, checkpoint.AgentRecord{Name: a.Name, Key: old.t.AgentKey(a.Name, nil), Tools: old.t.ToolKeys(a.Name)})
	}
	tests := []struct{ name, yaml, want string }{
		{"a tool edited", strings.Replace(toolsBase, "shell: date", "shell: date -u", 1), "(agent clock: tool get_time changed)"},
		{"a tool removed", strings.Replace(toolsBase, "tools: [get_time, note]", "tools: [get_time]", 1), "(agent clock: tool note removed)"},
		{"a built-in added", strings.Replace(toolsBase, "tools: [get_time, note]", "tools: [get_time, note, read_file]", 1), "(agent clock: tool read_file added)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := load(t, tc.yaml)
			if now.fp != old.fp {
				t.Fatal("a tool edit changed the task-set fingerprint")
			}
			for _, reuse := range []checkpoint.Reuse{checkpoint.ReuseStrict, checkpoint.ReuseUnchanged} {
				p := Make(now.t, now.defs, now.fp, sess, checkpoint.Choice{Reuse: reuse}, cmdline.Where{})
				if len(p.Steps) != 1 || !strings.Contains(p.Steps[0].Reason, tc.want) {
					t.Errorf("reuse %s: steps %+v, want the reason to say %q", reuse, p.Steps, tc.want)
				}
			}
			// The fingerprint matches, so the result is restored (with the
			// note); once the task set changes too, --reuse unchanged re-runs
			// the task whose agent's tool changed.
			grown := load(t, tc.yaml+"  later: {description: later, agent: clock}\n")
			p := Make(grown.t, grown.defs, grown.fp, sess, checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged}, cmdline.Where{})
			if p.Steps[0].Action != Run || !strings.Contains(p.Steps[0].Reason, "agent definition") || !strings.Contains(p.Steps[0].Reason, tc.want) {
				t.Errorf("--reuse unchanged: %+v", p.Steps[0])
			}
		})
	}
	// Unchanged: nothing said.
	p := Make(old.t, old.defs, old.fp, sess, checkpoint.Choice{Reuse: checkpoint.ReuseUnchanged}, cmdline.Where{})
	if strings.Contains(p.Steps[0].Reason, "tool") {
		t.Errorf("unchanged tools: %q", p.Steps[0].Reason)
	}
}

// plan says how an unfinished tool loop resumes, and that a call a crash
// left without its result halts the run unless its tool was idempotent
// when the call started (as journaled: today's spec does not count) or a
// decision is recorded.
func TestPlanToolLoop(t *testing.T) {
	tm := load(t, toolsBase)
	halts := "the run halts here (exit 3) until `teamrun session decide --store /srv/st s1 now rerun|fail|unknown`"
	for _, tc := range []struct {
		name, tool        string
		startedIdempotent bool
		decision, want    string
	}{
		{"idempotent", "get_time", true, "", "tool get_time was started without a recorded result and was idempotent then: it runs again"},
		// get_time is idempotent today, but was not when the call started.
		{"made idempotent since", "get_time", false, "", halts},
		{"not idempotent", "note", false, "", halts},
		{"decided", "note", false, "unknown", `decision "unknown" recorded`},
		// The run spends a recorded decision also on an idempotent call.
		{"idempotent, decided", "get_time", true, "unknown", `decision "unknown" recorded`},
		// Renamed since (no tool by that name today): still halts.
		{"renamed since", "gone", false, "", halts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := session(tm, map[string]rec{"now": {status: checkpoint.StatusRunning, attempts: 1}}, nil)
			for _, r := range []checkpoint.Record{
				{Kind: checkpoint.ToolTurnRecorded, Task: "now", Attempt: 1, Tool: &checkpoint.ToolStep{Turn: 1, Calls: []checkpoint.ToolCall{{ID: "c1", Tool: tc.tool, Arguments: `{}`}}}},
				{Kind: checkpoint.ToolStarted, Task: "now", Tool: &checkpoint.ToolStep{Turn: 1, Call: "c1", Idempotent: tc.startedIdempotent}},
			} {
				sess.Apply(r)
			}
			if tc.decision != "" {
				sess.Apply(checkpoint.Record{Kind: checkpoint.DecisionRecorded, Task: "now", Value: tc.decision})
			}
			p := Make(tm.t, tm.defs, tm.fp, sess, checkpoint.Choice{Reuse: checkpoint.ReuseStrict}, cmdline.Where{Store: "/srv/st"})
			if r := p.Steps[0].Reason; p.Steps[0].Action != Run || !strings.Contains(r, "its tool loop resumes after turn 1") || !strings.Contains(r, tc.want) {
				t.Errorf("step %+v", p.Steps[0])
			}
		})
	}
}

// A --keep whose task's own recorded result today's task refuses is not
// honoured: the plan warns once, naming the task and why.
func TestPlanKeepNotHonoured(t *testing.T) {
	tm := load(t, `
process: workflow
agents:
  sh: {shell: cat}
tasks:
  triage:
    description: triage
    agent: sh
    output_schema: {type: object, required: [severity]}
    route_on: /severity
    condition: {high: [page], low: [log]}
  page: {description: page, agent: sh, context: [triage]}
  log: {description: log, agent: sh, context: [triage]}
`)
	for _, tc := range []struct {
		name, result string
		keep         []string
		want         string // the one warning, "" for none
	}{
		{"fits", `{"severity": "high"}`, []string{"triage"}, ""},
		{"schema", `{"level": "high"}`, []string{"triage"},
			"--keep triage: not honoured, its restored result no longer fits output_schema (at the top: missing properties: 'severity'): it runs"},
		{"route", `{"severity": "urgent"}`, []string{"triage"},
			`--keep triage: not honoured, its restored result's /severity, "urgent", matches none of its condition's values ("high", "low"): it runs`},
		{"not kept", `{"level": "high"}`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := rec{checkpoint.StatusCompleted, tc.result, 1}
			sess := session(tm, map[string]rec{"triage": done}, nil)
			p := Make(tm.t, tm.defs, tm.fp, sess, checkpoint.Choice{Reuse: checkpoint.ReuseStrict, Keep: tc.keep}, cmdline.Where{})
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(p.Warnings, want) {
				t.Errorf("warnings %q, want %q", p.Warnings, want)
			}
		})
	}
}

// The decide command a plan names carries the --store it was given, as
// run's do, and quotes what needs it.
func TestPlanDecideCommand(t *testing.T) {
	tm := load(t, `
agents:
  sh: {shell: cat}
tasks:
  a: {description: a, agent: sh}
  ok it: {description: approve, agent: human}
`)
	for _, tc := range []struct{ name, store, want string }{
		{"no store", "", "until `teamrun session decide s1 'ok it' VALUE`"},
		{"a folder", "/srv/my store", "until `teamrun session decide --store '/srv/my store' s1 'ok it' VALUE`"},
		{"a URL", "postgres://u:hunter2@db/app", "until `teamrun session decide --store postgres://u@db/app s1 'ok it' VALUE`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := session(tm, map[string]rec{"a": {checkpoint.StatusCompleted, "ok", 1}}, nil)
			p := Make(tm.t, tm.defs, tm.fp, sess, checkpoint.Choice{Reuse: checkpoint.ReuseStrict}, cmdline.Where{Store: tc.store})
			if r := p.Steps[1].Reason; !strings.HasSuffix(r, tc.want) {
				t.Errorf("reason %q, want it to end %q", r, tc.want)
			}
		})
	}
}
