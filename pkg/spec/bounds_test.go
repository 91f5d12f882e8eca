package spec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/schemas"
)

// The schema bounds prices at MaxPrice and a budget at MaxBudget, the
// bounds config.yml's prices and a PraisonAI schedule's max_cost are held
// to: at the bound passes, past it is refused naming the key.
func TestSchemaBoundsAgree(t *testing.T) {
	const rest = "agents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w, max_retries: *r}\n"
	tests := []struct {
		name, src, err string
	}{
		{"price at the bound", fmt.Sprintf("llm: {model: m, price: {input: %d, cached_input: %d, output: %d}}\n", MaxPrice, MaxPrice, MaxPrice), ""},
		{"input past it", fmt.Sprintf("llm: {model: m, price: {input: %d.5, output: 1}}\n", MaxPrice), fmt.Sprintf("llm.price.input: expected at most %d", MaxPrice)},
		{"output past it", fmt.Sprintf("llm: {model: m, price: {input: 1, output: %d}}\n", MaxPrice+1), fmt.Sprintf("llm.price.output: expected at most %d", MaxPrice)},
		{"budget at the bound", fmt.Sprintf("budget: {max_cost_usd: %d, max_tokens: %d}\nllm: {model: m, price: {input: 1, output: 1}}\n", MaxBudget, MaxBudget), ""},
		{"max_retries at the bound", fmt.Sprintf("x-retries: &r %d\n", MaxRetries), ""},
		{"max_retries past it", fmt.Sprintf("x-retries: &r %d\n", MaxRetries+1), fmt.Sprintf("tasks.a.max_retries: expected at most %d", MaxRetries)},
		{"max_cost_usd past it", "budget: {max_cost_usd: 1e16}\nllm: {model: m, price: {input: 1, output: 1}}\n", fmt.Sprintf("budget.max_cost_usd: expected at most %d", MaxBudget)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			if !strings.Contains(src, "&r") {
				src += "x-retries: &r 0\n"
			}
			_, err := Parse("t.yaml", []byte(src+rest))
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("err %v, want %q", err, tt.err)
			}
		})
	}
}

// The schema an editor reads holds max_retries to MaxRetries, as validate
// does: without a maximum an editor marked 1001 valid.
func TestSchemaMaxRetries(t *testing.T) {
	var doc struct {
		Defs struct {
			Task struct {
				Properties struct {
					MaxRetries struct {
						Maximum *int `json:"maximum"`
					} `json:"max_retries"`
				} `json:"properties"`
			} `json:"task"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schemas.AgentsSchema, &doc); err != nil {
		t.Fatal(err)
	}
	if m := doc.Defs.Task.Properties.MaxRetries.Maximum; m == nil || *m != MaxRetries {
		t.Errorf("the schema's max_retries maximum is %v, want %d", m, MaxRetries)
	}
}
