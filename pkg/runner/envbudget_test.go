package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestEnvBudget: the variables together never make the environment too
// big to start a command (Linux: "argument list too long" for every later
// task, on every --continue); those that do not fit go to the JSON file
// named by TEAMRUN_VARS_FILE, with one warning.
func TestEnvBudget(t *testing.T) {
	big := func(n, size int) map[string]any {
		m := map[string]any{"ok": "yes"}
		for i := 1; i <= n; i++ {
			m[fmt.Sprintf("v%02d", i)] = strings.Repeat(string(rune('a'+i%26)), size)
		}
		return m
	}
	tests := []struct {
		name     string
		state    map[string]any
		file     bool // TEAMRUN_VARS_FILE is set
		warnings int
	}{
		{"small variables: no file", big(3, 1000), false, 0},
		{"18 of 120 KB (the issue's team)", big(18, 120_000), true, 1},
		{"40 of 100 KB", big(40, 100_000), true, 1},
		{"one NUL value: in the file too", map[string]any{"ok": "yes", "nul": "a\x00b"}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, job, warned := shellJob(t, `printf '%s|%s|' "$TEAMRUN_VAR_OK" "${TEAMRUN_VARS_FILE:+set}"; env | wc -c | tr -d ' \n'; printf '|'; [ -z "$TEAMRUN_VARS_FILE" ] || cat "$TEAMRUN_VARS_FILE"`, tt.state)
			var file string
			for range 2 { // the warning comes once
				res, err := c.Execute(context.Background(), job)
				if err != nil {
					t.Fatalf("the command did not run: %v", err)
				}
				parts := strings.SplitN(res.Raw, "|", 4)
				if len(parts) != 4 || parts[0] != "yes" {
					t.Fatalf("result %q", truncate(res.Raw, 80))
				}
				if got := parts[1] == "set"; got != tt.file {
					t.Fatalf("TEAMRUN_VARS_FILE set: %v, want %v", got, tt.file)
				}
				var size int
				fmt.Sscan(parts[2], &size)
				if size > maxEnvTotal {
					t.Fatalf("the environment is %d bytes, over %d", size, maxEnvTotal)
				}
				if tt.file {
					var got map[string]any
					if err := json.Unmarshal([]byte(parts[3]), &got); err != nil {
						t.Fatalf("the variables file is not JSON: %v", err)
					}
					if len(got) != len(tt.state) {
						t.Fatalf("the file holds %d variables, want all %d", len(got), len(tt.state))
					}
					for k, v := range tt.state {
						if got[k] != v {
							t.Fatalf("variable %s: %q in the file", k, truncate(fmt.Sprint(got[k]), 20))
						}
					}
					file = varsFile(c.all[0])
				}
			}
			warnings := *warned
			if len(warnings) != tt.warnings {
				t.Fatalf("%d warnings, want %d: %q", len(warnings), tt.warnings, warnings)
			}
			if tt.warnings > 0 && !strings.Contains(warnings[0], "TEAMRUN_VARS_FILE") {
				t.Fatalf("the warning does not name TEAMRUN_VARS_FILE: %s", warnings[0])
			}
			if file != "" {
				if _, err := os.Stat(file); !os.IsNotExist(err) {
					t.Fatalf("the variables file outlived its attempt: %v", err)
				}
			}
		})
	}
}
