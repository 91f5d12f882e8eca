package spec

import (
	"strings"
	"unicode"
)

// A key pasted where the name of the variable that holds it goes
// (llm.api_key_env, an MCP server's header) is refused without being
// shown: a message would put it into a CI log or a cron mail.

// pastedKey is what is said of one.
const pastedKey = "holds what looks like a key itself, not the name of the environment variable that holds it (the value is not shown): put the key in a variable (export MY_KEY=…) and name that variable here"

// namesSecret says whether the key at path names the environment variable
// that holds a secret: an api_key_env, or an MCP server's header.
func namesSecret(path string) bool {
	segs := strings.Split(path, ".")
	n := len(segs)
	return segs[n-1] == "api_key_env" || n >= 2 && segs[n-2] == "headers"
}

// keyPrefixes begin the keys of well-known providers; no variable's name
// does.
var keyPrefixes = []string{"sk-", "sk_", "gsk_", "xai-", "AIza", "hf_", "ghp_", "github_pat_", "glpat-", "r8_", "pplx-", "nvapi-", "csk-"}

// LooksLikeKey says whether name, written where a variable's name goes, is
// rather a key: a known provider's prefix, or a long mix of lower- and
// upper-case letters and digits, as no variable is named.
func LooksLikeKey(name string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	var lower, upper, digit bool
	for _, r := range name {
		lower = lower || unicode.IsLower(r)
		upper = upper || unicode.IsUpper(r)
		digit = digit || unicode.IsDigit(r)
	}
	return len(name) >= 24 && lower && upper && digit
}

// checkKeyName refuses v, a variable's name where a secret's variable is
// named, when it looks like the secret itself. One that is no identifier
// at all the schema refuses, without showing it either, but for a
// PraisonAI file (unchecked: true), which the schema does not check.
func (b *builder) checkKeyName(v *tree, unchecked bool) {
	if s, ok := v.str(); ok && (unchecked || identRE().MatchString(s)) && LooksLikeKey(s) {
		b.errorf(v, v.pos(), "%s", pastedKey)
	}
}
