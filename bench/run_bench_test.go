// Package bench measures the whole teamrun binary against the floor of
// what any checkpointing runner must pay per task.
//
//	go test ./bench -run '^$' -bench . -benchtime 5x
//
// Each iteration runs 1,000 trivial command tasks (shell: "true"):
// BenchmarkFloor is 1,000 × (fork/exec of /bin/true + one fdatasync);
// BenchmarkCold is `teamrun run` of a fresh session; BenchmarkRestored is
// `teamrun run --continue` of a session whose 1,000 tasks are all done;
// BenchmarkRatio alternates floor and cold runs and reports the median
// ratio, which survives a noisy machine better than two separate figures.
package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/bench/floors"
)

const tasks = 1000

// build compiles teamrun once per benchmark into dir.
func build(b testing.TB, dir string) string {
	b.Helper()
	return goBuild(b, dir, "cmd/teamrun")
}

// goBuild compiles the module's command pkg into dir.
func goBuild(b testing.TB, dir, pkg string) string {
	b.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, "github.com/teamrun/teamrun/"+pkg)
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

// floor runs 1,000 × (fork/exec of /bin/true + one fdatasync of a line).
func floor(b *testing.B, dir string) {
	b.Helper()
	j, err := floors.Create(filepath.Join(dir, "journal"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	if err := floors.Exec(tasks, 1, []string{"/bin/true"}, j); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkFloor(b *testing.B) {
	dir := b.TempDir()
	for range b.N {
		floor(b, dir)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/task")
}

// BenchmarkRatio alternates the floor and a cold run so that both see the
// same machine load, and reports the median of their ratios.
func BenchmarkRatio(b *testing.B) {
	dir := b.TempDir()
	bin := build(b, dir)
	spec := writeTeam(b, dir)
	home := filepath.Join(dir, "home")
	var ratios, floors, colds []float64
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		floor(b, dir)
		t1 := time.Now()
		teamrun(b, bin, home, "run", spec, "--quiet", "--session", fmt.Sprintf("ratio-%d", i))
		t2 := time.Now()
		fl, co := float64(t1.Sub(t0)), float64(t2.Sub(t1))
		floors, colds, ratios = append(floors, fl), append(colds, co), append(ratios, co/fl)
	}
	b.ReportMetric(median(floors)/tasks, "floor-ns/task")
	b.ReportMetric(median(colds)/tasks, "cold-ns/task")
	b.ReportMetric(median(ratios), "ratio")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
