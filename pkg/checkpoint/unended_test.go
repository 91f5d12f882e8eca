package checkpoint

import (
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// An LLM attempt's start counts a request it may have under way, should
// the attempt never end (a kill -9): a session whose run died counts it;
// the attempt's end, which carries the task's usage less the attempt's
// calls plus those it paid (as the runner writes it), takes it back.
func TestStartCountsUnended(t *testing.T) {
	cost := 0.00005
	unended := func(n int) *Usage {
		c := Call{Model: "m", Attempt: n, Outcome: CallInterrupted, UsageUnknown: true, EstimatedTokens: 50, EstimatedCostUSD: &cost, NoEnd: true}
		return (&Usage{}).Plus(&Usage{Calls: []Call{c}, UnknownRequests: 1, InterruptedEstimatedTokens: 50, InterruptedEstimatedCostUSD: cost})
	}
	paid := func(n, tokens int) *Usage {
		return &Usage{TotalTokens: tokens, UnpricedTokens: tokens, Calls: []Call{{Model: "m", Attempt: n, TotalTokens: tokens}}}
	}
	type step struct {
		kind    RecordKind
		attempt int
		usage   *Usage // started, request_paid: the record's; an end: what its attempt paid
	}
	tests := []struct {
		name              string
		steps             []step
		tokens, estimated int // of the task's usage
		unknown           int
		isNil             bool
	}{
		{"a start without an end counts one request", []step{{TaskStarted, 1, unended(1)}}, 0, 50, 1, false},
		{"what was paid adds to it", []step{{TaskStarted, 1, unended(1)}, {RequestPaid, 1, paid(1, 37)}}, 37, 50, 1, false},
		{"its end takes it back", []step{{TaskStarted, 1, unended(1)}, {RequestPaid, 1, paid(1, 37)}, {TaskCompleted, 1, paid(1, 37)}}, 37, 0, 0, false},
		{"an end that paid nothing leaves no usage", []step{{TaskStarted, 1, unended(1)}, {TaskFailed, 1, nil}}, 0, 0, 0, true},
		{"a dead attempt's stays", []step{{TaskStarted, 1, unended(1)}, {TaskStarted, 2, unended(2)}, {TaskCompleted, 2, paid(2, 15)}}, 15, 50, 1, false},
		{"each dead attempt's counts", []step{{TaskStarted, 1, unended(1)}, {TaskStarted, 2, unended(2)}, {TaskStarted, 3, unended(3)}}, 0, 150, 3, false},
		{"a start without one counts nothing", []step{{TaskStarted, 1, nil}}, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSession("s1", "/x/team.yaml", "team", spec.Sequential, []spec.TaskDef{{ID: 0, Name: "work", Agent: "w", Key: "k1"}}, "fp", time.Unix(0, 0))
			for _, st := range tt.steps {
				r := Record{Kind: st.kind, Task: "work", Attempt: st.attempt, Usage: st.usage, Result: "ok"}
				if st.kind == TaskCompleted || st.kind == TaskFailed {
					prev, _ := s.Task("work")
					r.Usage, r.Attempt = prev.Usage.WithoutAttempt(st.attempt).Plus(st.usage), 0
					if st.kind == TaskFailed {
						r.Error = "failed"
					}
				}
				p, err := EncodeRecord(r)
				if err != nil {
					t.Fatal(err)
				}
				back, err := DecodeRecord(p)
				if err != nil {
					t.Fatal(err)
				}
				s.Apply(back)
			}
			tr, _ := s.Task("work")
			u := tr.Usage
			if tt.isNil != (u == nil) {
				t.Fatalf("usage %+v, want nil: %v", u, tt.isNil)
			}
			if u == nil {
				return
			}
			if u.TotalTokens != tt.tokens || u.InterruptedEstimatedTokens != tt.estimated || u.UnknownRequests != tt.unknown {
				t.Errorf("usage %+v: want %d tokens, %d estimated for %d interrupted requests", u, tt.tokens, tt.estimated, tt.unknown)
			}
			if got := s.Usage(); got == nil || got.InterruptedEstimatedTokens != tt.estimated {
				t.Errorf("the session's usage %+v, want its %d estimated tokens", got, tt.estimated)
			}
		})
	}
}
