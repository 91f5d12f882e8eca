package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

func TestRaisedBudget(t *testing.T) {
	cost := &spec.Budget{MaxCostUSD: 1}
	tokens := &spec.Budget{MaxTokens: 1000}
	both := &spec.Budget{MaxCostUSD: 1, MaxTokens: 1000}
	tests := []struct {
		b               *spec.Budget
		recorded, value string
		want, wantErr   string
	}{
		{cost, "", "raise=0.5", "max_cost_usd=1.5", ""},
		{cost, "max_cost_usd=1.5", "raise=0.5", "max_cost_usd=2", ""},
		{tokens, "", "raise=500", "max_tokens=1500", ""},
		{tokens, "max_tokens=1500", "raise=500", "max_tokens=2000", ""},
		// A spec raised above the recorded raise wins.
		{&spec.Budget{MaxTokens: 5000}, "max_tokens=1500", "raise=1", "max_tokens=5001", ""},
		{both, "", "max_tokens=4000", "max_cost_usd=1,max_tokens=4000", ""},
		{both, "", "raise=1", "", "say which to raise, e.g. max_cost_usd=2 or max_tokens=2000"},
		{tokens, "", "raise=1.5", "", "whole number"},
		{tokens, "", "raise=-1", "", "wants a positive number"},
		{tokens, "", "more", "", "want raise=N, max_cost_usd=X or max_tokens=N"},
		{tokens, "", "max_turns=3", "", "want raise=N"},
		{nil, "", "raise=1", "", "the spec sets no budget"},
		// Sums carry no float noise; NaN, Inf and sizes past 2^53 are no
		// budget (NaN once erased an earlier raise, Inf made it endless).
		{&spec.Budget{MaxCostUSD: 0.00004}, "", "raise=0.001", "max_cost_usd=0.00104", ""},
		{&spec.Budget{MaxCostUSD: 0.00004}, "max_cost_usd=0.00104", "raise=NaN", "", "wants a positive number"},
		{cost, "", "raise=Inf", "", "wants a positive number"},
		{cost, "", "max_cost_usd=+Inf", "", "wants a positive number"},
		{cost, "", "raise=1e308", "", "wants a positive number below 2^53"},
		{cost, "", "max_cost_usd=1e-12", "", "a decision only raises it"},
		{tokens, "max_tokens=9007199254740000", "raise=9000", "", "2^53 or more"},
		{cost, "max_cost_usd=9007199254740000", "raise=9000", "", "max_cost_usd would be $9007199254749000.00, 2^53 or more: give max_cost_usd=X instead"},
		// A decision only raises: one that would change nothing is refused,
		// saying what would.
		{tokens, "", "max_cost_usd=1", "", `"max_cost_usd=1": the spec's budget sets no max_cost_usd, and a session can only raise a limit its spec sets: it sets max_tokens (1,000): raise=N adds N tokens`},
		{cost, "", "max_tokens=5000", "", "sets no max_tokens, and a session can only raise a limit its spec sets: it sets max_cost_usd ($1.00): raise=N adds N dollars"},
		{tokens, "max_tokens=1500", "max_tokens=5", "", `"max_tokens=5": max_tokens is 1,500, and a decision only raises it: give more than 1500, or raise=N to add N tokens`},
		{tokens, "max_tokens=1500", "max_tokens=1500", "", "give more than 1500"},
		{tokens, "max_tokens=1500", "max_tokens=1501", "max_tokens=1501", ""},
		{both, "", "max_cost_usd=0.5", "", "max_cost_usd is $1.00, and a decision only raises it: give more than 1, or raise=N"},
		{both, "max_cost_usd=1.25", "max_cost_usd=1.2500000000001", "", "give more than 1.25"},
		{both, "max_cost_usd=1.25", "max_cost_usd=1.5", "max_cost_usd=1.5,max_tokens=1000", ""},
	}
	for _, tt := range tests {
		got, err := RaisedBudget(tt.b, tt.recorded, tt.value)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%+v %q %q: %q, %v; want %q", tt.b, tt.recorded, tt.value, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%+v %q %q: err %v, want %q", tt.b, tt.recorded, tt.value, err, tt.wantErr)
		}
	}
}

func TestEffectiveBudget(t *testing.T) {
	b := &spec.Budget{MaxCostUSD: 1, MaxTokens: 1000}
	tests := []struct {
		recorded string
		want     spec.Budget
	}{
		{"", *b},
		{"max_tokens=2000", spec.Budget{MaxCostUSD: 1, MaxTokens: 2000}},
		{"max_tokens=10", *b}, // lower than the spec's: the spec holds
		{"max_cost_usd=3,max_tokens=2000", spec.Budget{MaxCostUSD: 3, MaxTokens: 2000}},
		{"approve", *b}, // a human task named budget: not a raise
	}
	for _, tt := range tests {
		if got := effectiveBudget(b, tt.recorded); *got != tt.want {
			t.Errorf("%q: %+v, want %+v", tt.recorded, *got, tt.want)
		}
	}
	if effectiveBudget(nil, "max_tokens=5") != nil {
		t.Errorf("a raise alone made a budget")
	}
}

// TestAdmits: the rule for one more request under a budget.
func TestAdmits(t *testing.T) {
	tokens := &spec.Budget{MaxTokens: 1000}
	dollars := &spec.Budget{MaxCostUSD: 1}
	tests := []struct {
		name     string
		b        *spec.Budget
		spent    *Usage
		inflight map[int]reservation
		r        reservation
		ok       bool
		refused  bool
	}{
		{"nothing spent, none under way", tokens, nil, nil, reservation{tokens: 500}, true, false},
		{"spent reaches the budget", tokens, &Usage{TotalTokens: 1000}, nil, reservation{all: true}, false, true},
		{"no worst case, none under way", tokens, &Usage{TotalTokens: 900}, nil, reservation{all: true}, true, false},
		{"no worst case waits for one under way", tokens, nil, map[int]reservation{1: {tokens: 10}}, reservation{all: true}, false, false},
		{"one without a worst case under way: wait", tokens, nil, map[int]reservation{1: {all: true}}, reservation{tokens: 10}, false, false},
		{"both fit", tokens, &Usage{TotalTokens: 100}, map[int]reservation{1: {tokens: 400}}, reservation{tokens: 500}, true, false},
		{"together they would cross: wait", tokens, &Usage{TotalTokens: 100}, map[int]reservation{1: {tokens: 500}}, reservation{tokens: 500}, false, false},
		{"alone it would cross: refused", tokens, &Usage{TotalTokens: 600}, nil, reservation{tokens: 500}, false, true},
		{"dollars: fits", dollars, &Usage{TotalTokens: 5, CostUSD: 0.5}, nil, reservation{tokens: 5, cost: 0.4}, true, false},
		{"dollars: would cross", dollars, &Usage{TotalTokens: 5, CostUSD: 0.5}, nil, reservation{tokens: 5, cost: 0.6}, false, true},
		// Exactly: a worst case that fills what is left fits, in dollars
		// too, where 0.2 + 0.1 is 0.30000000000000004 in floats; spent
		// exactly at the budget is reached.
		{"tokens: fills the budget exactly", tokens, &Usage{TotalTokens: 700}, nil, reservation{tokens: 300}, true, false},
		{"dollars: fills the budget exactly", &spec.Budget{MaxCostUSD: 0.3}, &Usage{TotalTokens: 5, CostUSD: 0.2}, nil, reservation{tokens: 5, cost: 0.1}, true, false},
		{"dollars: spent exactly at the budget", &spec.Budget{MaxCostUSD: 0.3}, &Usage{TotalTokens: 5, CostUSD: 0.1 + 0.2 - 1e-17}, nil, reservation{tokens: 5, cost: 0.1}, false, true},
		{"dollars: an unpriced request is not counted", dollars, &Usage{TotalTokens: 5, CostUSD: 0.5}, nil, reservation{tokens: 1e6}, true, false},
	}
	for _, tc := range tests {
		ok, why := admits(tc.b, tc.spent, tc.inflight, tc.r)
		if ok != tc.ok || (why != "") != tc.refused {
			t.Errorf("%s: admits = %v, %q; want %v, refused %v", tc.name, ok, why, tc.ok, tc.refused)
		}
	}
	if r := reserveFor(300, 0, nil); !r.all {
		t.Errorf("without max_tokens: %+v, want the whole remainder", r)
	}
}

// TestReserveFor: a request's worst case prices every token it may use at
// the dearest price of the table, as costOf charges a server that reports
// only total_tokens: the prompt, 300 bytes as 101 tokens, and 50 of
// max_tokens.
func TestReserveFor(t *testing.T) {
	cached := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		price *spec.Price
		cost  float64
	}{
		{"output dearer", &spec.Price{Input: 1, Output: 2}, 151 * 2 / 1e6},
		{"input dearer", &spec.Price{Input: 3, Output: 2}, 151 * 3 / 1e6},
		{"a cached price above both", &spec.Price{Input: 1, Output: 2, CachedInput: cached(4)}, 151 * 4 / 1e6},
		{"no price: the cost is unknown", nil, 0},
	} {
		r := reserveFor(300, 50, tc.price)
		if r.all || r.tokens != 151 || r.cost != tc.cost {
			t.Errorf("%s: reserveFor(300, 50) = %+v, want 151 tokens, $%g", tc.name, r, tc.cost)
		}
		if tc.price == nil {
			continue
		}
		// What a total-only answer of that many tokens is charged: never
		// more than the worst case.
		if got := costOf(llm.Usage{TotalTokens: r.tokens}, tc.price); got > r.cost {
			t.Errorf("%s: a total-only usage of %d tokens costs $%g, over the worst case $%g", tc.name, r.tokens, got, r.cost)
		}
	}
	if r := reserveFor(300, 0, nil); !r.all {
		t.Errorf("without max_tokens: %+v, want the whole remainder", r)
	}
}

// TestBudgetTotalOnlyUsage: a server that reports only total_tokens is
// charged each token at the dearest price (costOf), so the worst case the
// gate reserves prices them so too: a request it lets through never takes
// the session over its budget. Priced at the input price, a 40 KB prompt
// ($0.0137 reserved, $0.0205 charged) passed a $0.015 budget and crossed
// it by 37%, and two such tasks of a workflow ran side by side under $0.03.
func TestBudgetTotalOnlyUsage(t *testing.T) {
	big := strings.Repeat("lorem ipsum dolor sit amet ", 1500)
	for _, tc := range []struct {
		name     string
		process  string
		tasks    int
		budget   string
		requests int // sent before the halt
	}{
		{"a prompt whose worst case alone is over it", "sequential", 1, "0.015", 0},
		{"a workflow's tasks, one after the other", "workflow", 3, "0.03", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLLM{}
			f.answer = func(n int, _ chatRequest, w http.ResponseWriter) {
				// As tokenizers count English: a token in 4 bytes.
				fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"total_tokens":%d}}`,
					len(f.requestBody(n-1))/4+100)
			}
			srv := httptest.NewServer(f)
			defer srv.Close()
			yaml := fmt.Sprintf("process: %s\nllm: {model: m, base_url: BASE, max_tokens: 100, price: {input: 1, output: 2}}\nbudget: {max_cost_usd: %s}\nagents:\n  w: {role: W, goal: g}\ntasks:\n",
				tc.process, tc.budget)
			for k := range tc.tasks {
				yaml += fmt.Sprintf("  t%d: {description: \"%d %s\", agent: w}\n", k, k, big)
			}
			p := newProject(t, srv.URL, yaml)
			sum, _, err := p.run(t, false)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Outcome != Halted {
				// Not the summary whole: its outputs hold the 40 KB prompt.
				t.Fatalf("outcome %v after %d requests; want a halt for the budget", sum.Outcome, f.count())
			}
			if f.count() != tc.requests {
				t.Errorf("%d requests, want %d", f.count(), tc.requests)
			}
			budget, _ := strconv.ParseFloat(tc.budget, 64)
			if _, cost := spentOf(p.session(t).Usage()); cost > budget {
				t.Errorf("the session spent $%g, over its budget $%g", cost, budget)
			}
		})
	}
}

// A budget is checked before every request: a tool loop whose next turn
// would cross it halts (exit 3) before that request, with the turns paid
// so far recorded; a raise resumes the loop where it stopped.
func TestBudgetBeforeEveryRequest(t *testing.T) {
	tests := []struct {
		name, llm, budget string
		wantWhy           string
	}{
		// 1,002 tokens a request: 2,004 spent after two turns reaches 2,004.
		{"spent reaches it", "{model: m, base_url: BASE}", "{max_tokens: 2004}", "the session has used 2,004 tokens, budget.max_tokens is 2,004"},
		// 2,004 of 2,100 spent: the third turn's worst case (its prompt,
		// far over 300 bytes, and max_tokens) does not fit in the 96 left.
		{"the next turn's worst case would cross it", "{model: m, base_url: BASE, max_tokens: 5}", "{max_tokens: 2100}",
			"the session has used 2,004 tokens and the next request may use up to"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &toolLLM{script: func(n int, _ toolRequest) string {
				if n <= 2 {
					return calls(fmt.Sprintf("c%d", n), "note", fmt.Sprintf(`{"text":"n%d"}`, n))
				}
				return answer("done")
			}, prompt: 1000}
			team := strings.Replace(toolTeam, "max_turns: 3", "max_turns: 5", 1)
			team = strings.Replace(team, "{model: m, base_url: BASE}", tc.llm, 1)
			p, logPath := toolProject(t, f, "budget: "+tc.budget+"\n"+team)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != Halted {
				t.Fatalf("run: %v, %+v\n%s", err, sum, out)
			}
			if f.count() != 2 {
				t.Fatalf("%d requests, want 2: the third would cross the budget\n%s", f.count(), out)
			}
			if !strings.Contains(out, `"event":"task_halted"`) || !strings.Contains(out, tc.wantWhy) {
				t.Errorf("no task_halted event naming %q:\n%s", tc.wantWhy, out)
			}
			tr, _ := p.session(t).Task("work")
			if tr.Status != checkpoint.StatusFailed || !checkpoint.HaltedError(tr.Error) || tr.Usage == nil || tr.Usage.TotalTokens != 2004 {
				t.Errorf("checkpoint: %s %q usage %+v; want halted with the two turns' 2,004 tokens", tr.Status, tr.Error, tr.Usage)
			}
			if got := readLog(t, logPath); got != "n1\nn2\n" {
				t.Errorf("tools ran %q", got)
			}
			st, err := stores.Open(context.Background(), p.home)
			if err != nil {
				t.Fatal(err)
			}
			if err := RecordBudget(context.Background(), st, "s1", "max_tokens=10000"); err != nil {
				t.Fatal(err)
			}
			sum, out, err = p.run(t, true)
			if err != nil || sum.Outcome != Succeeded || f.count() != 3 {
				t.Fatalf("after the raise: %v, %+v, %d requests (want 3: the loop resumes at turn 3)\n%s", err, sum, f.count(), out)
			}
			if got := readLog(t, logPath); got != "n1\nn2\n" {
				t.Errorf("the resumed loop ran tools again: %q", got)
			}
		})
	}
}

// A task whose first request the budget cannot take (what is spent and
// that request's worst case, its prompt and max_tokens, are over it)
// halts before its attempt starts: no request, and no attempt in its
// history, however often --continue meets it; plan says so by the same
// rule. A raise lets it run as attempt 1.
func TestBudgetHaltsBeforeAttempt(t *testing.T) {
	f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
		fmt.Fprint(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200}}`)
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	// a costs $0.004; b's worst case is $0.01 and its prompt: over the
	// $0.012 left of nothing after a, under it before.
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE, max_tokens: 1000, price: {input: 2, output: 10}}
budget: {max_cost_usd: 0.012}
agents:
  w: {role: Writer}
tasks:
  a: {description: A, agent: w}
  b: {description: B, agent: w}
`)
	const why = "the session has spent $0.004 and the next request may cost up to $0.01056 more"
	for run := range 3 {
		sum, out, err := p.run(t, run > 0)
		if err != nil || sum.Outcome != Halted || !strings.Contains(out, why) || strings.Contains(out, `"task_started","session":"s1","task":"b"`) {
			t.Fatalf("run %d: %v, %+v; want a halt before b starts, saying %q\n%s", run+1, err, sum, why, out)
		}
	}
	if f.count() != 1 {
		t.Fatalf("%d requests, want a's alone", f.count())
	}
	sess := p.session(t)
	if b, _ := sess.Task("b"); b.Attempts != 0 || len(b.History) != 0 {
		t.Errorf("b: %d attempts, history %+v; want none", b.Attempts, b.History)
	}
	team, err := spec.Load(filepath.Join(p.dir, "team.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	halts := func(team *spec.Team, sess *checkpoint.Session, task string) string {
		t.Helper()
		set, err := TaskSetOf(team, sess, nil)
		if err != nil {
			t.Fatal(err)
		}
		return set.BudgetHaltsBefore(sess, task)
	}
	// Plan sizes b's prompt as the run does: the run's figure, $0.01056.
	if got := halts(team, sess, "b"); !strings.Contains(got, "the session has spent $0.004 and the next request may cost at least $0.01056 more (its max_tokens, and its prompt as far as it is known), budget.max_cost_usd is $0.012") {
		t.Errorf("plan's rule says %q", got)
	}
	if got := halts(team, nil, "b"); got != "" {
		t.Errorf("plan's rule for a new session says %q, want nothing: $0.01056 fits in $0.012", got)
	}
	// A prompt that alone tips the budget: plan says the run halts before
	// it, where it once counted the prompt as nothing.
	long := *team
	long.Tasks = slices.Clone(team.Tasks)
	long.Tasks[1].Description = strings.Repeat("lorem ipsum ", 500)
	if got := halts(&long, nil, "b"); !strings.Contains(got, "the next request may cost at least $0.03045 more") {
		t.Errorf("plan's rule for a 6,000-byte prompt says %q, want a halt", got)
	}
	st, err := stores.Open(context.Background(), p.home)
	if err != nil {
		t.Fatal(err)
	}
	if err := RecordBudget(context.Background(), st, "s1", "max_cost_usd=1"); err != nil {
		t.Fatal(err)
	}
	if got := halts(team, p.session(t), "b"); got != "" {
		t.Errorf("after the raise plan's rule says %q", got)
	}
	sum, out, err := p.run(t, true)
	if err != nil || sum.Outcome != Succeeded || f.count() != 2 {
		t.Fatalf("after the raise: %v, %+v, %d requests\n%s", err, sum, f.count(), out)
	}
	if b, _ := p.session(t).Task("b"); b.Attempts != 1 {
		t.Errorf("b ran as attempt %d, want 1", b.Attempts)
	}
}

// Tasks running side by side never pass the budget's check on the same
// remainder: a request without a worst case (no max_tokens) waits for the
// one under way, and is refused once that one has spent the budget.
func TestBudgetParallelTasks(t *testing.T) {
	f := &toolLLM{script: func(int, toolRequest) string { return answer("ok") }}
	p, _ := toolProject(t, f, `process: workflow
budget: {max_tokens: 10}
agents:
  w: {role: Writer, llm: {model: m, base_url: BASE}}
tasks:
  a: {description: A, agent: w}
  b: {description: B, agent: w}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Halted || sum.Ran != 1 {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if f.count() != 1 {
		t.Errorf("%d requests, want 1: the second started on a budget the first spent\n%s", f.count(), out)
	}
	if !strings.Contains(out, "the session has used 12 tokens, budget.max_tokens is 10") {
		t.Errorf("the halt does not say why:\n%s", out)
	}
}

// Requests whose worst case fits together still run side by side.
func TestBudgetParallelWithinBudget(t *testing.T) {
	var mu sync.Mutex
	in, most := 0, 0
	both := make(chan struct{})
	f := &toolLLM{script: func(int, toolRequest) string { return answer("ok") }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		in++
		most = max(most, in)
		if in == 2 {
			close(both)
		}
		mu.Unlock()
		select { // the first waits for the second, if it comes
		case <-both:
		case <-time.After(20 * time.Second):
		}
		f.ServeHTTP(w, r)
		mu.Lock()
		in--
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	p := newProject(t, srv.URL, `process: workflow
budget: {max_tokens: 100000}
agents:
  w: {role: Writer, llm: {model: m, base_url: BASE, max_tokens: 50}}
tasks:
  a: {description: A, agent: w}
  b: {description: B, agent: w}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	if most != 2 {
		t.Errorf("at most %d requests at once, want 2: requests that fit together were serialized", most)
	}
}

// sizedExecutor is an LLM executor whose first request is n bytes.
type sizedExecutor struct{ n int }

func (sizedExecutor) Execute(context.Context, *Job) (Result, error) { return Result{}, nil }
func (s sizedExecutor) firstRequestBytes(context.Context, *Job) (int, bool, error) {
	return s.n, true, nil
}

// TestAdmitFirst: an attempt passes the budget's gate before it starts,
// its first request's worst case reserved; that request takes the
// reservation over rather than waiting behind it, and a task that waited
// behind another's request refused once that one reached the budget is
// refused before it starts (no attempt), in a workflow too.
func TestAdmitFirst(t *testing.T) {
	ctx := context.Background()
	// 59 bytes are 20 prompt tokens: with max_tokens 40, 60 tokens each.
	llm := &spec.LLM{MaxTokens: 40}
	team := &spec.Team{Budget: &spec.Budget{MaxTokens: 100}, Tasks: []*spec.Task{{Name: "a", Agent: "w"}, {Name: "b", Agent: "w"}},
		Agents: []*spec.Agent{{Name: "w", Kind: spec.LLMAgent, LLM: llm}}}
	e := &Engine{Team: team, Executor: sizedExecutor{n: 59}}
	jobA := &Job{Index: 0, Agent: team.Agents[0]}
	admitA, releaseA, why, err := e.admitFirst(ctx, jobA)
	if why != "" || err != nil {
		t.Fatalf("a: refused %q, %v", why, err)
	}
	if len(e.inflight) != 1 {
		t.Fatalf("a's first request is not reserved: %v", e.inflight)
	}

	// b's first request waits: 60 + 60 tokens do not fit in 100.
	type gate struct {
		why string
		err error
	}
	bDone := make(chan gate, 1)
	go func() {
		_, release, why, err := e.admitFirst(ctx, &Job{Index: 1, Agent: team.Agents[0]})
		if release != nil {
			release()
		}
		bDone <- gate{why, err}
	}()

	// a's first request takes its reservation over: it neither waits
	// behind it (which would never end) nor counts twice.
	done, err := admitA(ctx, reserveFor(59, 40, nil))
	if err != nil {
		t.Fatalf("a's first request: %v", err)
	}
	e.recMu.Lock()
	n := len(e.inflight)
	e.recMu.Unlock()
	if n != 1 {
		t.Errorf("a's first request under way counts %d reservations, want 1", n)
	}
	releaseA() // taken over: nothing more to give up

	// a's answer reaches the budget: b, which waited, is refused.
	done(&Usage{TotalTokens: 100})
	g := <-bDone
	if g.err != nil || !strings.Contains(g.why, "the session has used 100 tokens, budget.max_tokens is 100") {
		t.Errorf("b after a reached the budget: %q, %v", g.why, g.err)
	}
	if len(e.inflight) != 0 {
		t.Errorf("reservations left: %v", e.inflight)
	}
}
