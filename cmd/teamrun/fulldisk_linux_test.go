package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// session export -o FILE on a disk too small for the document, and init on
// a full one: exit 5 naming the file, saying the disk is full and what to
// do, then how to do it again; no file written, not even in part (no temp
// file left either), and a file already there left as it was.
func TestFileOnFullDisk(t *testing.T) {
	full := testenv.SmallDisk(t, "48k")
	dir := t.TempDir()
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	// A result of 200 KB: its document cannot fit in 48 KiB.
	if err := os.WriteFile(p.spec, []byte("agents:\n  w: {shell: 'head -c 200000 /dev/zero | tr \"\\\\0\" x'}\ntasks:\n  a: {description: a, agent: w}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := p.teamrun(t, "run", p.spec, "--session", "big"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	out := filepath.Join(full, "big.json")
	got, code := p.teamrun(t, "session", "export", "big", "-o", out)
	want := "teamrun: cannot write " + out + ": no space left on device; nothing was written (a file already there is left as it was): the disk is full: free some space, or name a file on another disk (-o FILE), then run the same `teamrun session export` again\n"
	if code != exitStore || got != want {
		t.Errorf("export to a full disk: exit %d\n%s\nwant exit 5\n%s", code, got, want)
	}
	if names := entries(t, full); len(names) != 0 {
		t.Errorf("export to a full disk left %q", names)
	}
	keep := filepath.Join(full, "keep.json")
	if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, code := p.teamrun(t, "session", "export", "big", "-o", keep); code != exitStore || !strings.Contains(got, "the disk is full") {
		t.Errorf("export over a file on a full disk: exit %d\n%s", code, got)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("the file export was to replace holds %q, %v; want it as it was", b, err)
	}
	if names := entries(t, full); len(names) != 1 {
		t.Errorf("export over a file on a full disk left %q", names)
	}

	testenv.FillDisk(t, full)
	spec := filepath.Join(full, "agents.yaml")
	got, code = p.teamrun(t, "init", spec)
	want = "teamrun: init: cannot write " + spec + ": no space left on device; nothing was written: the disk is full: free some space, or name a file on another disk (teamrun init FILE), then run the same `teamrun init` again\n"
	if code != exitStore || got != want {
		t.Errorf("init on a full disk: exit %d\n%s\nwant exit 5\n%s", code, got, want)
	}
	if _, err := os.Lstat(spec); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("init on a full disk left %s: %v", spec, err)
	}
}

// A spec on a read-only mount (a ConfigMap), or on a full disk, with the
// file store: the run cannot record its session beside the spec, and says
// why and what to do, not to fix the folder's owner or permissions.
func TestProjectOnReadOnlyOrFullDisk(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"read-only", ": read-only file system; a run records its session in the project's .teamrun folder (state.json, audit.log): the file system there is mounted read-only: run a copy of the spec from a writable folder, or keep sessions in PostgreSQL (--store postgres://…), which writes nothing beside the spec, then run again (no session was created and nothing was run)\n"},
		{"full", ": no space left on device; "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			disk := testenv.SmallDisk(t, "48k")
			dir := t.TempDir()
			p := &crashProject{dir: dir, spec: filepath.Join(disk, "team.yaml")}
			if err := os.WriteFile(p.spec, []byte("agents:\n  w: {shell: echo a}\ntasks:\n  a: {description: a, agent: w}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.name == "full" {
				testenv.FillDisk(t, disk)
			} else if err := syscall.Mount("", disk, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Fatalf("remounting read-only: %v", err)
			}
			got, code := p.teamrun(t, "run", p.spec)
			if tt.name == "read-only" && (!strings.HasPrefix(got, "teamrun: cannot create "+filepath.Join(disk, ".teamrun")) || !strings.HasSuffix(got, tt.want)) ||
				tt.name == "full" && (!strings.Contains(got, filepath.Join(disk, ".teamrun")) || !strings.Contains(got, tt.want+"the disk is full: free some space")) ||
				code != exitStore || strings.Contains(got, "owner or permissions") {
				t.Errorf("exit %d\n%s\nwant exit 5 and …%s", code, got, tt.want)
			}
			if list, code := p.teamrun(t, "session", "list"); !strings.HasPrefix(list, "no sessions in ") {
				t.Errorf("a session was left (exit %d):\n%s", code, list)
			}
		})
	}
}

// teamrunWithHome is p.teamrun with the store at home.
func (p *crashProject) teamrunWithHome(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	cmd := p.command(args...)
	cmd.Env = append(cmd.Env, "TEAMRUN_HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// An attempt's log that a full disk cuts is not kept (README): no part of
// it is left to pass, in `session logs`, for all the attempt wrote, and a
// warning names each stream not kept. A stderr cut at 90112 of 150000
// bytes was shown as if whole, with an empty stdout beside it, and only
// the stdout was warned about.
func TestAttemptLogOnFullDisk(t *testing.T) {
	home := filepath.Join(testenv.SmallDisk(t, "48k"), "home")
	dir := t.TempDir()
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	if err := os.WriteFile(p.spec, []byte("agents:\n  noisy: {shell: 'head -c 150000 /dev/zero | tr \"\\\\0\" e >&2; echo fine'}\ntasks:\n  a: {description: a, agent: noisy}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := p.teamrunWithHome(t, home, "run", p.spec, "--session", "s1")
	if code != 0 {
		t.Fatalf("run: exit %d, want 0 (the logs given up, their space is free for the session)\n%s", code, out)
	}
	logs := filepath.Join(home, "sessions", "s1.logs", "a")
	if _, err := os.Lstat(filepath.Join(logs, "1.stderr")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stderr log the disk cut is there: %v", err)
	}
	for _, stream := range []string{"stdout", "stderr"} {
		path := filepath.Join(logs, "1."+stream)
		b, err := os.ReadFile(path)
		switch {
		case err == nil && stream == "stdout" && string(b) != "fine\n":
			t.Errorf("%s holds %q, not all the attempt wrote", path, b)
		case errors.Is(err, os.ErrNotExist):
			// Not kept: said so, naming it.
			if !strings.Contains(out, "teamrun: warning: task a: its output could not be kept in "+home+": cannot write "+path+": no space left on device; the disk is full: free some space (the run goes on)\n") {
				t.Errorf("no warning names %s:\n%s", path, out)
			}
		case err != nil:
			t.Errorf("%s: %v", path, err)
		}
	}
	got, code := p.teamrunWithHome(t, home, "session", "logs", "s1", "a")
	if code != 0 || strings.Contains(got, "stderr ──") {
		t.Errorf("session logs: exit %d, shows a stderr:\n%.300s", code, got)
	}
}

// The disk filling up after the tasks' records were written, before the
// run folds its journal into the session's file: the summary and --json's
// run_finished say the checkpoint could not be written, as the exit code
// (5) and a PostgreSQL store's do. They said done (and "succeeded"), then
// came the error and exit 5. Nothing is lost: once there is room again,
// --continue restores the task.
func TestSnapshotOnFullDisk(t *testing.T) {
	disk := testenv.SmallDisk(t, "48k")
	home := filepath.Join(disk, "home")
	dir := t.TempDir()
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	filler := filepath.Join(disk, "filler")
	// The task's end is a short record, appended to the journal's last
	// page, which the disk still has; the session's file needs new ones.
	if err := os.WriteFile(p.spec, []byte("agents:\n  w: {shell: 'cat /dev/zero > "+filler+" 2>/dev/null; echo ok'}\ntasks:\n  a: {description: a, agent: w}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := p.teamrunWithHome(t, home, "run", p.spec, "--session", "s1")
	if code != exitStore || !strings.Contains(out, "summary stopped: the checkpoint could not be written: ") ||
		!strings.Contains(out, "teamrun: cannot write the checkpoint: cannot write "+filepath.Join(home, "sessions", "s1.json")+": no space left on device; the disk is full: free some space, then rerun with --continue") {
		t.Fatalf("exit %d, want 5, the summary saying the checkpoint could not be written, and why:\n%s", code, out)
	}
	// The run still held its session: its scratch went, as after any run.
	if _, err := os.Lstat(filepath.Join(home, "sessions", "s1.scratch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run's scratch folder was left: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if out, code := p.teamrunWithHome(t, home, "run", p.spec, "--continue", "--session", "s1"); code != 0 || !strings.Contains(out, "summary done: 1 restored, 0 ran") {
		t.Fatalf("--continue once there is room: exit %d\n%s", code, out)
	}

	out, code = p.teamrunWithHome(t, home, "run", p.spec, "--session", "s2", "--json")
	if code != exitStore || !strings.Contains(out, `"event":"run_finished"`) || !strings.Contains(out, `"outcome":"store_failed"`) {
		t.Errorf("--json: exit %d, want 5 and a run_finished that says the store failed:\n%s", code, out)
	}
}

// A context file the full disk under the session's scratch folder cannot
// take: exit 5 saying the disk is full, with no retry spent and the task's
// command never run. Every retry was spent after its backoff, the task
// recorded failed, with its command never run.
func TestContextOnFullDisk(t *testing.T) {
	home := filepath.Join(testenv.SmallDisk(t, "48k"), "home")
	dir := t.TempDir()
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	ran := filepath.Join(dir, "ran")
	// a's 16000 bytes fit in its log and its record; its context file
	// for b does not.
	if err := os.WriteFile(p.spec, []byte("agents:\n  big: {shell: 'echo $TEAMRUN_TASK >> "+ran+"; head -c 16000 /dev/zero | tr \"\\\\0\" x'}\n"+
		"tasks:\n  a: {description: a, agent: big}\n  b: {description: b, agent: big, context: [a], max_retries: 2, retry_delay: 10ms}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := p.teamrunWithHome(t, home, "run", p.spec, "--session", "s1")
	if code != exitStore || strings.Contains(out, "retrying") || strings.Contains(out, "failed    b") ||
		!strings.Contains(out, "teamrun: cannot keep the context folder of task b: cannot write "+filepath.Join(home, "sessions", "s1.scratch", "teamrun-context-")) ||
		!strings.Contains(out, "/a: no space left on device; the disk is full: free some space, then rerun with --continue") {
		t.Fatalf("exit %d, want 5 saying the disk is full, no retry:\n%s", code, out)
	}
	if b, _ := os.ReadFile(ran); string(b) != "a\n" {
		t.Errorf("the commands that ran: %q, want a's alone", b)
	}
}

// An output_file on a full disk is the disk's failure, not the task's, as
// a file teamrun writes in the session's scratch folder is: exit 5 saying
// the disk is full, no retry spent (an LLM task's would pay again for an
// answer it could not write either), no failure recorded, and once there
// is room --continue runs the task again and writes the file. It was a
// failed attempt: every retry spent, exit 1.
func TestOutputFileOnFullDisk(t *testing.T) {
	full := testenv.SmallDisk(t, "48k")
	dir := t.TempDir()
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	ran := filepath.Join(dir, "ran")
	out := filepath.Join(full, "out", "report.txt")
	if err := os.WriteFile(p.spec, []byte("agents:\n  w: {shell: 'echo $TEAMRUN_TASK >> "+ran+"; head -c 20000 /dev/zero | tr \"\\\\0\" x'}\n"+
		"tasks:\n  a: {description: a, agent: w, output_file: "+out+", max_retries: 2, retry_delay: 10ms}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.FillDisk(t, full)
	got, code := p.teamrun(t, "run", p.spec, "--session", "s1")
	if code != exitStore || strings.Contains(got, "retrying") || strings.Contains(got, "failed    a") ||
		!strings.Contains(got, "teamrun: cannot keep the output_file of task a: cannot write "+out+": no space left on device; the disk is full: free some space, then rerun with --continue") ||
		// The checkpoint was written: the summary names what was not.
		!strings.Contains(got, "summary stopped: could not keep the output_file of task a (the checkpoint is written): 0 restored, 0 ran, 1 ran but not recorded") {
		t.Fatalf("exit %d, want 5 saying the disk is full, no retry:\n%s", code, got)
	}
	if b, _ := os.ReadFile(ran); string(b) != "a\n" {
		t.Errorf("the commands that ran: %q, want a once", b)
	}
	if names := entries(t, filepath.Dir(out)); len(names) != 0 {
		t.Errorf("left beside the output_file: %q", names)
	}
	if err := os.Remove(filepath.Join(full, "filler")); err != nil {
		t.Fatal(err)
	}
	if got, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1"); code != 0 || !strings.Contains(got, "summary done: 0 restored, 1 ran") {
		t.Fatalf("--continue once there is room: exit %d\n%s", code, got)
	}
	if b, err := os.ReadFile(out); err != nil || len(b) != 20000 {
		t.Errorf("the output_file: %d bytes, %v; want 20000", len(b), err)
	}
}
