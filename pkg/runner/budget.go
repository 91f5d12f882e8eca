package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

// BudgetDecision is the checkpoint.decisions key that holds a session's
// raised budget, as "max_cost_usd=X,max_tokens=N". It is no task's: a
// human task of that name keeps its own meaning.
const BudgetDecision = "budget"

// parseBudget reads a recorded raise; false when v is not one.
func parseBudget(v string) (spec.Budget, bool) {
	var b spec.Budget
	if v == "" {
		return b, false
	}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return spec.Budget{}, false
		}
		switch k {
		case "max_cost_usd":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f <= 0 {
				return spec.Budget{}, false
			}
			b.MaxCostUSD = f
		case "max_tokens":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return spec.Budget{}, false
			}
			b.MaxTokens = n
		default:
			return spec.Budget{}, false
		}
	}
	return b, true
}

func formatBudget(b spec.Budget) string {
	var parts []string
	if b.MaxCostUSD > 0 {
		parts = append(parts, "max_cost_usd="+strconv.FormatFloat(b.MaxCostUSD, 'f', -1, 64))
	}
	if b.MaxTokens > 0 {
		parts = append(parts, "max_tokens="+strconv.Itoa(b.MaxTokens))
	}
	return strings.Join(parts, ",")
}

// effectiveBudget is the budget a run holds the session to: the spec's,
// each limit raised to what a `session decide ID budget …` recorded when
// that is higher. nil: the spec sets none (a recorded raise alone is no
// budget).
func effectiveBudget(b *spec.Budget, recorded string) *spec.Budget {
	if b == nil {
		return nil
	}
	e := *b
	if r, ok := parseBudget(recorded); ok {
		if e.MaxCostUSD > 0 && r.MaxCostUSD > e.MaxCostUSD {
			e.MaxCostUSD = r.MaxCostUSD
		}
		if e.MaxTokens > 0 && r.MaxTokens > e.MaxTokens {
			e.MaxTokens = r.MaxTokens
		}
	}
	return &e
}

// RaisedBudget is what `session decide ID budget VALUE` records, given the
// spec's budget and what the session recorded before: VALUE is raise=N
// (the one limit the budget sets, raised by N dollars or tokens),
// max_cost_usd=X or max_tokens=N (that limit set to X). A decision only
// raises: one for a limit the spec does not set, or not above the limit
// in effect, would change nothing (effectiveBudget keeps the higher of
// spec and record), so it is refused rather than recorded.
func RaisedBudget(b *spec.Budget, recorded, value string) (string, error) {
	if b == nil {
		return "", errors.New("the spec sets no budget: there is nothing to raise")
	}
	cur := effectiveBudget(b, recorded)
	k, v, ok := strings.Cut(value, "=")
	if !ok {
		return "", fmt.Errorf("%q: want raise=N, max_cost_usd=X or max_tokens=N", value)
	}
	n, err := strconv.ParseFloat(v, 64)
	// NaN and Inf parse, and NaN <= 0 is false; a budget of 2^53 tokens or
	// dollars or more is none (the spec's max_tokens stops there too).
	if err != nil || !(n > 0) || n >= 1<<53 {
		return "", fmt.Errorf("%q: %s wants a positive number below 2^53, such as %s=10", value, k, k)
	}
	next := *cur
	switch k {
	case "raise":
		switch {
		case cur.MaxCostUSD > 0 && cur.MaxTokens > 0:
			return "", fmt.Errorf("the budget sets both max_cost_usd (%s) and max_tokens (%s): say which to raise, e.g. max_cost_usd=%s or max_tokens=%s",
				dollars(cur.MaxCostUSD), thousands(cur.MaxTokens), strconv.FormatFloat(cur.MaxCostUSD*2, 'f', -1, 64), strconv.Itoa(cur.MaxTokens*2))
		case cur.MaxCostUSD > 0:
			if next.MaxCostUSD = checkpoint.RoundCost(cur.MaxCostUSD + n); next.MaxCostUSD >= 1<<53 {
				return "", fmt.Errorf("%q: max_cost_usd would be %s, 2^53 or more: give max_cost_usd=X instead", value, dollars(next.MaxCostUSD))
			}
		default:
			if n != float64(int(n)) {
				return "", fmt.Errorf("%q: max_tokens is raised by a whole number of tokens", value)
			}
			if next.MaxTokens += int(n); next.MaxTokens >= 1<<53 {
				return "", fmt.Errorf("%q: max_tokens would be %s, 2^53 or more: give max_tokens=N instead", value, thousands(next.MaxTokens))
			}
		}
	case "max_cost_usd":
		if cur.MaxCostUSD == 0 {
			return "", fmt.Errorf("%q: the spec's budget sets no max_cost_usd, and a session can only raise a limit its spec sets: %s", value, raiseHint(cur))
		}
		next.MaxCostUSD = checkpoint.RoundCost(n)
		if next.MaxCostUSD <= cur.MaxCostUSD {
			return "", fmt.Errorf("%q: max_cost_usd is %s, and a decision only raises it: give more than %s, or raise=N to add N dollars", value, dollars(cur.MaxCostUSD), strconv.FormatFloat(cur.MaxCostUSD, 'f', -1, 64))
		}
	case "max_tokens":
		if cur.MaxTokens == 0 {
			return "", fmt.Errorf("%q: the spec's budget sets no max_tokens, and a session can only raise a limit its spec sets: %s", value, raiseHint(cur))
		}
		if n != float64(int(n)) {
			return "", fmt.Errorf("%q: max_tokens wants a whole number", value)
		}
		next.MaxTokens = int(n)
		if next.MaxTokens <= cur.MaxTokens {
			return "", fmt.Errorf("%q: max_tokens is %s, and a decision only raises it: give more than %s, or raise=N to add N tokens", value, thousands(cur.MaxTokens), strconv.Itoa(cur.MaxTokens))
		}
	default:
		return "", fmt.Errorf("%q: want raise=N, max_cost_usd=X or max_tokens=N", value)
	}
	return formatBudget(next), nil
}

// raiseHint says what raises b, a budget that sets one limit.
func raiseHint(b *spec.Budget) string {
	if b.MaxCostUSD > 0 {
		return fmt.Sprintf("it sets max_cost_usd (%s): raise=N adds N dollars", dollars(b.MaxCostUSD))
	}
	return fmt.Sprintf("it sets max_tokens (%s): raise=N adds N tokens", thousands(b.MaxTokens))
}

// RecordBudget records a session's raised budget (RaisedBudget's value)
// under its lock, as a transition like any other. Unlike
// checkpoint.Decide it takes no task: the budget is the session's.
func RecordBudget(ctx context.Context, store checkpoint.Backend, id, value string) error {
	return checkpoint.RecordOne(ctx, store, id, checkpoint.Record{Kind: checkpoint.DecisionRecorded, Task: BudgetDecision, Value: value}, nil)
}

// BudgetError refuses an LLM request: the session's budget is spent. The
// engine halts the task (exit 3) instead of failing it.
type BudgetError struct{ Why string }

func (e *BudgetError) Error() string { return "the session's budget is reached: " + e.Why }

// overBudget says how spent has reached b, "" while it is under it.
func overBudget(b *spec.Budget, spent *Usage) string {
	tokens, cost := spentOf(spent)
	switch {
	case b.MaxTokens > 0 && tokens >= b.MaxTokens:
		return fmt.Sprintf("the session has used %s tokens%s, budget.max_tokens is %s", thousands(tokens), estimatedPart(spent, true), thousands(b.MaxTokens))
	case b.MaxCostUSD > 0 && cost >= b.MaxCostUSD:
		return fmt.Sprintf("the session has spent %s%s, %s is %s", dollars(cost), estimatedPart(spent, false), b.CostKey(), dollars(b.MaxCostUSD))
	}
	return ""
}

// spentOf is what a budget counts of u: the tokens and cost servers
// reported, and the estimates of answers that reported none and of
// requests cut off before they did.
func spentOf(u *Usage) (tokens int, cost float64) {
	if u == nil {
		return 0, 0
	}
	return u.TotalTokens + u.EstimatedTokens + u.InterruptedEstimatedTokens, checkpoint.RoundCost(u.CostUSD + u.EstimatedCostUSD + u.InterruptedEstimatedCostUSD)
}

// estimatedPart says how much of what spent counts is an estimate: " (40
// of them estimated for answers without usage)", or "".
func estimatedPart(spent *Usage, tokens bool) string {
	if spent == nil {
		return ""
	}
	var whose []string
	if spent.UnreportedRequests > 0 {
		whose = append(whose, "answers without usage")
	}
	if spent.UnknownRequests > 0 {
		whose = append(whose, "interrupted requests")
	}
	of := strings.Join(whose, " and ")
	switch est := spent.EstimatedCostUSD + spent.InterruptedEstimatedCostUSD; {
	case len(whose) == 0:
		return ""
	case tokens:
		return fmt.Sprintf(" (%s of them estimated for %s)", thousands(spent.EstimatedTokens+spent.InterruptedEstimatedTokens), of)
	case est > 0:
		return fmt.Sprintf(" (%s of it estimated for %s)", dollars(checkpoint.RoundCost(est)), of)
	}
	return ""
}

// budgetHalt is the halt of task i held back by the budget.
func (e *Engine) budgetHalt(i int, why string) *Halt {
	h := &Halt{Session: e.Session, Task: e.Team.Tasks[i].Name, Budget: why, Command: e.ResumeCommand,
		Description: e.Render(e.Team.Tasks[i], spec.DescriptionText, e.Team.Tasks[i].Scope(e.stateFor(i)))}
	if e.DecideCommand != nil {
		h.Commands = []string{e.DecideCommand(BudgetDecision, "raise=N")}
	}
	return h
}

// reservation is what an LLM request under way may still cost: its worst
// case, or, without one (no max_tokens), all that is left of the budget.
// least is a worst case of which only a part is known (plan's, before the
// prompt is; a tool loop's, before its tools are): it is at least that.
type reservation struct {
	tokens int
	cost   float64
	all    bool
	least  bool
}

// promptBytesPerToken is how many bytes of a request a prompt token is
// taken to be: fewer than tokenizers give English text (about 4) or CJK
// (3 per character, often a token each), so the worst case errs high.
const promptBytesPerToken = 3

// estimatedTokens is how many tokens n bytes of a request or an answer
// are taken to be: a reservation's prompt, and the size of an answer
// that reported no usage.
func estimatedTokens(n int) int { return n/promptBytesPerToken + 1 }

// answerTokens is how many completion tokens an answer of n bytes is
// taken to be when its server reported none: estimatedTokens, but no more
// than the request's maxTokens (0: none sent), which no server bills
// beyond, and which is the answer's part of the request's worst case
// (reserveFor): so an estimate never exceeds what its request reserved.
func answerTokens(n, maxTokens int) int {
	if maxTokens <= 0 {
		return estimatedTokens(n)
	}
	return min(estimatedTokens(n), maxTokens)
}

// reserveFor is a request's worst case: its body as prompt tokens
// (estimatedTokens) plus max_tokens (the most answerTokens counts of an
// answer), each priced at the dearest price of
// price (nil: its cost is unknown, which max_cost_usd does not count). A
// server that reports only total_tokens is charged that price for each
// (costOf), whichever way they went: at the input price, a large prompt
// the worst case let through cost more than it, and crossed the budget.
func reserveFor(requestBytes, maxTokens int, price *spec.Price) reservation {
	if maxTokens <= 0 {
		return reservation{all: true}
	}
	prompt := estimatedTokens(requestBytes)
	r := reservation{tokens: prompt + maxTokens}
	if price != nil {
		r.cost = float64(r.tokens) * dearest(price) / 1e6
	}
	return r
}

// admits is the rule for one more request under budget b, given what the
// session spent and the requests under way: refused (why) once spent has
// reached b; else admitted when its worst case and theirs fit in what is
// left, or, for a request without a worst case, when none is under way;
// else it waits (false, "") for one to end.
func admits(b *spec.Budget, spent *Usage, inflight map[int]reservation, r reservation) (ok bool, why string) {
	if why := overBudget(b, spent); why != "" {
		return false, why
	}
	if r.all {
		return len(inflight) == 0, ""
	}
	spentTokens, spentCost := spentOf(spent)
	tokens, cost := spentTokens+r.tokens, spentCost+r.cost
	for _, o := range inflight {
		if o.all {
			return false, ""
		}
		tokens += o.tokens
		cost += o.cost
	}
	// Rounded as costs are kept: in floats 0.2 + 0.1 passes a budget of
	// 0.3 that it fills exactly.
	cost = checkpoint.RoundCost(cost)
	overTokens, overCost := b.MaxTokens > 0 && tokens > b.MaxTokens, b.MaxCostUSD > 0 && cost > b.MaxCostUSD
	switch {
	case (overTokens || overCost) && len(inflight) > 0:
		return false, "" // what is under way may leave room
	case overTokens:
		return false, fmt.Sprintf("the session has used %s tokens%s and the next request may use %s more %s, budget.max_tokens is %s",
			thousands(spentTokens), estimatedPart(spent, true), r.upTo(thousands(r.tokens)), r.what(), thousands(b.MaxTokens))
	case overCost:
		return false, fmt.Sprintf("the session has spent %s%s and the next request may cost %s more %s, budget.max_cost_usd is %s",
			dollars(spentCost), estimatedPart(spent, false), r.upTo(dollars(r.cost)), r.what(), dollars(b.MaxCostUSD))
	}
	return true, ""
}

func (r reservation) upTo(amount string) string {
	if r.least {
		return "at least " + amount
	}
	return "up to " + amount
}

func (r reservation) what() string {
	if r.least {
		return "(its max_tokens, and its prompt as far as it is known)"
	}
	return "(its prompt and max_tokens)"
}

// requestSizer is an Executor that can tell, before an attempt starts,
// how large its first LLM request is (exact false: at least that large).
type requestSizer interface {
	firstRequestBytes(ctx context.Context, job *Job) (n int, exact bool, err error)
}

// gated says whether task i's attempts pass the budget's gate before
// they start (admitFirst): an LLM task of a team with a budget.
func (e *Engine) gated(i int) bool {
	return e.Team.Budget != nil && e.agentOf(i).Kind == spec.LLMAgent
}

// admitFirst holds an attempt of job back, before its start is recorded,
// until the budget admits its first LLM request by the rule every request
// meets (admit), and reserves that request's worst case: an attempt the
// budget refuses before it sent anything is no attempt, none is recorded,
// also in a workflow where it waited behind another task's request that
// reached the budget. why is the refusal ("" when admitted); admit is
// job's Admit for the attempt, whose first request takes the reservation
// over (sized then as sent), and release gives it up should no request
// take it (call it once the attempt ends).
func (e *Engine) admitFirst(ctx context.Context, job *Job) (admit func(context.Context, reservation) (func(*Usage), error), release func(), why string, err error) {
	// Without max_tokens its worst case is unknown whatever its size, so
	// the request is not built to be sized. Its size is unknown on an
	// error, which the attempt meets and says before it sends anything:
	// only the spending is checked then.
	var r reservation
	if s, ok := e.Executor.(requestSizer); ok && job.Agent.LLM != nil {
		if job.Agent.LLM.MaxTokens <= 0 {
			r = reserveFor(0, 0, nil)
		} else if n, exact, err := s.firstRequestBytes(ctx, job); err == nil {
			r = reserveFor(n, job.Agent.LLM.MaxTokens, job.Agent.LLM.Price)
			r.least = !exact
		}
	}
	var held int
	done, err := e.admit(ctx, job.Index, r, nil, &held)
	var be *BudgetError
	if errors.As(err, &be) {
		return nil, nil, be.Why, nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	var (
		mu    sync.Mutex
		taken bool
	)
	take := func() bool {
		mu.Lock()
		defer mu.Unlock()
		first := !taken
		taken = true
		return first
	}
	admit = func(ctx context.Context, r reservation) (func(*Usage), error) {
		if take() {
			return e.admit(ctx, job.Index, r, &held, nil)
		}
		return e.admit(ctx, job.Index, r, nil, nil)
	}
	release = func() {
		if take() {
			done(nil)
		}
	}
	return admit, release, "", nil
}

// BudgetHaltsBefore says why a --continue of sess (nil: a new session)
// halts before task's first LLM request ("" when it may send it), by the
// run's rule (budgetHaltsBefore) with what plan knows: the spending, the
// request's max_tokens, and its prompt as far as the set's texts and the
// session's records give it (knownPromptBytes).
func (s *TaskSet) BudgetHaltsBefore(sess *checkpoint.Session, task string) string {
	var (
		recorded string
		spent    *Usage
	)
	if sess != nil {
		recorded, spent = sess.Checkpoint.Decisions[BudgetDecision], sess.Usage()
	}
	b := effectiveBudget(s.Team.Budget, recorded)
	i := s.Team.TaskIndex(task)
	if b == nil || i < 0 {
		return ""
	}
	a := s.Team.Agent(s.Team.Tasks[i].Agent)
	if a == nil || a.Kind != spec.LLMAgent {
		return ""
	}
	r := reservation{all: true}
	if a.LLM != nil && a.LLM.MaxTokens > 0 {
		r = reserveFor(s.knownPromptBytes(sess, i, a), a.LLM.MaxTokens, a.LLM.Price)
		r.least = true
	}
	_, why := admits(b, spent, nil, r)
	return why
}

// knownPromptBytes is the size of task i's first request (to agent a) as
// plan knows it, built by the run's own rule (LLMs.request): its texts
// rendered with the state the run starts from, and the outputs its
// context tasks hold in sess's file. An output not known yet, or stored
// out of line, counts nothing, as do a tool loop's definitions and a
// memory's history, so it is at most the run's size.
func (s *TaskSet) knownPromptBytes(sess *checkpoint.Session, i int, a *spec.Agent) int {
	t := s.Team.Tasks[i]
	state := t.Scope(s.State)
	job := &Job{Task: t, Agent: a, State: state,
		Description: spec.Render(t.Description, state), ExpectedOutput: spec.Render(t.ExpectedOutput, state)}
	if g, err := s.graph(); err == nil && sess != nil {
		for _, c := range g.Context(i) {
			name := s.Team.Tasks[c].Name
			if rec, ok := sess.Task(name); ok && rec.Status == checkpoint.StatusCompleted {
				job.Context = append(job.Context, ContextOutput{Task: name, Output: Output{Raw: rec.Result}})
			}
		}
	}
	req, err := (&LLMs{}).request(context.Background(), job, llm.Endpoint{Model: a.LLM.Model})
	if err != nil {
		return 0
	}
	return llm.RequestBytes(req)
}

// admit holds back one LLM request of task i until admits lets it go, and
// returns what to call with its usage once it is answered. One mutex
// (recMu) orders every check, so that requests of tasks running side by
// side never pass it on the same remainder. over, when not nil, is the
// id of a reservation of the task's own that r takes the place of (the
// first request's, admitFirst): given up in the same hold of the lock, so
// that r neither waits behind it nor counts twice. id, when not nil, is
// set to r's.
func (e *Engine) admit(ctx context.Context, i int, r reservation, over, id *int) (func(*Usage), error) {
	b := effectiveBudget(e.Team.Budget, e.Decisions[BudgetDecision])
	if b == nil {
		return func(*Usage) {}, nil
	}
	e.recMu.Lock()
	if e.admitted == nil {
		e.admitted = sync.NewCond(&e.recMu)
	}
	cond := e.admitted
	if over != nil {
		delete(e.inflight, *over)
		cond.Broadcast() // others may fit now, should r wait
	}
	stop := context.AfterFunc(ctx, func() {
		e.recMu.Lock()
		cond.Broadcast()
		e.recMu.Unlock()
	})
	defer stop()
	for {
		if err := ctx.Err(); err != nil {
			e.recMu.Unlock()
			return nil, err
		}
		ok, why := admits(b, e.sessionUsageLocked(true), e.inflight, r)
		if why != "" {
			e.recMu.Unlock()
			return nil, &BudgetError{Why: why}
		}
		if ok {
			break
		}
		cond.Wait()
	}
	if e.inflight == nil {
		e.inflight = map[int]reservation{}
	}
	n := e.nextRes
	e.nextRes++
	e.inflight[n] = r
	if id != nil {
		*id = n
	}
	e.recMu.Unlock()
	return func(u *Usage) {
		e.recMu.Lock()
		defer e.recMu.Unlock()
		delete(e.inflight, n)
		if u != nil {
			if e.pending == nil {
				e.pending = map[int]*Usage{}
			}
			e.pending[i] = totals(e.pending[i].Plus(u))
		}
		cond.Broadcast()
	}, nil
}

// endsAttempt tells the events that record an attempt's end, and with it
// what all its requests cost.
func endsAttempt(t EventType) bool {
	switch t {
	case TaskRetrying, TaskFailed, TaskCompleted, TaskInterrupted, TaskHalted:
		return true
	}
	return false
}
