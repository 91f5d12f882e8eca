package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// replyLoser is a TCP proxy to the test server that loses one reply: once
// armed, the first client message holding pattern (a statement's Parse)
// marks its connection, and the next one holding then (its execution, its
// COMMIT; nil: any) goes to the server, whose answer is not passed on:
// both sides are closed instead. The server did the write; the client
// cannot know. With forward false the message is not even sent.
type replyLoser struct {
	addr string
	mu   sync.Mutex
	arm  *lossArm
	done chan struct{} // closed once the armed loss happened
}

type lossArm struct {
	pattern, then []byte
	forward       bool
}

func newReplyLoser(t *testing.T, raw string) (*replyLoser, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyLoser{addr: u.Host}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *replyLoser) lose(pattern, then string, forward bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.arm = &lossArm{pattern: []byte(pattern), forward: forward}
	if then != "" {
		p.arm.then = []byte(then)
	}
	p.done = make(chan struct{})
	return p.done
}

func (p *replyLoser) serve(c net.Conn) {
	s, err := net.Dial("tcp", p.addr)
	if err != nil {
		c.Close()
		return
	}
	var (
		mu      sync.Mutex
		armed   *lossArm
		cutting bool
	)
	cut := func() {
		c.Close()
		s.Close()
		p.mu.Lock()
		close(p.done)
		p.mu.Unlock()
	}
	go func() { // server to client
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			mu.Lock()
			drop := cutting
			mu.Unlock()
			if drop {
				if n > 0 {
					cut() // answered: the write is done
				}
				return
			}
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				c.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			msg := buf[:n]
			mu.Lock()
			switch {
			case armed != nil && (armed.then == nil || bytes.Contains(bytes.ToLower(msg), armed.then)):
				if !armed.forward {
					mu.Unlock()
					cut()
					return
				}
				cutting = true
			case armed == nil:
				p.mu.Lock()
				if p.arm != nil && bytes.Contains(msg, p.arm.pattern) {
					armed, p.arm = p.arm, nil
				}
				p.mu.Unlock()
			}
			mu.Unlock()
			if _, werr := s.Write(msg); werr != nil {
				return
			}
		}
		if err != nil {
			s.Close()
			return
		}
	}
}

// A transition whose COMMIT the server did but whose answer was lost (the
// connection cut right after: pg_terminate_backend, a failover, a network
// cut) is acknowledged: the store asks the server once the backend that
// ran it is gone. It used to be reported not written, and the task that
// completed in it "runs again on --continue" (which restored it instead).
// One that never reached the server stays not written. Either way the
// lock is lost and nothing more is written.
func TestLostReplyOfTransition(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forward bool
	}{{"committed", true}, {"never sent", false}} {
		t.Run(tc.name, func(t *testing.T) {
			raw := testStoreURL(t, "lease", "1h") // no heartbeat in between
			p, via := newReplyLoser(t, raw)
			s := openStore(t, via)
			l, j := begin(t, s, "lostreply", 3)
			lost := p.lose(".transitions (session_id, seq", "", tc.forward)
			err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t001"})
			<-lost
			switch {
			case tc.forward && err != nil:
				t.Fatalf("a committed transition whose answer was lost: %v, want it acknowledged", err)
			case !tc.forward && !errors.Is(err, checkpoint.ErrLost):
				t.Fatalf("a transition that never reached the server: %v, want checkpoint.ErrLost", err)
			}
			select {
			case <-l.Lost():
			default:
				t.Fatal("the lock is not lost")
			}
			if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t001", Result: "x"}); !errors.Is(err, checkpoint.ErrLost) {
				t.Fatalf("a write after the lock was lost: %v, want checkpoint.ErrLost", err)
			}
			sess, err := openStore(t, raw).Load(context.Background(), "lostreply")
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := sess.Task("t001")
			if want := map[bool]checkpoint.Status{true: checkpoint.StatusRunning, false: checkpoint.StatusPending}[tc.forward]; tr.Status != want {
				t.Fatalf("t001 is %s in the store, want %s", tr.Status, want)
			}
		})
	}
}

// A new session's first snapshot whose COMMIT the server did but whose
// answer was lost (on a connection of the pool: the lock holds) is the
// session begun: the run goes on. It used to fail ("conn closed"), and the
// advice to run the same command again then found the session there
// (exit 2).
func TestLostReplyOfFirstSnapshot(t *testing.T) {
	raw := testStoreURL(t, "lease", "1h")
	p, via := newReplyLoser(t, raw)
	s := openStore(t, via)
	ctx := context.Background()
	cl, err := s.Lock(ctx, "firstlost", 0)
	if err != nil {
		t.Fatal(err)
	}
	l := cl.(*Lock)
	t.Cleanup(func() { l.Release() })
	lost := p.lose(".sessions AS t (id, spec_path", "commit", true)
	j, err := s.Begin(ctx, l, newSession("firstlost", 2))
	<-lost
	if err != nil {
		t.Fatalf("Begin whose COMMIT's answer was lost: %v, want the session begun", err)
	}
	if err := complete(j, "t001", "kept"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	sess, err := openStore(t, raw).Load(ctx, "firstlost")
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := sess.Task("t001"); tr.Result != "kept" {
		t.Fatalf("t001: %+v", tr)
	}
}

// pgx's bare "conn closed" (a statement on a connection that broke under
// the one before: a ROLLBACK after a lost COMMIT) is said in words.
func TestMessageConnClosed(t *testing.T) {
	for _, err := range []error{pgconn.ErrConnClosed, fmt.Errorf("rollback: %w", pgconn.ErrConnClosed)} {
		if got, want := message(err, time.Second), "the connection broke (the server or the network ended it)"; got != want {
			t.Errorf("message(%v) = %q, want %q", err, got, want)
		}
	}
}

// sslmode=require against a server without SSL says so, and what to
// change, not pgx's "tls error: server refused TLS connection" with the
// advice to check that the server runs.
func TestSSLRefusedAdvice(t *testing.T) {
	raw := withParams(t, testStoreURL(t), "sslmode", "require")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, raw)
	if err == nil {
		s.Close()
		t.Skip("the test server accepts SSL")
	}
	msg := err.Error()
	for _, want := range []string{"does not accept SSL, which the store URL's sslmode asks for", "set sslmode=disable (or prefer) in the store URL, or turn SSL on"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s\nsays nothing of %q", msg, want)
		}
	}
	if strings.Contains(msg, "tls error") || strings.Contains(msg, "running and reachable") {
		t.Errorf("%s\nis pgx's words, or the wrong advice", msg)
	}
}

// A statement_timeout that cancels a statement is blamed on the store
// URL when the URL set it.
func TestStatementTimeoutAdvice(t *testing.T) {
	cancelled := &pgconn.PgError{Severity: "ERROR", Code: "57014", Message: "canceling statement due to statement timeout"}
	for _, tc := range []struct{ raw, want string }{
		{"postgres://u@db.example/app?statement_timeout=1", "the store URL sets statement_timeout=1: raise it or leave it out"},
		{"postgres://u@db.example/app", "a statement_timeout set for this user or database (or in PGOPTIONS)"},
	} {
		c, err := parseURL(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if msg := c.fail("write session s1", cancelled).Error(); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %s\nsays nothing of %q", tc.raw, msg, tc.want)
		}
	}
}
