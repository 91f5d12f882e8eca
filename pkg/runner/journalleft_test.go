package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
)

// A journal left beside a finished session (its run killed after its last
// record, before its end folded it) is folded by the next --continue, even
// when that has nothing to run: a session that ended has none left.
func TestFullRestoreFoldsJournalLeft(t *testing.T) {
	p := newProject(t, "", "agents: {w: {shell: 'echo hi'}}\ntasks:\n  a: {description: a, agent: w}\n  b: {description: b, agent: w}\n")
	if sum, out, err := p.run(t, false); err != nil || sum.Outcome != Succeeded {
		t.Fatalf("first run: %v %+v\n%s", err, sum, out)
	}
	journal := filepath.Join(p.home, "sessions", "s1.journal")
	// What a run killed before its end leaves: the session begun again
	// with a journal, never closed.
	ctx := context.Background()
	st, err := stores.Open(ctx, p.home)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Lock(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Begin(ctx, l, sess); err != nil {
		t.Fatal(err)
	}
	l.Release()
	st.Close()
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("no journal left to fold: %v", err)
	}
	sum, out, err := p.run(t, true)
	if err != nil || sum.Outcome != Succeeded || sum.Restored != 2 || sum.Ran != 0 {
		t.Fatalf("--continue: %v %+v\n%s", err, sum, out)
	}
	if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the journal is still there after a finished --continue (stat: %v)", err)
	}
	if got := p.session(t); got.Summary.Done != 2 {
		t.Errorf("folded session: %+v", got.Summary)
	}
}
