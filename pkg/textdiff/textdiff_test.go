package textdiff

import "testing"

// The expected texts are what GNU diff -u --label previous --label latest
// writes for the same inputs.
func TestUnified(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{"equal", "same\n", "same\n", ""},
		{"one changed line", "a\nb\nc\n", "a\nB\nc\n", "--- previous\n+++ latest\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\nY\n12\n", "--- previous\n+++ latest\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n"},
		{"from empty", "", "new\n", "--- previous\n+++ latest\n@@ -0,0 +1 @@\n+new\n"},
		{"to empty", "old\n", "", "--- previous\n+++ latest\n@@ -1 +0,0 @@\n-old\n"},
		{"no newline at end", "a\nb", "a\nc", "--- previous\n+++ latest\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"appended", "a\nb\nc\n", "a\nb\nc\nd\n", "--- previous\n+++ latest\n@@ -1,3 +1,4 @@\n a\n b\n c\n+d\n"},
		{"first removed", "x\na\nb\nc\n", "a\nb\nc\n", "--- previous\n+++ latest\n@@ -1,4 +1,3 @@\n-x\n a\n b\n c\n"},
		{"close changes join", "1\n2\n3\n4\n5\n6\n7\n8\n", "0\n1\n2\n3\n5\n6\n7\n8\n9\n", "--- previous\n+++ latest\n@@ -1,8 +1,9 @@\n+0\n 1\n 2\n 3\n-4\n 5\n 6\n 7\n 8\n+9\n"},
	}
	for _, tc := range tests {
		if got := Unified("previous", "latest", tc.a, tc.b, 3); got != tc.want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}
