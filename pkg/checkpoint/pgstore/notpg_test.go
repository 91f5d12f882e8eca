package pgstore

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// A store URL whose port is not PostgreSQL's says so, in words, not in
// pgx's ("failed to receive message: invalid body length: expected at most
// 1073741822, but got 1397239086", "timeout: context deadline exceeded").
// No server is needed: the listeners stand in for another program.
func TestOpenNotPostgreSQL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(c net.Conn) // what the port does with a connection
		want  string
	}{
		{"another protocol", func(c net.Conn) { _, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")); time.Sleep(time.Second) },
			"does not speak PostgreSQL's protocol (user teamrun, database postgres): is that the server's port?"},
		// It was "the server closed the connection (a restart, a crash
		// or pg_terminate_backend)", naming no host, as for a session's
		// connection.
		{"closes at once", func(c net.Conn) {},
			"was closed or reset as it started: is that the server's port (not another program's, or a proxy's that refuses it), or did the server just stop?"},
		{"no answer", func(c net.Conn) { time.Sleep(5 * time.Second) },
			"did not answer in time (connect_timeout): is it stopped or overloaded, or is that port another program's?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Skipf("no loopback listener: %v", err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() { defer c.Close(); tc.serve(c) }()
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = Open(ctx, "postgres://teamrun:hunter2x@"+ln.Addr().String()+"/postgres?sslmode=disable&connect_timeout=1")
			if err == nil {
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("got %q, want it to contain %q", msg, tc.want)
			}
			if want := "the connection to " + ln.Addr().String() + " (user teamrun"; tc.name == "closes at once" && !strings.Contains(msg, want) {
				t.Errorf("got %q, want it to name the host: %q", msg, want)
			}
			for _, internal := range []string{"failed to receive message", "invalid body length", "context deadline exceeded", "hunter2x", "EOF", "pg_terminate_backend"} {
				if strings.Contains(msg, internal) {
					t.Errorf("%q says %q", msg, internal)
				}
			}
		})
	}
}

// A port where another program answers pgx's SSL request (sent unless
// sslmode=disable) with neither S nor N is not PostgreSQL, in every
// sslmode: pgx reads any such answer as a server without SSL, and the
// message said to set sslmode=disable or prefer (prefer was in effect:
// it is the default) or to turn SSL on in a server that is not there.
func TestNotPostgreSQLInEverySSLMode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Read(make([]byte, 8))
				_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			}()
		}
	}()
	for _, mode := range []string{"", "prefer", "allow", "require", "verify-full", "disable"} {
		t.Run("sslmode="+mode, func(t *testing.T) {
			raw := "postgres://teamrun:hunter2x@" + ln.Addr().String() + "/postgres?connect_timeout=5"
			if mode != "" {
				raw += "&sslmode=" + mode
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := Open(ctx, raw)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			want := "what answers at " + ln.Addr().String() + " does not speak PostgreSQL's protocol (user teamrun, database postgres): is that the server's port?; check the host and port of the store URL"
			if !strings.Contains(msg, want) {
				t.Errorf("got %q, want it to contain %q", msg, want)
			}
			_, said, _ := strings.Cut(msg, ": connect: ") // after the location, which shows the sslmode
			for _, wrong := range []string{"SSL", "sslmode", "hunter2x", "failed to receive message"} {
				if strings.Contains(said, wrong) {
					t.Errorf("%q says %q", msg, wrong)
				}
			}
		})
	}
}

// A run whose session another run took over is told to look at it in the
// store its command line named (checkpoint.NameStore), not the default one.
func TestTakenOverNamesTheStore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		words []string
		want  string
	}{
		{"--store given", []string{"--store", "postgres://u@db/app"}, "this run stops writing; see `teamrun session show l2 --store postgres://u@db/app`"},
		{"none given", nil, "this run stops writing; see `teamrun session show l2`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := error(&Error{Location: "postgres://u@db/app", Op: "session l2", Msg: "the session was taken over by another run",
				Advice: "this run stops writing", Show: "l2", Err: checkpoint.ErrLost})
			checkpoint.NameStore(err, tc.words)
			if got := err.Error(); !strings.HasSuffix(got, tc.want) {
				t.Errorf("got  %s\nwant it to end with %s", got, tc.want)
			}
		})
	}
}
