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
