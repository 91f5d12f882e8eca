package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: no input panics, and every outcome is either a team whose
// fingerprint computes or an ErrorList of located, readable messages.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"invalid", "valid"} {
		files, _ := filepath.Glob(filepath.Join(specDir, dir, "*.yaml"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	corpus, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "praisonai", "*.y*ml"))
	ours, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "praisonai", "*.yaml")) // if:, route, parallel loop
	corpus = append(corpus, ours...)
	for _, file := range corpus {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Add([]byte("<<: {tasks: {}}\n"))
	f.Add([]byte("roles:\n  r:\n")) // once a crash: a role that is not a mapping
	f.Add([]byte("tasks:\n  - name: x\n    description: '{x}'\n    agent: human\n    condition: {a: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		team, err := Parse("f.yaml", data)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
			}
			for _, d := range list {
				if !strings.HasPrefix(d.String(), "f.yaml:") || strings.Contains(d.Message, "jsonschema") {
					t.Fatalf("bad message: %q", d.String())
				}
			}
			return
		}
		state := team.InitialState(map[string]string{"x": "y"})
		defs := team.TaskDefs(state)
		if len(defs) != len(team.Tasks) || len(team.Fingerprint(state)) != 16 {
			t.Fatalf("defs %d for %d tasks", len(defs), len(team.Tasks))
		}
		for i := range team.Tasks {
			for _, c := range team.ContextOf(i) {
				if team.TaskIndex(c) < 0 {
					t.Fatalf("valid team with unknown context %q", c)
				}
			}
		}
		_ = fmt.Sprint(team.Warnings)
	})
}

// BenchmarkValidate1000 is `teamrun validate` on a 1,000-task spec: parse,
// schema check and meaning checks.
func BenchmarkValidate1000(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("name: big\nprocess: workflow\nvariables: {topic: Go}\nllm: gpt-4o-mini\nagents:\n")
	for i := range 10 {
		fmt.Fprintf(&sb, "  agent%d:\n    role: Worker %d\n    goal: Work on {topic}\n", i, i)
	}
	sb.WriteString("  sh:\n    shell: wc -w\n    timeout: 30s\ntasks:\n")
	for i := range 1000 {
		fmt.Fprintf(&sb, "  task%04d:\n    description: Step %d about {topic}\n    expected_output: a paragraph\n", i, i)
		if i%2 == 0 {
			fmt.Fprintf(&sb, "    agent: agent%d\n", i%10)
		} else {
			sb.WriteString("    agent: sh\n    max_retries: 2\n    retry_delay: 1s\n")
		}
		if i > 0 {
			fmt.Fprintf(&sb, "    context: [task%04d", i-1)
			if i > 10 {
				fmt.Fprintf(&sb, ", task%04d", i-10)
			}
			sb.WriteString("]\n")
		}
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		team, err := Parse("big.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if len(team.Tasks) != 1000 {
			b.Fatalf("%d tasks", len(team.Tasks))
		}
	}
}
