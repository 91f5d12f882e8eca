package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTaskFileName(t *testing.T) {
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	for _, tc := range []struct {
		name, task string
		same       bool   // the name is its own file name
		prefix     string // else: what the file name starts with, before "~"
	}{
		{"plain", "draft", true, ""},
		{"spaces and UTF-8", "write the intro é 日", true, ""},
		{"250 bytes of é", long("é", 125), true, ""},
		{"255 bytes of ASCII", long("a", 255), true, ""},
		{"256 bytes", long("é", 128), false, long("é", 119)},
		{"a foreach instance past 255", long("日", 84) + "[10]", false, long("日", 79)},
		{"300 bytes of 日", long("日", 100), false, long("日", 79)},
		{"300 bytes of 4-byte characters", long("🙂", 75), false, long("🙂", 59)},
		{"slash", "a/b", false, "a_b"},
		{"NUL", "a\x00b", false, "a_b"},
		{"dot", ".", false, ""},
		{"dot dot", "..", false, ""},
		{"empty", "", false, ""},
		{"not UTF-8", "caf\xe9", false, "caf_"},
		{"a path", "../../etc/passwd", false, "_.._etc_passwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TaskFileName(tc.task)
			if tc.same {
				if got != tc.task {
					t.Fatalf("TaskFileName changed a good file name: %q", got)
				}
				return
			}
			if len(got) > 255 || !utf8.ValidString(got) || strings.ContainsAny(got, "/\x00") || got == "." || got == ".." || strings.HasPrefix(got, ".") {
				t.Fatalf("%q (%d bytes) is no safe file name", got, len(got))
			}
			head, hash, ok := strings.Cut(got, "~")
			if !ok || head != tc.prefix || len(hash) != 16 {
				t.Fatalf("got %q, want %q then ~ and 16 hex digits", got, tc.prefix)
			}
			if again := TaskFileName(tc.task); again != got {
				t.Fatalf("not stable: %q then %q", got, again)
			}
			// Each holds a file: the name the logs and context files use.
			if err := os.WriteFile(filepath.Join(t.TempDir(), got), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Two long names alike in all that fits keep their files apart.
	a, b := TaskFileName(long("日", 100)+"a"), TaskFileName(long("日", 100)+"b")
	if a == b {
		t.Errorf("two tasks share the file name %q", a)
	}
}
