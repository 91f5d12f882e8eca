package iostreams

import (
	"strings"
	"testing"
)

func TestDisplayWidth(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"build", 5},
		{"翻訳", 4},
		{"ｶﾅ", 2},      // halfwidth katakana: one column each
		{"ＡＢ", 4},      // fullwidth Latin
		{"🚀launch", 8}, // an emoji of emoji presentation
		{"cafe\u0301", 4},
		{"a\u200db", 2}, // a zero-width joiner
		{"한국어", 6},
		{"é", 1},
	} {
		if got := DisplayWidth(tt.s); got != tt.want {
			t.Errorf("DisplayWidth(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestCutWidth(t *testing.T) {
	for _, tt := range []struct {
		s         string
		w         int
		head, end string
	}{
		{"翻訳する", 5, "翻訳", "する"},
		{"翻訳する", 4, "翻訳", "する"},
		{"ab翻訳", 3, "ab", "訳"},
		{"abc", 5, "abc", "abc"},
		{"cafe\u0301s", 4, "cafe\u0301", "afe\u0301s"},
	} {
		if got := CutWidth(tt.s, tt.w); got != tt.head {
			t.Errorf("CutWidth(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.head)
		}
		if got := CutWidthEnd(tt.s, tt.w); got != tt.end {
			t.Errorf("CutWidthEnd(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.end)
		}
	}
}

// A table lines its columns up by display width; a row's last cell is
// neither measured nor padded, so a short row leaves the others alone.
func TestTable(t *testing.T) {
	var b strings.Builder
	tab := NewTable(&b)
	tab.Write([]byte("TASK\tAGENT\tRESULT\n翻訳\t作者\tdone\nbuild\tw\t"))
	tab.Write([]byte("done\n"))
	tab.Row("a-very-long-id", "corrupt: a long message wider than any column")
	if err := tab.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "TASK            AGENT  RESULT\n" +
		"翻訳            作者   done\n" +
		"build           w      done\n" +
		"a-very-long-id  corrupt: a long message wider than any column\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
