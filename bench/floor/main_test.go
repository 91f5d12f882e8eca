package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Each floor leaves a journal line per task; a malformed command line is
// a usage error, not a run.
func TestFloorModes(t *testing.T) {
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("no /bin/true")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	const dir = "DIR" // replaced by a fresh folder
	for _, tc := range []struct {
		args  []string
		lines int
		usage bool
	}{
		{[]string{"direct", "30", dir}, 30, false},
		{[]string{"direct", "30", dir, "8"}, 30, false},
		{[]string{"sh", "5", dir}, 5, false},
		{[]string{"llm", "7", srv.URL, dir}, 7, false},
		{[]string{"direct", "30", dir, "0"}, 0, true},
		{[]string{"direct", "-1", dir}, 0, true},
		{[]string{"sh", "30", dir, "8"}, 0, true}, // the sh floor is one at a time
		{[]string{"llm", "7", dir}, 0, true},
		{[]string{"direct", "30"}, 0, true},
		{[]string{"fork", "30", dir}, 0, true},
		{nil, 0, true},
	} {
		d := t.TempDir()
		args := append([]string(nil), tc.args...)
		for i := range args {
			if args[i] == dir {
				args[i] = d
			}
		}
		err := run(args, io.Discard)
		if tc.usage {
			if !errors.Is(err, errUsage) {
				t.Errorf("floor %q: %v, want the usage", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("floor %q: %v", tc.args, err)
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "floor.journal"))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n != tc.lines {
			t.Errorf("floor %q: %d lines in the journal, want %d", tc.args, n, tc.lines)
		}
	}
}

// rss and faults print the command's own output, then their figure of
// it, a positive count; a command that fails is an error, not a figure.
func TestFloorFigures(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, mode := range []string{"rss", "faults"} {
		var out bytes.Buffer
		if err := run([]string{mode, "/bin/sh", "-c", "echo said"}, &out); err != nil {
			t.Fatalf("floor %s: %v", mode, err)
		}
		said, figure, ok := strings.Cut(strings.TrimSuffix(out.String(), "\n"), "\n")
		if n, err := strconv.ParseInt(figure, 10, 64); !ok || said != "said" || err != nil || n <= 0 {
			t.Errorf("floor %s printed %q, want the command's line and then a positive count", mode, out.String())
		}
		out.Reset()
		if err := run([]string{mode, "/bin/sh", "-c", "exit 3"}, &out); err == nil || out.Len() != 0 {
			t.Errorf("floor %s of a failing command: %v, printed %q; want an error and nothing", mode, err, out.String())
		}
		if err := run([]string{mode}, &out); !errors.Is(err, errUsage) {
			t.Errorf("floor %s without a command: %v, want the usage", mode, err)
		}
	}
}
