package spec

import (
	"strings"
	"testing"
)

// TestLongKey: a key over YAML's 1,024 characters is named as such, at
// the key, in every shape a key takes; one of 1,024 still loads.
func TestLongKey(t *testing.T) {
	long := strings.Repeat("é", 1025) // characters, not bytes
	tests := []struct {
		name, src string
		line, col int
	}{
		{"plain", "agents:\n  w: {shell: cat}\ntasks:\n  " + long + ":\n    agent: w\n", 4, 3},
		{"after another key", "agents:\n  w: {shell: cat}\ntasks:\n  t:\n    agent: w\n    " + long + ": 1\n", 6, 5},
		{"quoted", "agents:\n  w: {shell: cat}\ntasks:\n  t:\n    agent: w\n    '" + long[2:] + "': 1\n", 6, 5},
		{"with spaces", "variables:\n  " + strings.Repeat("a b ", 300) + ": 1\n", 2, 3},
		{"list item", "tasks:\n  - " + long + ": 1\n", 2, 5},
		{"flow", "tasks: {t: {agent: w, " + long + ": 1}}\n", 1, 23},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("agents.yaml", []byte(tt.src))
			list, ok := err.(ErrorList)
			if !ok || len(list) != 1 {
				t.Fatalf("got %v, want one error", err)
			}
			d := list[0]
			if d.Line != tt.line || d.Column != tt.col || !strings.Contains(d.Message, "characters long, and YAML reads a key written as `key: value` (quoted or not) only up to 1024: shorten it") {
				t.Errorf("got %d:%d: %s, want %d:%d and the long-key message", d.Line, d.Column, d.Message, tt.line, tt.col)
			}
		})
	}
	// At the limit the key loads, and a long value with ": " in it still
	// gets the colon hint, not this one.
	ok := "agents:\n  w: {shell: cat}\ntasks:\n  t:\n    agent: w\n    description: d\nvariables:\n  " + strings.Repeat("v", 1024) + ": 1\n"
	if _, err := Parse("agents.yaml", []byte(ok)); err != nil && strings.Contains(err.Error(), "characters long") {
		t.Errorf("a key of 1024 characters: %v", err)
	}
	colon := "agents:\n  w: {shell: cat}\ntasks:\n  t:\n    agent: w\n    description: a, " + strings.Repeat("v", 1100) + ": b\n"
	if _, err := Parse("agents.yaml", []byte(colon)); err == nil || !strings.Contains(err.Error(), "an unquoted value holds") {
		t.Errorf("a long value with \": \": %v", err)
	}
}
