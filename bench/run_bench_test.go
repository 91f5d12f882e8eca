// Package bench measures the whole teamrun binary against the floor of
// what any checkpointing runner must pay per task.
//
//	go test ./bench -run '^$' -bench . -benchtime 3x
//
// Each iteration runs 1,000 trivial command tasks (shell: "true"):
// BenchmarkFloor is 1,000 × (fork/exec of /bin/true + one fdatasync);
// BenchmarkCold is `teamrun run` of a fresh session; BenchmarkRestored is
// `teamrun run --continue` of a session whose 1,000 tasks are all done.
// The ns/task metrics of Cold and Floor give the overhead ratio.
package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const tasks = 1000

// build compiles teamrun once per benchmark into dir.
func build(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "teamrun")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/teamrun/teamrun/cmd/teamrun")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeTeam(b *testing.B, dir string) string {
	b.Helper()
	var s strings.Builder
	s.WriteString("name: bench\nagents:\n  t:\n    shell: \"true\"\ntasks:\n")
	for i := range tasks {
		fmt.Fprintf(&s, "  t%d:\n    description: task %d\n    agent: t\n", i, i)
	}
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func teamrun(b *testing.B, bin, home string, args ...string) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TEAMRUN_HOME="+home, "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("teamrun %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// BenchmarkFloor: per task, fork/exec /bin/true and fdatasync one line.
func BenchmarkFloor(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "journal"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := []byte(`{"k":"completed","task":"t123","result":""}` + "\n")
	b.ResetTimer()
	for range b.N {
		for range tasks {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(line); err != nil {
				b.Fatal(err)
			}
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/task")
}

func BenchmarkCold(b *testing.B) {
	dir := b.TempDir()
	bin := build(b, dir)
	spec := writeTeam(b, dir)
	home := filepath.Join(dir, "home")
	b.ResetTimer()
	for i := range b.N {
		teamrun(b, bin, home, "run", spec, "--quiet", "--session", fmt.Sprintf("cold-%d", i))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/task")
}

func BenchmarkRestored(b *testing.B) {
	dir := b.TempDir()
	bin := build(b, dir)
	spec := writeTeam(b, dir)
	home := filepath.Join(dir, "home")
	teamrun(b, bin, home, "run", spec, "--quiet", "--session", "done")
	b.ResetTimer()
	for range b.N {
		teamrun(b, bin, home, "run", spec, "--quiet", "--continue", "--session", "done")
	}
}
