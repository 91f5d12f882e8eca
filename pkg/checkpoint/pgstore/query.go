package pgstore

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/teamrun/teamrun/internal/urltext"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// param is one key=value pair of a store URL's parameters.
type param struct {
	raw        string // as written: pgx reads it as libpq does
	key, value string // percent-decoded
}

// queryParams reads the parameters of a store URL (what follows its ?) as
// libpq reads them, and pgx after it: pairs split at &, each at its one =,
// both halves percent-decoded, a + a plus (Go's url.ParseQuery made it a
// space, and the server then got a +: "-c+statement_timeout"). A key given
// twice is refused: libpq takes the last, and teamrun took the first of
// its own. No message quotes a value, which may be a password.
func queryParams(raw string) ([]param, error) {
	if raw == "" {
		return nil, nil
	}
	pairs := strings.Split(raw, "&")
	if pairs[len(pairs)-1] == "" {
		pairs = pairs[:len(pairs)-1] // a trailing &, as libpq allows
	}
	out := make([]param, 0, len(pairs))
	for n, pair := range pairs {
		rawKey, rawValue, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%w: parameter %d of the store URL (after the ?) has no =: write key=value pairs joined by &, and a & inside a value as %%26", checkpoint.ErrBadLocation, n+1)
		}
		// Not shown unless it reads as a name: a password run into it
		// (postgres://h/db?u:pw@…) would be.
		key, err := uriDecode(rawKey)
		if err != nil || !wordRule().MatchString(key) {
			return nil, fmt.Errorf("%w: the name of parameter %d of the store URL (after the ?, not shown) is no setting's: %s", checkpoint.ErrBadLocation, n+1, nameProblem(err))
		}
		name := key + "="
		if strings.Contains(rawValue, "=") {
			return nil, fmt.Errorf("%w: %s in the store URL holds a second =: write an = inside a value as %%3D (or a missing & between two parameters)", checkpoint.ErrBadLocation, name)
		}
		value, err := uriDecode(rawValue)
		if err != nil {
			return nil, fmt.Errorf("%w: the value of %s in the store URL (not shown) is not valid URL text: %s", checkpoint.ErrBadLocation, name, err)
		}
		if slices.ContainsFunc(out, func(p param) bool { return p.key == key }) {
			return nil, fmt.Errorf("%w: %s is given twice in the store URL: give it once", checkpoint.ErrBadLocation, name)
		}
		out = append(out, param{raw: pair, key: key, value: value})
	}
	return out, nil
}

// wordRule is what a parameter's name is: libpq's keywords and the
// server's settings (custom ones have a dot) are such words.
var wordRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]{0,127}$`) })

var (
	errBadEscape = errors.New("a % that starts no escape (a % itself is %25)")
	errNUL       = errors.New("%00, which no setting may hold")
	errSpace     = errors.New("a space inside it (write it %20)")
)

func nameProblem(err error) string {
	if err == nil {
		return "a name is letters, digits, _ and . (a ?, : or @ inside the parameters is written %3F, %3A, %40)"
	}
	return err.Error()
}

// uriDecode percent-decodes a part of a store URL by libpq's rules
// (conninfo_uri_decode), which pgx follows: spaces around it are dropped,
// one inside is refused, %00 is refused, and a + stays a +.
func uriDecode(s string) (string, error) {
	s = strings.Trim(s, " ")
	if strings.Contains(s, " ") {
		return "", errSpace
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errBadEscape
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errBadEscape
		}
		if n == 0 {
			return "", errNUL
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// uriEscape writes s for a store URL's parameter so that uriDecode gives s
// back: a space is %20, never a + (which libpq reads as a +).
func uriEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// Parameters that only tune the connection, not which server, database,
// user or security it has: they do not make a URL another store.
var connectionOnly = []string{"connect_timeout", "application_name", "statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode"}

// maskQuery is q, a URL's parameters as written, without those that may
// hold a password: password= and sslpassword=, however their names are
// cased or percent-encoded. q may not parse, so it is read loosely: a pair
// run into the one before it (a ; or a missing & between them) is cut
// there, and the pieces after one that hold no = (the rest of a password
// holding a &) go with it.
func maskQuery(q string) string {
	if q == "" {
		return q
	}
	var kept []string
	secret := false
	for _, p := range strings.Split(q, "&") {
		if secret && !strings.Contains(p, "=") {
			continue
		}
		secret = false
		if i := passwordKeyAt(p); i >= 0 {
			secret = true
			if p = strings.TrimRight(p[:i], ";=? "); p == "" {
				continue
			}
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}

// passwordKeyAt is where, in p, a piece of a URL's parameters, the name
// of a password starts that an = follows; -1 when there is none.
func passwordKeyAt(p string) int {
	for i := 0; i < len(p); i++ {
		if p[i] != '=' {
			continue
		}
		end := len(strings.TrimRight(p[:i], " "))
		start := strings.LastIndexAny(p[:end], ";=?&/") + 1
		if secretKey(strings.TrimSpace(looseDecode(p[start:end]))) {
			return start
		}
	}
	return -1
}

// secretKey says whether a parameter so named may hold a password:
// password= and sslpassword=, and their misspellings in another case.
func secretKey(key string) bool {
	return strings.HasSuffix(strings.ToLower(key), "password")
}

// looseDecode decodes the escapes of s that are valid and leaves the rest.
func looseDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// schemeRest cuts raw, a store URL, after its scheme: postgres:// or
// postgresql://, or the same spelt short (postgres:/u:pw@h/db,
// postgres//u:pw@h/db), which is a URL still, and no folder. scheme is as
// written; ok is false for anything else.
func schemeRest(raw string) (scheme, rest string, ok bool) {
	s, rest, _ := urltext.SchemeShort(raw, "postgresql", "postgres")
	if s == "" {
		return "", raw, false
	}
	return raw[:len(s)], strings.TrimLeft(rest, "/"), true
}

// redactRaw is raw, a store URL that does not parse (or not as one),
// without what may be a password under any reading of it: in the user
// part, all from its first : to the last @ (a password may hold an
// unencoded /, ?, # or @), and the parameters maskQuery drops.
func redactRaw(raw string) string {
	scheme, rest, ok := schemeRest(raw)
	if !ok {
		return "(the store URL)"
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, _, _ := strings.Cut(rest[:at], ":")
		rest = user + rest[at:]
	}
	// A password= before any ? (postgres://h/db&password=…) is the
	// database's name to libpq: cut there too.
	path, query, hasQuery := strings.Cut(rest, "?")
	if i := passwordKeyAt(path); i >= 0 {
		path = path[:i]
	}
	if query = maskQuery(query); hasQuery && query != "" {
		path += "?" + query
	}
	s := scheme + "://" + path
	// A line break from a file read with $(…) would cut the message.
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// SchemeShort reports whether loc, a store location, is a postgres or
// postgresql URL spelt short (postgres:/u:pw@h/db, postgres//u:pw@h/db),
// which no folder is: taken as one, it made folders named after the
// password, and printed it. scheme is the one it names, prefix how loc
// starts (postgres:/), fixed loc as it should be written, without its
// password.
func SchemeShort(loc string) (scheme, prefix, fixed string, how urltext.Short) {
	scheme, rest, how := urltext.SchemeShort(loc, "postgresql", "postgres")
	if how == urltext.NotShort {
		return "", "", "", how
	}
	return scheme, loc[:len(loc)-len(rest)], redactRaw(loc), how
}

// quoted is a quoted piece of text in Go's messages.
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` ?"(?:[^"\\]|\\.)*"`) })

// urlProblem is why url.Parse refused a store URL, in words for the one
// who wrote it rather than net/url's own, and never quoting the URL: what
// net/url quotes (a "port", a "character") may be a piece of a password
// that holds an unencoded / or ?.
func urlProblem(err error) string {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	msg = strings.TrimPrefix(msg, "net/url: ")
	switch {
	case msg == "invalid userinfo":
		return "the user or password holds a character a URL must percent-encode (a space is %20, / is %2F, @ is %40, : is %3A)"
	case msg == "invalid control character in URL":
		return "it holds a control character (a line break, a tab): remove it"
	case strings.HasPrefix(msg, "invalid port"):
		return "the port after the host is not a number (a password holding / ? # or @ needs them percent-encoded: %2F %3F %23 %40)"
	}
	return quoted().ReplaceAllString(msg, "")
}
