package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// TestSummaryLeavesOutEmptyUsage checks that the summary's usages that
// count no request are left out of --json's run_finished, as the README
// says, rather than shown as "usage": {} (a session recorded by a teamrun
// that took zero counts as an answer's usage has such calls).
func TestSummaryLeavesOutEmptyUsage(t *testing.T) {
	zero := &Usage{Calls: []checkpoint.Call{{Model: "m", Status: 200}}}
	estimated := &Usage{UnreportedRequests: 1, EstimatedTokens: 7}
	tests := []struct {
		name      string
		used      *Usage // this run's
		dropped   *Usage // the session's, of removed tasks
		wantKeys  []string
		wantNoKey []string
	}{
		{"nothing counted", zero, zero, nil, []string{`"usage"`, `"session_usage"`, `"restored_usage"`}},
		{"an estimate counts", estimated, nil, []string{`"usage"`, `"session_usage"`}, []string{`"restored_usage"`}},
		{"tokens count", &Usage{TotalTokens: 3}, zero, []string{`"usage"`, `"session_usage"`}, []string{`"restored_usage"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Engine{Team: &spec.Team{}, used: tt.used, DroppedUsage: tt.dropped}
			b, err := json.Marshal(e.summary(Succeeded, 0))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.wantKeys {
				if !strings.Contains(string(b), k) {
					t.Errorf("summary %s: no %s", b, k)
				}
			}
			for _, k := range tt.wantNoKey {
				if strings.Contains(string(b), k) {
					t.Errorf("summary %s has %s", b, k)
				}
			}
		})
	}
}

// TestRestoredUsageLine checks that the text summary's "restored …" line
// says all that --json's restored_usage counts: the estimate of an
// interrupted request or of an answer without usage too, and also when
// the restored tasks carry only estimates.
func TestRestoredUsageLine(t *testing.T) {
	session := &Usage{TotalTokens: 9, CostUSD: 0.1}
	tests := []struct {
		name     string
		restored *Usage
		paid     int
		want     string // "": no line
	}{
		{"tokens", &Usage{TotalTokens: 500, CostUSD: 0.00058}, 2,
			"restored 2 tasks whose 500 tokens ($0.00058) were not paid again"},
		{"tokens and an interrupted request", &Usage{TotalTokens: 500, CostUSD: 0.00058, UnknownRequests: 1, InterruptedEstimatedTokens: 49, InterruptedEstimatedCostUSD: 0.00005}, 2,
			"restored 2 tasks whose 500 tokens ($0.00058) + 1 interrupted request of unknown usage (estimated from its size: 49 tokens, $0.00005) were not paid again"},
		{"only an interrupted request", &Usage{UnknownRequests: 1, InterruptedEstimatedTokens: 49, InterruptedEstimatedCostUSD: 0.00005}, 1,
			"restored 1 task whose 1 interrupted request of unknown usage (estimated from its size: 49 tokens, $0.00005) were not paid again"},
		{"only answers without usage", &Usage{UnreportedRequests: 2, EstimatedTokens: 90}, 1,
			"restored 1 task whose 2 answers without usage (estimated from their size: 90 tokens) were not paid again"},
		{"nothing restored", nil, 0, ""},
		{"only command tasks", &Usage{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeUsage(&b, &Summary{SessionUsage: session, RestoredUsage: tt.restored, RestoredPaid: tt.paid})
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			got := ""
			if len(lines) > 1 {
				got = lines[1]
			}
			if got != tt.want {
				t.Errorf("restored line %q, want %q", got, tt.want)
			}
		})
	}
}
