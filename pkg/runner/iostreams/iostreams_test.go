package iostreams

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/creack/pty"
)

func TestSystem(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var buf bytes.Buffer
	if s := System(nil, &buf, &buf, env()); s.IsTerminal() || s.ColorEnabled() || s.Width() != DefaultWidth {
		t.Errorf("a buffer: terminal %v colour %v width %d", s.IsTerminal(), s.ColorEnabled(), s.Width())
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: 100, Rows: 30}); err != nil {
		t.Fatal(err)
	}
	// TERM=dumb turns off live output and colour, not the escaping of
	// control characters: the device acts on them whatever TERM says.
	const osc52 = "a\x1b]52;c;cHduZWQ=\x07b"
	tests := []struct {
		name            string
		env             func(string) string
		terminal, color bool
	}{
		{"xterm", env("TERM", "xterm"), true, true},
		{"NO_COLOR", env("TERM", "xterm", "NO_COLOR", "1"), true, false},
		{"TERM=dumb", env("TERM", "dumb"), false, false},
	}
	for _, tt := range tests {
		s := System(nil, tty, tty, tt.env)
		if s.IsTerminal() != tt.terminal || s.ColorEnabled() != tt.color || s.ErrColorEnabled() != tt.color {
			t.Errorf("%s: terminal %v colour %v stderr colour %v, want %v %v %v", tt.name, s.IsTerminal(), s.ColorEnabled(), s.ErrColorEnabled(), tt.terminal, tt.color, tt.color)
		}
		if s.Shown(osc52) != Printable(osc52) || s.ErrShown(osc52) != Printable(osc52) {
			t.Errorf("%s: a control sequence reaches the terminal: Shown %q, ErrShown %q", tt.name, s.Shown(osc52), s.ErrShown(osc52))
		}
		var b bytes.Buffer
		w := s.ShownWriter(&b)
		io.WriteString(w, osc52)
		if w.Close(); b.String() != Printable(osc52) {
			t.Errorf("%s: ShownWriter wrote %q", tt.name, b.String())
		}
		if tt.terminal && s.Width() != 100 {
			t.Errorf("%s: width %d, want the terminal's 100", tt.name, s.Width())
		}
	}
	// Each stream is coloured by its own terminal: `2> errors.log` and
	// `> out.log` on a terminal.
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	xterm := env("TERM", "xterm")
	if s := System(nil, tty, file, xterm); !s.ColorEnabled() || s.ErrColorEnabled() {
		t.Errorf("stdout a terminal, stderr a file: colour %v, stderr colour %v", s.ColorEnabled(), s.ErrColorEnabled())
	}
	if s := System(nil, file, tty, xterm); s.ColorEnabled() || !s.ErrColorEnabled() {
		t.Errorf("stdout a file, stderr a terminal: colour %v, stderr colour %v", s.ColorEnabled(), s.ErrColorEnabled())
	} else {
		var b bytes.Buffer
		w := s.ShownWriter(&b)
		io.WriteString(w, osc52)
		if w.Close(); s.Shown(osc52) != osc52 || b.String() != osc52 {
			t.Errorf("stdout a file: Shown %q, ShownWriter %q, want it byte for byte", s.Shown(osc52), b.String())
		}
	}
	if s := System(nil, tty, tty, env("TERM", "xterm", "NO_COLOR", "1")); s.ErrColorEnabled() {
		t.Error("NO_COLOR: stderr coloured")
	}
}

func TestScreen(t *testing.T) {
	s := &Screen{Width: 10}
	s.Write([]byte("one\ntwo\x1b[1mbold\x1b[0m\nthree"))
	s.Write([]byte("\r\x1b[1A\x1b[J"))
	s.Write([]byte("2\n0123456789X"))
	got := s.Lines()
	want := []string{"one", "2", "0123456789", "X"}
	if len(got) != len(want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("lines %q, want %q", got, want)
		}
	}
	if s.Wrapped != 1 {
		t.Errorf("Wrapped = %d, want 1", s.Wrapped)
	}
}

func TestErrSameAsOut(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	log, other := open("log"), open("other")
	again, err := os.OpenFile(log.Name(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var a, b bytes.Buffer
	tests := []struct {
		name     string
		out, err io.Writer
		same     bool
	}{
		{"one file twice (2>&1)", log, log, true},
		{"the same file opened twice", log, again, true},
		{"two files", log, other, false},
		{"a file and a buffer", log, &a, false},
		{"two buffers", &a, &b, false},
	}
	for _, tt := range tests {
		if got := System(nil, tt.out, tt.err, func(string) string { return "" }).ErrSameAsOut(); got != tt.same {
			t.Errorf("%s: ErrSameAsOut %v, want %v", tt.name, got, tt.same)
		}
	}
	if !Test(nil, &a, &a).ErrSameAsOut() || Test(nil, &a, &b).ErrSameAsOut() {
		t.Error("Test streams: one buffer for both is the same output, two are not")
	}
}

// A write to Out stalled from one look to the next when it had begun and
// not ended at the first, and none ended since: its reader took nothing.
func TestStalledUntil(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p, q  OutProgress
		stall bool
	}{
		{"nothing written", OutProgress{}, OutProgress{}, false},
		{"all written at both", OutProgress{3, 3}, OutProgress{3, 3}, false},
		{"one waiting at both, none ended", OutProgress{4, 3}, OutProgress{4, 3}, true},
		{"one waiting, then it ended", OutProgress{4, 3}, OutProgress{4, 4}, false},
		{"one waiting, it ended, the next waits", OutProgress{4, 3}, OutProgress{5, 4}, false},
		{"none waiting, then one began", OutProgress{3, 3}, OutProgress{4, 3}, false},
	} {
		if got := tc.p.StalledUntil(tc.q); got != tc.stall {
			t.Errorf("%s: StalledUntil = %v, want %v", tc.name, got, tc.stall)
		}
	}
	// A write that waits is seen so through System's streams.
	release := make(chan struct{})
	w := writerFunc(func(p []byte) (int, error) { <-release; return len(p), nil })
	s := System(nil, w, io.Discard, func(string) string { return "" })
	go s.Out.Write([]byte("x"))
	for s.OutProgress().begun == 0 {
		runtime.Gosched()
	}
	if p := s.OutProgress(); !p.StalledUntil(s.OutProgress()) {
		t.Errorf("a write that waits: %+v, not stalled", p)
	}
	close(release)
	for s.OutProgress().ended == 0 {
		runtime.Gosched()
	}
	if p := s.OutProgress(); p.StalledUntil(s.OutProgress()) {
		t.Errorf("every write ended: %+v, stalled", p)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
