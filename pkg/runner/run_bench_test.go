package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunRestored1000 is the in-process part of a fully restored
// 1,000-task run: spec load, session load, restore, summary. The
// whole-binary figures are in ./bench.
func BenchmarkRunRestored1000(b *testing.B) {
	dir := b.TempDir()
	var s strings.Builder
	s.WriteString("name: bench\nagents:\n  t:\n    shell: \"true\"\ntasks:\n")
	for i := range 1000 {
		fmt.Fprintf(&s, "  t%d:\n    description: task %d\n    agent: t\n", i, i)
	}
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	o := Options{SpecPath: path, Session: "done", Mode: ModeQuiet, IO: IO{Out: io.Discard, Err: io.Discard}, Home: filepath.Join(dir, "home")}
	if sum, err := Run(context.Background(), o); err != nil || sum.Outcome != Succeeded {
		b.Fatalf("first run: %v %+v", err, sum)
	}
	o.Continue = true
	b.ResetTimer()
	for range b.N {
		if sum, err := Run(context.Background(), o); err != nil || sum.Restored != 1000 {
			b.Fatalf("restored run: %v %+v", err, sum)
		}
	}
}
