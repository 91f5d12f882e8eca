package iostreams

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Screen replays what a program wrote to a terminal of a given width: the
// few controls teamrun's live display uses (CR, LF, cursor up, erase to the
// end of the screen or line, colours). Tests use it to check that a live
// display never wraps and leaves no stale line.
type Screen struct {
	Width int
	rows  [][]rune
	row   int
	col   int
	// Wrapped counts the times a line ran past the width.
	Wrapped int
}

// Write replays p. A control sequence split across writes is not
// supported; teamrun writes each whole.
func (s *Screen) Write(p []byte) (int, error) {
	b := string(p)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\r':
			s.col = 0
			i++
		case c == '\n':
			s.row++
			s.col = 0 // a terminal's output post-processing turns LF into CR LF
			i++
		case c == 0x1b && i+1 < len(b) && b[i+1] == '[':
			j := i + 2
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';' || b[j] == '?') {
				j++
			}
			if j >= len(b) {
				return len(p), fmt.Errorf("screen: control sequence cut at the end of a write")
			}
			s.control(b[i+2:j], b[j])
			i = j + 1
		default:
			r, size := utf8.DecodeRuneInString(b[i:])
			s.put(r)
			i += size
		}
	}
	return len(p), nil
}

func (s *Screen) line() []rune {
	for len(s.rows) <= s.row {
		s.rows = append(s.rows, nil)
	}
	return s.rows[s.row]
}

func (s *Screen) put(r rune) {
	if s.col >= s.Width {
		s.Wrapped++
		s.row++
		s.col = 0
	}
	l := s.line()
	for len(l) < s.col {
		l = append(l, ' ')
	}
	if s.col < len(l) {
		l[s.col] = r
	} else {
		l = append(l, r)
	}
	s.rows[s.row] = l
	s.col++
}

func (s *Screen) control(arg string, final byte) {
	n := 1
	if arg != "" {
		fmt.Sscanf(arg, "%d", &n)
	}
	switch final {
	case 'A':
		s.row = max(s.row-n, 0)
	case 'J': // erase from the cursor to the end of the screen
		l := s.line()
		s.rows[s.row] = l[:min(s.col, len(l))]
		s.rows = s.rows[:s.row+1]
	case 'K': // erase from the cursor to the end of the line
		l := s.line()
		s.rows[s.row] = l[:min(s.col, len(l))]
	}
	// 'm' (colours) and anything else change nothing visible here.
}

// Lines is the screen's text, one string per line, trailing blanks cut.
func (s *Screen) Lines() []string {
	out := make([]string, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, strings.TrimRight(string(r), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
