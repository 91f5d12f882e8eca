package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint/filestore"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// passwordStore is a store that connects with a password, as the
// PostgreSQL store does (its Secrets).
type passwordStore struct {
	*filestore.Store
	password string
}

func (s passwordStore) Secrets() []string { return []string{s.password, "short"} }

// The store's password is in the run's one redaction set: what a task
// prints of it (PGPASSWORD is in its environment) is redacted in the
// output and the session, as an agent's key is; one shorter than a key's
// minimum is left alone, as a key's is.
func TestStorePasswordRedacted(t *testing.T) {
	const pw = "store-Pa55word-0123"
	dir := t.TempDir()
	spec := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(spec, []byte("agents:\n  c: {shell: 'echo pw="+pw+" and short'}\ntasks:\n  t: {description: d, agent: c}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	fs, err := filestore.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{SpecPath: spec, Session: "s1", Mode: ModeJSON, Verbose: true,
		IO: iostreams.Test(nil, &out, &out), Home: home, Getenv: func(string) string { return "" }, store: passwordStore{fs, pw}})
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%s", err, sum, out.String())
	}
	sess, err := fs.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := sess.Task("t")
	if got := strings.TrimSpace(rec.Result); got != "pw=[REDACTED] and short" {
		t.Errorf("recorded result %q, want the password redacted", got)
	}
	if strings.Contains(out.String(), "Pa55word") || !strings.Contains(out.String(), "pw=[REDACTED] and short") {
		t.Errorf("the output shows the password, or not the redacted result:\n%s", out.String())
	}
}
