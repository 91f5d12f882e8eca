package iostreams

import (
	"bytes"
	"testing"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\twith a tab\nand lines\n", "plain text\twith a tab\nand lines\n"},
		{"CRLF line ends\r\nstay\r\n", "CRLF line ends\r\nstay\r\n"},
		{"bad \x1b]0;PWNED\x07\x1b[2J request", `bad \x1b]0;PWNED\x07\x1b[2J request`},
		{"line1\rOVER", `line1\x0dOVER`},
		{"red\b\b end\x7f", `red\x08\x08 end\x7f`},
		{"8-bit CSI \u009b2J, é and 😀 stay", `8-bit CSI \u009b2J, é and 😀 stay`},
		{"no UTF-8 \xff\xc2 stays", "no UTF-8 \xff\xc2 stays"},
		{"ends with CR\r", `ends with CR\x0d`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// Split anywhere, PrintableWriter writes the same.
		for cut := range len(tt.in) + 1 {
			var b bytes.Buffer
			w := NewPrintableWriter(&b)
			for _, part := range []string{tt.in[:cut], tt.in[cut:]} {
				if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("PrintableWriter(%q cut at %d) = %q, want %q", tt.in, cut, b.String(), tt.want)
			}
		}
	}
}

func TestShown(t *testing.T) {
	const text = "answer \x1b[2J\x1b]52;c;cGF5bG9hZA==\x07 end\n"
	var out bytes.Buffer
	s := Test(nil, &out, &out)
	if got := s.Shown(text); got != text {
		t.Errorf("to a pipe: %q, want it byte for byte", got)
	}
	s.SetTerminal(80, false)
	if got, want := s.Shown(text), `answer \x1b[2J\x1b]52;c;cGF5bG9hZA==\x07 end`+"\n"; got != want {
		t.Errorf("to a terminal: %q, want %q", got, want)
	}
}
