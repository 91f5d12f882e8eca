// Package urltext reads a URL as text, the way a user may have misspelt
// it: whether its scheme is spelt short. The spec's URLs (base_url, an MCP
// server's url) and the store's location (postgres://, file://) are held
// to this one rule, so that a typo is told alike wherever it is made.
package urltext

import "strings"

// Short is how a URL's scheme is spelt short.
type Short int

const (
	// NotShort: the scheme is followed by ://, or s does not start with it.
	NotShort Short = iota
	// SlashShort: the colon is there, a slash or two are not (http:/h, http:h).
	SlashShort
	// ColonShort: the slashes are there, the colon is not (http//h).
	ColonShort
)

// SchemeShort reports whether s starts with one of schemes, case ignored,
// spelt short: followed by a colon and fewer than two slashes, or by two
// slashes and no colon. scheme is the one of schemes it starts with, rest
// what follows its colon and slashes. Such a text is no folder's path nor
// URL: read as either, its user part (a password) went where it shows.
func SchemeShort(s string, schemes ...string) (scheme, rest string, how Short) {
	for _, scheme := range schemes {
		after, ok := cutPrefixFold(s, scheme)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(after, "://"):
			return scheme, after[len("://"):], NotShort
		case strings.HasPrefix(after, ":"):
			return scheme, strings.TrimPrefix(after[1:], "/"), SlashShort
		case strings.HasPrefix(after, "//"):
			return scheme, after[len("//"):], ColonShort
		}
	}
	return "", s, NotShort
}

// Needs says what a scheme spelt so lacks, in a message's words: "needs
// two slashes after http:", "needs a colon after http".
func (h Short) Needs(scheme string) string {
	switch h {
	case SlashShort:
		return "needs two slashes after " + scheme + ":"
	case ColonShort:
		return "needs a colon after " + scheme
	}
	return ""
}

// cutPrefixFold is strings.CutPrefix with the case of prefix ignored.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
