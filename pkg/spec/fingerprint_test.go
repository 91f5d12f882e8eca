package spec

import (
	"encoding/json"
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
