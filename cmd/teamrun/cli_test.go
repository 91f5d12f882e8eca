package main

import "testing"

// TestDurationArg: the words a duration flag takes as its value are those
// written as a duration (parseDuration's syntax), good or bad, and bare
// numbers; a FILE or a flag is none.
func TestDurationArg(t *testing.T) {
	for _, tc := range []struct {
		word string
		want bool
	}{
		{"1s", true}, {"1d", true}, {"+7d", true}, {"1h30m", true}, {".5h", true}, {"0", true},
		{"-5s", true}, {"-1d", true}, {"1.5d", true}, {"200000d", true}, {"5", true},
		{"agents.yaml", false}, {"1x", false}, {"d", false}, {"", false}, {"--json", false}, {"-", false}, {"soon", false},
	} {
		if got := durationArg(tc.word); got != tc.want {
			t.Errorf("durationArg(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
}
