package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

// The output copied as it comes (logs, --verbose) is the same result,
// whether it stays in memory or goes to a spool file past
// stdoutInMemory, and whether the description is written before the
// command starts or by a goroutine (past shortStdin).
func TestStdoutCopiedAsItComes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		size  int // bytes of stdout
		stdin int // bytes of stdin, echoed first
	}{
		{"empty", 0, 0},
		{"short", 10, 5},
		{"at the memory's edge", stdoutInMemory, 0},
		{"past it", stdoutInMemory + 1, 0},
		{"far past it", 5 * stdoutInMemory, shortStdin + 1},
		{"long stdin", 3, 4 * shortStdin},
	} {
		for _, goroutines := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/goroutines=%v", tt.name, goroutines), func(t *testing.T) {
				stdin := strings.Repeat("i", tt.stdin)
				var copied bytes.Buffer
				dir := t.TempDir()
				out, err := RunCommand(context.Background(), nil, CommandSpec{
					Shell: fmt.Sprintf("cat; head -c %d /dev/zero | tr '\\0' o", tt.size),
					Stdin: stdin, Spool: dir, Stdout: &copied, copyByGoroutines: goroutines,
				})
				if err != nil {
					t.Fatal(err)
				}
				want := stdin + strings.Repeat("o", tt.size)
				if out != want || copied.String() != want {
					t.Fatalf("result %d bytes, copy %d bytes; want %d bytes each", len(out), copied.Len(), len(want))
				}
				if left, _ := os.ReadDir(dir); len(left) != 0 {
					t.Fatalf("spool files left behind: %v", left)
				}
			})
		}
	}
}

// A spool that cannot be written (its folder gone) fails the task with a
// clear error, and the command is still drained to its end (a copy that
// stopped would leave it blocked on a full pipe).
func TestStdoutSpoolFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	var copied bytes.Buffer
	_, err := RunCommand(context.Background(), nil, CommandSpec{
		Shell: fmt.Sprintf("head -c %d /dev/zero", 4*stdoutInMemory), Spool: dir, Stdout: &copied,
	})
	if err == nil || !strings.Contains(err.Error(), "cannot keep the command's output in "+dir) {
		t.Fatalf("error %v; want one naming %s", err, dir)
	}
	if copied.Len() != 4*stdoutInMemory {
		t.Fatalf("copy of %d bytes, want %d: the output was not drained", copied.Len(), 4*stdoutInMemory)
	}
}

// A context folder is reused with its files rewritten in place, never
// through a link: a context file the command hard-linked elsewhere, or
// replaced by a symbolic link, keeps what it had when the next job's
// context is written.
func TestContextFolderReuse(t *testing.T) {
	keep := t.TempDir()
	c := &Commands{TempDir: t.TempDir()}
	defer c.Close()
	run := func(task, shell string, ctx ...ContextOutput) string {
		t.Helper()
		res, err := c.Execute(context.Background(), &Job{
			Session: "s1", Attempt: 1, Task: &spec.Task{Name: task},
			Agent:   &spec.Agent{Name: "a", Kind: spec.CommandAgent, Shell: shell},
			Context: ctx,
		})
		if err != nil {
			t.Fatalf("task %s: %v", task, err)
		}
		return res.Raw
	}
	list := `ls "$TEAMRUN_CONTEXT_DIR" | tr '\n' ' '; for f in "$TEAMRUN_CONTEXT_DIR"/*; do [ -e "$f" ] && cat "$f"; echo; done`
	ctx := func(task, out string) ContextOutput { return ContextOutput{Task: task, Output: Output{Raw: out}} }

	if got := run("t1", list, ctx("a", "A1"), ctx("b", "B1")); got != "a b A1\nB1\n" {
		t.Fatalf("t1 saw %q", got)
	}
	// Renamed and rewritten: one spare has t2's name, one is left over.
	if got := run("t2", list, ctx("b", "B2"), ctx("c", "C2")); got != "b c B2\nC2\n" {
		t.Fatalf("t2 saw %q", got)
	}
	// t3 hard-links one context file away and puts a symbolic link in the
	// place of the other, then leaves a file of its own.
	target := filepath.Join(keep, "target")
	os.WriteFile(target, []byte("mine"), 0o600)
	run("t3", `ln "$TEAMRUN_CONTEXT_DIR/c" `+keep+`/linked && ln -sf `+target+` "$TEAMRUN_CONTEXT_DIR/d"; echo x > "$TEAMRUN_CONTEXT_DIR/own"`,
		ctx("c", "C3"), ctx("d", "D3"))
	if got := run("t4", list, ctx("c", "C4"), ctx("d", "D4")); got != "c d C4\nD4\n" {
		t.Fatalf("t4 saw %q", got)
	}
	for path, want := range map[string]string{filepath.Join(keep, "linked"): "C3", target: "mine"} {
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Errorf("%s has %q after the next job, want %q", path, b, want)
		}
	}
	if got := run("t5", list); got != "\n" {
		t.Fatalf("t5, with no context, saw %q", got)
	}
}
