package bench

import (
	"context"
	"io"
	"os"

	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"

	"path/filepath"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The in-process parts of a fully restored run of the same 1,000-task
// spec, one by one, for profiling (-cpuprofile) without process start-up:
//
//	go test ./bench -run '^$' -bench 'InProcess' -benchmem -count 5

// shared is made once per test binary (the first run of 1,000 commands
// takes seconds) and removed by TestMain.
var shared struct {
	dir, spec, home string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func restoredSession(b *testing.B) (specPath, home string) {
	b.Helper()
	if shared.dir != "" {
		return shared.spec, shared.home
	}
	dir, err := os.MkdirTemp("", "teamrun-bench-")
	if err != nil {
		b.Fatal(err)
	}
	shared.dir = dir
	specPath = writeTeam(b, dir)
	home = filepath.Join(dir, "home")
	o := runner.Options{SpecPath: specPath, Session: "done", Mode: runner.ModeQuiet,
		IO: iostreams.Test(nil, io.Discard, io.Discard), Home: home}
	if sum, err := runner.Run(context.Background(), o); err != nil || sum.Outcome != runner.Succeeded {
		b.Fatalf("first run: %v %+v", err, sum)
	}
	shared.spec, shared.home = specPath, home
	return specPath, home
}

func BenchmarkInProcessSpecLoad(b *testing.B) {
	path := writeTeam(b, b.TempDir())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := spec.Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInProcessTaskDefs(b *testing.B) {
	team, err := spec.Load(writeTeam(b, b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	state := team.InitialState(nil)
	b.ReportAllocs()
	for b.Loop() {
		defs := team.TaskDefs(state)
		_ = spec.FingerprintOf(defs)
	}
}

func BenchmarkInProcessTaskSet(b *testing.B) {
	path, home := restoredSession(b)
	team, err := spec.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	store, err := stores.Open(context.Background(), home)
	if err != nil {
		b.Fatal(err)
	}
	sess, err := store.Load(context.Background(), "done")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runner.TaskSetOf(team, sess, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInProcessSessionLoad(b *testing.B) {
	_, home := restoredSession(b)
	store, err := stores.Open(context.Background(), home)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if sess, err := store.Load(context.Background(), "done"); err != nil || sess.Summary.Done != tasks {
			b.Fatalf("%v", err)
		}
	}
}

func BenchmarkInProcessRestored(b *testing.B) {
	path, home := restoredSession(b)
	o := runner.Options{SpecPath: path, Session: "done", Continue: true, Mode: runner.ModeQuiet,
		IO: iostreams.Test(nil, io.Discard, io.Discard), Home: home}
	b.ReportAllocs()
	for b.Loop() {
		if sum, err := runner.Run(context.Background(), o); err != nil || sum.Restored != tasks {
			b.Fatalf("restored run: %v %+v", err, sum)
		}
	}
}
