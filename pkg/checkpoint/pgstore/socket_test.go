package pgstore

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// A store URL whose host is the server's Unix socket folder,
// percent-encoded (postgres://u@%2Ftmp%2Fdir:5432/db), connects as psql
// does: it was exit 2, "invalid URL escape".
func TestUnixSocketFolderAsHost(t *testing.T) {
	raw := testStoreURL(t)
	dir := os.Getenv("TEAMRUN_TEST_PG_DIR")
	if dir == "" {
		t.Skip("TEAMRUN_TEST_PG_DIR (.ci/pg.sh start) names no socket folder")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	u.Host = "socket-folder"
	escaped := strings.ReplaceAll(dir, "/", "%2F")
	socket := strings.Replace(u.String(), "socket-folder", escaped+":"+port, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := openStore(t, socket)
	if got := s.cfg.conn.Host; got != dir {
		t.Errorf("connects to host %q, want the socket folder %q", got, dir)
	}
	l, err := s.Lock(ctx, "sock", 0) // a write: the schema is made
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if !strings.Contains(s.cfg.location, "@"+escaped+":"+port+"/") {
		t.Errorf("the location %s does not name the socket folder as written", s.cfg.location)
	}
	noPassword(t, raw, s.cfg.location)
}
