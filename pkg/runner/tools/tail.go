package tools

import (
	"io"
	"sync"
)

// Tail keeps the last Max bytes written to it, for an error to quote:
// a command's stderr, an MCP server's. It is safe for a writer and a
// reader at once (an MCP server's stderr is copied while its
// connection is in use).
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
	cut bool
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the last Max bytes, after "…" when more came before them.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.Max {
		b = b[len(b)-t.Max:]
		t.cut = true
	}
	if t.cut {
		return "…" + string(b)
	}
	return string(b)
}

var _ io.Writer = (*Tail)(nil)
