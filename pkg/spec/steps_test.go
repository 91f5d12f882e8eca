package spec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An if: step's condition means what PraisonAI's evaluator makes of it:
// the script the step's command agent runs is executed here, with the
// variables and the previous step's output as a run gives them.
func TestConditionScript(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		t.Skip("no awk")
	}
	tests := []struct {
		cond string
		vars map[string]string
		prev string // the previous step's output
		want string // then or else
	}{
		{"{{score}} >= 80", map[string]string{"score": "92"}, "", "then"},
		{"{{score}} >= 80", map[string]string{"score": "41"}, "", "else"},
		{"{{score}} > 80", map[string]string{"score": "  92\n"}, "", "then"}, // an answer's whitespace
		{"{{score}} > 9", map[string]string{"score": "10"}, "", "then"},      // numbers, not text
		{"{{score}} < 80", nil, "", "else"},                                  // unset: no comparison holds
		{"{{status}} == approved", map[string]string{"status": "approved"}, "", "then"},
		{"{{status}} == 'approved'", map[string]string{"status": "approved"}, "", "then"},
		{"{{status}} != approved", map[string]string{"status": "rejected"}, "", "then"},
		{"{{status}} contains success", map[string]string{"status": "Build SUCCESS"}, "", "then"},
		{"{{status}} contains success", map[string]string{"status": "failed"}, "", "else"},
		{"error in {{message}}", map[string]string{"message": "An Error occurred"}, "", "then"},
		{"error in {{message}}", map[string]string{"message": "all fine"}, "", "else"},
		{"{{previous_output}} contains approved", nil, "APPROVED: clear and accurate", "then"},
		{"{{previous_output}} contains approved", nil, "NEEDS IMPROVEMENT", "else"},
		{"{{flag}}", map[string]string{"flag": "true"}, "", "then"},
		{"{{flag}}", map[string]string{"flag": "False"}, "", "else"},
		{"{{flag}}", map[string]string{"flag": "0"}, "", "then"}, // PraisonAI: a non-empty text is true
		{"{{flag}}", nil, "", "else"},
	}
	for _, tt := range tests {
		script, err := conditionScript(tt.cond, []string{"check"})
		if err != nil {
			t.Errorf("%s: %v", tt.cond, err)
			continue
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "check"), []byte(tt.prev), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TEAMRUN_CONTEXT_DIR=" + dir}
		for k, v := range tt.vars {
			cmd.Env = append(cmd.Env, "TEAMRUN_VAR_"+EnvName(k)+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != tt.want {
			t.Errorf("%s with %v, previous %q: %q (%v), want %s", tt.cond, tt.vars, tt.prev, got, err, tt.want)
		}
	}
}

// Conditions teamrun cannot evaluate are refused when the file loads.
func TestConditionScriptRefused(t *testing.T) {
	for _, cond := range []string{"{{item.score}} >= 60", "score is high"} {
		if _, err := conditionScript(cond, nil); err == nil {
			t.Errorf("%s: accepted", cond)
		}
	}
}
