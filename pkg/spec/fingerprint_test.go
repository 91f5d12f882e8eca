package spec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestFingerprintVectors reproduces every worked case of
// shared/testvectors/fingerprint.json: the canonical JSON and the hash.
func TestFingerprintVectors(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "testvectors", "fingerprint.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("test vectors not available: %v", err)
	}
	var vectors struct {
		Cases []struct {
			Name, Spec, Canonical, Fingerprint string
		}
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors.Cases) == 0 {
		t.Fatal("no cases in fingerprint.json")
	}
	for _, c := range vectors.Cases {
		t.Run(c.Name, func(t *testing.T) {
			team, err := Parse("agents.yaml", []byte(c.Spec))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			state := team.InitialState(nil)
			defs := team.TaskDefs(state)
			if got := string(CanonicalTasks(defs)); got != c.Canonical {
				t.Errorf("canonical JSON\n got %s\nwant %s", got, c.Canonical)
			}
			if got := team.Fingerprint(state); got != c.Fingerprint {
				t.Errorf("Fingerprint = %s, want %s", got, c.Fingerprint)
			}
			if got := FingerprintOf(defs); got != c.Fingerprint {
				t.Errorf("FingerprintOf = %s, want %s", got, c.Fingerprint)
			}
		})
	}
}

// A team of parallelKeys tasks or more has its own keys hashed on a
// goroutine of its own: every key is the one the sequential path gives.
func TestTaskDefsParallelKeysMatchSequential(t *testing.T) {
	spec := func(n int) []byte {
		b := []byte("agents:\n  w: {command: [\"true\"]}\ntasks:\n")
		for i := range n {
			b = fmt.Appendf(b, "  t%d: {description: \"step %d\", agent: w", i, i)
			if i >= 2 {
				b = fmt.Appendf(b, ", context: [t%d, t%d]", i-1, i/2-1) // two tasks, never one twice
			}
			b = append(b, "}\n"...)
		}
		return b
	}
	load := func(n int) []TaskDef {
		team, err := Parse("keys.yaml", spec(n))
		if err != nil {
			t.Fatal(err)
		}
		return team.TaskDefs(team.InitialState(nil))
	}
	small, large := load(parallelKeys-1), load(parallelKeys+50)
	for i, d := range small {
		l := large[i]
		if d.Key == "" || d.OwnKey == "" || d.Key == d.OwnKey && len(d.Context) > 0 {
			t.Fatalf("task %d: key %q, own key %q", i, d.Key, d.OwnKey)
		}
		if l.Key != d.Key || l.OwnKey != d.OwnKey {
			t.Errorf("task %d: %d tasks give key %s / own %s, %d tasks %s / %s", i, len(large), l.Key, l.OwnKey, len(small), d.Key, d.OwnKey)
		}
	}
}
