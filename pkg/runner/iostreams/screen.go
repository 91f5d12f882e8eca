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
	// rows hold one cell per column: a character with the combining
	// marks that follow it, or wideTail for the second column of a wide
	// character (DisplayWidth), as a terminal lays them out.
	rows [][]string
	row  int
	col  int
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

// wideTail marks the column a wide character's second half takes.
const wideTail = "\x00"

func (s *Screen) line() []string {
	for len(s.rows) <= s.row {
		s.rows = append(s.rows, nil)
	}
	return s.rows[s.row]
}

func (s *Screen) put(r rune) {
	w := runeWidth(r)
	if w == 0 {
		// A combining mark joins the character before it.
		if l := s.line(); s.col > 0 && s.col <= len(l) {
			l[s.col-1] += string(r)
		}
		return
	}
	if s.col+w > s.Width {
		s.Wrapped++
		s.row++
		s.col = 0
	}
	l := s.line()
	for len(l) < s.col+w {
		l = append(l, " ")
	}
	l[s.col] = string(r)
	if w == 2 {
		l[s.col+1] = wideTail
	}
	s.rows[s.row] = l
	s.col += w
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
		out = append(out, strings.TrimRight(strings.ReplaceAll(strings.Join(r, ""), wideTail, ""), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
