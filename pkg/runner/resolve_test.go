package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/memstore"
)

// TestResolveSessionLost: --continue --session ID of a session the audit
// log says was made, which this store lacks, is warned of (not an info
// line --quiet drops); a new id, one removed on purpose, and one a run is
// starting here now are not. Resolving writes nothing: the run audits it
// when it starts the session, after what could still make it exit 2.
func TestResolveSessionLost(t *testing.T) {
	ctx := context.Background()
	const elsewhere = "/elsewhere/sessions"
	tests := []struct {
		name   string
		audit  []string // events recorded for the id, in order
		here   bool     // the session is in this store
		held   bool     // a run holds it (starting it)
		lost   bool
		exists bool
	}{
		{name: "new id", lost: false},
		{name: "made in another store", audit: []string{checkpoint.EventCreated}, lost: true},
		{name: "made, then resumed elsewhere", audit: []string{checkpoint.EventCreated, checkpoint.EventCompleted}, lost: true},
		{name: "deleted on purpose", audit: []string{checkpoint.EventCreated, checkpoint.EventDeleted}},
		{name: "being started here", audit: []string{checkpoint.EventCreated}, held: true},
		{name: "in this store", audit: []string{checkpoint.EventCreated}, here: true, exists: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := memstore.New()
			p := s.Project("/project")
			for _, ev := range tc.audit {
				if err := p.Audit(ctx, checkpoint.AuditRecord{Event: ev, Session: "nightly-1", Store: elsewhere}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.here || tc.held {
				l, err := s.Lock(ctx, "nightly-1", 0)
				if err != nil {
					t.Fatal(err)
				}
				if tc.here {
					j, err := s.Begin(ctx, l, checkpoint.NewSession("nightly-1", "/project/agents.yaml", "agents", "sequential", nil, "0", time.Now()))
					if err != nil {
						t.Fatal(err)
					}
					if err := j.Close(); err != nil {
						t.Fatal(err)
					}
					l.Release()
				}
			}
			r, err := ResolveSession(ctx, s, p, "/project/agents.yaml", "agents", "nightly-1", true)
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != "nightly-1" || (r.Lost != nil) != tc.lost || r.Exists != tc.exists {
				t.Fatalf("got %+v, want lost %v exists %v", r, tc.lost, tc.exists)
			}
			switch {
			case tc.lost:
				n := r.Starting()
				if r.Info != "" || len(n) != 1 || !strings.Contains(n[0], "session nightly-1 is missing from "+s.Location()) ||
					!strings.Contains(n[0], "created nightly-1 at ") || !strings.Contains(n[0], " in "+elsewhere+" ") ||
					!strings.HasSuffix(n[0], ": starting it again in this store, every task with it") {
					t.Fatalf("info %q, notes %q", r.Info, n)
				}
			case tc.exists:
				if r.Info != "" || len(r.Notes) != 0 {
					t.Fatalf("info %q, notes %q", r.Info, r.Notes)
				}
			default:
				if len(r.Notes) != 0 || !strings.Contains(r.Info, "yet: starting it") {
					t.Fatalf("info %q, notes %q", r.Info, r.Notes)
				}
			}
			recs, err := p.AuditRecords(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(tc.audit) {
				t.Errorf("%d audit records, want the %d written before", len(recs), len(tc.audit))
			}
			if tc.lost {
				if r.Lost.ID != "nightly-1" || r.Lost.Absent.Created.Store != elsewhere {
					t.Errorf("Lost = %+v", r.Lost)
				}
			}
		})
	}
}
