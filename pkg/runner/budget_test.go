package runner

import (
	"strings"
	"testing"

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
