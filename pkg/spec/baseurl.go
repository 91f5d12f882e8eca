package spec

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ParseBaseURL reads the base URL of an OpenAI-compatible endpoint
// (llm.base_url, $OPENAI_BASE_URL): http or https, a host, and a port,
// when it has one, from 1 to 65535. It is the one rule: validate and plan
// refuse a spec's base_url by it as run does, and run holds the
// environment's to it. The error shows the URL as written, without its
// credentials, and what to write instead.
func ParseBaseURL(s string) (*url.URL, error) {
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
	u, err := url.Parse(s)
	switch {
	case s == "":
		return nil, fmt.Errorf(`"" is no URL: write one such as http://%s`, example)
	case !strings.Contains(s, "://"):
		shown := ShownURL(s)
		for _, scheme := range []string{"http", "https"} {
			if rest, ok := cutPrefixFold(shown, scheme+":"); ok {
				// http:/h or https:h: the scheme is there, a slash short.
				return nil, fmt.Errorf("%q needs two slashes after %s:, write %s://%s", shown, scheme, scheme, strings.TrimLeft(rest, "/"))
			}
		}
		for _, scheme := range []string{"http", "https"} {
			if rest, ok := cutPrefixFold(shown, scheme+"//"); ok {
				return nil, fmt.Errorf("%q needs a colon after %s, write %s://%s", shown, scheme, scheme, rest)
			}
		}
		// localhost:11434/v1 parses as the scheme "localhost".
		return nil, fmt.Errorf("%q has no scheme: write http://%s (or https://)", shown, strings.TrimPrefix(shown, "//"))
	case err != nil:
		if user, rest, ok := userinfo(s); ok && user != "" {
			if _, err := url.Parse(rest); err == nil {
				return nil, fmt.Errorf("%q has a user or password part (before the @, not shown) that is no valid URL text: percent-encode its special characters (%% as %%25, @ as %%40, / as %%2F, : in the password as %%3A)", ShownURL(s))
			}
		}
		return nil, fmt.Errorf("%q is not a URL: write one such as http://%s", ShownURL(s), example)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q is not an http or https URL such as http://%s", ShownURL(s), example)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%q names no host: write one such as %s://%s", ShownURL(s), u.Scheme, example)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q has the port %s, which no server listens on: a port is from 1 to 65535", ShownURL(s), p)
		}
	}
	return u, nil
}

// ShownURL is a URL as written, fit for a message: without the userinfo
// and the query, where credentials ride, nor the fragment. It works on
// the text, so that one that does not parse is shown too.
func ShownURL(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "#")
	s, _, _ = strings.Cut(s, "?")
	_, rest, _ := userinfo(s)
	return rest
}

// userinfo cuts the user and password part (user:password@) out of the
// URL s, as text: ok when it has one; rest is s without it.
func userinfo(s string) (user, rest string, ok bool) {
	host := 0
	if i := strings.Index(s, "://"); i >= 0 {
		host = i + len("://")
	} else if i := strings.Index(s, "//"); i >= 0 {
		// http//u:pw@h, a colon short, or //u:pw@h: the user part
		// follows the slashes.
		host = i + len("//")
	} else {
		// http:/u:pw@h, a slash short: the user part still follows the scheme.
		for _, scheme := range []string{"http:", "https:"} {
			if rest, ok := cutPrefixFold(s, scheme); ok {
				host = len(s) - len(strings.TrimLeft(rest, "/"))
			}
		}
	}
	end := len(s)
	if i := strings.IndexAny(s[host:], "/?#"); i >= 0 {
		end = host + i
	}
	i := strings.LastIndexByte(s[host:end], '@')
	if i < 0 {
		return "", s, false
	}
	return s[host : host+i], s[:host] + s[host+i+1:], true
}

// cutPrefixFold is strings.CutPrefix with the case of prefix ignored.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
