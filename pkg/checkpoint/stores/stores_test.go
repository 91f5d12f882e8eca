package stores

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

func TestShown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/home/u/.teamrun", "/home/u/.teamrun"},
		{"file:///srv/teamrun", "file:///srv/teamrun"},
		{"postgres://u:s3cret@db:5432/app?sslmode=require", "postgres://u@db:5432/app?sslmode=require"},
		{"postgresql://db/app?password=s3cret&user=u", "postgresql://db/app?user=u"},
		{"postgres://u@db/app", "postgres://u@db/app"},
		{"postgres://u:s3cret@db:port/app", "postgres://…"},
		{"POSTGRES://u:s3cret@db:5432/app", "postgres://u@db:5432/app"},
		{"PostgreSQL://db/app?password=s3cret&user=u", "postgresql://db/app?user=u"},
		{"FILE:///srv/teamrun", "file:///srv/teamrun"},
		{"File:/srv/teamrun", "file:///srv/teamrun"},
	}
	for _, tt := range tests {
		if got := Shown(tt.in); got != tt.want {
			t.Errorf("Shown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A leading ~ is $HOME wherever the location comes from: cron, systemd and
// --store= leave it unexpanded, and taken as it was it made a folder named
// "~" in the current one.
func TestLocationHome(t *testing.T) {
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			v, ok := vars[k]
			return v, ok
		}
	}
	tests := []struct {
		flag string
		vars map[string]string
		want string // "" for an error naming ErrBadLocation
	}{
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_HOME": "~/trh"}, "/home/u/trh"},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_HOME": "~"}, "/home/u"},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_STORE": "~/s"}, "/home/u/s"},
		{"~/f", map[string]string{"HOME": "/home/u"}, "/home/u/f"},
		// The file store's URL form is the same folder.
		{"file://~/f", map[string]string{"HOME": "/home/u"}, "file:///home/u/f"},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_STORE": "file://~"}, "file:///home/u"},
		{"file://~bob/f", map[string]string{"HOME": "/home/u"}, ""},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_HOME": "/srv/~x"}, "/srv/~x"},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_HOME": "rel/dir"}, "rel/dir"},
		{"", map[string]string{"TEAMRUN_HOME": "~/trh"}, ""},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_HOME": "~bob/trh"}, ""},
		// A libpq keyword string is no folder: its password would name one.
		{"host=127.0.0.1 port=1 password=PGSECRET-abcdef123", nil, ""},
		{"", map[string]string{"TEAMRUN_STORE": "dbname=teamrun user=u"}, ""},
		{"/srv/user=bob/x", nil, "/srv/user=bob/x"},
		{"host = db password = PGSECRET-abcdef123", nil, ""}, // libpq allows spaces around =
		{"host =db sslpassword= PGSECRET-abcdef123", nil, ""},
		{"/srv/out = dir", nil, "/srv/out = dir"},
		// A postgres URL spelt short (a slash or the colon missing) is no
		// folder either.
		{"postgres:/u:PGSECRET-abcdef123@127.0.0.1:1/db", nil, ""},
		{"", map[string]string{"TEAMRUN_STORE": "postgresql:u:PGSECRET-abcdef123@db/app"}, ""},
		{"postgres//u:PGSECRET-abcdef123@127.0.0.1:1/db", nil, ""},
		{"", map[string]string{"TEAMRUN_STORE": "postgresql//u:PGSECRET-abcdef123@db/app"}, ""},
		{"", map[string]string{"TEAMRUN_HOME": "Postgres//u:PGSECRET-abcdef123@db/app"}, ""},
		{"./postgres:/data", nil, "./postgres:/data"},
		{"./postgres//data", nil, "./postgres//data"},
		// file:/PATH is file:///PATH (RFC 8089), file:~/x as file://~/x:
		// neither is a folder named "file:" in the current one.
		{"file:/srv/teamrun", nil, "file:///srv/teamrun"},
		{"", map[string]string{"TEAMRUN_STORE": "file:/srv/a%20b"}, "file:///srv/a%20b"},
		{"file:~/f", map[string]string{"HOME": "/home/u"}, "file:///home/u/f"},
		{"", map[string]string{"HOME": "/home/u", "TEAMRUN_HOME": "file:~"}, "file:///home/u"},
		{"file:~bob/f", map[string]string{"HOME": "/home/u"}, ""},
		{"file:~/f", nil, ""},
		{"file:rel/dir", nil, ""},
		{"file:", nil, ""},
		{"./file:/srv", nil, "./file:/srv"},
		// A scheme's case is no matter (RFC 3986 §3.1): each is read as
		// its lower-case form, and is spelt so after (W F8).
		{"FILE:///srv/teamrun", nil, "file:///srv/teamrun"},
		{"", map[string]string{"TEAMRUN_STORE": "File:///srv/teamrun"}, "file:///srv/teamrun"},
		{"File:/srv/teamrun", nil, "file:///srv/teamrun"},
		{"FILE://~/f", map[string]string{"HOME": "/home/u"}, "file:///home/u/f"},
		{"fiLe:~/f", map[string]string{"HOME": "/home/u"}, "file:///home/u/f"},
		{"FILE:rel/dir", nil, ""},
		{"POSTGRES://u@db/app", nil, "postgres://u@db/app"},
		{"", map[string]string{"TEAMRUN_STORE": "PostgreSQL://u@db/app"}, "postgresql://u@db/app"},
		{"POSTGRES:/u:PGSECRET-abcdef123@127.0.0.1:1/db", nil, ""},
		{"/srv/FILE:x", nil, "/srv/FILE:x"},
	}
	for _, tt := range tests {
		got, err := Location(tt.flag, env(tt.vars))
		if tt.want == "" {
			if !errors.Is(err, checkpoint.ErrBadLocation) {
				t.Errorf("Location(%q, %v) = %q, %v; want a bad location", tt.flag, tt.vars, got, err)
			}
			if err != nil && strings.Contains(err.Error(), "PGSECRET") {
				t.Errorf("the error shows the password: %v", err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Location(%q, %v) = %q, %v; want %q", tt.flag, tt.vars, got, err, tt.want)
		}
	}
}

// A file URL's path is percent-encoded (RFC 8089 takes RFC 3986's path):
// file:///tmp/a%20b is the folder "/tmp/a b". Taken as it was, it made a
// folder named "a%20b" that the plain path "/tmp/a b" does not find.
func TestFilePath(t *testing.T) {
	tests := []struct {
		in, want string // want "" for an error naming ErrBadLocation
	}{
		{"file:///srv/teamrun", "/srv/teamrun"},
		{"file:///tmp/a%20b", "/tmp/a b"},
		{"file:///tmp/100%25", "/tmp/100%"},
		{"file:///tmp/q%3F", "/tmp/q?"},
		{"file://localhost/tmp/a%20b", "/tmp/a b"},
		{"file:///tmp/a b", "/tmp/a b"}, // a space left as it is names the same folder
		{"file:///tmp/100%", ""},
		{"file:///tmp/%zz", ""},
		{"file:///tmp/nul%00", ""},
		{"file://st/x", ""},
		{"file://%2Ftmp", ""}, // a host, encoded or not
		{"file://", ""},
		{"file:///tmp/x?mode=1", ""},
	}
	for _, tt := range tests {
		got, err := filePath(tt.in)
		if tt.want == "" {
			if !errors.Is(err, checkpoint.ErrBadLocation) {
				t.Errorf("filePath(%q) = %q, %v; want ErrBadLocation", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("filePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// With nothing configured the store is ~/.teamrun, and only in a home
// that exists: a missing one is no store (checkpoint.ErrStore, exit 5),
// not a folder to make.
func TestLocationDefault(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	home := t.TempDir()
	t.Setenv("HOME", home)
	if got, err := Location("", none); err != nil || got != filepath.Join(home, ".teamrun") {
		t.Errorf("Location with HOME=%s: %q, %v; want its .teamrun", home, got, err)
	}
	gone := filepath.Join(home, "gone")
	t.Setenv("HOME", gone)
	got, err := Location("", none)
	if !errors.Is(err, checkpoint.ErrStore) || !strings.Contains(err.Error(), gone+" does not exist") {
		t.Errorf("Location with HOME=%s: %q, %v; want no store, naming the folder", gone, got, err)
	}
}

// Named is the location that opens the same store again: what a command
// agent gets as TEAMRUN_STORE, so that a teamrun it starts reads and
// writes the run's own sessions. The file store's sessions folder, read
// as a store, put them one level down, where no list looked.
//
// It is spelt with links resolved, whether the folder exists yet or not:
// after a kill -9, the orphan sweep of a --continue through another
// spelling of the store found nothing, and the dead run's task ran on
// beside its rerun.
func TestNamedOpensTheSameStore(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "abslink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ location, want string }{
		{filepath.Join(dir, "home"), filepath.Join(dir, "home")},
		{"rel/home", filepath.Join(dir, "rel", "home")}, // a task runs in another folder
		{"file://" + filepath.ToSlash(dir) + "/a%20b", filepath.Join(dir, "a b")},
		{filepath.Join(dir, "link"), filepath.Join(dir, "real")},
		{"link", filepath.Join(dir, "real")},
		{filepath.Join(dir, "abslink"), filepath.Join(dir, "real")},
		{filepath.Join(dir, "link", "not", "made"), filepath.Join(dir, "real", "not", "made")},
		{"file://" + filepath.ToSlash(dir) + "/link", filepath.Join(dir, "real")},
	}
	for _, tt := range tests {
		t.Run(tt.location, func(t *testing.T) {
			s, err := Open(context.Background(), tt.location)
			if err != nil {
				t.Fatal(err)
			}
			got := Named(s)
			if got != tt.want {
				t.Errorf("Named = %q; want %q", got, tt.want)
			}
			again, err := Open(context.Background(), got)
			if err != nil {
				t.Fatal(err)
			}
			// The same folder, spelt without the links.
			home := func(b checkpoint.Backend) string { return b.(interface{ Home() string }).Home() }
			rel, err := filepath.Rel(home(s), s.Location())
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(got, rel); again.Location() != want {
				t.Errorf("opened from %q: Location %q; want %q", got, again.Location(), want)
			}
		})
	}
}

// A store variable set to nothing or to spaces (a crontab's
// TEAMRUN_HOME=$DIR with DIR unset) is a bad location, exit 2, naming it
// and what the store is without it: taken as unset it put the sessions in
// ~/.teamrun in silence, and spaces made a folder named " ". A variable
// that is not consulted (a --store given, TEAMRUN_HOME under
// TEAMRUN_STORE) is left alone.
func TestLocationBlankVariable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		flag string
		vars map[string]string
		want string // the location, or the error's text after "bad session store location: "
	}{
		{"", map[string]string{"TEAMRUN_HOME": ""}, "TEAMRUN_HOME is empty (a variable left unset?): set it to the store's folder or URL, or unset it (unset TEAMRUN_HOME) to use ~/.teamrun"},
		{"", map[string]string{"TEAMRUN_HOME": "  "}, "TEAMRUN_HOME is only spaces (a variable left unset?): set it to the store's folder or URL, or unset it (unset TEAMRUN_HOME) to use ~/.teamrun"},
		{"", map[string]string{"TEAMRUN_STORE": ""}, "TEAMRUN_STORE is empty (a variable left unset?): set it to the store's folder or URL, or unset it (unset TEAMRUN_STORE) to use ~/.teamrun"},
		{"", map[string]string{"TEAMRUN_STORE": " \t", "TEAMRUN_HOME": "/srv/h"}, "TEAMRUN_STORE is only spaces (a variable left unset?): set it to the store's folder or URL, or unset it (unset TEAMRUN_STORE) to use $TEAMRUN_HOME"},
		{"", map[string]string{"TEAMRUN_HOME": " /srv/h"}, "TEAMRUN_HOME begins or ends with a space (the value is not shown: it may hold a password): write it without (a crontab's or a unit's value is taken as written, spaces and all)"},
		{"", map[string]string{"TEAMRUN_STORE": "postgres://u:pw@db/x "}, "TEAMRUN_STORE begins or ends with a space (the value is not shown: it may hold a password): write it without (a crontab's or a unit's value is taken as written, spaces and all)"},
		{" /srv/flag", nil, "--store begins or ends with a space (the value is not shown: it may hold a password): write it without (a crontab's or a unit's value is taken as written, spaces and all)"},
		{"/srv/flag", map[string]string{"TEAMRUN_STORE": "", "TEAMRUN_HOME": ""}, "/srv/flag"},
		{"", map[string]string{"TEAMRUN_STORE": "/srv/s", "TEAMRUN_HOME": ""}, "/srv/s"},
		{"", map[string]string{"TEAMRUN_HOME": "/srv/h"}, "/srv/h"},
		{"", nil, filepath.Join(home, ".teamrun")},
	}
	for _, tt := range tests {
		lookup := func(k string) (string, bool) {
			v, ok := tt.vars[k]
			return v, ok
		}
		got, err := Location(tt.flag, lookup)
		if err != nil {
			got = strings.TrimPrefix(err.Error(), checkpoint.ErrBadLocation.Error()+": ")
			if !errors.Is(err, checkpoint.ErrBadLocation) {
				t.Errorf("Location(%q, %q): %v, not a bad location", tt.flag, tt.vars, err)
			}
		}
		if got != tt.want {
			t.Errorf("Location(%q, %q) = %q\nwant %q", tt.flag, tt.vars, got, tt.want)
		}
	}
}

// Open reads a store URL's scheme in any case as its lower-case form, as
// Location spells it: FILE:///x and POSTGRES://… were "unknown store
// scheme" (W F8). The file store opened so is the same folder, and
// records the same location.
func TestOpenSchemeCase(t *testing.T) {
	dir := t.TempDir()
	lower, err := Open(context.Background(), "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"FILE://" + filepath.ToSlash(dir), "File:" + filepath.ToSlash(dir)} {
		t.Run(loc, func(t *testing.T) {
			spelt, err := Location(loc, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), spelt)
			if err != nil {
				t.Fatal(err)
			}
			if s.Location() != lower.Location() || Named(s) != Named(lower) {
				t.Errorf("opened %q: location %q, named %q; want %q, %q", loc, s.Location(), Named(s), lower.Location(), Named(lower))
			}
		})
	}
}
