package checkpoint_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// Costs add up without float noise: what the session file and the events
// encode is the sum a person would write.
func TestCostSumsRounded(t *testing.T) {
	tests := []struct {
		name string
		sum  *checkpoint.Usage
		want string
	}{
		{"two calls", (&checkpoint.Usage{CostUSD: 0.000029}).Plus(&checkpoint.Usage{CostUSD: 0.000026}), `"cost_usd":0.000055`},
		{"estimates", (&checkpoint.Usage{EstimatedCostUSD: 0.000029}).Plus(&checkpoint.Usage{EstimatedCostUSD: 0.000026}), `"estimated_cost_usd":0.000055`},
		{"less an attempt", (&checkpoint.Usage{CostUSD: 0.000084, Calls: []checkpoint.Call{{Attempt: 2, CostUSD: ptr(0.000029)}}}).WithoutAttempt(2), `"cost_usd":0.000055`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.sum)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("encoded %s, want %s", b, tc.want)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

func TestShortArguments(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"a":1}`, `{"a":1}`},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{strings.Repeat("x", 201), strings.Repeat("x", 200) + "… (201 bytes)"},
		// Not cut inside a character: "é" is 2 bytes, the 200th byte its first.
		{strings.Repeat("x", 199) + strings.Repeat("é", 10), strings.Repeat("x", 199) + "… (219 bytes)"},
	}
	for _, tc := range tests {
		if got := checkpoint.ShortArguments(tc.args); got != tc.want {
			t.Errorf("ShortArguments(%d bytes) = %q, want %q", len(tc.args), got, tc.want)
		}
	}
}
