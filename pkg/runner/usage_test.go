package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

func usageReply(w http.ResponseWriter, content, finish string, prompt, cached, completion int) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"model":"served","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
		content, finish, prompt, completion, prompt+completion, cached)
}

const pricedTeam = `
models:
  fast: {model: m, base_url: BASE, price: {input: 1, cached_input: 0.5, output: 4}}
  free: {model: m, base_url: BASE}
agents:
  a: {role: A, llm: fast}
  b: {role: B, llm: free}
tasks:
  one: {description: One, agent: a, max_retries: 1, retry_delay: 1ms}
  two: {description: Two, agent: b}
`

// TestUsageRecorded checks that every request that reported usage is in
// the task's record — the cut answer that was retried too — priced with
// the alias's price, and that a model without a price has an unknown
// cost, never $0.
func TestUsageRecorded(t *testing.T) {
	f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) {
		switch n {
		case 1:
			usageReply(w, "Hello from the", "length", 1000, 0, 100)
		case 2:
			usageReply(w, "done", "stop", 1000, 800, 50)
		default:
			usageReply(w, "free", "stop", 10, 0, 5)
		}
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, pricedTeam)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out)
	}
	one, _ := p.session(t).Task("one")
	u := one.Usage
	if u == nil || len(u.Calls) != 2 {
		t.Fatalf("one's usage %+v: want both requests", u)
	}
	// 1000 prompt + 100 completion; then 200 + 800 cached prompt + 50.
	wantCost := (1000*1.0+100*4.0)/1e6 + (200*1.0+800*0.5+50*4.0)/1e6
	if u.TotalTokens != 2150 || u.CachedTokens != 800 || math.Abs(u.CostUSD-wantCost) > 1e-12 || u.UnpricedTokens != 0 {
		t.Errorf("one's usage %+v, want 2150 tokens, 800 cached, $%g", u, wantCost)
	}
	if c := u.Calls[0]; c.Attempt != 1 || c.Status != 200 || c.Model != "served" || c.CostUSD == nil {
		t.Errorf("first call %+v", c)
	}
	if c := u.Calls[1]; c.Attempt != 2 {
		t.Errorf("second call %+v: want attempt 2", c)
	}
	two, _ := p.session(t).Task("two")
	if two.Usage == nil || two.Usage.UnpricedTokens != 15 || two.Usage.CostUSD != 0 || two.Usage.Calls[0].CostUSD != nil {
		t.Errorf("two's usage %+v: want 15 unpriced tokens", two.Usage)
	}
	if sum.Usage == nil || sum.Usage.TotalTokens != 2165 || sum.Usage.Calls != nil {
		t.Errorf("summary usage %+v, want 2165 tokens without calls", sum.Usage)
	}
	if got, want := CostText(sum.Usage), "$0.0022 + cost unknown for 15 tokens"; got != want {
		t.Errorf("cost text %q, want %q", got, want)
	}
}

// TestUsageAcrossResume checks the session's totals over two invocations
// and what the restored tasks saved.
func TestUsageAcrossResume(t *testing.T) {
	fail := true
	f := &fakeLLM{answer: func(n int, req chatRequest, w http.ResponseWriter) {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "Two") && fail {
			usageReply(w, "cut", "length", 100, 0, 10)
			return
		}
		usageReply(w, "ok", "stop", 1000, 0, 100)
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, strings.ReplaceAll(pricedTeam, "llm: free", "llm: fast"))
	sum, out, _ := p.run(t, false)
	if sum == nil || sum.Outcome != Failed {
		t.Fatalf("first run: %+v\n%s", sum, out)
	}
	fail = false
	sum, out, err := p.run(t, true)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("second run: %v %+v\n%s", err, sum, out)
	}
	const one, cut, ok = 1100, 110, 1100
	if sum.Usage.TotalTokens != ok || sum.SessionUsage.TotalTokens != one+cut+ok || sum.RestoredUsage.TotalTokens != one {
		t.Errorf("run %+v, session %+v, restored %+v", sum.Usage, sum.SessionUsage, sum.RestoredUsage)
	}
	two, _ := p.session(t).Task("two")
	if two.Usage.TotalTokens != cut+ok || len(two.Usage.Calls) != 2 {
		t.Errorf("two's record %+v: want the failed attempt of the first run and the one that completed", two.Usage)
	}
	var b strings.Builder
	writeUsage(&b, sum)
	want := "tokens:  this run 1,100 tokens ($0.0014); session 2,310 tokens ($0.00294)\nrestored 1 task whose 1,100 tokens ($0.0014) were not paid again\n"
	if b.String() != want {
		t.Errorf("summary lines:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestCostOf(t *testing.T) {
	half := 0.5
	tests := []struct {
		u    llm.Usage
		p    spec.Price
		want float64
	}{
		{llm.Usage{PromptTokens: 1e6, CompletionTokens: 1e6}, spec.Price{Input: 1, Output: 2}, 3},
		{llm.Usage{PromptTokens: 1e6, CachedTokens: 1e6}, spec.Price{Input: 1, CachedInput: &half, Output: 2}, 0.5},
		// Without a cached price, cached tokens cost what any prompt token does.
		{llm.Usage{PromptTokens: 1e6, CachedTokens: 4e5}, spec.Price{Input: 1, Output: 2}, 1},
		// A server counting more cached than prompt tokens is not trusted beyond the prompt.
		{llm.Usage{PromptTokens: 1e6, CachedTokens: 2e6}, spec.Price{Input: 1, CachedInput: &half, Output: 2}, 0.5},
		// A total the server does not split is priced at the higher of
		// the two prices, whichever it is: never $0, never under-counted.
		{llm.Usage{TotalTokens: 1e6}, spec.Price{Input: 1, Output: 2}, 2},
		{llm.Usage{TotalTokens: 1e6}, spec.Price{Input: 3, Output: 2}, 3},
		// The part of the total above prompt and completion (a proxy's
		// hidden reasoning tokens) too.
		{llm.Usage{PromptTokens: 1e6, CompletionTokens: 1e6, TotalTokens: 3e6}, spec.Price{Input: 1, Output: 2}, 5},
		{llm.Usage{PromptTokens: 1e6, CachedTokens: 1e6, TotalTokens: 2e6}, spec.Price{Input: 1, CachedInput: &half, Output: 2}, 2.5},
		// A total equal to its parts adds nothing.
		{llm.Usage{PromptTokens: 1e6, CompletionTokens: 1e6, TotalTokens: 2e6}, spec.Price{Input: 1, Output: 2}, 3},
	}
	for i, tt := range tests {
		if got := costOf(tt.u, &tt.p); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%d: cost %g, want %g", i, got, tt.want)
		}
	}
}

func TestCostText(t *testing.T) {
	tests := []struct {
		u    *Usage
		want string
	}{
		{nil, "$0"},
		{&Usage{TotalTokens: 10, UnpricedTokens: 10}, "cost unknown"},
		{&Usage{TotalTokens: 10}, "$0.00"},
		{&Usage{TotalTokens: 51200, CostUSD: 0.014}, "$0.014"},
		{&Usage{TotalTokens: 9, CostUSD: 0.0000004}, "$0.0000004"},
		{&Usage{TotalTokens: 9, CostUSD: 123.456}, "$123.46"},
		{&Usage{TotalTokens: 1500, CostUSD: 1.5, UnpricedTokens: 1200}, "$1.50 + cost unknown for 1,200 tokens"},
	}
	for _, tt := range tests {
		if got := CostText(tt.u); got != tt.want {
			t.Errorf("CostText(%+v) = %q, want %q", tt.u, got, tt.want)
		}
	}
}

func TestBudgetReached(t *testing.T) {
	tests := []struct {
		budget *spec.Budget
		prior  []*Usage
		run    *Usage
		want   string // "" under the budget
	}{
		{nil, []*Usage{{TotalTokens: 1e9}}, nil, ""},
		{&spec.Budget{MaxTokens: 100}, []*Usage{{TotalTokens: 60}}, &Usage{TotalTokens: 39}, ""},
		{&spec.Budget{MaxTokens: 100}, []*Usage{{TotalTokens: 60}}, &Usage{TotalTokens: 40}, "the session has used 100 tokens, budget.max_tokens is 100"},
		{&spec.Budget{MaxCostUSD: 0.5}, []*Usage{{TotalTokens: 9, CostUSD: 0.25}, nil}, &Usage{TotalTokens: 9, CostUSD: 0.2}, ""},
		{&spec.Budget{MaxCostUSD: 0.5}, []*Usage{{TotalTokens: 9, CostUSD: 0.25}, {TotalTokens: 9, CostUSD: 0.25}}, nil, "the session has spent $0.50, budget.max_cost_usd is $0.50"},
		// A PraisonAI scheduler's max_cost is named as the file names it.
		{&spec.Budget{MaxCostUSD: 1, Key: "schedule.max_cost"}, []*Usage{{TotalTokens: 9, CostUSD: 1.25}}, nil, "the session has spent $1.25, schedule.max_cost is $1.00"},
		// Requests cut off before they reported usage count by their size,
		// as answers without usage do.
		{&spec.Budget{MaxTokens: 100}, []*Usage{{UnknownRequests: 1, InterruptedEstimatedTokens: 100}}, nil, "the session has used 100 tokens (100 of them estimated for interrupted requests), budget.max_tokens is 100"},
		{&spec.Budget{MaxCostUSD: 1}, []*Usage{{TotalTokens: 9, CostUSD: 0.5, UnreportedRequests: 1, EstimatedTokens: 9, EstimatedCostUSD: 0.25, UnknownRequests: 1, InterruptedEstimatedTokens: 9, InterruptedEstimatedCostUSD: 0.25}}, nil,
			"the session has spent $1.00 ($0.50 of it estimated for answers without usage and interrupted requests), budget.max_cost_usd is $1.00"},
		// Unpriced tokens count for max_tokens only.
		{&spec.Budget{MaxCostUSD: 0.5, MaxTokens: 1000}, []*Usage{{TotalTokens: 900, UnpricedTokens: 900}}, nil, ""},
	}
	for i, tt := range tests {
		e := &Engine{Team: &spec.Team{Budget: tt.budget, Tasks: make([]*spec.Task, 2)}, PriorUsage: tt.prior, used: tt.run}
		_, release, got, err := e.admitFirst(context.Background(), &Job{Agent: &spec.Agent{Kind: spec.LLMAgent}})
		if err != nil || got != tt.want {
			t.Errorf("%d: %q, %v, want %q", i, got, err, tt.want)
		}
		if release != nil {
			release()
		}
	}
}

// A request the task's timeout cuts off is recorded as interrupted, its
// usage unknown: the summary says so instead of counting it as 0 tokens.
func TestTimedOutRequestRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		<-r.Context().Done() // no answer before the task's timeout
	}))
	t.Cleanup(srv.Close)
	// The timeout only ends a request that is never answered: 1s, so that
	// the request is sent before it even on a loaded machine.
	p := newProject(t, srv.URL, `agents:
  w: {role: Writer, llm: {model: m, base_url: BASE}}
tasks:
  one: {description: Write, agent: w, timeout: 1s}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Failed {
		t.Fatalf("run: %v, %+v\n%s", err, sum, out)
	}
	// Its size (the request sent) is its estimate, which a budget counts.
	if sum.Usage == nil || sum.Usage.UnknownRequests != 1 || sum.Usage.InterruptedEstimatedTokens <= 0 ||
		!strings.HasPrefix(UsageText(sum.Usage), "1 interrupted request of unknown usage (estimated from its size: ") {
		t.Errorf("summary usage %+v (%q), want 1 request of unknown usage with its estimate", sum.Usage, UsageText(sum.Usage))
	}
	tr, _ := p.session(t).Task("one")
	if tr.Usage == nil || len(tr.Usage.Calls) != 1 {
		t.Fatalf("recorded usage %+v, want the cut-off request", tr.Usage)
	}
	if c := tr.Usage.Calls[0]; c.Outcome != CallInterrupted || !c.UsageUnknown || c.CostUSD != nil || c.Model != "m" {
		t.Errorf("recorded call %+v, want interrupted with unknown usage", c)
	}
}

// What the session paid stays counted when a later run replaces the
// records that held it: a task that runs again after an edit (a partial
// restore, or --reuse unchanged) keeps its earlier requests, and a task
// removed from the spec leaves its usage in the session's. The budget
// counts all of it, and halts at once when it is already spent.
func TestUsageKeptWhenRecordsAreReplaced(t *testing.T) {
	const team = `
models:
  fast: {model: m, base_url: BASE, price: {input: 1, output: 2}}
llm: fast
budget: {max_tokens: BUDGET}
agents:
  a: {role: A}
tasks:
  t1: {description: one, agent: a}
  t2: {description: two, agent: a}
  t3: {description: THREE, agent: a}
`
	tests := []struct {
		name     string
		budget   string
		edit     func(string) string
		reuse    checkpoint.Reuse
		outcome  Outcome // of the second run
		requests int     // over both runs (t3's refused one included)
		session  int     // the session's tokens after the second run
	}{
		// The first run pays 120 tokens for t1 and t2 and halts before t3.
		{"a partial restore halts at once on a spent budget", "100", func(s string) string { return strings.Replace(s, "THREE", "three edited", 1) },
			checkpoint.ReuseStrict, Halted, 2, 120},
		{"a partial restore counts what the tasks that run again paid before", "10000", func(s string) string { return strings.Replace(s, "THREE", "three edited", 1) },
			checkpoint.ReuseStrict, Succeeded, 6, 300},
		{"a task removed under --reuse unchanged", "10000", func(s string) string {
			return strings.Replace(strings.Replace(s, "  t1: {description: one, agent: a}\n", "", 1), "THREE", "three edited", 1)
		}, checkpoint.ReuseUnchanged, Succeeded, 5, 240},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(n int, _ chatRequest, w http.ResponseWriter) { usageReply(w, "ok", "stop", 50, 0, 10) }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			yaml := strings.Replace(team, "BUDGET", tc.budget, 1)
			p := newProject(t, srv.URL, yaml)
			if tc.outcome == Succeeded {
				// Without a spent budget the first run ends before t3 all
				// the same: t3 fails (a 400 costs nothing).
				f.answer = func(n int, req chatRequest, w http.ResponseWriter) {
					if strings.Contains(req.Messages[len(req.Messages)-1].Content, "THREE") {
						w.WriteHeader(http.StatusBadRequest)
						return
					}
					usageReply(w, "ok", "stop", 50, 0, 10)
				}
			}
			sum, out, _ := p.run(t, false)
			if sum == nil || sum.SessionUsage == nil || sum.SessionUsage.TotalTokens != 120 {
				t.Fatalf("first run: %+v\n%s", sum, out)
			}
			f.answer = func(n int, _ chatRequest, w http.ResponseWriter) { usageReply(w, "ok", "stop", 50, 0, 10) }
			p.write(t, srv.URL, tc.edit(yaml))
			var err error
			sum, out, err = runReuse(t, p, tc.reuse)
			if err != nil || sum.Outcome != tc.outcome {
				t.Fatalf("second run: %v, %+v\n%s", err, sum, out)
			}
			if got := f.count(); got != tc.requests {
				t.Errorf("%d requests over both runs, want %d", got, tc.requests)
			}
			if sum.SessionUsage == nil || sum.SessionUsage.TotalTokens != tc.session {
				t.Errorf("the summary's session usage %+v, want %d tokens", sum.SessionUsage, tc.session)
			}
			if got := p.session(t).Usage(); got == nil || got.TotalTokens != tc.session || math.Abs(got.CostUSD-float64(tc.session/60)*70/1e6) > 1e-12 {
				t.Errorf("the session's usage %+v, want %d tokens", got, tc.session)
			}
		})
	}
}

// runReuse is p.run(t, true) under a --reuse mode.
func runReuse(t *testing.T, p *project, reuse checkpoint.Reuse) (*Summary, string, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{
		SpecPath: filepath.Join(p.dir, "team.yaml"), Continue: true, Session: "s1", Mode: ModeJSON, Reuse: reuse,
		IO: iostreams.Test(nil, &out, &out), Home: p.home,
		Getenv: func(k string) string { return p.env[k] },
	})
	return sum, out.String(), err
}

// An answer that reports no usage was billed all the same: it is recorded
// as of unknown usage with an estimate from its size (request and answer
// bytes / 3 as tokens, priced), which the totals show and the budget
// counts, so a server that never counts cannot spend without bound; one
// warning says so, once per model.
func TestAnswerWithoutUsage(t *testing.T) {
	const answer = "a long answer"
	plain := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, answer)
	}
	streamed := func(w http.ResponseWriter) { // include_usage ignored
		sseReply(w, sseDelta(answer), `{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")
	}
	// A count no answer can have is no usage either: the warning says
	// which the server sent.
	negative := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":3,"total_tokens":-2}}`, answer)
	}
	negativeStreamed := func(w http.ResponseWriter) {
		sseReply(w, sseDelta(answer), `{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":-3,"total_tokens":2}}`, "[DONE]")
	}
	// A count that cannot be read is none either: the answer is kept.
	unreadable := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":"lots","completion_tokens":3.5}}`, answer)
	}
	overflow := func(w http.ResponseWriter) {
		sseReply(w, sseDelta(answer), `{"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":99999999999999999999999}}`, "[DONE]")
	}
	const noUsage = "model m answered without usage (its server reported no token counts): each such answer counts as an estimate from its size"
	const badUsage = "model m reported a token count that is no whole number (prompt_tokens: a text): each such answer counts as an estimate from its size"
	const hugeUsage = "model m reported more tokens than any answer can have (completion_tokens: 99999999999999999999999): each such answer counts as an estimate from its size"
	const negUsage = "model m reported a negative token count, which no answer can have: each such answer counts as an estimate from its size"
	tests := []struct {
		name     string
		reply    func(http.ResponseWriter)
		stream   string
		budget   string
		outcome  Outcome
		requests int
		warning  string
	}{
		{"no budget", plain, "false", "", Succeeded, 3, noUsage},
		{"a token budget halts", plain, "false", "budget: {max_tokens: 100}\n", Halted, 2, noUsage},
		{"a cost budget halts", plain, "false", "budget: {max_cost_usd: 0.0001}\n", Halted, 2, noUsage},
		{"a stream without its usage chunk", streamed, "true", "budget: {max_tokens: 100}\n", Halted, 2, noUsage},
		{"a negative count", negative, "false", "budget: {max_tokens: 100}\n", Halted, 2, negUsage},
		{"a negative count streamed", negativeStreamed, "true", "budget: {max_tokens: 100}\n", Halted, 2, negUsage},
		{"a count that is no number", unreadable, "false", "budget: {max_tokens: 100}\n", Halted, 2, badUsage},
		{"a count that overflows, streamed", overflow, "true", "budget: {max_tokens: 100}\n", Halted, 2, hugeUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) { tc.reply(w) }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE, stream: `+tc.stream+`, price: {input: 1, output: 2}}
`+tc.budget+`agents:
  a: {role: A}
tasks:
  t1: {description: one, agent: a}
  t2: {description: two, agent: a}
  t3: {description: three, agent: a}
`)
			sum, out, err := p.run(t, false)
			if err != nil || sum.Outcome != tc.outcome || f.count() != tc.requests {
				t.Fatalf("run: %v, %+v after %d requests, want %s after %d\n%s", err, sum, f.count(), tc.outcome, tc.requests, out)
			}
			t1, _ := p.session(t).Task("t1")
			if t1.Usage == nil || len(t1.Usage.Calls) != 1 {
				t.Fatalf("t1's usage %+v, want its answer", t1.Usage)
			}
			c := t1.Usage.Calls[0]
			body := len(f.requestBody(0))
			wantTokens := body/3 + 1 + len(answer)/3 + 1
			wantCost := float64(body/3+1)*1/1e6 + float64(len(answer)/3+1)*2/1e6
			if !c.UsageUnknown || c.Outcome != "" || c.EstimatedTokens != wantTokens || c.EstimatedCostUSD == nil || math.Abs(*c.EstimatedCostUSD-wantCost) > 1e-12 || c.CostUSD != nil {
				t.Errorf("recorded call %+v, want usage unknown, %d tokens estimated", c, wantTokens)
			}
			if u := t1.Usage; u.UnreportedRequests != 1 || u.EstimatedTokens != wantTokens || u.TotalTokens != 0 {
				t.Errorf("t1's usage %+v", u)
			}
			if s := sum.SessionUsage; s == nil || s.UnreportedRequests != tc.requests {
				t.Errorf("session usage %+v, want %d answers without usage", s, tc.requests)
			}
			if !strings.Contains(UsageText(sum.SessionUsage), fmt.Sprintf("%d answers without usage (estimated from their size: ", tc.requests)) {
				t.Errorf("session usage said %q", UsageText(sum.SessionUsage))
			}
			if n := strings.Count(out, tc.warning); n != 1 || strings.Count(out, "model m ") != 1 {
				t.Errorf("the warning came %d times, want once:\n%s", n, out)
			}
			if tc.outcome == Halted && !strings.Contains(out, "of them estimated for answers without usage") && !strings.Contains(out, "of it estimated for answers without usage") {
				t.Errorf("the halt does not say the spending is estimated:\n%s", out)
			}
		})
	}
}

// A 200 whose body breaks off (the connection reset after some of it) was
// perhaps billed: it is recorded as an interrupted request with an
// estimate from its size, which a budget counts, as a stream that breaks
// off is. A server that does so every time cannot spend without bound:
// the run halts (exit 3) and a --continue sends nothing more.
func TestBrokenAnswerCountedByBudget(t *testing.T) {
	answer := `{"model":"m","choices":[{"message":{"role":"assistant","content":"` + strings.Repeat("x", 400) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":300,"total_tokens":311}}`
	f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer[:200])
		buf.Flush()
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // close sends an RST
		}
		c.Close()
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE}
budget: {max_tokens: 50}
agents:
  a: {role: A}
tasks:
  t1: {description: one, agent: a}
`)
	for run := range 3 {
		sum, out, err := p.run(t, run > 0)
		if err != nil || sum.Outcome != Halted {
			t.Fatalf("run %d: %v, %+v, want halted\n%s", run+1, err, sum, out)
		}
	}
	if f.count() != 1 {
		t.Fatalf("%d requests over 3 runs, want 1: the budget counts the broken answer", f.count())
	}
	tr, _ := p.session(t).Task("t1")
	body := len(f.requestBody(0))
	want := body/3 + 1 + 200/3 + 1
	if u := tr.Usage; u == nil || len(u.Calls) != 1 || u.UnknownRequests != 1 || u.InterruptedEstimatedTokens != want ||
		u.Calls[0].Outcome != CallInterrupted || u.Calls[0].Status != 200 || !u.Calls[0].UsageUnknown {
		t.Fatalf("t1's usage %+v, want 1 interrupted request estimated at %d tokens", u, want)
	}
}

// An answer without usage is estimated no higher than the worst case its
// request reserved (reserveFor): its answer's part stops at the request's
// max_tokens, whole or cut off, since no server bills more than that.
func TestEstimateWithinReservation(t *testing.T) {
	price := &spec.Price{Input: 1, Output: 2}
	tests := []struct {
		name       string
		call       llm.Call
		wantTokens int
	}{
		{"an answer over max_tokens by bytes/3", llm.Call{UsageUnknown: true, RequestBytes: 162, AnswerBytes: 400, MaxTokens: 100}, 55 + 100},
		{"an answer under max_tokens", llm.Call{UsageUnknown: true, RequestBytes: 162, AnswerBytes: 30, MaxTokens: 100}, 55 + 11},
		{"a cut-off answer over max_tokens", llm.Call{UsageUnknown: true, CutOff: true, RequestBytes: 162, AnswerBytes: 4000, MaxTokens: 100}, 55 + 100},
		{"no max_tokens sent", llm.Call{UsageUnknown: true, RequestBytes: 162, AnswerBytes: 400}, 55 + 134},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := usageOf([]llm.Call{tt.call}, price, 1)
			tokens, cost := spentOf(u)
			if tokens != tt.wantTokens {
				t.Errorf("estimated %d tokens, want %d", tokens, tt.wantTokens)
			}
			if tt.call.MaxTokens == 0 {
				return
			}
			r := reserveFor(tt.call.RequestBytes, tt.call.MaxTokens, price)
			if tokens > r.tokens || cost > checkpoint.RoundCost(r.cost) {
				t.Errorf("estimated %d tokens, $%g: more than the %d tokens, $%g reserved", tokens, cost, r.tokens, r.cost)
			}
		})
	}
}

// A server that keeps to max_tokens but reports no usage: the request the
// budget admitted is charged no more than it reserved, so the session
// does not end above its budget (the second task halts before it sends).
func TestAnswerWithoutUsageStaysInBudget(t *testing.T) {
	answer := strings.Repeat("abcd", 100) // 100 tokens of 4 bytes, as max_tokens allows
	f := &fakeLLM{answer: func(_ int, _ chatRequest, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, answer)
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, `
llm: {model: m, base_url: BASE, max_tokens: 100, stream: false, price: {input: 1, output: 2}}
budget: {max_tokens: 170, max_cost_usd: 0.00033}
agents:
  w: {role: Writer, goal: write}
tasks:
  a: {description: say hi, agent: w}
  b: {description: say hi, agent: w, context: []}
`)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Halted || f.count() != 1 {
		t.Fatalf("run: %v, %+v after %d requests, want halted after 1\n%s", err, sum, f.count(), out)
	}
	r := reserveFor(len(f.requestBody(0)), 100, &spec.Price{Input: 1, Output: 2})
	tokens, cost := spentOf(sum.SessionUsage)
	if tokens > r.tokens || cost > checkpoint.RoundCost(r.cost) || tokens > 170 || cost > 0.00033 {
		t.Errorf("the session counts %d tokens, $%g; its one request reserved %d tokens, $%g under a budget of 170 tokens, $0.00033\n%s", tokens, cost, r.tokens, r.cost, out)
	}
}
