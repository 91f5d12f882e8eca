package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint"
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
// max_cost_usd=X or max_tokens=N (that limit set to X).
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
	if err != nil || n <= 0 {
		return "", fmt.Errorf("%q: %s wants a positive number", value, k)
	}
	next := *cur
	switch k {
	case "raise":
		switch {
		case cur.MaxCostUSD > 0 && cur.MaxTokens > 0:
			return "", fmt.Errorf("the budget sets both max_cost_usd (%s) and max_tokens (%s): say which to raise, e.g. max_cost_usd=%s or max_tokens=%s",
				dollars(cur.MaxCostUSD), thousands(cur.MaxTokens), strconv.FormatFloat(cur.MaxCostUSD*2, 'f', -1, 64), strconv.Itoa(cur.MaxTokens*2))
		case cur.MaxCostUSD > 0:
			next.MaxCostUSD += n
		default:
			if n != float64(int(n)) {
				return "", fmt.Errorf("%q: max_tokens is raised by a whole number of tokens", value)
			}
			next.MaxTokens += int(n)
		}
	case "max_cost_usd":
		next.MaxCostUSD = n
	case "max_tokens":
		if n != float64(int(n)) {
			return "", fmt.Errorf("%q: max_tokens wants a whole number", value)
		}
		next.MaxTokens = int(n)
	default:
		return "", fmt.Errorf("%q: want raise=N, max_cost_usd=X or max_tokens=N", value)
	}
	return formatBudget(next), nil
}

// RecordBudget records a session's raised budget (RaisedBudget's value)
// under its lock, as a transition like any other. Unlike
// checkpoint.Decide it takes no task: the budget is the session's.
func RecordBudget(ctx context.Context, store checkpoint.Backend, id, value string) error {
	return checkpoint.RecordOne(ctx, store, id, checkpoint.Record{Kind: checkpoint.DecisionRecorded, Task: BudgetDecision, Value: value}, nil)
}
