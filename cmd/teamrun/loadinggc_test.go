package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// ownProcess runs the calling test again in a process of its own, with
// env added, and reports whether this is that process. The collector's
// settings and the heap's layout are the process's own, and the tests
// that run teamrun in this one change them. A test that holds in most
// processes, not all, passes when one of tries fresh processes passes it;
// the ones that did not are logged.
func ownProcess(t *testing.T, tries int, env ...string) bool {
	t.Helper()
	if os.Getenv("TEAMRUN_TEST_OWN_PROCESS") == t.Name() {
		return true
	}
	levels := strings.Split(t.Name(), "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	var failed []string
	for range tries {
		cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(levels, "/"), "-test.v")
		cmd.Env = append(append(os.Environ(), env...), "TEAMRUN_TEST_OWN_PROCESS="+t.Name())
		out, err := cmd.CombinedOutput()
		if err == nil && bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")) {
			for _, f := range failed {
				t.Logf("passed in a process of its own after failing in another: %s", f)
			}
			return false
		}
		failed = append(failed, fmt.Sprintf("%v\n%s", err, out))
	}
	t.Errorf("in %d processes of its own: %s", tries, strings.Join(failed, "\n"))
	return false
}

// gcSettings reads GOGC, the memory limit and the collections so far
// without changing any of them.
func gcSettings() (percent, limit, cycles int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64()), int64(s[2].Value.Uint64())
}

// TestLoadingGC: while loading nothing is collected until the heap
// reaches loadingHeap; the first collection there turns to GOGC=200
// with the limit as it was, and loaded turns to the default; GOGC in
// the environment leaves the collector alone.
func TestLoadingGC(t *testing.T) {
	if !ownProcess(t, 1) {
		return
	}
	percent0, limit0, _ := gcSettings()
	t.Cleanup(func() {
		debug.SetGCPercent(int(percent0))
		debug.SetMemoryLimit(limit0)
	})
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")

	loaded := loadingGC()
	if p, l, _ := gcSettings(); p != -1 || l != loadingHeap {
		t.Fatalf("while loading: GOGC %d, limit %d; want off and %d", p, l, loadingHeap)
	}
	loaded()
	if p, l, _ := gcSettings(); p != 100 || l != limit0 {
		t.Fatalf("once loaded: GOGC %d, limit %d; want 100 and %d", p, l, limit0)
	}

	// A load that outgrows the bound: the collection the limit forces
	// turns the collector back on.
	loadingGC()
	_, _, before := gcSettings()
	var held [][]byte
	for range 2 * loadingHeap / (1 << 20) {
		held = append(held, make([]byte, 1<<20))
	}
	_, _, after := gcSettings()
	if after == before {
		t.Fatalf("%d MiB held and no collection under a limit of %d MiB", len(held), loadingHeap>>20)
	}
	// The cleanup runs on a goroutine of its own, soon after; the bound
	// only keeps a broken build from hanging until the test timeout.
	for i := 0; ; i++ {
		p, l, _ := gcSettings()
		if p == 200 && l == limit0 {
			break
		}
		if i == 10000 {
			t.Fatalf("after the collection at the bound: GOGC %d, limit %d; want 200 and %d", p, l, limit0)
		}
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(held)

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	loaded = loadingGC()
	if p, l, _ := gcSettings(); p != 50 || l != limit0 {
		t.Errorf("GOGC=50 in the environment: GOGC %d, limit %d", p, l)
	}
	loaded()
	if p, l, _ := gcSettings(); p != 50 || l != limit0 {
		t.Errorf("GOGC=50 in the environment, once loaded: GOGC %d, limit %d", p, l)
	}
}

func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{2 << 20, 100},   // up to 2 MiB: the default
		{2<<20 + 1, 49},  // 1 MiB of room
		{4 << 20, 25},    // 1 MiB of room
		{5 << 20, 20},    // 1 MiB of room
		{8 << 20, 12},    // an eighth
		{16 << 20, 12},   // an eighth
		{100 << 20, 12},  // an eighth
		{1 << 40, 12},    // never below
		{1<<20 + 1, 100}, // small: the default
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// TestRunningGC: once the tasks run, every collection sets GOGC from what
// it found live (gcPercentFor): a large live heap tightens it, and the
// same heap freed loosens it again, which only a collector that re-arms
// itself after each collection can do.
func TestRunningGC(t *testing.T) {
	if !ownProcess(t, 1) {
		return
	}
	percent0, _, _ := gcSettings()
	t.Cleanup(func() { debug.SetGCPercent(int(percent0)) })
	debug.SetGCPercent(50)
	runningGC()
	if p, _, _ := gcSettings(); p != 100 {
		t.Fatalf("GOGC %d as the tasks start, want 100", p)
	}
	// waitPercent collects until GOGC is want; the bound only keeps a
	// broken build from hanging until the test timeout.
	waitPercent := func(want int64, live string) {
		t.Helper()
		for i := 0; ; i++ {
			runtime.GC()
			if p, _, _ := gcSettings(); p == want {
				return
			}
			if i == 1000 {
				p, _, _ := gcSettings()
				t.Fatalf("with %s live: GOGC %d, want %d", live, p, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	held := make([][]byte, 32<<20/4096)
	for i := range held {
		held[i] = make([]byte, 4096)
	}
	waitPercent(12, "32 MiB")
	runtime.KeepAlive(held)
	held = nil
	waitPercent(100, "nearly nothing")
}

// TestNewRunGC: a run that starts a new session collects while it loads,
// by runningGC's rule, under the memory limit it had; GOGC in the
// environment leaves the collector alone.
func TestNewRunGC(t *testing.T) {
	if !ownProcess(t, 1) {
		return
	}
	percent0, limit0, _ := gcSettings()
	t.Cleanup(func() { debug.SetGCPercent(int(percent0)) })

	// First, as runningGC stays armed in this process once started.
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	newRunGC()
	if p, l, _ := gcSettings(); p != 50 || l != limit0 {
		t.Errorf("GOGC=50 in the environment: GOGC %d, limit %d", p, l)
	}

	os.Unsetenv("GOGC")
	newRunGC()
	if p, l, _ := gcSettings(); p != 100 || l != limit0 {
		t.Fatalf("while loading: GOGC %d, limit %d; want 100 and %d", p, l, limit0)
	}
	_, _, before := gcSettings()
	var held [][]byte
	for range 16 {
		held = append(held, make([]byte, 1<<20))
	}
	if _, _, after := gcSettings(); after == before {
		t.Errorf("16 MiB allocated while loading and no collection")
	}
	// runningGC's, set by whichever collection came last.
	if p, l, _ := gcSettings(); p < 12 || p > 100 || l != limit0 {
		t.Errorf("16 MiB loaded: GOGC %d, limit %d; want 12 to 100 and %d", p, l, limit0)
	}
	runtime.KeepAlive(held)
}

// TestNewRunGCCollectsParsed: a new run of a spec of collectParsedFrom
// bytes or more collects once it is parsed, a smaller one does not, nor
// does any with GOGC in the environment.
func TestNewRunGCCollectsParsed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		specBytes int
		gogc      string
		collects  bool
	}{
		{"small spec", collectParsedFrom - 1, "", false},
		{"large spec", collectParsedFrom, "", true},
		{"large spec, GOGC=50", collectParsedFrom, "50", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !ownProcess(t, 1, "GOGC="+tc.gogc) {
				return
			}
			spec := filepath.Join(t.TempDir(), "agents.yaml")
			if err := os.WriteFile(spec, make([]byte, tc.specBytes), 0o600); err != nil {
				t.Fatal(err)
			}
			parsed := newRunGC(spec)
			// No collection of the pacer's own between the readings.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			_, _, before := gcSettings()
			parsed()
			_, _, after := gcSettings()
			if got := after > before; got != tc.collects {
				t.Errorf("%d collections when parsed, want one: %v", after-before, tc.collects)
			}
		})
	}
}
