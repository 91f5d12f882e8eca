package iostreams

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// IsControl says whether a terminal acts on r rather than shows it: the
// C0 controls but line feed and tab, DEL, and the C1 controls. Text a
// model, a server or a task sent may hold them, and an escape sequence
// made of them can clear the screen, set the window's title or write the
// clipboard (OSC 52).
func IsControl(r rune) bool {
	return r < ' ' && r != '\n' && r != '\t' || r == 0x7f || 0x80 <= r && r <= 0x9f
}

// Printable is s with each control character (IsControl) written as an
// escape a terminal shows: `\x1b`, `\u009b`. A CR before an LF, a line
// end, stays. Bytes that are no UTF-8 stay as they are: a terminal shows
// them as it shows such bytes, and a character cut between two writes
// (PrintableWriter) stays whole.
func Printable(s string) string {
	i := firstControl(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		if n := controlAt(s, i); n > 0 {
			r, _ := utf8.DecodeRuneInString(s[i:])
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// firstControl is where s's first control character starts, or -1.
func firstControl(s string) int {
	for i := 0; i < len(s); i++ {
		if controlAt(s, i) > 0 {
			return i
		}
	}
	return -1
}

// controlAt is the length of the control character (IsControl) s[i:]
// starts with, 0 when it starts with none: a CR before an LF is a line
// end, and bytes that are no UTF-8 are none.
func controlAt(s string, i int) int {
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return 0
	}
	if r, n := utf8.DecodeRuneInString(s[i:]); IsControl(r) {
		return n
	}
	return 0
}

// PrintableWriter writes to w what Printable makes of the text written to
// it, however the text is split between writes. Close writes what it
// holds back (a last CR, the first byte of what may be a C1 control).
type PrintableWriter struct {
	w    io.Writer
	held []byte
}

// NewPrintableWriter makes w's text printable (Printable).
func NewPrintableWriter(w io.Writer) *PrintableWriter { return &PrintableWriter{w: w} }

func (p *PrintableWriter) Write(b []byte) (int, error) {
	data := append(p.held, b...)
	cut := len(data)
	if cut > 0 && (data[cut-1] == '\r' || data[cut-1] == 0xc2) {
		cut-- // what comes next decides what it is
	}
	if _, err := io.WriteString(p.w, Printable(string(data[:cut]))); err != nil {
		return 0, err
	}
	p.held = append(p.held[:0], data[cut:]...)
	return len(b), nil
}

// Close writes what p holds back; it does not close w.
func (p *PrintableWriter) Close() error {
	if len(p.held) == 0 {
		return nil
	}
	s := Printable(string(p.held))
	p.held = p.held[:0]
	_, err := io.WriteString(p.w, s)
	return err
}

// Shown is text as Out can show it: Printable on a terminal (TERM=dumb
// too); elsewhere (a pipe, a file) the text as it is, byte for byte.
func (s *IOStreams) Shown(text string) string {
	if !s.outTTY {
		return text
	}
	return Printable(text)
}

// ShownWriter is Shown for text streamed to w, which writes to Out: through
// a PrintableWriter on a terminal, w itself elsewhere. Close it to write
// what it holds back.
func (s *IOStreams) ShownWriter(w io.Writer) io.WriteCloser {
	if !s.outTTY {
		return nopCloser{w}
	}
	return NewPrintableWriter(w)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// ErrShown is Shown for ErrOut, which may be a terminal where Out is not
// (`-v > out.log`), or a file where Out is a terminal (`2> err.log`).
func (s *IOStreams) ErrShown(text string) string {
	if !s.errTTY {
		return text
	}
	return Printable(text)
}
