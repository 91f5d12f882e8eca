package scripttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamrun/teamrun/internal/testenv"
)

const scriptDir = "../../testdata/script"

// TestScriptsPostgres runs cmd/teamrun's scripts with the sessions in a
// real PostgreSQL (TEAMRUN_STORE, a schema of each script's own), so every
// script about sessions holds for both stores. A script about the file
// store's own files says `[pgstore] skip`. Without TEAMRUN_TEST_PG_URL it
// skips, except under CI=true.
func TestScriptsPostgres(t *testing.T) {
	testscript.Run(t, postgresScripts(t))
}

// TestPostgresLoop is the done-when: the kill -9 / resume-elsewhere
// script and the 10-way race pass 20 times in a row. It takes a while, so
// -short skips it.
func TestPostgresLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 20-round loop of the PostgreSQL fault scripts")
	}
	p := postgresScripts(t)
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

// postgresScripts are the scripts' settings with a PostgreSQL store and,
// first on PATH, a teamrun built from this checkout as a user builds it.
func postgresScripts(t *testing.T) testscript.Params {
	bin := buildTeamrun(t)
	p := PostgresParams(t, scriptDir, func(env *testscript.Env) error {
		env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
		return nil
	})
	return p
}

// buildTeamrun builds ./cmd/teamrun into a folder of the test's and
// returns that folder. It skips (fails under CI=true) without PostgreSQL
// before paying for the build.
func buildTeamrun(t *testing.T) string {
	t.Helper()
	testenv.PostgresURL(t)
	goTool := testenv.LookPath(t, "go")
	dir := t.TempDir()
	cmd := exec.Command(goTool, "build", "-o", filepath.Join(dir, "teamrun"), "github.com/teamrun/teamrun/cmd/teamrun")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/teamrun: %v\n%s", err, out)
	}
	return dir
}
