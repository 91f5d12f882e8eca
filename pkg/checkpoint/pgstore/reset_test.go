package pgstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A connection reset (an RST, where a close is a FIN: a proxy, a firewall,
// a server restart) is said in words, as a closed one is, not in Go's
// "read tcp a->b: read: connection reset by peer".
func TestMessageReset(t *testing.T) {
	for _, err := range []error{
		&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
		fmt.Errorf("heartbeat: %w", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}),
	} {
		got := message(err, time.Second)
		if want := "the server or the network reset the connection (a restart, a crash, a proxy or a firewall)"; got != want {
			t.Errorf("message(%v) = %q, want %q", err, got, want)
		}
	}
}

// resetter is a TCP proxy to the test server that can reset the
// connections it carries, as a load balancer or a firewall does.
type resetter struct {
	mu    sync.Mutex
	conns []*net.TCPConn // the clients' ends
}

func newResetter(t *testing.T, raw string) (*resetter, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r, server := &resetter{}, u.Host
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c.(*net.TCPConn))
			r.mu.Unlock()
			go func() { _, _ = s.(*net.TCPConn).ReadFrom(c); s.Close() }()
			go func() { _, _ = c.(*net.TCPConn).ReadFrom(s); c.Close() }()
		}
	}()
	u.Host = ln.Addr().String()
	return r, u.String()
}

// reset ends every connection with an RST.
func (r *resetter) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		_ = c.SetLinger(0)
		c.Close()
	}
}

func TestResetLockInWords(t *testing.T) {
	raw := testStoreURL(t)
	r, proxied := newResetter(t, raw)
	s := openStore(t, proxied)
	_, j := begin(t, s, "reset", 2)
	if err := complete(j, "t001", "before"); err != nil {
		t.Fatal(err)
	}
	r.reset()
	err := complete(j, "t002", "after")
	if !errors.Is(err, checkpoint.ErrStore) {
		t.Fatalf("a write after the reset = %v, want a store error", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "the server or the network reset the connection") {
		t.Errorf("%s\nsays nothing of the reset", msg)
	}
	for _, internal := range []string{"connection reset by peer", "broken pipe", "read tcp", "write tcp"} {
		if strings.Contains(msg, internal) {
			t.Errorf("%s\nsays %q", msg, internal)
		}
	}
	noPassword(t, raw, msg)
}
