// Package sessionid is the one rule for making a name the start of a
// session id: the store's fresh ids (checkpoint.NewID) and the ids of the
// crontab line a scheduler file prints (pkg/spec) both use it. It imports
// nothing of teamrun's, so that pkg/spec, which the store imports, can.
package sessionid

import "strings"

// MaxLen is the most characters an id holds.
const MaxLen = 128

// Byte reports whether c is of the id alphabet: A-Z a-z 0-9 . _ -.
func Byte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Prefix is name made the start of an id of at most max bytes: a run of
// other bytes than the alphabet's is one '-', and it starts with neither a
// dot nor a '-' (an id the commands teamrun prints would take for a flag).
// A name with nothing left is "session".
func Prefix(name string, max int) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if c := name[i]; Byte(c) {
			b.WriteByte(c)
		} else if !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	p := strings.TrimRight(strings.TrimLeft(b.String(), ".-"), "-")
	if len(p) > max {
		p = p[:max]
	}
	if p == "" {
		p = "session"
	}
	return p
}
