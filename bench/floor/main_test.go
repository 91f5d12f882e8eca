package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The floor's every task leaves its line in the journal, one at a time or
// eight at once; a bad count of workers is a usage error, not a hang.
func TestDirectWritesALinePerTask(t *testing.T) {
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("no /bin/true")
	}
	for _, tc := range []struct {
		args    []string
		lines   int
		wantErr bool
	}{
		{[]string{"direct", "30"}, 30, false},
		{[]string{"direct", "30", "", "1"}, 30, false},
		{[]string{"direct", "30", "", "8"}, 30, false},
		{[]string{"direct", "3", "", "40"}, 3, false}, // more workers than tasks
		{[]string{"direct", "30", "", "0"}, 0, true},
		{[]string{"sh", "30", "", "8"}, 0, true}, // the sh floor is one at a time
	} {
		dir := t.TempDir()
		args := append([]string(nil), tc.args...)
		if len(args) == 2 {
			args = append(args, dir)
		} else {
			args[2] = dir
		}
		err := run(args)
		if (err != nil) != tc.wantErr {
			t.Errorf("floor %v: %v, want error: %v", tc.args, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "floor.journal"))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n != tc.lines {
			t.Errorf("floor %v: %d lines in the journal, want %d", tc.args, n, tc.lines)
		}
	}
}
