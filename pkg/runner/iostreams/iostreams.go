// Package iostreams is the one place that decides what the output can show:
// a terminal or a pipe, colour, and the terminal's width. Every command
// asks it instead of looking at file descriptors or the environment itself
// (after the GitHub CLI's pkg/iostreams).
package iostreams

import (
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// DefaultWidth is the width assumed when a terminal does not say its own.
const DefaultWidth = 80

// IOStreams are a command's standard streams and what they can show.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// terminal: Out is a terminal that can move its cursor (not
	// TERM=dumb): live output.
	terminal bool
	// outTTY and errTTY: the stream is a terminal device, TERM=dumb or
	// not; the device acts on escape sequences whatever TERM says, so
	// they decide escaping (Shown, ErrShown), each stream on its own.
	outTTY, errTTY bool
	// color and errColor: each stream is coloured by its own terminal
	// (`2> err.log` on a terminal gets no escape codes in the file).
	color, errColor bool
	width           func() int
	// sameOut is set when ErrOut is the very file Out is (a terminal, or
	// `2>&1`): a line meant for both is then written once.
	sameOut bool
	// out is Out as System wraps it: it keeps the first failed write.
	out *keptErrWriter
}

// keptErrWriter remembers the first error of its writes: most printing
// ignores Fprintf's error, yet a command whose output went nowhere (a full
// disk under `> file`) must not end as if it had been written.
type keptErrWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error // the first failed write's
	// begun and ended count the writes: one begun and not ended waits
	// for the reader to take it (OutProgress).
	begun, ended atomic.Uint64
}

func (k *keptErrWriter) Write(p []byte) (int, error) {
	k.begun.Add(1)
	n, err := k.w.Write(p)
	k.ended.Add(1)
	if err != nil {
		k.mu.Lock()
		if k.err == nil {
			k.err = err
		}
		k.mu.Unlock()
	}
	return n, err
}

// OutErr is the first error writing to Out, or nil: the output is not
// whole. Only streams from System keep it.
func (s *IOStreams) OutErr() error {
	if s.out == nil {
		return nil
	}
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	return s.out.err
}

// OutProgress is how far the writes to Out have got, to tell a reader that
// stopped reading (Stalled).
type OutProgress struct{ begun, ended uint64 }

// OutProgress is where the writes to Out are now (nothing for streams that
// System did not make).
func (s *IOStreams) OutProgress() OutProgress {
	if s.out == nil {
		return OutProgress{}
	}
	// ended first: a write that ends between the two loads is not taken
	// for one still waiting.
	e := s.out.ended.Load()
	return OutProgress{begun: s.out.begun.Load(), ended: e}
}

// StalledUntil reports whether a write to Out waited from p to q: one had
// begun and not ended at p, and none ended since. Its reader took nothing
// in between (a paused pager, a stalled ssh, a reader that does not read).
func (p OutProgress) StalledUntil(q OutProgress) bool {
	return p.begun > p.ended && q.ended == p.ended
}

// System inspects out and the environment: a terminal gets live output,
// and colour unless NO_COLOR is set (to anything); TERM=dumb turns off
// cursor movement and colour only: a task's control characters are
// escaped on any terminal device.
func System(in io.Reader, out, errOut io.Writer, getenv func(string) string) *IOStreams {
	kept := &keptErrWriter{w: out}
	s := &IOStreams{In: in, Out: kept, ErrOut: errOut, width: func() int { return DefaultWidth }, out: kept}
	f, ok := out.(*os.File)
	if !ok {
		return s
	}
	isTTY := func(fd uintptr) bool { return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd) }
	if ef, ok := errOut.(*os.File); ok {
		fi, err1 := f.Stat()
		ei, err2 := ef.Stat()
		s.sameOut = err1 == nil && err2 == nil && os.SameFile(fi, ei)
		s.errTTY = isTTY(ef.Fd())
	}
	fd := f.Fd()
	s.outTTY = isTTY(fd)
	smart := getenv("TERM") != "dumb"
	color := smart && getenv("NO_COLOR") == ""
	s.terminal = s.outTTY && smart
	s.color = s.outTTY && color
	s.errColor = s.errTTY && color
	if s.terminal {
		s.width = func() int {
			// Asked at every redraw: the user may resize the window.
			if w, _, err := term.GetSize(int(fd)); err == nil && w > 0 {
				return w
			}
			return DefaultWidth
		}
	}
	return s
}

// Test returns streams that are no terminal, for tests; the setters make
// them look like one.
func Test(in io.Reader, out, errOut io.Writer) *IOStreams {
	return &IOStreams{In: in, Out: out, ErrOut: errOut, width: func() int { return DefaultWidth }, sameOut: out == errOut}
}

// SetTerminal makes the streams a terminal of the given width, with or
// without colour (for tests).
func (s *IOStreams) SetTerminal(width int, color bool) {
	s.terminal, s.outTTY, s.errTTY, s.color, s.errColor = true, true, true, color, color
	s.width = func() int { return width }
}

// IsTerminal reports whether Out is an interactive terminal: live
// progress, relative times. Elsewhere (cron, pipes) output is plain lines
// with exact times.
func (s *IOStreams) IsTerminal() bool { return s.terminal }

// ColorEnabled reports whether Out may use colour.
func (s *IOStreams) ColorEnabled() bool { return s.color }

// ErrColorEnabled reports whether ErrOut may use colour: it is judged on
// its own, as ErrShown is.
func (s *IOStreams) ErrColorEnabled() bool { return s.errColor }

// Width is the terminal's width in columns (DefaultWidth when Out is no
// terminal or does not say).
func (s *IOStreams) Width() int { return s.width() }

// ErrSameAsOut reports whether ErrOut and Out are one file (a terminal, or
// `2>&1` into one pipe or log): what is written to both would show twice.
func (s *IOStreams) ErrSameAsOut() bool { return s.sameOut }
