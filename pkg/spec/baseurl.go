package spec

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/teamrun/teamrun/internal/urltext"
)

// ParseBaseURL reads the base URL of an OpenAI-compatible endpoint
// (llm.base_url, $OPENAI_BASE_URL): http or https, a host, and a port,
// when it has one, from 1 to 65535. It is the one rule: validate and plan
// refuse a spec's base_url by it as run does, and run holds the
// environment's to it. The error shows the URL as written, without its
// credentials, and what to write instead.
func ParseBaseURL(s string) (*url.URL, error) {
	if LooksLikeKey(strings.TrimSpace(s)) {
		return nil, errors.New(pastedValue)
	}
	return parseHTTPURL(s, "127.0.0.1:11434/v1")
}

// ParseMCPURL is ParseBaseURL's rule for an MCP server's url.
func ParseMCPURL(s string) (*url.URL, error) {
	return parseHTTPURL(s, "mcp.example/mcp")
}

// parseHTTPURL reads an http or https URL; the errors suggest one such as
// http://example (a host and path).
func parseHTTPURL(s, example string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf(`"" is no URL: write one such as http://%s`, example)
	}
	shown := ShownURL(s)
	if scheme, rest, how := urltext.SchemeShort(shown, "http", "https"); how != urltext.NotShort {
		// http:/h, https:h, http//h: the user part shown would be a
		// folder's name to some, a host to others.
		return nil, fmt.Errorf("%q %s, write %s://%s", shown, how.Needs(scheme), scheme, rest)
	}
	if !strings.Contains(s, "://") {
		// localhost:11434/v1 parses as the scheme "localhost".
		return nil, fmt.Errorf("%q has no scheme: write http://%s (or https://)", shown, strings.TrimPrefix(shown, "//"))
	}
	u, err := url.Parse(s)
	if user, rest, ok := userinfo(s); ok && user != "" {
		// Go's user part ends at the first / ? or # after the //, and
		// so the password's rest went into the host, the path or the
		// query: a user part that holds one is refused whether or not Go
		// reads the URL, and so is one that makes it no URL.
		if _, rerr := url.Parse(rest); strings.ContainsAny(user, "/?#") || err != nil && rerr == nil {
			return nil, fmt.Errorf("%q has a user or password part (up to the last @, not shown) that a URL does not read as written: percent-encode its special characters (%% as %%25, / as %%2F, ? as %%3F, # as %%23, @ as %%40, : in the password as %%3A)", shown)
		}
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q is not a URL: write one such as http://%s", shown, example)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q is not an http or https URL such as http://%s", shown, example)
	case u.Hostname() == "":
		if _, after, _ := strings.Cut(shown, "://"); strings.HasPrefix(after, "/") {
			// http:///u:pw@h: the host (and a user part) was read as
			// the path.
			return nil, fmt.Errorf("%q names no host: it has three slashes after %s:, where a URL has two before its host", shown, u.Scheme)
		}
		return nil, fmt.Errorf("%q names no host: write one such as %s://%s", shown, u.Scheme, example)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q has the port %s, which no server listens on: a port is from 1 to 65535", shown, p)
		}
	}
	return u, nil
}

// ShownURL is a URL as written, fit for a message: without the userinfo
// and the query, where credentials ride, nor the fragment. It works on
// the text, so that one that does not parse is shown too.
func ShownURL(s string) string {
	user, rest, _ := userinfo(strings.TrimSpace(s))
	end := "?#"
	if strings.ContainsAny(user, "?#") {
		// Read as Go reads it, what follows the @ is in the query or
		// the fragment (…?email=a@b&api_key=…): & and ; start another
		// pair there.
		end = "?#&;"
	}
	if i := strings.IndexAny(rest, end); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// userinfo cuts the user and password part (user:password@) out of the
// URL s, as text: ok when it has one; rest is s without it. The part runs
// from the slashes after the scheme to the last @ (before the query, when
// Go reads a host): a password may hold an unencoded / ? # or @, which end
// the part to Go (and to a browser), and would show what follows them
// (PostgreSQL's store URLs are read so too).
func userinfo(s string) (user, rest string, ok bool) {
	host := 0
	if _, after, how := urltext.SchemeShort(s, "http", "https"); how != urltext.NotShort {
		// http:/u:pw@h or http//u:pw@h: the user part follows the
		// scheme spelt short.
		host = len(s) - len(after)
	} else if i := strings.Index(s, "//"); i >= 0 {
		host = i + len("//")
	}
	// http:///u:pw@h: a slash too many still leaves it a user part.
	host = len(s) - len(strings.TrimLeft(s[host:], "/"))
	end := len(s)
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		// Go reads a host before any ? or #: an @ after one in a
		// name=value pair is the query's (?user=me@example.com); one
		// before any = follows a password's ? or # (u:123?s3cret@h).
		if j := strings.IndexAny(s[host:], "?#"); j >= 0 {
			if at := strings.LastIndexByte(s, '@'); at < host+j || strings.Contains(s[host+j:at], "=") {
				end = host + j
			}
		}
	}
	i := strings.LastIndexByte(s[host:end], '@')
	if i < 0 {
		return "", s, false
	}
	return s[host : host+i], s[:host] + s[host+i+1:], true
}
