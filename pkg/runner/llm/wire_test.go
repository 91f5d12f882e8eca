package llm

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A base URL that reaches no OpenAI-compatible HTTP server is said as what
// is at the other end, never as Go's transport text.
func TestWireWords(t *testing.T) {
	listen := func(t *testing.T, serve func(c net.Conn)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("no loopback listener: %v", err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { defer c.Close(); serve(c) }()
			}
		}()
		return ln.Addr().String()
	}
	closed := func(t *testing.T) string { // a port nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("no loopback listener: %v", err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	for _, tc := range []struct {
		name, want, internal string
		url                  func(t *testing.T) string
	}{
		{"connection refused", "nothing listens there (connection refused)", "dial tcp",
			func(t *testing.T) string { return "http://" + closed(t) + "/v1" }},
		{"https to plain http", "the server does not speak TLS: is the URL https:// for a plain http:// server?", "first record",
			func(t *testing.T) string { return strings.Replace(plain.URL, "http://", "https://", 1) + "/v1" }},
		{"not HTTP", "what answers there does not speak HTTP", "HTTP response", // or readLoopPeekFailLocked, by the timing
			func(t *testing.T) string {
				return "http://" + listen(t, func(c net.Conn) { _, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")); time.Sleep(time.Second) }) + "/v1"
			}},
		{"closed at once", "the server closed the connection without an answer", "EOF",
			func(t *testing.T) string {
				return "http://" + listen(t, func(c net.Conn) { b := make([]byte, 512); _, _ = c.Read(b) }) + "/v1"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{BaseURL: tc.url(t), MaxAttempts: 1, Timeout: 10 * time.Second}
			_, err := c.Complete(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
			if err == nil {
				t.Fatal("Complete succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.internal) || strings.Contains(msg, "readLoopPeekFailLocked") || strings.Contains(msg, "%!") {
				t.Errorf("got %q, want %q and not %q", msg, tc.want, tc.internal)
			}
		})
	}
}

// A key with a line break inside (an export that took two lines) is said
// at once, naming its variable: no request can carry it.
func TestResolveKeyWithControlCharacter(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-abc\ndef", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	_, err := Resolve(nil, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY holds a line break or another control character") || strings.Contains(err.Error(), "sk-abc") {
		t.Errorf("Resolve: %v", err)
	}
}
