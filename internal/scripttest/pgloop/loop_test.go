// Package pgloop runs the PostgreSQL fault scripts in a loop: a test
// binary of its own, so that its rounds have their own time limit beside
// the scripts' pass (internal/scripttest).
package pgloop

import (
	"fmt"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamrun/teamrun/internal/scripttest"
)

// TestPostgresLoop is the done-when: the kill -9 / resume-elsewhere
// script and the 10-way race pass 20 times in a row. It takes a while, so
// -short skips it.
func TestPostgresLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 20-round loop of the PostgreSQL fault scripts")
	}
	p := scripttest.PostgresScripts(t, "../../../testdata/script")
	// Files are read only when Dir is empty.
	p.Files = []string{p.Dir + "/pgstore_resume_elsewhere.txtar", p.Dir + "/pgstore_race.txtar"}
	p.Dir = ""
	for i := range 20 {
		ok := t.Run(fmt.Sprintf("round%02d", i+1), func(t *testing.T) { testscript.Run(t, p) })
		if !ok {
			t.Fatalf("round %d of 20 failed", i+1)
		}
	}
}
