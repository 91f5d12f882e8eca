package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A file teamrun writes for an attempt in the session's scratch folder —
// its context folder, its variables file, its command's spooled stdout —
// that cannot be written is one kind of failure, the store's (a
// *StoreError: exit 5, no retry, no attempt spent), whichever the file;
// Ended only when the command ran to its end. The context folder's and
// the variables file's were ordinary errors, which failed the task after
// its retries (exit 1) with its command never run.
func TestScratchFailureIsTheStores(t *testing.T) {
	big := strings.Repeat("v", maxEnvEntry+1) // spilled to TEAMRUN_VARS_FILE
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, c *Commands, job *Job) // breaks the file before job runs
		shell string
		ran   bool // the command ran to its end (Ended)
		what  string
		where string // in the message
	}{
		{
			name: "context folder: the scratch folder's parent is a file",
			setup: func(t *testing.T, c *Commands, job *Job) {
				file := filepath.Join(t.TempDir(), "file")
				if err := os.WriteFile(file, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				c.TempDir = filepath.Join(file, "s1.scratch")
				job.Context = []ContextOutput{{Task: "a", Output: Output{Raw: "A"}}}
			},
			what: "the context folder of task t", where: "not a directory",
		},
		{
			name: "context folder: a symbolic link in the scratch folder's place",
			setup: func(t *testing.T, c *Commands, job *Job) {
				link := filepath.Join(t.TempDir(), "s1.scratch")
				if err := os.Symlink(t.TempDir(), link); err != nil {
					t.Fatal(err)
				}
				c.TempDir = link
			},
			what: "the context folder of task t", where: "is not a folder",
		},
		{
			name: "variables file: something else in its place",
			setup: func(t *testing.T, c *Commands, job *Job) {
				// A first job leaves its context folder for the next one,
				// whose variables file goes beside it.
				first := *job
				if _, err := c.Execute(context.Background(), &first); err != nil {
					t.Fatal(err)
				}
				if len(c.all) != 1 {
					t.Fatalf("%d context folders, want 1", len(c.all))
				}
				if err := os.Mkdir(varsFile(c.all[0]), 0o700); err != nil {
					t.Fatal(err)
				}
				job.State = map[string]any{"big": big}
			},
			what: "the variables file of task t", where: ".vars.json",
		},
		{
			name: "spool: the scratch folder replaced by a file while the command runs",
			setup: func(t *testing.T, c *Commands, job *Job) {
				// Its output copied as it comes (--verbose), the spool is
				// made once it passes stdoutInMemory, not before it starts.
				c.Line = func(task, stream, line string) {}
			},
			shell: `d=$(dirname "$TEAMRUN_CONTEXT_DIR"); rm -rf "$d"; : > "$d"; ` +
				`head -c 300000 /dev/zero; echo ran >> "$MARK"`,
			ran: true, what: "the output of task t", where: "not a directory",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "ran")
			t.Setenv("MARK", mark)
			shell := tt.shell
			if shell == "" {
				shell = `echo ran >> "$MARK"`
			}
			c, job, _ := shellJob(t, shell, nil)
			c.TempDir = filepath.Join(c.TempDir, "s1.scratch")
			if tt.setup != nil {
				tt.setup(t, c, job)
				os.Remove(mark)
			}
			_, err := c.Execute(context.Background(), job)
			var se *StoreError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *StoreError", err, err)
			}
			if se.Ended != tt.ran {
				t.Errorf("Ended %v, want %v", se.Ended, tt.ran)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "cannot keep "+tt.what+": ") || !strings.Contains(msg, tt.where) {
				t.Errorf("error %q, want it to say it cannot keep %s and name %q", msg, tt.what, tt.where)
			}
			if _, serr := os.Stat(mark); (serr == nil) != tt.ran {
				t.Errorf("the command ran: %v, want %v", serr == nil, tt.ran)
			}
		})
	}
}

// A failure of the scratch that its error says in full (a symbolic link)
// keeps its words; one with a path gets the store's advice, a full disk's
// included, and is checkpoint.ErrStore.
func TestScratchFailureWords(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/s/s1.scratch/teamrun-context-1/a", Err: syscall.ENOSPC}
	err := scratchFailure("the context folder of task b", "", full, false)
	want := "cannot keep the context folder of task b: cannot write /s/s1.scratch/teamrun-context-1/a: no space left on device; the disk is full: free some space"
	if err.Error() != want || !errors.Is(err, checkpoint.ErrStore) || !checkpoint.Retryable(err) {
		t.Errorf("got %q (ErrStore %v, retryable %v)\nwant %q", err, errors.Is(err, checkpoint.ErrStore), checkpoint.Retryable(err), want)
	}
	// The spool's folder, not the nameless file in it.
	err = scratchFailure("the output of task b", "/s/s1.scratch", &os.PathError{Op: "write", Path: "/s/s1.scratch/(stdout)", Err: syscall.ENOSPC}, true)
	if !strings.Contains(err.Error(), "cannot write /s/s1.scratch: no space left") || !err.Ended {
		t.Errorf("spool: %q, Ended %v", err, err.Ended)
	}
}
