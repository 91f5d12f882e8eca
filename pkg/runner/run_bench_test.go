package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner/iostreams"

	"github.com/teamrun/teamrun/pkg/spec"
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
	o := Options{SpecPath: path, Session: "done", Mode: ModeQuiet, IO: iostreams.Test(nil, io.Discard, io.Discard), Home: filepath.Join(dir, "home")}
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

// BenchmarkRunCold200 runs 200 trivial command tasks in a fresh session
// per iteration: fork/exec and two fdatasyncs (started, completed) a task.
func BenchmarkRunCold200(b *testing.B) {
	dir := b.TempDir()
	var s strings.Builder
	s.WriteString("name: bench\nagents:\n  t:\n    shell: \"true\"\ntasks:\n")
	for i := range 200 {
		fmt.Fprintf(&s, "  t%d:\n    description: task %d\n    agent: t\n", i, i)
	}
	path := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(path, []byte(s.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		o := Options{SpecPath: path, Session: fmt.Sprintf("cold-%d", i), Mode: ModeQuiet, IO: iostreams.Test(nil, io.Discard, io.Discard), Home: filepath.Join(dir, "home")}
		if sum, err := Run(context.Background(), o); err != nil || sum.Ran != 200 {
			b.Fatalf("run: %v %+v", err, sum)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*200), "ns/task")
}

// BenchmarkEngine10000 is the scheduler alone: 10,000 sequential tasks with
// an executor and a recorder that do nothing. Its cost per task must not
// grow with the number of tasks.
func BenchmarkEngine10000(b *testing.B) {
	for _, process := range []spec.Process{spec.Sequential, spec.Workflow} {
		b.Run(string(process), func(b *testing.B) {
			var tasks []*spec.Task
			for i := range 10000 {
				tasks = append(tasks, task(fmt.Sprintf("t%d", i)))
			}
			tm, cx := team(process, tasks...)
			for range b.N {
				e := newEngine(tm, cx, &fakeExec{fn: func(context.Context, *Job) (Result, error) { return Result{}, nil }}, nopRecorder{})
				if sum, err := e.Run(context.Background()); err != nil || sum.Ran != 10000 {
					b.Fatalf("%v %+v", err, sum)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/task")
		})
	}
}

type nopRecorder struct{}

func (nopRecorder) Record(Event) error { return nil }
