package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineBuf is how much of a stdout line is read whole to check it; a
// longer line is checked by its first byte only (the SDK bounds it).
const lineBuf = 64 << 10

// quoteMax is how much of a line that is not JSON-RPC a message quotes.
const quoteMax = 200

// stdioTransport is the SDK's CommandTransport with the server's stdout
// read through jsonLines: a banner or a log line there ends the
// connection with the line kept for the message, where the SDK would
// tell a JSON syntax error, or that the server ended.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	out       *jsonLines
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	t.out.r = bufio.NewReaderSize(stdout, lineBuf)
	// The connection is closed by closing the server's stdin, not its
	// stdout (as the SDK's CommandTransport does).
	return (&mcp.IOTransport{Reader: io.NopCloser(t.out), Writer: serverStdin{stdin, t.cmd, t.terminate}}).Connect(ctx)
}

// serverStdin ends a stdio server as the SDK's CommandTransport does, and
// as the MCP spec asks: its stdin closed, then SIGTERM if it has not
// exited after terminate, then SIGKILL.
type serverStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (s serverStdin) Close() error {
	if err := s.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing the server's stdin: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(s.terminate)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	// A SIGTERM that cannot be sent goes straight to SIGKILL.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server did not exit after SIGKILL")
}

// NotJSONError is a stdio server's stdout line that is not JSON-RPC:
// the MCP spec says a stdio server MUST NOT write anything else there,
// and teamrun holds it to that (a line skipped could be a reply lost).
type NotJSONError struct {
	Line string // cut to quoteMax bytes, control characters replaced
}

func (e *NotJSONError) Error() string {
	return fmt.Sprintf("it wrote a line that is not JSON-RPC on its stdout (`%s`): an MCP stdio server must write only protocol messages there; log to stderr", e.Line)
}

// jsonLines passes a stdio server's stdout on to the SDK line by line,
// and stops at the first line that is not JSON (a blank line is let
// through: the SDK skips it), which it keeps.
type jsonLines struct {
	r       *bufio.Reader
	pending []byte // what is left to pass of the line read last
	inLine  bool   // the line read last goes on past lineBuf

	mu  sync.Mutex
	bad *NotJSONError
}

func (j *jsonLines) Read(p []byte) (int, error) {
	if len(j.pending) == 0 {
		chunk, err := j.r.ReadSlice('\n')
		if len(chunk) == 0 {
			return 0, err
		}
		if !j.inLine && !jsonLine(chunk, err == bufio.ErrBufferFull) {
			e := &NotJSONError{Line: quoteLine(chunk)}
			j.mu.Lock()
			j.bad = e
			j.mu.Unlock()
			return 0, e
		}
		// An error with data (the last line has no newline) comes with
		// the next read.
		j.inLine = err == bufio.ErrBufferFull
		j.pending = chunk
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// notJSON is the line that ended the connection; nil if none did (or j
// is an HTTP server's: nil).
func (j *jsonLines) notJSON() *NotJSONError {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.bad
}

// jsonLine tells whether a line can be a JSON-RPC message (or a batch
// of them), or is blank; of a line longer than lineBuf (part), only the
// beginning is seen.
func jsonLine(line []byte, part bool) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return true
	}
	if line[0] != '{' && line[0] != '[' {
		return false
	}
	return part || json.Valid(line)
}

// quoteLine is line as a message quotes it: cut to quoteMax bytes (at a
// character's start), its control characters (a terminal's color codes)
// and backquotes made spaces.
func quoteLine(line []byte) string {
	s := strings.TrimRight(string(line), "\r\n")
	cut := len(s) > quoteMax
	if cut {
		i := quoteMax
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '`' || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	if cut {
		s += "…"
	}
	return s
}
