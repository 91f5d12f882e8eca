package iostreams

import (
	"bytes"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// DisplayWidth is the number of terminal columns s takes: two for a wide
// or fullwidth character (CJK, most emoji: East Asian Width W or F), none
// for a combining mark, a format character (a zero-width joiner, a
// variation selector) or a control character, one for any other. It is
// the one measure teamrun aligns its tables and cuts its lines by;
// counting runes misaligned a table as soon as a task was named in CJK.
func DisplayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1 // ASCII and Latin: the common case, without a lookup
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// CutWidth is the longest start of s that takes at most w columns.
func CutWidth(s string, w int) string {
	n := 0
	for i, r := range s {
		n += runeWidth(r)
		if n > w {
			return s[:i]
		}
	}
	return s
}

// CutWidthEnd is the longest end of s that takes at most w columns.
func CutWidthEnd(s string, w int) string {
	n := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		n += runeWidth(r)
		if n > w {
			return s[i:]
		}
		i -= size
	}
	return s
}

// Table lines text up in columns by display width, two spaces apart, as
// text/tabwriter (which counts a rune as one column) did: written to as an
// io.Writer, a cell ends at a tab and a row at a newline. Every row shares
// the column widths, and a row's last cell is neither measured nor padded,
// so a short row (an error in place of the cells) neither widens the
// columns of the others nor breaks them up. Nothing is written before
// Flush.
type Table struct {
	out  io.Writer
	buf  bytes.Buffer
	rows [][]string
}

// NewTable is a table that writes to out on Flush.
func NewTable(out io.Writer) *Table { return &Table{out: out} }

// Write takes tab-separated cells and newline-ended rows.
func (t *Table) Write(p []byte) (int, error) {
	t.buf.Write(p)
	for {
		i := bytes.IndexByte(t.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		t.Row(strings.Split(string(t.buf.Next(i + 1)[:i]), "\t")...)
	}
}

// Row adds a row of cells.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Widths is the width of each column: its widest cell that is not the
// last of its row.
func (t *Table) Widths() []int {
	var w []int
	for _, r := range t.rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			if i == len(w) {
				w = append(w, 0)
			}
			w[i] = max(w[i], DisplayWidth(c))
		}
	}
	return w
}

// Lines is the table's rows, aligned, without line ends. A row's last
// cell is written as it is: an empty one leaves the padding before it.
func (t *Table) Lines() []string {
	w := t.Widths()
	out := make([]string, len(t.rows))
	var b strings.Builder
	for k, r := range t.rows {
		b.Reset()
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", w[i]-DisplayWidth(c)+2))
			}
		}
		out[k] = b.String()
	}
	return out
}

// Flush writes the rows added so far (and a last one with no newline)
// and starts afresh.
func (t *Table) Flush() error {
	if t.buf.Len() > 0 {
		t.Row(strings.Split(t.buf.String(), "\t")...)
		t.buf.Reset()
	}
	lines := t.Lines()
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	var b strings.Builder
	b.Grow(n) // grown by doubling, a 200,000-row table copied itself ~20 times
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	t.rows = nil
	_, err := io.WriteString(t.out, b.String())
	return err
}
