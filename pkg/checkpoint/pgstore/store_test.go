package pgstore

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

func TestParseURL(t *testing.T) {
	t.Setenv("PGPASSWORD", "")
	for _, k := range []string{"PGHOST", "PGPORT", "PGDATABASE", "PGTARGETSESSIONATTRS"} {
		t.Setenv(k, "")
	}
	t.Setenv("PGUSER", "envuser")
	tests := []struct {
		name, raw    string
		wantErr      string
		schema       string
		lease        time.Duration
		location     string
		serverParams []string          // must not reach the server
		runtime      map[string]string // settings the server gets
		password     string            // "secret" unless set
		host         string            // the host pgx connects to, when set
	}{
		{name: "defaults", raw: "postgres://u:secret@db:5432/app",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app"},
		{name: "postgresql scheme, own params stripped", raw: "postgresql://u:secret@db/app?schema=nightly&lease=45s&sslmode=disable",
			schema: "nightly", lease: 45 * time.Second, location: "postgres://u@db:5432/app?schema=nightly&sslmode=disable",
			serverParams: []string{"schema", "lease"}},
		{name: "password as a parameter", raw: "postgres://db/app?user=u&password=secret",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app"},
		{name: "lease too short", raw: "postgres://u:secret@db/app?lease=1s", wantErr: `lease="1s" in the store URL: a duration of at least 3s`},
		{name: "lease not a duration", raw: "postgres://u:secret@db/app?lease=soon", wantErr: `lease="soon"`},
		{name: "bad schema", raw: "postgres://u:secret@db/app?schema=Robert%27)DROP", wantErr: "a schema name is 1 to 63 of a-z 0-9 _"},
		// The server refuses a pg_ schema only at the first write (exit 5,
		// "check the server's log"), and would fill information_schema.
		{name: "a pg_ schema", raw: "postgres://u:secret@db/app?schema=pg_foo", wantErr: `schema="pg_foo" in the store URL: names that start with pg_ are reserved for PostgreSQL's own schemas`},
		{name: "pg_catalog", raw: "postgres://u:secret@db/app?schema=pg_catalog", wantErr: "names that start with pg_ are reserved"},
		{name: "pg_temp", raw: "postgres://u:secret@db/app?schema=pg_temp", wantErr: "names that start with pg_ are reserved"},
		{name: "information_schema", raw: "postgres://u:secret@db/app?schema=information_schema", wantErr: `schema="information_schema" in the store URL: that is PostgreSQL's system schema`},
		{name: "pg without the underscore", raw: "postgres://u:secret@db/app?schema=pgdata",
			schema: "pgdata", lease: DefaultLease, location: "postgres://u@db:5432/app?schema=pgdata"},
		// A ; is part of a value, as libpq has it: here, of a bad schema name.
		{name: "semicolon in the parameters", raw: "postgres://u:secret@db/app?schema=a;b", wantErr: `schema="a;b" in the store URL: a schema name is`},
		{name: "a password parameter run into the next", raw: "postgres://u@db:5432/app?password=secret;sslmode=disable",
			wantErr: "password= in the store URL holds a second =: write an = inside a value as %3D"},
		{name: "bad port, password as a parameter", raw: "postgres://u@127.0.0.1:abc/app?password=secret",
			wantErr: "the store URL postgres://u@127.0.0.1:abc/app cannot be read: the port after the host is not a number"},
		{name: "missing ], password as a parameter", raw: "postgres://u@[::1/app?password=secret", wantErr: "the store URL postgres://u@[::1/app cannot be read: missing ']' in host"},
		{name: "a carriage return, password as a parameter", raw: "postgres://u@db:5432/app?password=secret\r",
			wantErr: `the store URL postgres://u@db:5432/app cannot be read: it holds a control character`},
		{name: "a password holding a / in the user part", raw: "postgres://u:sec/ret@db/app", wantErr: "the store URL postgres://u@db/app cannot be read: the port after the host is not a number"},
		{name: "a # in the user part", raw: "postgres://u:sec#ret@db/app", wantErr: "the store URL postgres://u@db/app has a ? # or @ in its user or password part (not shown): percent-encode it (%3F %23 %40)"},
		{name: "a # before the parameters", raw: "postgres://u:secret@db/app#x?sslmode=disable", wantErr: "the store URL postgres://u@db/app#x?sslmode=disable holds a # before its parameters: write it %23"},
		{name: "a slash too many", raw: "postgres:///u:secret@db/app", wantErr: "the store URL postgres://u@db/app has an @ after the host, in the database's name"},
		{name: "a parameter with no =", raw: "postgres://u@db/app?sslmode=disable&secret", wantErr: "parameter 2 of the store URL (after the ?) has no =: write key=value pairs"},
		{name: "a bad escape in the password parameter", raw: "postgres://u@db/app?password=se%zzcret", wantErr: "the value of password= in the store URL (not shown) is not valid URL text: a % that starts no escape"},
		{name: "schema twice", raw: "postgres://u:secret@db/app?schema=a&schema=b", wantErr: "schema= is given twice in the store URL: give it once"},
		{name: "lease twice, the second bad", raw: "postgres://u:secret@db/app?lease=5s&lease=xx", wantErr: "lease= is given twice in the store URL"},
		{name: "sslmode twice", raw: "postgres://u:secret@db/app?sslmode=disable&sslmode=require", wantErr: "sslmode= is given twice in the store URL"},
		// Parameters go to the server as libpq reads them: %20 is a space,
		// a + is a plus, a # in a value is part of it.
		{name: "spaces and pluses as libpq reads them", raw: "postgres://u@db/app?password=secret&options=-c%20statement_timeout%3D0&application_name=nightly%20job+1",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app?options=-c%20statement_timeout%3D0",
			runtime: map[string]string{"options": "-c statement_timeout=0", "application_name": "nightly job+1"}},
		{name: "a password parameter with a space", raw: "postgres://u@db/app?password=open%20secret%2042", password: "open secret 42",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app"},
		{name: "a # in the password parameter", raw: "postgres://u@db/app?sslmode=disable&password=se#cret", password: "se#cret",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app?sslmode=disable"},
		// What only tunes the connection does not make it another store.
		{name: "connection-only parameters are no part of the location", raw: "postgres://u:secret@db/app?connect_timeout=10&application_name=x&sslmode=disable&statement_cache_capacity=8",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app?sslmode=disable"},
		// A Unix socket's folder as the host, percent-encoded, as libpq
		// documents it and psql takes it: net/url refused it ("invalid
		// URL escape").
		{name: "a socket folder as the host", raw: "postgres://u:secret@%2Fvar%2Frun%2Fpostgresql:5433/app",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@%2Fvar%2Frun%2Fpostgresql:5433/app", host: "/var/run/postgresql"},
		{name: "a socket folder as the host, no port", raw: "postgres://u:secret@%2ftmp/app",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@%2Ftmp:5432/app", host: "/tmp"},
		{name: "an IPv6 zone", raw: "postgres://u:secret@[fe80::1%25eth0]:5432/app",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@[fe80::1%25eth0]:5432/app", host: "fe80::1%eth0"},
		{name: "a bad escape in the host", raw: "postgres://u:secret@%2Ftmp%zz/app",
			wantErr: "the store URL postgres://u@%2Ftmp%zz/app cannot be read: its host holds a % that starts no escape (a % itself is %25)"},
		{name: "an escaped : in the host", raw: "postgres://u:secret@%2Ftmp%3A5432/app",
			wantErr: "cannot be read: its host percent-encodes a : , [ or ], which separate hosts and ports"},
		{name: "not postgres", raw: "mysql://u:secret@db/app", wantErr: "is not a postgres:// or postgresql:// URL"},
		{name: "unparsable keeps the password out", raw: "postgres://u:secret@db:port/app", wantErr: "cannot be read"},
		// Go's own words ("net/url: invalid userinfo") say nothing to
		// someone whose password holds a space; a line break is shown as
		// one, not printed.
		{name: "a space in the password", raw: "postgres://u:sec ret@db/app",
			wantErr: "the store URL postgres://u@db/app cannot be read: the user or password holds a character a URL must percent-encode"},
		{name: "a line break", raw: "postgres://u:secret@db/app\n",
			wantErr: `the store URL "postgres://u@db/app\n" cannot be read: it holds a control character (a line break, a tab): remove it`},
		{name: "no host is libpq's defaults", raw: "postgres://?password=secret&sslmode=disable",
			schema: "teamrun", lease: DefaultLease, location: "postgres://envuser@?sslmode=disable"},
		{name: "port out of range", raw: "postgres://u:secret@db:99999/app",
			wantErr: "the store URL postgres://u@db:99999/app: invalid port; it looks like postgres://user:password@host:5432/db"},
		{name: "bad sslmode", raw: "postgres://u:secret@db/app?sslmode=bogus", wantErr: "sslmode is invalid"},
		{name: "one-letter password leaves the words whole", raw: "postgres://u:p@db/app?sslmode=bogus",
			wantErr: `the store URL postgres://u@db/app?sslmode=bogus: failed to configure TLS (sslmode is invalid)`},
		{name: "connect_timeout not a number", raw: "postgres://u:secret@db/app?connect_timeout=abc",
			wantErr: `connect_timeout="abc" in the store URL: a whole number of seconds, such as 10 (0: no limit)`},
		{name: "connect_timeout negative", raw: "postgres://u:secret@db/app?connect_timeout=-1", wantErr: `connect_timeout="-1" in the store URL: a whole number of seconds`},
		{name: "connect_timeout fine", raw: "postgres://u:secret@db/app?connect_timeout=0",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db:5432/app"},
		{name: "port parameter not a number", raw: "postgres://u:secret@db/app?port=abc", wantErr: `port="abc" in the store URL: a port number from 1 to 65535`},
		{name: "port parameter zero", raw: "postgres://u:secret@db/app?port=0", wantErr: `port="0" in the store URL`},
		{name: "ports per host, one the default", raw: "postgres://u:secret@db1,db2,db3/app?port=5432,,5433",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db1,db2,db3/app?port=5432%2C%2C5433"},
		{name: "a port per host, one bad", raw: "postgres://u:secret@db1,db2/app?port=5432,x", wantErr: `port="5432,x" in the store URL`},
		{name: "statement cache not a number", raw: "postgres://u:secret@db/app?statement_cache_capacity=lots",
			wantErr: `statement_cache_capacity="lots" in the store URL: a whole number, such as 512`},
		{name: "description cache not a number", raw: "postgres://u:secret@db/app?description_cache_capacity=1.5",
			wantErr: `description_cache_capacity="1.5" in the store URL: a whole number, such as 512`},
		// A store writes: a server that takes no writes never works.
		{name: "target_session_attrs read-only", raw: "postgres://u:secret@db/app?target_session_attrs=read-only",
			wantErr: `target_session_attrs="read-only" in the store URL asks for a server that takes no writes, and teamrun writes every task's state there: use read-write or primary, or leave it out`},
		{name: "target_session_attrs standby", raw: "postgres://u:secret@db1,db2/app?target_session_attrs=standby", wantErr: `target_session_attrs="standby" in the store URL asks for a server that takes no writes`},
		{name: "target_session_attrs prefer-standby", raw: "postgres://u:secret@db/app?target_session_attrs=prefer-standby", wantErr: `target_session_attrs="prefer-standby" in the store URL asks`},
		{name: "target_session_attrs read-write", raw: "postgres://u:secret@db1,db2/app?target_session_attrs=read-write",
			schema: "teamrun", lease: DefaultLease, location: "postgres://u@db1,db2/app?target_session_attrs=read-write"},
		{name: "pool settings are teamrun's", raw: "postgres://u:secret@db/app?pool_max_conns=8",
			wantErr: "pool_max_conns in the store URL: teamrun sizes its own connection pool; leave it out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseURL(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if !errors.Is(err, checkpoint.ErrBadLocation) || errors.Is(err, checkpoint.ErrStore) {
					t.Errorf("%v does not wrap checkpoint.ErrBadLocation (exit 2) alone", err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("the message shows the password: %v", err)
				}
				if strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "net/url") {
					t.Errorf("the message shows Go's number parser: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.schema != tt.schema || c.lease != tt.lease || c.location != tt.location {
				t.Errorf("schema %q lease %s location %q, want %q %s %q", c.schema, c.lease, c.location, tt.schema, tt.lease, tt.location)
			}
			if again, err := parseURL(c.location); err != nil || again.location != c.location {
				t.Errorf("the location %s, opened, is %v, %v: not itself", c.location, again, err)
			}
			if tt.host != "" && c.conn.Host != tt.host {
				t.Errorf("pgx connects to host %q, want %q", c.conn.Host, tt.host)
			}
			if want := cmp.Or(tt.password, "secret"); c.conn.Password != want {
				t.Errorf("password %q did not reach the connection config (%q)", want, c.conn.Password)
			}
			for k, v := range tt.runtime {
				if got := c.conn.RuntimeParams[k]; got != v {
					t.Errorf("the server gets %s=%q, want %q", k, got, v)
				}
			}
			for _, p := range tt.serverParams {
				if _, ok := c.conn.RuntimeParams[p]; ok {
					t.Errorf("teamrun's parameter %s reaches the server", p)
				}
			}
			if c.conn.RuntimeParams["synchronous_commit"] != "on" {
				t.Errorf("synchronous_commit = %q, want on", c.conn.RuntimeParams["synchronous_commit"])
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	l, j := begin(t, s, "night-1", 3)
	if err := complete(j, "t001", "draft\x00with a NUL and \"quotes\""); err != nil {
		t.Fatal(err)
	}
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t002"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Record(checkpoint.Record{Kind: checkpoint.DecisionRecorded, Task: "t003", Value: "approve"}); err != nil {
		t.Fatal(err)
	}
	// Before Close: Load folds the transitions into the snapshot.
	check := func(when string) {
		t.Helper()
		got, err := s.Load(ctx, "night-1")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		t1, _ := got.Task("t001")
		t2, _ := got.Task("t002")
		t3, _ := got.Task("t003")
		if t1.Status != checkpoint.StatusCompleted || t1.Result != "draft\x00with a NUL and \"quotes\"" || t1.Variables["n"] != "t001" {
			t.Errorf("%s: t001 = %+v", when, t1)
		}
		if t2.Status != checkpoint.StatusRunning || t2.Attempts != 1 || t3.Status != checkpoint.StatusPending {
			t.Errorf("%s: t002 %s/%d, t003 %s", when, t2.Status, t2.Attempts, t3.Status)
		}
		if got.Checkpoint.Decisions["t003"] != "approve" || got.Summary != (checkpoint.Counts{Done: 1, Total: 3}) {
			t.Errorf("%s: decisions %v summary %+v", when, got.Checkpoint.Decisions, got.Summary)
		}
		view := j.Session()
		if v1, _ := view.Task("t001"); v1.Result != t1.Result || v1.Status != t1.Status {
			t.Errorf("%s: the journal's view %+v differs from Load's %+v", when, v1, t1)
		}
	}
	check("journal open")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	check("journal closed")
	var left int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.transitions`)).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("Close left %d transitions unfolded", left)
	}
	if h, err := s.Head(ctx, "night-1"); err != nil || h.ID != "night-1" || h.Done != 1 || h.Total != 3 || h.SpecPath != "/specs/agents.yaml" || h.Touched.IsZero() {
		t.Errorf("Head = %+v, %v", h, err)
	}
	if _, err := s.Head(ctx, "nope"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Head of a missing session = %v, want ErrNotFound", err)
	}
	if ok, err := s.Exists(ctx, "night-1"); err != nil || !ok {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "night-1" || list[0].Done != 1 || list[0].Total != 3 || list[0].TeamName != "team" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := s.Delete(ctx, "night-1"); !errors.Is(err, checkpoint.ErrLocked) {
		t.Errorf("Delete while held = %v, want ErrLocked", err)
	}
	l.Release()
	if err := s.Delete(ctx, "night-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "night-1"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Load after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "night-1"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Delete twice = %v, want ErrNotFound", err)
	}
}

func TestCompactionKeepsEveryRecord(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	s.minCompact = 1 // compact as often as the size rule allows
	ctx := context.Background()
	_, j := begin(t, s, "many", 40)
	for i := 1; i <= 40; i++ {
		if err := complete(j, fmt.Sprintf("t%03d", i), strings.Repeat("x", i*50)); err != nil {
			t.Fatal(err)
		}
	}
	var snapSeq, lastSeq int64
	if err := s.pool.QueryRow(ctx, s.q(`SELECT snapshot_seq, last_seq FROM {s}.sessions WHERE id = 'many'`)).Scan(&snapSeq, &lastSeq); err != nil {
		t.Fatal(err)
	}
	if snapSeq == 0 || lastSeq != 80 {
		t.Errorf("snapshot_seq %d last_seq %d: no compaction ran before Close, or a record is missing", snapSeq, lastSeq)
	}
	got, err := s.Load(ctx, "many")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 40; i++ {
		tr, _ := got.Task(fmt.Sprintf("t%03d", i))
		if tr.Status != checkpoint.StatusCompleted || len(tr.Result) != i*50 {
			t.Fatalf("t%03d: %s, %d bytes", i, tr.Status, len(tr.Result))
		}
	}
}

func TestBeginNeverReplacesAnotherSession(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	ctx := context.Background()
	l, j := begin(t, s, "dup", 2)
	if err := complete(j, "t001", "kept"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(ctx, l, newSession("dup", 2)); !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("a fresh session over a stored one: %v, want ErrExists", err)
	}
	// A continuation (loaded from the store) may replace it.
	old, err := s.Load(ctx, "dup")
	if err != nil {
		t.Fatal(err)
	}
	j2, err := s.Begin(ctx, l, old)
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := j2.Task("t001"); tr.Result != "kept" {
		t.Errorf("the continued session lost t001: %+v", tr)
	}
}

func TestLockHeldNamesHolder(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	ctx := context.Background()
	if h, err := s.Held(ctx, "one"); err != nil || h != nil {
		t.Fatalf("Held on a free session = %v, %v", h, err)
	}
	l, _ := begin(t, s, "one", 1)
	host, _ := os.Hostname()
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		_, err := s.Lock(ctx, "one", wait)
		var he *checkpoint.HeldError
		if !errors.As(err, &he) || !errors.Is(err, checkpoint.ErrLocked) {
			t.Fatalf("second Lock (wait %s) = %v, want a HeldError", wait, err)
		}
		if he.PID != os.Getpid() || he.Host != host || !he.Started.Equal(l.Holder().Started) || he.Waited != wait {
			t.Errorf("HeldError %+v, want pid %d host %s started %s waited %s", he, os.Getpid(), host, l.Holder().Started, wait)
		}
	}
	if h, err := s.Held(ctx, "one"); err != nil || h == nil || h.PID != os.Getpid() {
		t.Errorf("Held = %+v, %v", h, err)
	}
	// A waiting Lock gets the session once the holder lets go.
	got := make(chan error, 1)
	go func() {
		l2, err := s.Lock(ctx, "one", time.Minute)
		if err == nil {
			l2.Release()
		}
		got <- err
	}()
	l.Release()
	if err := <-got; err != nil {
		t.Fatalf("a waiting Lock after Release: %v", err)
	}
	if h, err := s.Held(ctx, "one"); err != nil || h != nil {
		t.Errorf("Held after Release = %v, %v", h, err)
	}
}

// TestRaceChild is one of TestTenProcessesOneWins's racers, not a test.
func TestRaceChild(t *testing.T) {
	if os.Getenv("PGSTORE_RACE_CHILD") != "1" {
		t.Skip("a helper process of TestTenProcessesOneWins")
	}
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("PGSTORE_RACE_URL"))
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer s.Close()
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		fmt.Println("error", err)
		return
	}
	l, err := s.Lock(ctx, "race", 0)
	var he *checkpoint.HeldError
	switch {
	case err == nil:
		fmt.Println("won")
		_, _ = io.Copy(io.Discard, in) // hold until the parent closes stdin
		l.Release()
	case errors.As(err, &he):
		fmt.Println("held", he.PID)
	default:
		fmt.Println("error", err)
	}
}

func TestTenProcessesOneWins(t *testing.T) {
	raw := testStoreURL(t)
	openStore(t, raw) // create the schema before the race
	type racer struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	var rs []racer
	for range 10 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRaceChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), "PGSTORE_RACE_CHILD=1", "PGSTORE_RACE_URL="+raw)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := racer{cmd, stdin, bufio.NewReader(stdout)}
		rs = append(rs, r)
		t.Cleanup(func() { r.stdin.Close(); r.cmd.Process.Kill(); r.cmd.Wait() })
	}
	for i, r := range rs {
		if line, err := r.out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("racer %d: %q %v", i, line, err)
		}
	}
	for _, r := range rs {
		fmt.Fprintln(r.stdin, "go")
	}
	won, winnerPID := -1, 0
	var held []string
	for i, r := range rs {
		line, err := r.out.ReadString('\n')
		switch {
		case line == "won\n":
			if won >= 0 {
				t.Errorf("racers %d and %d both won", won, i)
			}
			won, winnerPID = i, r.cmd.Process.Pid
		case strings.HasPrefix(line, "held "):
			held = append(held, strings.TrimSpace(strings.TrimPrefix(line, "held ")))
		default:
			t.Errorf("racer %d: %q %v", i, line, err)
		}
	}
	if won < 0 || len(held) != 9 {
		t.Fatalf("winner %d, %d held: want exactly one winner and nine refused", won, len(held))
	}
	for _, pid := range held {
		if pid != fmt.Sprint(winnerPID) {
			t.Errorf("a loser was told pid %s holds the session, the winner is %d", pid, winnerPID)
		}
	}
}

func TestStaleGenerationRefused(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	l, j := begin(t, s, "fenced", 3)
	if err := complete(j, "t001", "one"); err != nil {
		t.Fatal(err)
	}
	// Another run owns the session now (its generation is newer), while
	// this run's connection and advisory lock are still up.
	adminExec(t, raw, `UPDATE `+s.cfg.schema+`.sessions SET owner_generation = owner_generation + 1000 WHERE id = 'fenced'`)
	err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t002"})
	if !errors.Is(err, checkpoint.ErrStore) || !errors.Is(err, checkpoint.ErrLost) || !strings.Contains(err.Error(), "taken over by another run") {
		t.Fatalf("a stale-generation write = %v, want it refused as taken over", err)
	}
	noPassword(t, raw, err.Error())
	// It never writes again, not even on Close.
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t003"}); !errors.Is(err, checkpoint.ErrLost) {
		t.Errorf("a second write after the takeover = %v", err)
	}
	if err := j.Close(); !errors.Is(err, checkpoint.ErrLost) {
		t.Errorf("Close after the takeover = %v, want checkpoint.ErrLost", err)
	}
	var last int64
	if err := s.pool.QueryRow(context.Background(), s.q(`SELECT last_seq FROM {s}.sessions WHERE id = 'fenced'`)).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if last != 2 {
		t.Errorf("last_seq %d after the takeover, want the 2 acknowledged records", last)
	}
	_ = l
}

func TestTerminatedHolderIsTakenOver(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	l, j := begin(t, s, "term", 3)
	if err := complete(j, "t001", "acknowledged"); err != nil {
		t.Fatal(err)
	}
	// The lock dies with its connection: once the backend has ended, a
	// second run takes it over (the wait is a safety net, not a bound: a
	// loaded machine ends a backend late, and no test asserts a time).
	terminate(t, raw, backendPID(t, l))
	l2, err := s.Lock(ctx, "term", time.Minute)
	if err != nil {
		t.Fatalf("taking over a terminated holder: %v", err)
	}
	defer l2.Release()
	err = j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t002"})
	if !errors.Is(err, checkpoint.ErrStore) || !errors.Is(err, checkpoint.ErrLost) {
		t.Fatalf("the terminated holder's next write = %v, want checkpoint.ErrLost", err)
	}
	noPassword(t, raw, err.Error())
	old, err := s.Load(ctx, "term")
	if err != nil {
		t.Fatal(err)
	}
	if tr, _ := old.Task("t001"); tr.Status != checkpoint.StatusCompleted {
		t.Errorf("t001 is %s after the takeover, want the acknowledged completion", tr.Status)
	}
	j2, err := s.Begin(ctx, l2, old)
	if err != nil {
		t.Fatal(err)
	}
	if err := complete(j2, "t002", "by the new run"); err != nil {
		t.Fatal(err)
	}
	// The old run stays refused once the new one writes.
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t003"}); !errors.Is(err, checkpoint.ErrLost) {
		t.Errorf("the old run's write after the takeover = %v", err)
	}
}

func TestHeartbeatKeepsLockWithinLease(t *testing.T) {
	if testing.Short() {
		t.Skip("waits two leases")
	}
	raw := testStoreURL(t, "lease", "3s")
	s := openStore(t, raw)
	_, j := begin(t, s, "idle", 2)
	// Silent for twice the lease: the heartbeat keeps the connection,
	// which the server's idle_session_timeout would otherwise drop.
	time.Sleep(2 * s.Lease())
	if err := complete(j, "t001", "after a pause"); err != nil {
		t.Fatalf("a write after a silent pause: %v", err)
	}
}

func TestRestartImmediateKeepsAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	raw, ctl := ownCluster(t)
	s := openStore(t, raw)
	ctx := context.Background()
	const n = 400
	_, j := begin(t, s, "restart", n)
	var mu sync.Mutex
	var acked []string
	failed := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		for i := 1; i <= n; i++ {
			name := fmt.Sprintf("t%03d", i)
			if err := complete(j, name, "r"+name); err != nil {
				failed <- err
				return
			}
			mu.Lock()
			acked = append(acked, name)
			if len(acked) == 20 {
				close(started)
			}
			mu.Unlock()
		}
		failed <- nil
	}()
	<-started
	shell(t, ctl+" restart -m immediate -w -t 60")
	err := <-failed
	if err == nil {
		t.Skip("every record landed before the restart: nothing was interrupted")
	}
	if !errors.Is(err, checkpoint.ErrStore) || !checkpoint.Retryable(err) || strings.Contains(err.Error(), "EOF") {
		t.Fatalf("the write the restart cut = %v, want a store error saying what to do", err)
	}
	noPassword(t, raw, err.Error())
	s2 := openStore(t, raw)
	got, err := s2.Load(ctx, "restart")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range acked {
		if tr, _ := got.Task(name); tr.Status != checkpoint.StatusCompleted || tr.Result != "r"+name {
			t.Fatalf("acknowledged %s is %s after the crash", name, tr.Status)
		}
	}
	t.Logf("%d of %d tasks acknowledged before the restart; all survived", len(acked), n)
	// The session can be taken and continued at once.
	l2, err := s2.Lock(ctx, "restart", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if _, err := s2.Begin(ctx, l2, got); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	raw := serverURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wrong := strings.Replace(raw, "teamrun:", "teamrun:wrong", 1)
	if wrong == raw {
		t.Fatalf("cannot build a wrong password from %s", redactRaw(raw))
	}
	newer := testStoreURL(t)
	s := openStore(t, newer)
	if err := s.ready(ctx); err != nil {
		t.Fatal(err)
	}
	adminExec(t, newer, `UPDATE `+s.cfg.schema+`.schema_version SET version = 99`)
	noDB, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	noDB.Path = "/" + randomName("nodb_")
	firstDown, err := url.Parse(wrong)
	if err != nil {
		t.Fatal(err)
	}
	server := firstDown.Host
	firstDown.Host = "127.0.0.1:1," + server
	tests := []struct {
		name, url string
		want      []string
	}{
		// pgx's own text was a line per attempt of Go's dialer ("dial
		// error: dial tcp 127.0.0.1:1: connect: connection refused").
		{"unreachable", "postgres://teamrun:hunter2x@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5",
			[]string{"postgres://teamrun@127.0.0.1:1/postgres", ": cannot reach 127.0.0.1:1 (user teamrun, database postgres): connection refused; check that the server is running and reachable"}},
		// A Unix socket is named by its path, as psql names it.
		{"no socket there", "postgres://teamrun:hunter2x@%2Fnonexistent-teamrun:1/postgres",
			[]string{": cannot reach /nonexistent-teamrun/.s.PGSQL.1 (user teamrun, database postgres): no such file or directory"}},
		// Each host tried is named, not the first alone; one that
		// answered is named as the one that did.
		{"every host down", "postgres://teamrun:hunter2x@127.0.0.1:1,127.0.0.1:2/postgres?sslmode=disable&connect_timeout=5",
			[]string{": cannot reach 127.0.0.1:1 or 127.0.0.1:2 (user teamrun, database postgres): connection refused; check that the server is running and reachable"}},
		{"one host down, the other refuses", firstDown.String(),
			[]string{": cannot reach 127.0.0.1:1 (user teamrun, database postgres): connection refused; the server at " + server + " refused user teamrun, database postgres: password authentication failed"}},
		// pgx's own was "ValidateConnect failed: read only connection",
		// with the advice to check that the server is running.
		{"read-write asked of a read-only server", withParams(t, raw, "target_session_attrs", "read-write", "options", "-cdefault_transaction_read_only=on"),
			[]string{"connect: the server at ", " (user teamrun, database postgres) is read-only (a standby, or default_transaction_read_only), and the store URL's target_session_attrs asks for one that takes writes; point the store at a writable primary"}},
		// pgx's own text was "failed to connect to `user=… database=…`: …
		// failed SASL auth: FATAL: …".
		{"bad password", wrong, []string{"connect: the server at ", "refused user teamrun, database ", ": password authentication failed for user \"teamrun\" (SQLSTATE 28P01); check the user and password"}},
		{"no such database", noDB.String(), []string{"does not exist", "create that database, or name another in the URL"}},
		// A statement_timeout (here from the URL's options, as from ALTER
		// ROLE … SET) cancels the schema's setup (at the first write): said so, not "check the
		// server's log, then rerun with --continue".
		// The server says "due to statement timeout", or, when its 1 ms
		// timer fired between two of the setup's statements, "due to user
		// request" (its race, not ours): both are SQLSTATE 57014.
		{"statement timeout", withParams(t, testStoreURL(t), "options", "-cstatement_timeout=1"),
			[]string{"SQLSTATE 57014", "raise or unset statement_timeout for the user teamrun connects as"}},
		{"newer schema", newer, []string{"version 99, newer than this teamrun knows (" + strconv.Itoa(SchemaVersion) + ")", "upgrade teamrun"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(ctx, tt.url)
			if err == nil {
				// The schema is made by the first write.
				var l checkpoint.Lock
				if l, err = s.Lock(ctx, "s1", 0); err == nil {
					l.Release()
				}
				s.Close()
			}
			if err == nil {
				t.Fatal("Open and a first write succeeded")
			}
			if !errors.Is(err, checkpoint.ErrStore) {
				t.Errorf("%v does not wrap checkpoint.ErrStore", err)
			}
			if again := tt.name != "newer schema"; checkpoint.Retryable(err) != again {
				t.Errorf("Retryable(%v) = %v: the command is run again after the fix", err, !again)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\ndoes not say %q", err, w)
				}
			}
			for _, bad := range []string{"--continue", "dial", "\n", "failed to connect", "SASL", "FATAL", "ValidateConnect", "read only connection"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("%v\nsays %q", err, bad)
				}
			}
			noPassword(t, tt.url, err.Error())
			noPassword(t, raw, err.Error())
		})
	}
}

// Runs that start at once on a fresh schema make it once: the first
// write of each (a lock) makes it, under an advisory lock.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	raw := testStoreURL(t)
	ctx := context.Background()
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			s, err := Open(ctx, raw)
			if err == nil {
				var l checkpoint.Lock
				if l, err = s.Lock(ctx, fmt.Sprintf("s%d", i), 0); err == nil {
					l.Release()
				}
				s.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("Open racing on a fresh schema: %v", err)
		}
	}
	s := openStore(t, raw)
	var n, v int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*), max(version) FROM {s}.schema_version`)).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != 1 || v != SchemaVersion {
		t.Errorf("schema_version has %d rows, version %d; want one row at %d", n, v, SchemaVersion)
	}
}

func TestRecordDegradesLikeTheFileStore(t *testing.T) {
	s := openStore(t, testStoreURL(t))
	_, j := begin(t, s, "values", 2)
	vars := map[string]any{"marker": map[string]any{"$base64": "aGk="}, "big": int64(1) << 60}
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t001", Result: "\xff\xfe", Variables: vars}); err != nil {
		t.Fatal(err)
	}
	vars["big"] = "changed by the caller afterwards"
	if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: "t002", Variables: map[string]any{"nan": math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	if w := j.Warnings(); len(w) != 1 || !strings.Contains(w[0], `task "t002": its variables cannot be stored as JSON`) {
		t.Errorf("warnings %q, want one about t002's variables", w)
	}
	got, err := s.Load(context.Background(), "values")
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := got.Task("t001")
	m, ok := tr.Variables["marker"].(map[string]any)
	if tr.Result != "\xff\xfe" || !ok || m["$base64"] != "aGk=" || tr.Variables["big"] != int64(1)<<60 {
		t.Errorf("read back %q %#v", tr.Result, tr.Variables)
	}
	if t2, _ := got.Task("t002"); len(t2.Variables) != 0 || t2.Variables == nil {
		t.Errorf("t002's variables %#v, want {}", t2.Variables)
	}
	if v, _ := j.Task("t001"); v.Variables["big"] != int64(1)<<60 {
		t.Errorf("the journal's view follows the caller's map: %#v", v.Variables)
	}
}

// TestOwnSchemaWithoutCreateOnDatabase: a user given a schema of its own,
// and no CREATE on the database, can use it; another schema is refused
// with what to grant.
func TestOwnSchemaWithoutCreateOnDatabase(t *testing.T) {
	raw := serverURL(t)
	role := randomName("r_")
	schema := randomName("t_")
	adminExec(t, raw, `CREATE ROLE `+role+` LOGIN PASSWORD 'pw-`+role+`'`)
	t.Cleanup(func() {
		dropSchema(t, raw, schema)
		adminExec(t, raw, `DROP ROLE IF EXISTS `+role)
	})
	adminExec(t, raw, `CREATE SCHEMA `+schema+` AUTHORIZATION `+role)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "pw-"+role)
	as := u.String()
	s := openStore(t, withParams(t, as, "schema", schema))
	l, j := begin(t, s, "mine", 1)
	if err := complete(j, "t001", "ok"); err != nil {
		t.Fatal(err)
	}
	l.Release()
	// Found at the first write: opening it, and reading it, make nothing.
	other := openStore(t, withParams(t, as, "schema", randomName("t_")))
	if list, err := other.List(context.Background()); err != nil || len(list) != 0 {
		t.Errorf("a schema that is not there lists %v, %v; want nothing", list, err)
	}
	_, err = other.Lock(context.Background(), "s1", 0)
	if !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), "42501") || !strings.Contains(err.Error(), "CREATE on the database, or create the schema for it") {
		t.Errorf("a schema the user may not create: %v", err)
	}
}

// TestBatchIsOneTransaction: RecordAll on pgstore commits a batch in one
// transaction (one COMMIT per task in a sequential run), keeps tasks_done
// exact through records of one task in one batch, and a stale generation
// refuses a batch whole.
func TestBatchIsOneTransaction(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	_, j := begin(t, s, "batch", 3)
	if _, ok := j.(checkpoint.BatchJournal); !ok {
		t.Fatal("the pgstore journal is not a checkpoint.BatchJournal")
	}
	steps := []struct {
		recs []checkpoint.Record
		done int
	}{
		{[]checkpoint.Record{{Kind: checkpoint.TaskStarted, Task: "t001"}}, 0},
		{[]checkpoint.Record{{Kind: checkpoint.TaskCompleted, Task: "t001", Result: "one"}, {Kind: checkpoint.TaskStarted, Task: "t002"}}, 1},
		// Completed then started again in one batch: no longer completed.
		{[]checkpoint.Record{{Kind: checkpoint.TaskCompleted, Task: "t002", Result: "two"}, {Kind: checkpoint.TaskStarted, Task: "t002"}, {Kind: checkpoint.TaskStarted, Task: "t003"}}, 1},
		{[]checkpoint.Record{{Kind: checkpoint.TaskCompleted, Task: "t002", Result: "two"}, {Kind: checkpoint.TaskCompleted, Task: "t003", Result: "three"}}, 3},
	}
	seq := 0
	for i, st := range steps {
		if err := checkpoint.RecordAll(j, st.recs...); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var txs, rows, done int
		if err := s.pool.QueryRow(ctx, s.q(`SELECT count(DISTINCT xmin::text), count(*),
				(SELECT tasks_done FROM {s}.sessions WHERE id = 'batch')
			FROM {s}.transitions WHERE session_id = 'batch' AND seq > $1`), seq).Scan(&txs, &rows, &done); err != nil {
			t.Fatal(err)
		}
		if txs != 1 || rows != len(st.recs) {
			t.Errorf("step %d: %d records in %d transactions, want %d in one", i, rows, txs, len(st.recs))
		}
		if done != st.done {
			t.Errorf("step %d: tasks_done %d, want %d", i, done, st.done)
		}
		seq += len(st.recs)
	}
	sess, err := s.Load(ctx, "batch")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Summary.Done != 3 {
		t.Errorf("loaded %d done, want 3", sess.Summary.Done)
	}
	adminExec(t, raw, `UPDATE `+s.cfg.schema+`.sessions SET owner_generation = owner_generation + 1000 WHERE id = 'batch'`)
	err = checkpoint.RecordAll(j, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t001"}, checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t002"})
	if !errors.Is(err, checkpoint.ErrLost) {
		t.Fatalf("a batch of a stale generation = %v, want checkpoint.ErrLost", err)
	}
	var n int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.transitions WHERE session_id = 'batch'`)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != seq {
		t.Errorf("%d transitions after a refused batch, want the %d acknowledged", n, seq)
	}
}

// TestGroupCommit: batches of concurrent callers that arrive while a write
// is in flight share the next statement, one COMMIT for all of them, and
// none returns before its records are committed.
func TestGroupCommit(t *testing.T) {
	const n = 8
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	_, j := begin(t, s, "group", n)
	hold := make(chan struct{})
	var writes atomic.Int32
	s.beforeWrite = func() {
		if writes.Add(1) == 1 {
			<-hold // the first write stays in flight until the rest queued
		}
	}
	pj := j.(*Journal)
	errs := make(chan error, n)
	record := func(i int) {
		errs <- checkpoint.RecordAll(j, checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: fmt.Sprintf("t%03d", i+1), Result: "ok"})
	}
	go record(0)
	for writes.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	for i := 1; i < n; i++ {
		go record(i)
	}
	for queued := 0; queued < n-1; {
		time.Sleep(time.Millisecond)
		pj.Mu.Lock()
		queued = pj.commit.Queued()
		pj.Mu.Unlock()
	}
	select {
	case err := <-errs:
		t.Fatalf("a record returned while the first write was held: %v", err)
	default:
	}
	close(hold)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var txs, rows, done int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(DISTINCT xmin::text), count(*),
			(SELECT tasks_done FROM {s}.sessions WHERE id = 'group')
		FROM {s}.transitions WHERE session_id = 'group'`)).Scan(&txs, &rows, &done); err != nil {
		t.Fatal(err)
	}
	if txs != 2 || rows != n || done != n || writes.Load() != 2 {
		t.Errorf("%d records in %d transactions (%d writes), %d done: want %d in 2, all done", rows, txs, writes.Load(), done, n)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Load(ctx, "group")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Summary.Done != n {
		t.Errorf("loaded %d done, want %d", sess.Summary.Done, n)
	}
}

// TestSnapshotCompressedWithLZ4: the run's writes compress the snapshot
// with lz4 where the server has it (pglz, the default, made compaction
// the larger part of a run's write cost).
func TestSnapshotCompressedWithLZ4(t *testing.T) {
	raw := testStoreURL(t)
	ctx := context.Background()
	c, err := admin(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `SET default_toast_compression = lz4`); err != nil {
		t.Skipf("this server has no lz4: %v", err)
	}
	s := openStore(t, raw)
	_, j := begin(t, s, "lz4", 50)
	for i := 1; i <= 50; i++ {
		if err := complete(j, fmt.Sprintf("t%03d", i), strings.Repeat("a result worth compressing ", 20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	var method *string
	if err := s.pool.QueryRow(ctx, s.q(`SELECT pg_column_compression(snapshot) FROM {s}.sessions WHERE id = 'lz4'`)).Scan(&method); err != nil {
		t.Fatal(err)
	}
	if method == nil || *method != "lz4" {
		t.Errorf("the snapshot's compression is %v, want lz4", method)
	}
}

// A holder whose server stops answering (its backend stopped, as in a
// network partition) does not wait on it for good: the write fails within
// half the lease, and the lock is lost, before another run could take the
// session over while this one's tasks still run.
func TestFrozenServerLosesLock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits half a lease")
	}
	raw := testStoreURL(t, "lease", "3s")
	s := openStore(t, raw)
	l, j := begin(t, s, "frozen", 3)
	pid := int(backendPID(t, l))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Skipf("cannot stop the server's backend %d (a server elsewhere, or another user's): %v", pid, err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	err := j.Record(checkpoint.Record{Kind: checkpoint.TaskStarted, Task: "t001"}) // before the fix: blocked here
	if !errors.Is(err, checkpoint.ErrLost) || !errors.Is(err, checkpoint.ErrStore) {
		t.Fatalf("a write to a server that does not answer = %v, want checkpoint.ErrLost", err)
	}
	noPassword(t, raw, err.Error())
	select {
	case <-l.Lost():
	default:
		t.Error("the lock is not lost")
	}
}

// A run waiting for a session's lock (--wait) outlives a server restart:
// it waits on with a new connection, and takes the lock the holder lost
// with its own connection. It used to fail with the restart (exit 5).
func TestWaiterOutlivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	raw, ctl := ownCluster(t)
	holder, waiter := openStore(t, raw), openStore(t, raw)
	ctx := context.Background()
	begin(t, holder, "waited", 2)
	got := make(chan error, 1)
	go func() {
		got <- func() error {
			l2, err := waiter.Lock(ctx, "waited", 2*time.Minute)
			if err != nil {
				return err
			}
			defer l2.Release()
			// The lock is the waiter's: the restart took the holder's.
			old, err := waiter.Load(ctx, "waited")
			if err != nil {
				return err
			}
			j, err := waiter.Begin(ctx, l2, old)
			if err != nil {
				return err
			}
			return complete(j, "t001", "by the waiter")
		}()
	}()
	// Let the waiter start polling; if it has not yet, it dials after the
	// restart instead, and the test still holds.
	time.Sleep(500 * time.Millisecond)
	shell(t, ctl+" restart -m immediate -w -t 60")
	if err := <-got; err != nil {
		t.Fatalf("the waiter after the restart: %v", err)
	}
}

// A number pgx reads from a PG* variable, which the URL's own parameter
// overrides, says what was wrong without Go's number parser's words.
// The location is the store's identity: a run finds the processes and the
// scratch folder an earlier run of the session left on this machine by it
// (TEAMRUN_STORE, checkpoint.LocalScratch). Every spelling of one store is
// one location, and another schema, database, user or host is another.
func TestLocationIsOneSpelling(t *testing.T) {
	for _, k := range []string{"PGHOST", "PGPORT", "PGDATABASE", "PGUSER"} {
		t.Setenv(k, "")
	}
	const want = "postgres://teamrun@db:5432/app?schema=s1&sslmode=disable"
	tests := []struct {
		name, raw, pguser string
		same              bool
	}{
		{name: "itself", raw: want, same: true},
		{name: "postgresql scheme", raw: "postgresql://teamrun:pw@db:5432/app?sslmode=disable&schema=s1", same: true},
		{name: "user as a parameter", raw: "postgres://db:5432/app?user=teamrun&password=pw&sslmode=disable&schema=s1", same: true},
		{name: "user from PGUSER", raw: "postgres://db:5432/app?sslmode=disable&schema=s1", pguser: "teamrun", same: true},
		{name: "default port, parameters reordered", raw: "postgres://teamrun@db/app?schema=s1&sslmode=disable", same: true},
		{name: "database as a parameter", raw: "postgres://teamrun@db:5432?dbname=app&sslmode=disable&schema=s1", same: true},
		{name: "lease", raw: want + "&lease=40s", same: true},
		{name: "another schema", raw: "postgres://teamrun@db:5432/app?schema=s2&sslmode=disable"},
		{name: "another database", raw: "postgres://teamrun@db:5432/other?schema=s1&sslmode=disable"},
		{name: "another user", raw: "postgres://other@db:5432/app?schema=s1&sslmode=disable"},
		{name: "another port", raw: "postgres://teamrun@db:5433/app?schema=s1&sslmode=disable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PGUSER", tt.pguser)
			c, err := parseURL(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if (c.location == want) != tt.same {
				t.Errorf("%s is at %s; the same store as %s: %v", tt.raw, c.location, want, tt.same)
			}
			if strings.Contains(c.location, "pw") {
				t.Errorf("the location %s shows the password", c.location)
			}
		})
	}
}

func TestParseURLNumberFromEnvironment(t *testing.T) {
	for _, tc := range []struct{ name, env, raw, wantErr string }{
		{"bad variable", "soon", "postgres://u:secret@db/app", `invalid connect_timeout: "soon" is not a whole number`},
		{"the URL's parameter wins", "soon", "postgres://u:secret@db/app?connect_timeout=5", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGCONNECT_TIMEOUT", tc.env)
			_, err := parseURL(tc.raw)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr == "":
			case err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, checkpoint.ErrBadLocation):
				t.Fatalf("err = %v, want one containing %q (exit 2)", err, tc.wantErr)
			case strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "secret"):
				t.Errorf("the message shows Go's number parser or the password: %v", err)
			}
		})
	}
}

// PGTARGETSESSIONATTRS asks for a read-only server as the URL's parameter
// does, unless the URL says otherwise.
func TestParseURLTargetFromEnvironment(t *testing.T) {
	for _, tc := range []struct{ name, env, raw, wantErr string }{
		{"read-only", "read-only", "postgres://u:secret@db/app", `PGTARGETSESSIONATTRS="read-only" (in the environment) asks for a server that takes no writes`},
		{"standby", "standby", "postgres://u:secret@db/app", `PGTARGETSESSIONATTRS="standby" (in the environment)`},
		{"the URL's parameter wins", "read-only", "postgres://u:secret@db/app?target_session_attrs=any", ""},
		{"primary", "primary", "postgres://u:secret@db/app", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGTARGETSESSIONATTRS", tc.env)
			_, err := parseURL(tc.raw)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr == "":
			case err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, checkpoint.ErrBadLocation):
				t.Fatalf("err = %v, want one containing %q (exit 2)", err, tc.wantErr)
			}
		})
	}
}

// PG* variables the store URL overrides do not matter, whatever they hold:
// the pool took its settings from the variables alone and failed on a
// PGPORT that is no number (exit 5) though the URL names the port.
func TestOpenOverriddenVariables(t *testing.T) {
	raw := testStoreURL(t, "connect_timeout", "5")
	t.Setenv("PGPORT", "x")
	t.Setenv("PGCONNECT_TIMEOUT", "x")
	s, err := Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// A server that stops answering (a frozen or partitioned node) holds
// neither the lock, nor the writes a run makes at its end, nor the store's
// Close: each gives up within its share of the lease, so the process ends
// and a CronJob's next run can start. The server is frozen for real
// (SIGSTOP of every process of the cluster). The minute below only tells
// a hang from an answer; the lease is 3 s.
func TestSilentServerDoesNotHoldTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	raw, ctl := ownCluster(t)
	m := regexp.MustCompile(`-D (\S+)`).FindStringSubmatch(ctl)
	if m == nil {
		t.Fatalf("no data folder in %q", ctl)
	}
	pidFile, err := os.ReadFile(filepath.Join(m[1], "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pm := strings.SplitN(string(pidFile), "\n", 2)[0]
	s := openStore(t, withParams(t, raw, "lease", "3s"))
	l, j := begin(t, s, "frozen", 2)
	if err := complete(j, "t001", "before"); err != nil {
		t.Fatal(err)
	}
	proj := s.Project(t.TempDir())
	if err := proj.Audit(context.Background(), checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: "frozen"}); err != nil {
		t.Fatal(err) // a connection in the pool, as a run has one
	}
	shell(t, "kill -STOP "+pm+" $(pgrep -P "+pm+")")
	t.Cleanup(func() { _ = exec.Command("sh", "-c", "kill -CONT "+pm+" $(pgrep -P "+pm+")").Run() })

	done := make(chan error, 1)
	go func() {
		done <- func() error {
			if err := complete(j, "t002", "after"); err == nil {
				return errors.New("a write to a frozen server succeeded")
			}
			if l.LostErr() == nil {
				return errors.New("the lock is not lost")
			}
			if err := proj.Audit(context.Background(), checkpoint.AuditRecord{Event: checkpoint.EventFailed, Session: "frozen"}); err == nil {
				return errors.New("the audit of a frozen server succeeded")
			}
			return s.Close()
		}()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("still waiting on the frozen server a minute later (lease 3s)")
	}
}

// A transition row changed after it was written fails its checksum, as a
// damaged journal line does in the file store: the session is corrupt
// (exit 5), never restored with a result no run produced.
func TestTransitionChecksum(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	_, j := begin(t, s, "summed", 2)
	if err := complete(j, "t001", "as recorded"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := openStore(t, raw).Load(ctx, "summed"); err != nil {
		t.Fatalf("before the change: %v", err)
	}
	adminExec(t, raw, `UPDATE `+s.cfg.schema+`.transitions SET record = convert_to(replace(convert_from(record, 'UTF8'), 'as recorded', 'as changed!'), 'UTF8') WHERE session_id = 'summed'`)
	_, err := openStore(t, raw).Load(ctx, "summed")
	var ce *checkpoint.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "fails its checksum") {
		t.Fatalf("a changed transition loads with %v; want a corrupt session that fails its checksum", err)
	}
}

// The transitions after a snapshot are each there, up to the session's
// last_seq, each with its checksum: a row removed (a completed task
// forgotten, to be run and paid for again), added, or whose checksum was
// set to NULL makes the session corrupt (exit 5), naming the transition,
// in Load and in List alike.
func TestTransitionsTampered(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	sch := s.cfg.schema
	where := func(seq int) string {
		return fmt.Sprintf("transition %d in %s (%s.transitions) is corrupt: ", seq, s.cfg.location, sch)
	}
	for _, tt := range []struct {
		name, sql, want string
	}{
		{"a middle row removed", `DELETE FROM {s}.transitions WHERE session_id = $1 AND seq = 4`,
			where(4) + "it is missing (the session's transitions run to 6, last_seq in " + sch + ".sessions): a transition a run acknowledged was removed"},
		{"the last row removed", `DELETE FROM {s}.transitions WHERE session_id = $1 AND seq = 6`,
			where(6) + "it is missing (the session's transitions run to 6"},
		{"the first rows removed", `DELETE FROM {s}.transitions WHERE session_id = $1 AND seq <= 3`,
			where(1) + "it is missing, and so are the 2 after it"},
		// The file store's journal removed whole: the sessions row still
		// says how many there are.
		{"every row removed", `DELETE FROM {s}.transitions WHERE session_id = $1`,
			where(1) + "it is missing, and so are the 5 after it (the session's transitions run to 6"},
		{"a row past the last", `INSERT INTO {s}.transitions (session_id, seq, owner_generation, record, checksum)
			SELECT session_id, 7, owner_generation, record, checksum FROM {s}.transitions WHERE session_id = $1 AND seq = 6`,
			where(7) + "it is past the session's last transition (6, last_seq in " + sch + ".sessions): no run wrote it"},
		{"a checksum set to NULL", `UPDATE {s}.transitions SET checksum = NULL,
			record = convert_to(replace(convert_from(record, 'UTF8'), 'result b', 'FAKE!'), 'UTF8') WHERE session_id = $1 AND seq = 4`,
			where(4) + "the record has no checksum, which every transition written since schema 4 has (it was changed after it was written)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := "tampered-" + strings.ReplaceAll(tt.name, " ", "-")
			_, j := begin(t, s, id, 3)
			for _, task := range []string{"a", "b", "c"} {
				if err := complete(j, task, "result "+task); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Load(ctx, id); err != nil {
				t.Fatalf("before the change: %v", err)
			}
			if tag, err := s.pool.Exec(ctx, s.q(tt.sql), id); err != nil || tag.RowsAffected() == 0 {
				t.Fatalf("%s: %v (%d rows)", tt.sql, err, tag.RowsAffected())
			}
			_, err := s.Load(ctx, id)
			var ce *checkpoint.CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "session "+id+": "+tt.want) {
				t.Fatalf("Load = %v; want a corrupt session: %q", err, tt.want)
			}
			e, err := s.Head(ctx, id)
			if err != nil || !errors.As(e.Err, &ce) {
				t.Errorf("Head = Err %v, %v; want the corrupt session's error", e.Err, err)
			}
			list, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range list {
				if e.ID == id && !errors.As(e.Err, &ce) {
					t.Errorf("List: %s with Err %v (%d/%d done); want it corrupt", id, e.Err, e.Done, e.Total)
				}
			}
		})
	}
}

// A snapshot changed in its row is corrupt, said of the row it is in, not
// of a file.
func TestSnapshotChangedSaysRow(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	_, j := begin(t, s, "snap", 2)
	if err := complete(j, "t001", "as recorded"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	adminExec(t, raw, `UPDATE `+s.cfg.schema+`.sessions SET snapshot = convert_to(replace(convert_from(snapshot, 'UTF8'), 'as recorded', 'as changed!'), 'UTF8') WHERE id = 'snap'`)
	_, err := s.Load(context.Background(), "snap")
	want := "session snap: " + s.where("snap") + " is corrupt: its checksum does not match its content"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "file") {
		t.Fatalf("Load = %v; want %q, and no file named", err, want)
	}
}

// Rows written before schema 4 have no checksum, and stay readable after
// the migration to schema 7 records the last of them per session; a row
// of another session whose checksum is set to NULL since is corrupt.
func TestMigrateUncheckedTransitions(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	for _, id := range []string{"old", "new"} {
		_, j := begin(t, s, id, 2)
		if err := complete(j, "t001", "as recorded"); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// "old" as a teamrun before schema 4 wrote it; the schema as schema 6
	// left it.
	adminExec(t, raw, fmt.Sprintf(`UPDATE %[1]s.transitions SET checksum = NULL WHERE session_id = 'old';
		ALTER TABLE %[1]s.sessions DROP COLUMN unchecked_seq; UPDATE %[1]s.schema_version SET version = 6`, s.cfg.schema))
	s = openStore(t, raw)
	if sess, err := s.Load(ctx, "old"); err != nil || sess.Summary.Done != 1 {
		t.Fatalf("the unchecked rows of before schema 4: %v", err)
	}
	if _, err := s.Load(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	adminExec(t, raw, fmt.Sprintf(`UPDATE %[1]s.transitions SET checksum = NULL WHERE session_id = 'new' AND seq = 2`, s.cfg.schema))
	var ce *checkpoint.CorruptError
	if _, err := s.Load(ctx, "new"); !errors.As(err, &ce) || !strings.Contains(err.Error(), "transition 2 in ") || !strings.Contains(err.Error(), "has no checksum") {
		t.Fatalf("a checksum set to NULL after the migration: %v; want the session corrupt", err)
	}
}

// A session delete whose lock connection is terminated
// (pg_terminate_backend) while it deletes fails with exit 5 saying that
// whether it was done is unknown, Retryable (the CLI appends how to delete
// again: pgstore_unfinished.txtar), not a run's advice (--continue), and
// without the password; deleting again finishes it, leaving nothing of
// the session.
func TestDeleteTerminated(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	l, j := begin(t, s, "del", 2)
	if err := complete(j, "t001", "done"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	l.Release()
	s.beforeWrite = func() {
		s.beforeWrite = nil
		terminate(t, raw, holderBackend(t, s, "del"))
	}
	err := s.Delete(ctx, "del")
	if !errors.Is(err, checkpoint.ErrStore) {
		t.Fatalf("Delete with its connection terminated = %v, want a store error", err)
	}
	msg := err.Error()
	noPassword(t, raw, msg)
	if strings.Contains(msg, "--continue") || !strings.Contains(msg, "delete session del: ") ||
		!strings.Contains(msg, "whether it was done is unknown: wait until the server answers again") || !checkpoint.Retryable(err) {
		t.Errorf("Delete with its connection terminated says %q (Retryable %v); want it unfinished, to do again", msg, checkpoint.Retryable(err))
	}
	if err := s.Delete(ctx, "del"); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("deleting again: %v", err)
	}
	if ok, err := s.Exists(ctx, "del"); ok || err != nil {
		t.Errorf("Exists after deleting again = %v, %v", ok, err)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.holders WHERE session_id = 'del'`)).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("holders rows left: %d, %v", rows, err)
	}
}

// The server restarts while a run holds a new session's lock and has not
// written the session yet: the run's lock is gone and its write of the
// session is refused (it never believes it holds the session beside
// another run that takes it), and its holders row, which its release can
// no longer delete, is a lock with no session: prune removes it.
func TestRestartBeforeWriteLeavesPrunableLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	raw, ctl := ownCluster(t)
	s := openStore(t, raw)
	ctx := context.Background()
	cl, err := s.Lock(ctx, "starting", 0)
	if err != nil {
		t.Fatal(err)
	}
	shell(t, ctl+" restart -m immediate -w -t 60")
	if _, err := s.Begin(ctx, cl, newSession("starting", 1)); !errors.Is(err, checkpoint.ErrLost) {
		t.Fatalf("Begin after the restart = %v, want checkpoint.ErrLost", err)
	}
	cl.Release()
	s2 := openStore(t, raw)
	orphans, err := s2.OrphanLocks(ctx)
	if err != nil || len(orphans) != 1 || orphans[0].ID != "starting" {
		t.Fatalf("OrphanLocks after the restart = %+v, %v", orphans, err)
	}
	p := s2.Project(t.TempDir())
	stale, _, err := checkpoint.Prune(ctx, s2, p, checkpoint.PruneOptions{Before: time.Now().Add(time.Hour)})
	if err != nil || len(stale) != 1 || !stale[0].Lock || !stale[0].Removed {
		t.Fatalf("prune after the restart: %+v, %v", stale, err)
	}
	if orphans, err := s2.OrphanLocks(ctx); len(orphans) != 0 || err != nil {
		t.Errorf("OrphanLocks after prune = %+v, %v", orphans, err)
	}
	// The old run stays refused; a new one takes the id.
	if _, err := s.Begin(ctx, cl, newSession("starting", 1)); err == nil {
		t.Error("the released lock of the restart's run began the session")
	}
	l2, err := s2.Lock(ctx, "starting", 0)
	if err != nil {
		t.Fatalf("Lock after prune: %v", err)
	}
	l2.Release()
}

// A session prune whose lock connection is terminated (pg_terminate_backend)
// while it removes an old session, or a lock with no session, fails with
// a store error that says to run prune again — not a run's advice
// (--continue), not delete's — and without the password; pruning again
// finishes it, leaving nothing behind.
func TestPruneTerminated(t *testing.T) {
	for _, what := range []string{"session", "orphan lock"} {
		t.Run(what, func(t *testing.T) {
			raw := testStoreURL(t)
			s := openStore(t, raw)
			ctx := context.Background()
			if what == "session" {
				l, j := begin(t, s, "old", 1)
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
				l.Release()
			} else {
				// A run's lock whose connection died before it wrote the
				// session: its holders row stays.
				cl, err := s.Lock(ctx, "old", 0)
				if err != nil {
					t.Fatal(err)
				}
				l := cl.(*Lock)
				terminate(t, raw, backendPID(t, l))
				select {
				case <-l.Lost():
				case <-time.After(time.Minute):
					t.Fatal("the terminated lock was never lost")
				}
				l.Release()
			}
			s.beforeWrite = func() {
				s.beforeWrite = nil
				terminate(t, raw, holderBackend(t, s, "old"))
			}
			p := s.Project(t.TempDir())
			opts := checkpoint.PruneOptions{Before: time.Now().Add(time.Hour)}
			_, _, err := checkpoint.Prune(ctx, s, p, opts)
			if !errors.Is(err, checkpoint.ErrStore) {
				t.Fatalf("Prune with its connection terminated = %v, want a store error", err)
			}
			msg := err.Error()
			noPassword(t, raw, msg)
			// How to prune again is the command's to say (the CLI appends
			// it when Retryable): not a run's advice, not delete's, not the
			// clean-up's of a Discard, though prune removes locks by one.
			if strings.Contains(msg, "--continue") || strings.Contains(msg, "session delete") || strings.Contains(msg, "session prune") ||
				!strings.Contains(msg, "whether it was done is unknown") || !checkpoint.Retryable(err) {
				t.Errorf("Prune with its connection terminated says %q (Retryable %v); want it unfinished, to do again", msg, checkpoint.Retryable(err))
			}
			if _, _, err := checkpoint.Prune(ctx, s, p, opts); err != nil {
				t.Fatalf("pruning again: %v", err)
			}
			var rows int
			if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.holders) + (SELECT count(*) FROM {s}.sessions)`)).Scan(&rows); err != nil || rows != 0 {
				t.Errorf("holders and sessions rows left: %d, %v", rows, err)
			}
		})
	}
}

// A Discard (a run's, an import's, of a session it gave up) whose lock
// connection is terminated midway says what may be left and that
// session prune removes it; it is not Retryable: running the command
// again would not remove it. Prune then does.
func TestDiscardTerminated(t *testing.T) {
	raw := testStoreURL(t)
	s := openStore(t, raw)
	ctx := context.Background()
	l, j := begin(t, s, "given-up", 1)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	pid := backendPID(t, l) // not in beforeWrite: Discard holds the lock's mutex then
	s.beforeWrite = func() {
		s.beforeWrite = nil
		terminate(t, raw, pid)
	}
	err := s.Discard(ctx, l)
	var u *checkpoint.UnfinishedError
	if !errors.As(err, &u) || !errors.Is(err, checkpoint.ErrStore) {
		t.Fatalf("Discard with its connection terminated = %v, want an unfinished removal", err)
	}
	msg := err.Error()
	noPassword(t, raw, msg)
	if !strings.Contains(msg, "remove session given-up and its lock: ") || !strings.Contains(msg, "whether it was done is unknown: what is left of it is a session no run uses, or a lock with no session: `teamrun session prune` removes it") ||
		strings.Contains(msg, "--continue") || checkpoint.Retryable(err) {
		t.Errorf("Discard with its connection terminated says %q (Retryable %v); want what is left and that prune removes it, not Retryable", msg, checkpoint.Retryable(err))
	}
	p := s.Project(t.TempDir())
	if _, _, err := checkpoint.Prune(ctx, s, p, checkpoint.PruneOptions{Before: time.Now().Add(time.Hour)}); err != nil {
		t.Fatalf("prune after the cut-off Discard: %v", err)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.holders) + (SELECT count(*) FROM {s}.sessions)`)).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("holders and sessions rows left after prune: %d, %v", rows, err)
	}
}

// A statement the server does not answer in time is said in words, with
// the wait, not as Go's "context deadline exceeded": pgx's own timeout, and
// the pool's bare deadline while it waits for a connection.
func TestSilentServerInWords(t *testing.T) {
	c, err := parseURL("postgres://u@db/app?lease=30s")
	if err != nil {
		t.Fatal(err)
	}
	for _, cause := range []error{context.DeadlineExceeded, fmt.Errorf("acquire connection: %w", context.DeadlineExceeded)} {
		msg := c.fail("keep the stdout of task b, attempt 1, of session s1", cause).Error()
		if !strings.Contains(msg, "keep the stdout of task b, attempt 1, of session s1: the server did not answer within 15s") ||
			strings.Contains(msg, "deadline") {
			t.Errorf("%v: %s", cause, msg)
		}
	}
}

// A read-only server or user (a hot standby, default_transaction_read_only)
// refuses the first write: the message says so and what to do, and not the
// statement teamrun sent.
func TestReadOnlyServerAdvice(t *testing.T) {
	raw := testStoreURL(t)
	if err := openStore(t, raw).ready(context.Background()); err != nil { // the schema, made writable
		t.Fatal(err)
	}
	s := openStore(t, withParams(t, raw, "options", "-cdefault_transaction_read_only=on"))
	_, err := s.Lock(context.Background(), "ro1", 0)
	if err == nil {
		t.Fatal("a read-only server took the lock")
	}
	msg := err.Error()
	for _, w := range []string{"session ro1", "read-only (SQLSTATE 25006)", "point the store at a writable primary"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%s\ndoes not say %q", msg, w)
		}
	}
	if strings.Contains(msg, "nextval") || strings.Contains(msg, "check the server's log") {
		t.Errorf("%s\nnames the statement, or sends to the log", msg)
	}
}

// A parameter the server refuses as the first connection starts is the
// URL's fault: exit 2 with the server's words, not "check the server's
// log, then run again" (exit 5), and nothing is created.
func TestOpenRefusedParameter(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"sslmod", "require", `unrecognized configuration parameter "sslmod"`},
		{"statement_timeout", "soon", `invalid value for parameter "statement_timeout"`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			raw := testStoreURL(t, tc.key, tc.value)
			s, err := Open(context.Background(), raw)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%s=%s) succeeded", tc.key, tc.value)
			}
			if !errors.Is(err, checkpoint.ErrBadLocation) || errors.Is(err, checkpoint.ErrStore) {
				t.Errorf("%v: want checkpoint.ErrBadLocation alone (exit 2)", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "correct or remove it") {
				t.Errorf("err = %v, want the server's %q and what to do", err, tc.want)
			}
			noPassword(t, raw, err.Error())
		})
	}
}

// The server gets the URL's parameters as psql would give them: %20 is a
// space and a + a plus. They were re-encoded, a space as a +, which the
// server read as a plus: "-c+statement_timeout" was refused.
func TestParametersAsWritten(t *testing.T) {
	raw := testStoreURL(t) + "&options=-c%20statement_timeout%3D4321&application_name=nightly%20job+1"
	s := openStore(t, raw)
	var timeout, app string
	err := s.pool.QueryRow(context.Background(), `SELECT current_setting('statement_timeout'), current_setting('application_name')`).Scan(&timeout, &app)
	if err != nil || timeout != "4321ms" || app != "nightly job+1" {
		t.Fatalf("the server has statement_timeout %q, application_name %q (%v); want 4321ms, \"nightly job+1\"", timeout, app, err)
	}
}

// A store whose schema is not there reads as empty and makes nothing:
// plan, session list and show open it, and a mistyped schema= left an
// empty schema of teamrun's tables behind. The first write makes it.
func TestAbsentSchemaReadsEmpty(t *testing.T) {
	raw := testStoreURL(t)
	ctx := context.Background()
	s := openStore(t, raw)
	schemaThere := func() bool {
		t.Helper()
		c, err := admin(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var ok bool
		if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s.Schema()).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	p := s.Project("/specs")
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List = %v, %v; want none", list, err)
	}
	if _, err := s.Load(ctx, "s1"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Load = %v, want ErrNotFound", err)
	}
	if _, err := s.Head(ctx, "s1"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Head = %v, want ErrNotFound", err)
	}
	if ok, err := s.Exists(ctx, "s1"); ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
	if h, err := s.Held(ctx, "s1"); h != nil || err != nil {
		t.Errorf("Held = %v, %v", h, err)
	}
	if o, err := s.OrphanLocks(ctx); len(o) != 0 || err != nil {
		t.Errorf("OrphanLocks = %v, %v", o, err)
	}
	if _, err := s.ReadLog(ctx, "s1", "t", 1, "stdout"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLog = %v, want fs.ErrNotExist", err)
	}
	if _, err := s.OpenBlob(ctx, "s1", checkpoint.Blob{Digest: checkpoint.Digest("x"), Size: 1}); !errors.As(err, new(*checkpoint.CorruptError)) {
		t.Errorf("OpenBlob = %v, want a missing blob", err)
	}
	if m, err := s.ActiveSessions(ctx); len(m) != 0 || err != nil {
		t.Errorf("ActiveSessions = %v, %v", m, err)
	}
	if id, err := p.Active(ctx); id != "" || err != nil {
		t.Errorf("Active = %q, %v", id, err)
	}
	if recs, err := p.AuditRecords(ctx); len(recs) != 0 || err != nil {
		t.Errorf("AuditRecords = %v, %v", recs, err)
	}
	if err := s.Delete(ctx, "s1"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Delete = %v, want ErrNotFound", err)
	}
	if schemaThere() {
		t.Fatalf("reading made schema %s", s.Schema())
	}
	// The first write makes it, and what it wrote reads back.
	if err := p.SetActive(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if id, err := p.Active(ctx); id != "s1" || err != nil {
		t.Errorf("Active after SetActive = %q, %v", id, err)
	}
	if !schemaThere() {
		t.Fatalf("schema %s was not made by the first write", s.Schema())
	}
	// A store opened on it now reads it as it is.
	if id, err := openStore(t, raw).Project("/specs").Active(ctx); id != "s1" || err != nil {
		t.Errorf("Active, opened again = %q, %v", id, err)
	}
}

// A compaction that takes the server longer than half the lease while it
// answers (a large session's snapshot on a busy machine) keeps the lock:
// cut off at half the lease, it lost the lock and stopped the run (exit
// 5, "the server did not answer within 1.5s"). Here the compaction waits
// on a row another transaction holds, past half the lease.
func TestSlowCompactionKeepsTheLock(t *testing.T) {
	raw := testStoreURL(t, "lease", "3s")
	ctx := context.Background()
	s := openStore(t, raw)
	s.minCompact = 1 << 30
	l, j := begin(t, s, "slow", 3)
	if err := complete(j, "t001", "first"); err != nil {
		t.Fatal(err)
	}
	c, err := admin(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, s.q(`SELECT 1 FROM {s}.transitions WHERE session_id = 'slow' FOR UPDATE`)); err != nil {
		t.Fatal(err)
	}
	hold := s.cfg.lease/2 + time.Second
	released := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		released <- tx.Commit(ctx)
	}()
	s.minCompact = 0
	err = complete(j, "t002", strings.Repeat("x", 64<<10))
	if rerr := <-released; rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatalf("a record whose compaction waited %s for a row: %v", hold, err)
	}
	if err := l.LostErr(); err != nil {
		t.Fatalf("the lock was lost: %v", err)
	}
	var snapSeq int64
	if err := s.pool.QueryRow(ctx, s.q(`SELECT snapshot_seq FROM {s}.sessions WHERE id = 'slow'`)).Scan(&snapSeq); err != nil || snapSeq == 0 {
		t.Fatalf("snapshot_seq %d, %v: the compaction did not happen", snapSeq, err)
	}
	if err := complete(j, "t003", "third"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.Done != 3 {
		t.Errorf("%d of 3 tasks done after the slow compaction", got.Summary.Done)
	}
}
