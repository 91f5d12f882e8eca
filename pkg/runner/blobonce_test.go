package runner

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/filestore"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// countingStore is a file store that counts the opens of each blob.
type countingStore struct {
	*filestore.Store
	mu    sync.Mutex
	opens map[string]int // by digest
}

func (s *countingStore) OpenBlob(ctx context.Context, id string, b checkpoint.Blob) (io.ReadCloser, error) {
	s.mu.Lock()
	s.opens[b.Digest]++
	s.mu.Unlock()
	return s.Store.OpenBlob(ctx, id, b)
}

// A restore reads each result stored out of line once: the check of a
// result today's output_schema or condition reads (the refuser), the check
// that it reads back as written (verifyBlobs) and the engine's take-over
// share one read. It used to be read three times.
func TestRestoreReadsEachBlobOnce(t *testing.T) {
	dir := t.TempDir()
	const team = `
process: workflow
agents:
  big: {shell: 'printf "{\"pad\":\""; head -c 1100000 /dev/zero | tr "\\0" x; printf "\"}"'}
  route: {shell: 'printf go; head -c 1100000 /dev/zero | tr "\\0" " "'}
  plain: {shell: 'echo "$TEAMRUN_TASK"; head -c 1100000 /dev/zero | tr "\\0" y'}
  small: {shell: 'echo small'}
tasks:
  src: {description: src, agent: small}
  schema: {description: s, agent: big, output_schema: {type: object, required: [pad]}, context: [src]}
  gate: {description: g, agent: route, condition: {go: [after]}}
  after: {description: a, agent: plain}
  other: {description: o, agent: plain}
`
	spec := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(spec, []byte(team), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	run := func(cont bool, rerun ...string) (*countingStore, string) {
		t.Helper()
		fs, err := filestore.Open(home)
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingStore{Store: fs, opens: map[string]int{}}
		var out bytes.Buffer
		sum, err := Run(context.Background(), Options{SpecPath: spec, Continue: cont, Session: "s1", Mode: ModeJSON,
			IO: iostreams.Test(nil, &out, &out), Home: home, Getenv: func(string) string { return "" }, Rerun: rerun, store: cs})
		if err != nil || sum.Outcome != Succeeded {
			t.Fatalf("run (continue %v): %v %+v\n%.3000s", cont, err, sum, out.String())
		}
		return cs, out.String()
	}
	run(false)
	cs, _ := run(true)
	// schema, held for the early cut-off (src runs again), is read by
	// verifyBlobs and by its cut-off: once too.
	held, out := run(true, "src")
	if !strings.Contains(out, `"event":"task_reused","session":"s1","task":"schema"`) {
		t.Fatalf("--rerun src: schema was not cut off:\n%.3000s", out)
	}
	fs, err := filestore.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := fs.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"schema", "gate", "after", "other"} {
		rec, _ := sess.Task(name)
		if rec == nil || rec.Blob == nil {
			t.Fatalf("%s: not stored out of line: %+v", name, rec)
		}
		if n := cs.opens[rec.Blob.Digest]; n != 1 {
			t.Errorf("%s's result stored out of line was opened %d times by the restore, want once", name, n)
		}
		if n := held.opens[rec.Blob.Digest]; n != 1 {
			t.Errorf("--rerun src: %s's result stored out of line was opened %d times, want once", name, n)
		}
	}
}
