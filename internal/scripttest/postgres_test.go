package scripttest

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

const scriptDir = "../../testdata/script"

// TestScriptsPostgres runs cmd/teamrun's scripts with the sessions in a
// real PostgreSQL (TEAMRUN_STORE, a schema of each script's own), so every
// script about sessions holds for both stores. A script about the file
// store's own files says `[pgstore] skip`. Without TEAMRUN_TEST_PG_URL it
// skips, except under CI=true.
func TestScriptsPostgres(t *testing.T) {
	testscript.Run(t, PostgresScripts(t, scriptDir))
}
