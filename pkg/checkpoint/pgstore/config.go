package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// DefaultSchema holds teamrun's tables unless the URL says schema=.
const DefaultSchema = "teamrun"

// DefaultLease is how long a run may be silent before the server drops
// its connection and so its lock; lease= in the URL changes it.
const DefaultLease = 30 * time.Second

// MinLease keeps the heartbeat (a third of the lease) above a second.
const MinLease = 3 * time.Second

var schemaRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// checkSchema refuses name as the schema= of a store URL when PostgreSQL
// would not make it teamrun's: the server refuses pg_ names (its own
// schemas) only when teamrun first writes, and would let it fill
// information_schema.
func checkSchema(name string) error {
	switch {
	case !schemaRule().MatchString(name):
		return fmt.Errorf("%w: schema=%q in the store URL: a schema name is 1 to 63 of a-z 0-9 _, not starting with a digit", checkpoint.ErrBadLocation, name)
	case strings.HasPrefix(name, "pg_"):
		return fmt.Errorf("%w: schema=%q in the store URL: names that start with pg_ are reserved for PostgreSQL's own schemas; choose another, such as schema=%s", checkpoint.ErrBadLocation, name, DefaultSchema)
	case name == "information_schema":
		return fmt.Errorf("%w: schema=%q in the store URL: that is PostgreSQL's system schema; choose another, such as schema=%s", checkpoint.ErrBadLocation, name, DefaultSchema)
	}
	return nil
}

// IsURL reports whether loc names a PostgreSQL store.
func IsURL(loc string) bool {
	return strings.HasPrefix(loc, "postgres://") || strings.HasPrefix(loc, "postgresql://")
}

// config is a store URL taken apart: what pgx connects with, and teamrun's
// own parameters, which the server never sees.
type config struct {
	conn     *pgx.ConnConfig // the pool's, and the locks' connections'
	pool     *pgxpool.Config
	schema   string
	lease    time.Duration
	location string   // the URL without password, for messages
	secrets  []string // passwords, to scrub from messages
}

func parseURL(raw string) (*config, error) {
	if !IsURL(raw) {
		return nil, fmt.Errorf("%w: %q is not a postgres:// or postgresql:// URL", checkpoint.ErrBadLocation, redactRaw(raw))
	}
	u, query, err := splitURL(raw)
	if err != nil {
		return nil, err
	}
	params, err := queryParams(query)
	if err != nil {
		return nil, err
	}
	c := &config{schema: DefaultSchema, lease: DefaultLease}
	values := map[string]string{}
	var pass []string    // the pairs pgx gets, as written
	var written []string // passwords as the URL writes them, percent-encoded
	for _, p := range params {
		values[p.key] = p.value
		if secretKey(p.key) {
			_, w, _ := strings.Cut(p.raw, "=")
			c.secrets, written = append(c.secrets, p.value), append(written, strings.Trim(w, " "))
		}
		switch {
		case secretKey(p.key) && p.key != "password" && p.key != "sslpassword":
			// The server would get it as a setting, and its name in
			// its refusal, with the URL it comes in.
			return nil, fmt.Errorf("%w: %s= in the store URL is no parameter libpq knows: the password is password=, the client key's sslpassword= (lower case)", checkpoint.ErrBadLocation, p.key)
		case p.key == "schema":
			if err := checkSchema(p.value); err != nil {
				return nil, err
			}
			c.schema = p.value
		case p.key == "lease":
			d, err := time.ParseDuration(p.value)
			if err != nil || d < MinLease {
				return nil, fmt.Errorf("%w: lease=%q in the store URL: a duration of at least %s, such as 30s", checkpoint.ErrBadLocation, p.value, MinLease)
			}
			c.lease = d
		case strings.HasPrefix(p.key, "pool_"):
			// pgxpool's settings: pgx would send them to the server as
			// its own parameters, which it refuses (exit 5 once connected).
			return nil, fmt.Errorf("%w: %s in the store URL: teamrun sizes its own connection pool; leave it out", checkpoint.ErrBadLocation, p.key)
		default:
			pass = append(pass, p.raw)
		}
	}
	if pw, ok := u.User.Password(); ok {
		c.secrets, written = append(c.secrets, pw), append(written, writtenPassword(raw))
	}
	if err := checkNumbers(values, c.secrets); err != nil {
		return nil, err
	}
	if err := checkTarget(values); err != nil {
		return nil, err
	}
	// The other parameters reach pgx as they were written: it reads them
	// as libpq does, so a URL psql takes means the same here.
	u.RawQuery, u.ForceQuery = strings.Join(pass, "&"), false
	// The pool's settings come from the URL too: parsed from "" they
	// would be the PG* variables' alone, and one the URL overrides (a
	// PGPORT that is no number) would fail there.
	c.pool, err = pgxpool.ParseConfig(connString(u))
	if err != nil {
		return nil, fmt.Errorf("%w: the store URL %s: %s; it looks like postgres://user:password@host:5432/db?sslmode=require",
			checkpoint.ErrBadLocation, redacted(u), scrub(numberProblem(err), c.secrets...))
	}
	c.conn = c.pool.ConnConfig
	c.conn.DialFunc = answerChecked(c.conn.DialFunc)
	c.secrets = append(c.secrets, c.conn.Password) // from PGPASSWORD or ~/.pgpass too
	// PGPASSWORD is a password in every task's environment, also when the
	// URL's own took its place.
	if pw := os.Getenv("PGPASSWORD"); pw != "" {
		c.secrets = append(c.secrets, pw)
	}
	c.secrets = spelled(c.secrets, written)
	if c.conn.ConnectTimeout == 0 {
		c.conn.ConnectTimeout = 10 * time.Second
	}
	// A transition is acknowledged when its COMMIT returns: make sure no
	// server or role default weakens that.
	c.conn.RuntimeParams["synchronous_commit"] = "on"
	if c.conn.RuntimeParams["application_name"] == "" {
		c.conn.RuntimeParams["application_name"] = "teamrun"
	}
	c.location = canonical(u, c, params)
	return c, nil
}

// credentials are c's passwords, each once and in each of its spellings
// (spelled, in its order): the URL's (or its password=), its
// sslpassword=, the one pgx found in PGPASSWORD, a passfile or a service
// file, and PGPASSWORD itself.
func (c *config) credentials() []string {
	var out []string
	for _, s := range c.secrets {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// spelled is secrets, passwords, with each spelling a URL may carry them
// in, and written, the same as the store URL writes them: a task prints
// the URL from elsewhere (DATABASE_URL, its teamrun's --store), where a
// password is percent-encoded, and no piece of that text is a piece of
// the password itself. The spellings are Go's url package's (a space +
// or %20, : @ + kept or not; Python's quote and quote_plus write two of
// them), each with its escapes' hex in either case.
//
// A run redacts them in turn, and with each any run of eight of its
// characters, which may cut into another spelling before that one is
// redacted whole: the spellings as written (what DATABASE_URL or the
// run's --store hold) come first, then the rest, longest first.
func spelled(secrets, written []string) []string {
	var forms []string
	for _, s := range secrets {
		forms = append(forms, s, url.QueryEscape(s), uriEscape(s), url.PathEscape(s),
			strings.TrimPrefix(url.UserPassword("", s).String(), ":"))
	}
	for _, f := range append(slices.Clone(forms), written...) {
		forms = append(forms, escapesCased(f, strings.ToUpper), escapesCased(f, strings.ToLower))
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return append(slices.Clone(written), forms...)
}

// escapesCased is s with the hex digits of its %XX escapes cased by to.
func escapesCased(s string, to func(string) string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			copy(b[i+1:i+3], to(string(b[i+1:i+3])))
		}
	}
	return string(b)
}

// splitURL parses raw, a store URL, but for its parameters: query is all
// that follows its first ?, as libpq has it (a # there is part of a
// value, not a fragment). u has no query.
func splitURL(raw string) (u *url.URL, query string, err error) {
	if err := sameUser(raw); err != nil {
		return nil, "", err
	}
	u, err = url.Parse(hostEscapesKept(raw))
	if err == nil {
		u.Host, err = hostDecoded(u.Host)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%w: the store URL %s cannot be read: %s; it looks like postgres://user@host:5432/db", checkpoint.ErrBadLocation, redactRaw(raw), urlProblem(err))
	}
	qi, hi := strings.IndexByte(raw, '?'), strings.IndexByte(raw, '#')
	switch {
	case hi >= 0 && (qi < 0 || hi < qi):
		return nil, "", fmt.Errorf("%w: the store URL %s holds a # before its parameters: write it %%23 (a password holding / ? # or @ needs them percent-encoded: %%2F %%3F %%23 %%40)", checkpoint.ErrBadLocation, redactRaw(raw))
	case passwordKeyAt(u.Host+u.EscapedPath()) >= 0:
		// postgres://h/db&password=…: a ? short, libpq reads it all as
		// the database's name, which messages show.
		return nil, "", fmt.Errorf("%w: the store URL %s has a password= before its parameters, in the host or database: the parameters follow a ? (postgres://user@host/db?password=…)", checkpoint.ErrBadLocation, redactRaw(raw))
	case strings.Contains(u.EscapedPath(), "@"):
		// postgres:///u:pw@h/db: the user part is read as the database's
		// name, and the location would show the password.
		return nil, "", fmt.Errorf("%w: the store URL %s has an @ after the host, in the database's name: a user:password@ part goes right after postgres:// (write an @ in a name as %%40)", checkpoint.ErrBadLocation, redactRaw(raw))
	}
	if qi >= 0 {
		query = raw[qi+1:]
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u, query, nil
}

// hostEscapesKept is raw, a store URL, with each % of its host written
// %25, for net/url to parse and keep as written: it refuses the escapes
// libpq decodes there (a Unix socket's folder: postgres://u@%2Ftmp:5432/db),
// only %25 and non-ASCII being a host's in RFC 3986. hostDecoded then
// decodes them as libpq does.
func hostEscapesKept(raw string) string {
	if !IsURL(raw) {
		return raw
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	start := strings.LastIndexByte(rest[:end], '@') + 1
	host := strings.ReplaceAll(rest[start:end], "%", "%25")
	return scheme + "://" + rest[:start] + host + rest[end:]
}

// hostDecoded is host, as url.Parse gave it from hostEscapesKept's URL,
// percent-decoded by libpq's rules. A : , [ or ] that an escape gives
// is refused: libpq reads hosts and ports apart before it decodes, and
// pgx, which gets the URL written again, would read it as one of those.
func hostDecoded(host string) (string, error) {
	if !strings.Contains(host, "%") {
		return host, nil
	}
	decoded, err := uriDecode(host)
	if err != nil {
		return "", fmt.Errorf("its host holds %w", err)
	}
	for _, sep := range []string{":", ",", "[", "]"} {
		if strings.Count(decoded, sep) != strings.Count(host, sep) {
			return "", errors.New("its host percent-encodes a : , [ or ], which separate hosts and ports: write them as they are")
		}
	}
	return decoded, nil
}

// sameUser refuses raw, a store URL, when libpq (and so pgx) would read
// its user part otherwise than Go does, which teamrun shows and checks:
// libpq's ends at the first @ (before any /), Go's at the last before the
// first / ? or #. A ? or # in the part, or a second @, is read either way.
func sameUser(raw string) error {
	user, host, ok := libpqUser(raw)
	if !ok {
		return nil
	}
	if j := strings.IndexAny(host, "/?#"); j >= 0 {
		host = host[:j]
	}
	if strings.ContainsAny(user, "?#") || strings.Contains(host, "@") {
		return fmt.Errorf("%w: the store URL %s has a ? # or @ in its user or password part (not shown): percent-encode it (%%3F %%23 %%40)", checkpoint.ErrBadLocation, redactRaw(raw))
	}
	return nil
}

// libpqUser cuts raw, a store URL, at its user part as libpq reads it:
// up to the first @, if that comes before any /. ok is false when it has
// none; rest is what follows the @.
func libpqUser(raw string) (user, rest string, ok bool) {
	_, rest, _ = schemeRest(raw)
	i := strings.IndexAny(rest, "@/")
	if i < 0 || rest[i] != '@' {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// writtenPassword is the password of raw's user part as written, still
// percent-encoded: what a task that prints the URL shows. sameUser made
// sure libpq and Go read that part alike.
func writtenPassword(raw string) string {
	user, _, _ := libpqUser(raw)
	_, pw, _ := strings.Cut(user, ":")
	return pw
}

// canonical is the store's location: its URL without the password, spelt
// one way whatever way it was written, for it is the store's identity too.
// The runs of a session find what an earlier run killed on this machine
// left by it: its tasks' processes (TEAMRUN_STORE in their environment)
// and its scratch folder (checkpoint.LocalScratch). The scheme is
// postgres; the user, the database and (one host) the port are those pgx
// connects with, wherever the URL or the PG* variables gave them; the
// parameters are sorted, schema among them unless the default, and those
// that only tune the connection (connectionOnly) left out. Host names
// are left as written: localhost and 127.0.0.1 stay two spellings.
func canonical(u *url.URL, c *config, params []param) string {
	loc := *u
	loc.Scheme = "postgres"
	loc.User = nil
	if c.conn.User != "" {
		loc.User = url.User(c.conn.User)
	}
	if c.conn.Database != "" {
		loc.Path, loc.RawPath = "/"+c.conn.Database, ""
	}
	has := map[string]bool{}
	var kept []param
	for _, p := range params {
		has[p.key] = true
		switch {
		case slices.Contains([]string{"user", "dbname", "database", "schema", "lease"}, p.key),
			slices.Contains(connectionOnly, p.key), secretKey(p.key):
		default:
			kept = append(kept, p)
		}
	}
	if c.schema != DefaultSchema {
		kept = append(kept, param{key: "schema", value: c.schema})
	}
	slices.SortFunc(kept, func(a, b param) int { return strings.Compare(a.key, b.key) })
	pairs := make([]string, len(kept))
	for i, p := range kept {
		pairs[i] = uriEscape(p.key) + "=" + uriEscape(p.value)
	}
	if !has["host"] && !has["port"] && loc.Host != "" && !strings.Contains(loc.Host, ",") && loc.Port() == "" {
		loc.Host = net.JoinHostPort(loc.Hostname(), strconv.Itoa(int(c.conn.Port)))
	}
	loc.RawQuery = strings.Join(pairs, "&")
	return connString(&loc)
}

// numberParam is a store URL parameter pgx reads as a number, and what it
// takes in words: pgx's own message for a bad value is Go's strconv text
// ("strconv.ParseInt: parsing ...").
type numberParam struct {
	key, want string
	ok        func(v string) bool
}

func numberParams() []numberParam {
	whole := func(bits int, min int64) func(string) bool {
		return func(v string) bool {
			n, err := strconv.ParseInt(v, 10, bits)
			return err == nil && n >= min
		}
	}
	ports := func(v string) bool {
		for _, p := range strings.Split(v, ",") {
			if n, err := strconv.ParseUint(p, 10, 16); p != "" && (err != nil || n == 0) {
				return false // "": the default port, as libpq has it
			}
		}
		return true
	}
	return []numberParam{
		{"port", "a port number from 1 to 65535 (or one per host, comma-separated), such as 5432", ports},
		{"connect_timeout", "a whole number of seconds, such as 10 (0: no limit)", whole(64, 0)},
		{"statement_cache_capacity", "a whole number, such as 512", whole(32, math.MinInt32)},
		{"description_cache_capacity", "a whole number, such as 512", whole(32, math.MinInt32)},
	}
}

// checkNumbers refuses a numeric parameter of the store URL (values, by
// key) that pgx could not read, saying what it takes. The URL's parameter
// is the one pgx uses (over the host's :port and PG* variables); a bad
// value from elsewhere is left to pgx (see numberProblem).
func checkNumbers(values map[string]string, secrets []string) error {
	for _, p := range numberParams() {
		if v, ok := values[p.key]; ok && !p.ok(v) {
			return fmt.Errorf("%w: %s=%q in the store URL: %s", checkpoint.ErrBadLocation, p.key, scrub(v, secrets...), p.want)
		}
	}
	return nil
}

// checkTarget refuses a target_session_attrs (the URL's, else
// PGTARGETSESSIONATTRS, as pgx reads them) that asks for a server that
// takes no writes: a store writes every task's state, so the run would
// fail at its first write, or at connecting with pgx's words.
func checkTarget(values map[string]string) error {
	where := "target_session_attrs=%q in the store URL"
	v, ok := values["target_session_attrs"]
	if !ok {
		where, v = "PGTARGETSESSIONATTRS=%q (in the environment)", os.Getenv("PGTARGETSESSIONATTRS")
	}
	switch v {
	case "read-only", "standby", "prefer-standby":
		return fmt.Errorf("%w: "+where+" asks for a server that takes no writes, and teamrun writes every task's state there: use read-write or primary, or leave it out", checkpoint.ErrBadLocation, v)
	}
	return nil
}

// numberProblem is pgx's problem with a connection setting, without Go's
// strconv text: a number that comes from a PG* variable or a service
// file, which checkNumbers does not see.
func numberProblem(err error) string {
	msg := parseProblem(err)
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		msg = strings.Replace(msg, " ("+ne.Error()+")", fmt.Sprintf(": %q is not a whole number", ne.Num), 1)
	}
	return msg
}

// Shown is a store URL as a message or a command line may show it: without
// its password, in the user part or as a parameter.
func Shown(raw string) string {
	u, query, err := splitURL(raw)
	if err == nil {
		_, err = queryParams(query)
	}
	if !IsURL(raw) {
		// The file store's (file://): no parameters of libpq's. Any
		// other is no store's: nothing of it is shown.
		u, err = url.Parse(raw)
		if err == nil && (u.Scheme != "file" || u.Opaque != "") {
			err = errors.New("not file://")
		}
		if err == nil {
			query = u.RawQuery
		}
	}
	if err != nil {
		scheme, _, _ := strings.Cut(raw, ":")
		return scheme + "://…" // on a command line: nothing of it, to be safe
	}
	u.RawQuery = query
	return redacted(u)
}

// redacted is u without its password, in the user part or as a parameter.
func redacted(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	c.RawQuery = maskQuery(c.RawQuery)
	c.Fragment, c.RawFragment = "", ""
	return connString(&c)
}

// connString is u as text, for pgx and for messages. url.URL drops the "//" of a URL with no host
// ("postgres://" becomes "postgres:"), which pgx would then read as
// keyword=value settings; libpq reads it as all defaults.
func connString(u *url.URL) string {
	s := u.String()
	if rest, ok := strings.CutPrefix(s, u.Scheme+":"); ok && !strings.HasPrefix(rest, "//") {
		return u.Scheme + "://" + rest
	}
	return s
}

// parseProblem is what pgx found wrong in a URL, without the URL it
// quotes ("cannot parse `postgres://…`: invalid port"): the message names
// the URL once, redacted our way.
func parseProblem(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "`: "); ok && strings.HasPrefix(msg, "cannot parse `") {
		return rest
	}
	return msg
}

// scrub removes each of secrets from msg. One shorter than minScrubbed
// is left: it cannot be told from the words around it (scrubbing "p" would
// mangle every word with a p); pgx masks the password of a URL it quotes.
func scrub(msg string, secrets ...string) string {
	const minScrubbed = 4
	for _, s := range secrets {
		if len(s) >= minScrubbed {
			msg = strings.ReplaceAll(msg, s, "********")
		}
	}
	return msg
}

// Error is a PostgreSQL store operation that failed. It wraps the cause and
// checkpoint.ErrStore (exit 5).
type Error struct {
	Location string
	Op       string // what teamrun was doing
	Msg      string // the cause, password scrubbed
	Advice   string
	Then     bool // Advice is a fix to make before the command is run again
	Err      error
	// Show, when set, is the session whose `session show` Advice ends
	// with, named with the --store words Paste (NameStore).
	Show  string
	Paste []string
}

func (e *Error) Error() string {
	advice := e.Advice
	if e.Show != "" {
		advice += "; see `" + shellcmd.Command("session show", nil, []string{e.Show}, e.Paste) + "`"
	}
	return fmt.Sprintf("PostgreSQL store %s: %s: %s; %s", e.Location, e.Op, e.Msg, advice)
}

// NameStore is checkpoint.StoreNamer's.
func (e *Error) NameStore(words []string) { e.Paste = words }

// Retryable is Then (checkpoint.Retryable).
func (e *Error) Retryable() bool { return e.Then }

func (e *Error) Unwrap() []error { return []error{e.Err, checkpoint.ErrStore} }

func (c *config) fail(op string, err error) error {
	return c.failWithin(op, err, c.lease/2)
}

// failWithin is fail for an operation that was given within to finish.
func (c *config) failWithin(op string, err error, within time.Duration) error {
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	adv := advice(err)
	var pe *pgconn.PgError
	if v := c.conn.RuntimeParams["statement_timeout"]; v != "" && errors.As(err, &pe) && pe.Code == "57014" {
		// The URL's own setting, not the user's or database's.
		adv = "the store URL sets statement_timeout=" + v + ": raise it or leave it out"
	}
	return &Error{Location: c.location, Op: op, Msg: scrub(message(err, within), c.secrets...), Advice: adv, Then: true, Err: err}
}

// message is err as a user reads it. A server that cannot be reached is
// where and why ("cannot reach 127.0.0.1:1: connection refused"), not
// pgx's line per attempt of Go's dialer text; so is a connection that
// ends as it starts, which is not a session's lost connection. within is how long teamrun
// waits for the server to answer a statement (half the lease: every
// deadline teamrun sets on one).
func message(err error, within time.Duration) string {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return connectMessage(ce)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		// Go's words for a connection the server closed.
		return "the server closed the connection (a restart, a crash or pg_terminate_backend)"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		// Go's "read tcp a->b: read: connection reset by peer": an RST
		// where EOF is a FIN.
		return "the server or the network reset the connection (a restart, a crash, a proxy or a firewall)"
	case errors.Is(err, pgconn.ErrConnClosed):
		// pgx's "conn closed": a statement on a connection that broke
		// under the one before.
		return "the connection broke (the server or the network ended it)"
	}
	if pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
		// A connection that stops answering (the server stopped,
		// frozen, or the network gone) is pgx's "timeout: context
		// deadline exceeded", or Go's bare "context deadline
		// exceeded" while waiting for a connection of the pool.
		return fmt.Sprintf("the server did not answer within %s (stopped, frozen, or the network is gone)", within)
	}
	if readOnly(err) {
		// The server's words name the statement teamrun sent
		// ("cannot execute nextval() in a read-only transaction").
		return "the server refused to write: the server or the user teamrun connects as is read-only (SQLSTATE 25006)"
	}
	return err.Error()
}

// connectMessage is why no connection could be made, for each host tried
// (pgx joins an error per attempt: per host, per address of its name,
// and with sslmode=prefer with SSL and without). Of a host's attempts the
// one that says most is kept; hosts that failed alike are named together:
// "cannot reach 127.0.0.1:1 or 127.0.0.1:2 (…): connection refused".
func connectMessage(ce *pgconn.ConnectError) string {
	var hosts []string
	best := map[string]attemptProblem{}
	for _, e := range attemptErrors(ce) {
		where, why := attemptAt(ce.Config, e)
		p := problemOf(why, ce.Config.User, ce.Config.Database)
		if old, ok := best[where]; ok {
			if p.rank >= old.rank { // the later attempt, as a tie: prefer's without SSL
				best[where] = p
			}
			continue
		}
		hosts = append(hosts, where)
		best[where] = p
	}
	var said []string
	alike := map[string][]string{} // the hosts of each problem, by its words
	for _, h := range hosts {
		p := best[h]
		key := p.lead + "\x00" + p.tail
		if alike[key] == nil {
			said = append(said, key)
		}
		alike[key] = append(alike[key], h)
	}
	out := make([]string, len(said))
	for i, key := range said {
		lead, tail, _ := strings.Cut(key, "\x00")
		out[i] = lead + orWords(alike[key]) + tail
	}
	return strings.Join(out, "; ")
}

// orWords is "a, b or c".
func orWords(words []string) string {
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " or " + words[n-1]
	}
	return strings.Join(words, "")
}

// attemptErrors are the errors of ce's attempts, one each.
func attemptErrors(ce *pgconn.ConnectError) []error {
	var joined interface{ Unwrap() []error }
	if errors.As(ce.Unwrap(), &joined) {
		return joined.Unwrap()
	}
	return []error{ce.Unwrap()}
}

// attemptAt is the host of cfg an attempt's error e is about, as the URL
// names it (host:port), or the Unix socket's path, and why it failed.
// pgx's error of an attempt is its own type, which only its words tell:
// "ADDRESS (HOST): why", ADDRESS an IP:port or the socket's path; why is
// what it wraps. One that found no address is Go's DNS error.
func attemptAt(cfg *pgconn.Config, e error) (where string, why error) {
	host, port, why := cfg.Host, strconv.Itoa(int(cfg.Port)), e
	var dns *net.DNSError
	if inner := errors.Unwrap(e); inner != nil && strings.HasSuffix(e.Error(), ": "+inner.Error()) {
		why = inner
		at := strings.TrimSuffix(e.Error(), ": "+inner.Error())
		if i := strings.Index(at, "/.s.PGSQL."); strings.HasPrefix(at, "/") && i > 0 {
			// The socket, as psql names it: its folder and port.
			if j := strings.Index(at[i:], " ("); j > 0 {
				return at[:i+j], why
			}
		}
		if addr, name, ok := strings.Cut(at, " ("); ok && strings.HasSuffix(name, ")") {
			host = strings.TrimSuffix(name, ")")
			if _, p, err := net.SplitHostPort(addr); err == nil {
				port = p
			}
		}
	} else if errors.As(e, &dns) {
		host = dns.Name
		for _, fb := range append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port}}, cfg.Fallbacks...) {
			if fb.Host == host {
				port = strconv.Itoa(int(fb.Port))
				break
			}
		}
	}
	if strings.HasPrefix(host, "/") {
		return host, why
	}
	return net.JoinHostPort(host, port), why
}

// attemptProblem is why one connection attempt failed, in words: lead,
// the host, tail. rank is how much it says: the server's answer more
// than a port that answered otherwise, more than silence, more than no
// connection at all.
type attemptProblem struct {
	rank       int
	lead, tail string
}

func problemOf(e error, user, db string) attemptProblem {
	who := fmt.Sprintf(" (user %s, database %s)", user, db)
	var pe *pgconn.PgError
	if errors.As(e, &pe) {
		// The server answered and refused: its words, once, not pgx's
		// "failed to connect to …: … failed SASL auth: FATAL: …".
		return attemptProblem{4, "the server at ", fmt.Sprintf(" refused user %s, database %s: %s (SQLSTATE %s)", user, db, pe.Message, pe.Code)}
	}
	var op *net.OpError
	var dns *net.DNSError
	if !errors.As(e, &dns) && (!errors.As(e, &op) || op.Op != "dial") {
		// Connected, and then no PostgreSQL conversation: nothing
		// answered (a frozen server, a port that waits for its client
		// to speak first, as HTTP's does), or something else did.
		switch {
		case errors.Is(e, io.EOF), errors.Is(e, io.ErrUnexpectedEOF), errors.Is(e, syscall.ECONNRESET), errors.Is(e, syscall.EPIPE):
			return attemptProblem{3, "the connection to ", who + " was closed or reset as it started: is that the server's port (not another program's, or a proxy's that refuses it), or did the server just stop?"}
		case readOnly(e):
			return attemptProblem{3, "the server at ", who + " is read-only (a standby, or default_transaction_read_only), and the store URL's target_session_attrs asks for one that takes writes"}
		case refusedTLS(e):
			return attemptProblem{3, "the server at ", who + " does not accept SSL, which the store URL's sslmode asks for"}
		case notPostgreSQL(e):
			return attemptProblem{3, "what answers at ", " does not speak PostgreSQL's protocol" + who + ": is that the server's port?"}
		case pgconn.Timeout(e):
			return attemptProblem{1, "the server at ", who + " did not answer in time (connect_timeout): is it stopped or overloaded, or is that port another program's?"}
		}
		return attemptProblem{2, "the connection to ", who + " failed: " + e.Error()}
	}
	var errno syscall.Errno
	why := "the connection failed"
	switch {
	case dns != nil:
		why = "cannot look up " + dns.Name + ": " + dns.Err
	case op.Timeout():
		why = "no answer in time (connect_timeout)"
	case errors.As(op.Err, &errno):
		why = errno.Error()
	}
	return attemptProblem{0, "cannot reach ", who + ": " + why}
}

// refusedParameter is the server refusing, as the first connection
// starts, a setting the URL passed it (a typo such as sslmod=, or a value
// it does not take): the URL is wrong, not the store, so it is bad usage
// (exit 2), and running again as it is would fail the same way. Only the
// first connection is asked: the lock's connections add settings of teamrun's own.
func (c *config) refusedParameter(err error) error {
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	if !errors.As(err, &ce) || !errors.As(err, &pe) || (pe.Code != "42704" && pe.Code != "22023") {
		return nil
	}
	return fmt.Errorf("%w: the server refused a parameter of the store URL %s: %s (SQLSTATE %s); correct or remove it (schema= and lease= are teamrun's; every other parameter goes to the server as a setting or is one of pgx's, such as sslmode)",
		checkpoint.ErrBadLocation, c.location, scrub(pe.Message, c.secrets...), pe.Code)
}

// readOnly reports whether err is the server refusing a write in a
// read-only transaction (a hot standby, or default_transaction_read_only
// set for the server, the database or the user), or pgx finding it so as
// it connects for a target_session_attrs of read-write or primary.
func readOnly(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006" ||
		errors.Is(err, pgconn.ErrReadOnlyConnection) || errors.Is(err, pgconn.ErrStandbyConnection)
}

// notPostgreSQL reports whether err is a connection's peer answering
// otherwise than a PostgreSQL server would: a message pgx cannot read, or
// a reply to the SSL request that is neither yes nor no.
func notPostgreSQL(err error) bool {
	return errors.Is(err, errNotPostgreSQL) || !pgconn.Timeout(err) && strings.Contains(err.Error(), "failed to receive message")
}

// errNotPostgreSQL is the reply to pgx's SSL request that no PostgreSQL
// server gives: pgx reads every reply but S as a server that runs without
// SSL ("server refused TLS connection").
var errNotPostgreSQL = errors.New("the reply to the SSL request is neither S nor N")

// sslRequest is the message that asks a PostgreSQL server for SSL: its
// length, 8, and the code 80877103.
const sslRequest = "\x00\x00\x00\x08\x04\xd2\x16\x2f"

// answerChecked is dial with each connection's reply to an SSL request
// checked (answerCheck).
func answerChecked(dial pgconn.DialFunc) pgconn.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &answerCheck{Conn: conn}, nil
	}
}

// answerCheck is a connection whose first message, when it is an SSL
// request, must have S or N (or, from a server older than SSL, an error)
// for its reply: anything else is another program, which the message
// should say rather than that the server runs without SSL.
type answerCheck struct {
	net.Conn
	state atomic.Int32 // fresh, asked (the SSL request was sent), done
}

const (
	checkFresh = iota
	checkAsked
	checkDone
)

func (c *answerCheck) Write(b []byte) (int, error) {
	if c.state.Load() == checkFresh {
		next := int32(checkDone)
		if string(b) == sslRequest {
			next = checkAsked
		}
		c.state.Store(next)
	}
	return c.Conn.Write(b)
}

func (c *answerCheck) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.state.Load() == checkAsked {
		c.state.Store(checkDone)
		if b[0] != 'S' && b[0] != 'N' && b[0] != 'E' {
			return 0, errNotPostgreSQL
		}
	}
	return n, err
}

// advice is what to deal with before err's operation is done again.
func advice(err error) string {
	if readOnly(err) {
		return "point the store at a writable primary (not a standby), or make the user writable (default_transaction_read_only off for it and its database)"
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return "check the user and password (in the URL, PGPASSWORD or ~/.pgpass)"
		case pe.Code == "3D000":
			return "create that database, or name another in the URL"
		case pe.Code == "42501":
			return "grant the user the rights on the database and schema teamrun uses (CREATE on the database, or create the schema for it)"
		case pe.Code == "57014":
			// query_canceled: a statement_timeout (ALTER ROLE/DATABASE …
			// SET, PGOPTIONS) or pg_cancel_backend.
			return "a statement_timeout set for this user or database (or in PGOPTIONS), or an administrator, cancelled it: raise or unset statement_timeout for the user teamrun connects as"
		case pe.Code == "55P03":
			return "a lock_timeout set for this user or database (or in PGOPTIONS) ran out: raise or unset lock_timeout for the user teamrun connects as"
		case strings.HasPrefix(pe.Code, "57P"), strings.HasPrefix(pe.Code, "08"):
			return "the server went away: wait until it is back"
		}
		return "check the server's log"
	}
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce) && notPostgreSQL(err):
		return "check the host and port of the store URL (--store, TEAMRUN_STORE)"
	case errors.As(err, &ce) && refusedTLS(err):
		return "set sslmode=disable (or prefer) in the store URL, or turn SSL on in the server's configuration (ssl = on)"
	case errors.As(err, &ce):
		return "check that the server is running and reachable from here, and the store URL (--store, TEAMRUN_STORE)"
	}
	return "check the server and the network"
}

// refusedTLS reports whether err is the server answering "no" to the SSL
// request sslmode=require (verify-ca, verify-full) makes: the server
// runs without SSL. pgx says it in words only.
func refusedTLS(err error) bool {
	return strings.Contains(err.Error(), "server refused TLS connection")
}
