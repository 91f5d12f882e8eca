package runner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

// usageOf is what an attempt's LLM requests cost: each call priced with
// the agent's price (nil: the cost is unknown), summed.
func usageOf(calls []llm.Call, price *spec.Price, attempt int) *Usage {
	if len(calls) == 0 {
		return nil
	}
	u := &Usage{Calls: make([]checkpoint.Call, 0, len(calls))}
	for _, c := range calls {
		cc := checkpoint.Call{Model: c.Model, Attempt: attempt, Status: c.Status, DurationMS: c.Duration.Milliseconds(),
			PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens, TotalTokens: c.Usage.TotalTokens,
			CachedTokens: c.Usage.CachedTokens, ReasoningTokens: c.Usage.ReasoningTokens}
		if price != nil && !c.UsageUnknown {
			cost := costOf(c.Usage, price)
			cc.CostUSD = &cost
		}
		if c.CutOff {
			cc.Outcome = CallInterrupted
		}
		if c.UsageUnknown {
			// Billed (answered), or perhaps billed (cut off), but no
			// tokens were reported: its size gives an estimate that a
			// budget can count, by the rule of its reservations
			// (estimatedTokens, answerTokens), kept apart from the tokens
			// servers reported. The request is never counted as $0.
			prompt, completion := estimatedTokens(c.RequestBytes), answerTokens(c.AnswerBytes, c.MaxTokens)
			cc.UsageUnknown, cc.EstimatedTokens = true, prompt+completion
			if price != nil {
				cost := costOf(llm.Usage{PromptTokens: prompt, CompletionTokens: completion}, price)
				cc.EstimatedCostUSD = &cost
			}
		}
		// What a call adds to the total is the session's own rule
		// (checkpoint.Call.Usage), which a restore also sums by.
		u.Add(cc.Usage())
		u.Calls = append(u.Calls, cc)
	}
	return u
}

// CallInterrupted is the outcome of a request cut off by Ctrl-C or a
// timeout.
const CallInterrupted = checkpoint.CallInterrupted

// costOf prices one answer: cached prompt tokens at the cached price (the
// input price without one), reasoning tokens as the completion tokens
// they are part of, and the tokens of the total that neither count
// claims (a total-only usage, a proxy's hidden reasoning tokens) at the
// dearest price (dearest): a known token is never free, and a budget
// never counts less than the server may bill.
func costOf(u llm.Usage, p *spec.Price) float64 {
	cached := min(u.CachedTokens, u.PromptTokens)
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	unattributed := max(0, u.TotalTokens-u.PromptTokens-u.CompletionTokens)
	return checkpoint.RoundCost((float64(u.PromptTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.CompletionTokens)*p.Output +
		float64(unattributed)*dearest(p)) / 1e6)
}

// dearest is the most a token may cost under p, per million: what costOf
// charges a token the usage does not say is prompt or completion (a
// server that reports only total_tokens), and so what a budget's worst
// case (reserveFor) prices every token at, as it cannot know ahead which
// way the server will report them.
func dearest(p *spec.Price) float64 {
	d := max(p.Input, p.Output)
	if p.CachedInput != nil {
		d = max(d, *p.CachedInput)
	}
	return d
}

// paidError is a failed attempt that had paid for LLM requests: the engine
// records their usage with the failure.
type paidError struct {
	err   error
	usage *Usage
}

func (e *paidError) Error() string { return e.err.Error() }
func (e *paidError) Unwrap() error { return e.err }

// paid wraps err with the usage it cost; nil usage leaves err as it is.
func paid(err error, u *Usage) error {
	if u == nil || err == nil {
		return err
	}
	return &paidError{err: err, usage: u}
}

// paidUsage is what a failed attempt cost, or nil.
func paidUsage(err error) *Usage {
	var pe *paidError
	if errors.As(err, &pe) {
		return pe.usage
	}
	return nil
}

// attemptUsage is the part of u that one attempt's calls cost; all of u
// when its calls do not say their attempt (or nil when none matches).
// AttemptUsage is what the given attempt of a task with usage u cost
// (its Calls of that attempt); u itself when it lists no calls.
func AttemptUsage(u *Usage, attempt int) *Usage { return attemptUsage(u, attempt) }

func attemptUsage(u *Usage, attempt int) *Usage { return attemptsUsage(u, attempt, attempt) }

// attemptsUsage is the part of u that the calls of attempts from to to
// cost (attemptUsage).
func attemptsUsage(u *Usage, from, to int) *Usage {
	if u == nil || len(u.Calls) == 0 {
		return u
	}
	var out *Usage
	for _, c := range u.Calls {
		if c.Attempt != 0 && (c.Attempt < from || c.Attempt > to) {
			continue
		}
		out = out.Plus(c.Usage())
	}
	return out
}

// totals is u without its calls: what a summary adds up.
func totals(u *Usage) *Usage {
	if u == nil {
		return nil
	}
	c := *u
	c.Calls = nil
	return &c
}

// UsageText says what tokens cost in the summary's words: "51,200 tokens
// ($0.0140)", with "cost unknown" for tokens of a model without a price,
// never $0, and what is unknown of requests cut off before they reported
// usage and of answers that reported none: "51,200 tokens ($0.0140) + 1
// interrupted request of unknown usage + 2 answers without usage
// (estimated from their size: 900 tokens, $0.0003)".
func UsageText(u *Usage) string {
	if !HasUsage(u) {
		return "0 tokens"
	}
	var parts []string
	if u.TotalTokens > 0 {
		parts = append(parts, thousands(u.TotalTokens)+" tokens ("+CostText(u)+")")
	}
	if n := u.UnknownRequests; n > 0 {
		part := fmt.Sprintf("%d interrupted %s of unknown usage", n, plural(n, "request"))
		if u.InterruptedEstimatedTokens > 0 {
			part += estimateText(n, u.InterruptedEstimatedTokens, u.InterruptedEstimatedCostUSD)
		}
		parts = append(parts, part)
	}
	if n := u.UnreportedRequests; n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s without usage", n, plural(n, "answer"))+estimateText(n, u.EstimatedTokens, u.EstimatedCostUSD))
	}
	return strings.Join(parts, " + ")
}

// estimateText is " (estimated from its size: 45 tokens, $0.00005)", of n
// requests.
func estimateText(n, tokens int, cost float64) string {
	est := thousands(tokens) + " tokens"
	if cost > 0 {
		est += ", " + dollars(cost)
	}
	whose := "their"
	if n == 1 {
		whose = "its"
	}
	return fmt.Sprintf(" (estimated from %s size: %s)", whose, est)
}

// HasUsage says whether u counts any LLM request: tokens, requests cut
// off before they said how many, or answers that did not say.
func HasUsage(u *Usage) bool {
	return u != nil && (u.TotalTokens > 0 || u.UnknownRequests > 0 || u.UnreportedRequests > 0)
}

// CostText is u's cost: "$0.0140", "cost unknown", or "$0.0140 + cost
// unknown for 1,200 tokens" when only some calls had a price.
func CostText(u *Usage) string {
	switch {
	case u == nil || u.TotalTokens == 0:
		return "$0"
	case u.UnpricedTokens == 0:
		return dollars(u.CostUSD)
	case u.UnpricedTokens >= u.TotalTokens:
		return "cost unknown"
	}
	return fmt.Sprintf("%s + cost unknown for %s tokens", dollars(u.CostUSD), thousands(u.UnpricedTokens))
}

// dollars shows a cost in cents above a dollar, else with the digits
// that tell small costs apart (at most 7 decimals, trailing zeros cut).
func dollars(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("$%.2f", v)
	}
	t := strings.TrimRight(strconv.FormatFloat(v, 'f', 7, 64), "0")
	if i := strings.IndexByte(t, '.'); len(t)-i-1 < 2 {
		t += strings.Repeat("0", 2-(len(t)-i-1))
	}
	return "$" + t
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// sessionUsage is what the session's LLM requests cost: before this run
// and in it, without calls.
func (e *Engine) sessionUsage() *Usage {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	return e.sessionUsageLocked(false)
}

// sessionUsageLocked is sessionUsage under recMu; with pending, the
// requests answered in attempts not yet recorded count too.
func (e *Engine) sessionUsageLocked(pending bool) *Usage {
	s := totals(e.used.Plus(e.DroppedUsage))
	for i, u := range e.PriorUsage {
		if u != nil && i < len(e.Team.Tasks) {
			s = totals(s.Plus(u))
		}
	}
	if pending {
		for _, u := range e.pending {
			s = totals(s.Plus(u))
		}
	}
	return s
}
