// Package stores opens the session store a configuration names: the one
// place that knows every backend.
package stores

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/teamrun/teamrun/internal/urltext"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/filestore"
	"github.com/teamrun/teamrun/pkg/checkpoint/pgstore"
	"github.com/teamrun/teamrun/pkg/spec"
)

// Location is the store a command uses (DESIGN §5): flag (--store), else
// $TEAMRUN_STORE, else $TEAMRUN_HOME, else ~/.teamrun. lookup is
// os.LookupEnv's: a variable set to nothing, or to spaces, is refused
// (ErrBadLocation), as an empty --store is. A crontab's
// TEAMRUN_HOME=$DIR with DIR unset, taken as unset, put the sessions in
// ~/.teamrun in silence, and one of spaces made a folder named " ".
func Location(flag string, lookup func(string) (string, bool)) (string, error) {
	getenv := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	if flag != "" {
		return expandHome("--store", flag, getenv)
	}
	for _, name := range []string{"TEAMRUN_STORE", "TEAMRUN_HOME"} {
		v, set := lookup(name)
		if !set {
			continue
		}
		if strings.TrimSpace(v) == "" {
			return "", blankVariable(name, v, lookup)
		}
		return expandHome(name, v, getenv)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", &noStoreError{err}
	}
	// A service account's home may not exist (Debian's nobody has
	// /nonexistent): the store is not made there, parents and all, and the
	// message says what to set rather than that a folder cannot be made.
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		return "", &noStoreError{fmt.Errorf("the home folder %s does not exist", home)}
	}
	return filepath.Join(home, ".teamrun"), nil
}

// blankVariable refuses store variable name, set to v, nothing but
// spaces: it says what the store would be without it.
func blankVariable(name, v string, lookup func(string) (string, bool)) error {
	what := "empty"
	if v != "" {
		what = "only spaces"
	}
	instead := "~/.teamrun"
	if _, set := lookup("TEAMRUN_HOME"); set && name == "TEAMRUN_STORE" {
		instead = "$TEAMRUN_HOME"
	}
	return fmt.Errorf("%w: %s is %s (a variable left unset?): set it to the store's folder or URL, or unset it (unset %s) to use %s", checkpoint.ErrBadLocation, name, what, name, instead)
}

// expandHome is a store location as written, checked and made the one
// Open reads: a folder location with a leading ~ or ~/ read as $HOME.
// No shell expands it in a crontab's or a unit's variables, nor after
// --store=, and taken as it is, it made a folder named "~" in the current
// one: sessions that the next run, from another folder, does not find. A
// ~user prefix is refused rather than guessed. The file store's URL,
// file://~/… (or file:~/…), names the same folder: taken as it is, it made
// the same folder named "~". file:/PATH is file:///PATH, and a store
// URL's scheme is read in any case (Spelt).
func expandHome(from, loc string, getenv func(string) string) (string, error) {
	if strings.TrimSpace(loc) != loc {
		// Taken as written, " /srv/x" made a folder named " " in the
		// current one: sessions the next run, from another folder, does
		// not find.
		return "", fmt.Errorf("%w: %s begins or ends with a space (the value is not shown: it may hold a password): write it without (a crontab's or a unit's value is taken as written, spaces and all)", checkpoint.ErrBadLocation, from)
	}
	if keywordDSN(loc) {
		// Taken as a folder, its name (and the password in it) went into
		// the audit log, the resume line and every session list.
		return "", fmt.Errorf("%w: %s looks like a PostgreSQL keyword connection string (host=… password=…), which teamrun does not read (the value is not shown: it may hold a password): give the database as a URL, postgres://USER:PASSWORD@HOST:PORT/DBNAME", checkpoint.ErrBadLocation, from)
	}
	if scheme, prefix, fixed, how := pgstore.SchemeShort(loc); how != urltext.NotShort {
		// Taken as a folder, it made folders named after its password,
		// and printed it.
		return "", fmt.Errorf("%w: %s is a %s URL that %s (not shown: it may hold a password): write %s (a folder whose name starts so is written ./%s…)", checkpoint.ErrBadLocation, from, scheme, how.Needs(scheme), fixed, prefix)
	}
	written := loc
	loc = Spelt(loc)
	scheme := "" // file:// when loc is the file store's URL
	if strings.HasPrefix(loc, "file:") && !strings.HasPrefix(loc, "file://") {
		// Spelt made file:/PATH and file:~/PATH URLs: what is left would
		// be a folder named "file:…" in the current one.
		return "", fmt.Errorf("%w: %s=%s: a file URL names its folder from the root, as in file:///var/lib/teamrun (or file:/var/lib/teamrun); a folder relative to the current one is its plain path, and one whose name starts with file: is written ./file:…", checkpoint.ErrBadLocation, from, written)
	}
	if strings.HasPrefix(loc, "file://~") {
		scheme, loc = "file://", strings.TrimPrefix(loc, "file://")
	}
	if !strings.HasPrefix(loc, "~") {
		return scheme + loc, nil
	}
	rest := loc[1:]
	if rest != "" && rest[0] != '/' {
		return "", fmt.Errorf("%w: %s=%s: teamrun reads only ~ and ~/… as your home folder: give the folder's full path", checkpoint.ErrBadLocation, from, written)
	}
	home := getenv("HOME")
	if home == "" {
		return "", fmt.Errorf("%w: %s=%s: ~ is $HOME, which is not set here: give the folder's full path", checkpoint.ErrBadLocation, from, written)
	}
	return scheme + filepath.Join(home, rest), nil
}

// Spelt is a store location spelt as the rules after it read it, and as
// a command line names it again: a store URL's scheme in lower case (a
// scheme's case is no matter, RFC 3986 §3.1: FILE:///x is file:///x,
// POSTGRES://… postgres://…); file:/PATH, RFC 8089's shortest form,
// file:///PATH, and file:~/PATH file://~/PATH (taken as written, each was
// a folder named "file:" in the current one). Anything else stays as
// written: a folder, or what the location check refuses.
func Spelt(loc string) string {
	scheme, rest, ok := strings.Cut(loc, ":")
	if !ok {
		return loc
	}
	switch s := strings.ToLower(scheme); s {
	case "file", "postgres", "postgresql": // the stores' schemes
		loc = s + ":" + rest
	}
	if rest, ok := strings.CutPrefix(loc, "file:"); ok && !strings.HasPrefix(rest, "//") && (strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "~")) {
		return "file://" + rest
	}
	return loc
}

// dsnKeywords are libpq's connection keywords that a keyword connection
// string ("host=db password=…") is made of.
var dsnKeywords = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode", "sslpassword", "sslkey", "sslcert", "sslrootcert", "channel_binding", "gssencmode", "krbsrvname", "require_auth", "connect_timeout", "application_name", "options", "service", "target_session_attrs"}

// keywordDSN says whether loc, given as a store's location, is a libpq
// keyword connection string rather than a folder: a word of it is one of
// the keywords followed by =, with or without spaces around the = (libpq
// allows them: "host = db password = …").
func keywordDSN(loc string) bool {
	words := strings.Fields(strings.ReplaceAll(loc, "=", " = "))
	for i := 1; i < len(words); i++ {
		if words[i] == "=" && slices.Contains(dsnKeywords, strings.ToLower(words[i-1])) {
			return true
		}
	}
	return false
}

// Open opens the store at location: a postgres:// or postgresql:// URL is
// the PostgreSQL store (which migrates an older schema; the first write
// makes a missing one), a folder (or file:// URL) the file store, which
// creates nothing.
func Open(ctx context.Context, location string) (checkpoint.Backend, error) {
	switch {
	case pgstore.IsURL(location):
		s, err := pgstore.Open(ctx, location)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return s, nil
	case strings.HasPrefix(location, "file://"):
		var err error
		if location, err = filePath(location); err != nil {
			return nil, err
		}
	case IsURL(location):
		scheme, _, _ := strings.Cut(location, "://")
		return nil, fmt.Errorf("%w: unknown store scheme %s: use a folder, file://PATH or postgres://…", checkpoint.ErrBadLocation, spec.ShownValue(scheme))
	}
	return filestore.Open(location)
}

// filePath is the folder a file:// URL names. Its path is a URL's path
// (RFC 8089, RFC 3986): percent-encoded, so file:///tmp/a%20b is the
// folder "/tmp/a b" — taken as it was, it made a folder named "a%20b" —
// and a folder whose name holds a % is written %25 in the URL, or given as
// its plain path.
func filePath(location string) (string, error) {
	raw := strings.TrimPrefix(location, "file://")
	if rest, ok := strings.CutPrefix(raw, "localhost/"); ok {
		raw = "/" + rest // file://localhost/p is file:///p (RFC 8089)
	}
	if raw == "" || strings.ContainsAny(raw, "?#") {
		// A folder named with ? or # is more likely a URL's query; %3F
		// and %23 name one.
		return "", fmt.Errorf("%w: %s: give the folder's path, as in file:///var/lib/teamrun (no ?query or #fragment), or the plain path", checkpoint.ErrBadLocation, location)
	}
	if !strings.HasPrefix(raw, "/") {
		// file://st/x names the host st; taken as the folder st/x in
		// the current one, it made sessions that a run from another
		// folder does not find.
		return "", fmt.Errorf("%w: %s: a file URL names its folder from the root, as in file:///var/lib/teamrun (three slashes); a folder relative to the current one is its plain path (%s)", checkpoint.ErrBadLocation, location, raw)
	}
	path, err := url.PathUnescape(raw)
	if err != nil || strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%w: %s: a file URL's path is percent-encoded (a space is %%20, a %% itself %%25): encode it so, or give the folder's plain path", checkpoint.ErrBadLocation, location)
	}
	return path, nil
}

// Named is the location that opens b again, as TEAMRUN_STORE names it to
// the processes of b's tasks (a teamrun a task starts uses the same store)
// and as the orphan sweep finds those processes by: the file store's own
// folder, not the sessions folder within it that messages name (read as
// a store, that folder put sessions one level down, where no list looked);
// a database's URL without its password (PGPASSWORD or ~/.pgpass give it).
// The folder is spelt with its links resolved: a --continue through a link
// to the store, or without the link the dead run went through, must find
// that run's tasks by this value, or it runs their work again beside them.
func Named(b checkpoint.Backend) string {
	if h, ok := b.(interface{ Home() string }); ok {
		return resolved(h.Home())
	}
	return b.Location()
}

// resolved is the absolute path dir with the links in its longest part
// that exists resolved: the store's folder may not be made yet, but a
// link above it names the same folder when it is.
func resolved(dir string) string {
	rest := ""
	for at := dir; ; at = filepath.Dir(at) {
		if real, err := filepath.EvalSymlinks(at); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(at) == at {
			return dir
		}
		rest = filepath.Join(filepath.Base(at), rest)
	}
}

// Shown is location as a message or a command line may show it: Spelt,
// a URL without its password (pgstore's rule, the one for store URLs).
func Shown(location string) string {
	if location = Spelt(location); IsURL(location) {
		return pgstore.Shown(location)
	}
	return location
}

// noStoreError: no store is configured and there is no home folder.
type noStoreError struct{ err error }

func (e *noStoreError) Error() string {
	return fmt.Sprintf("session store: cannot find the session store: set TEAMRUN_HOME or TEAMRUN_STORE (%v)", e.err)
}

func (e *noStoreError) Unwrap() []error { return []error{e.err, checkpoint.ErrStore} }

// IsURL says whether location is a URL (postgres://…, file:///…) rather
// than a folder's path.
func IsURL(location string) bool { return strings.Contains(location, "://") }
