package spec

import (
	"strconv"
	"strings"
)

// Where the name of the environment variable that holds a secret goes
// (llm.api_key_env, in a spec or .teamrun/config.yml, an MCP server's
// header), a value that is no such name is refused without being shown:
// it may be the key itself, and a message would put it into a CI log or a
// cron mail. One that is a name is shown only when it reads as one
// (ShowsVarName).

// pastedKey is what is said of a key pasted there.
const pastedKey = "holds what looks like a key itself, not the name of the environment variable that holds it (the value is not shown): put the key in a variable (export MY_KEY=…) and name that variable here"

// notVarName is what is said of any other value that is no variable name.
const notVarName = "is no environment variable name (the value is not shown): write the name of the variable that holds it: letters, digits and _, not starting with a digit, such as MY_API_KEY"

// namesSecret says whether the key at path names the environment variable
// that holds a secret: an api_key_env, or an MCP server's header.
func namesSecret(path string) bool {
	segs := strings.Split(path, ".")
	n := len(segs)
	return segs[n-1] == "api_key_env" || n >= 2 && segs[n-2] == "headers"
}

// keyPrefixes begin the keys of well-known providers.
var keyPrefixes = []string{"sk-", "sk_", "gsk_", "xai-", "AIza", "hf_", "ghp_", "github_pat_", "glpat-", "r8_", "pplx-", "nvapi-", "csk-"}

// minKeyRest is how long a key goes on after its prefix at least: a name
// such as hf_token or sk_test_var starts like a key but is none.
const minKeyRest = 16

// LooksLikeKey says whether s starts as a well-known provider's keys do
// and goes on as long as one, or holds such a key after a /, :, = or space
// (openai/sk-…, "Bearer sk-…"): a key pasted where a name, a model or a
// URL goes, which no message may show. Within s a key must also read as
// random (randomRun), so that a model such as org/hf_model-2024-instruct
// is not taken for one.
func LooksLikeKey(s string) bool {
	if startsAsKey(s) {
		return true
	}
	for i := 1; i < len(s); i++ {
		if strings.IndexByte("/:= \t,;'\"", s[i-1]) >= 0 && startsAsKey(s[i:]) && randomRun(s[i:]) {
			return true
		}
	}
	return false
}

// startsAsKey says whether s starts with a provider's key prefix and goes
// on for at least minKeyRest more bytes.
func startsAsKey(s string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) && len(s)-len(p) >= minKeyRest {
			return true
		}
	}
	return false
}

// randomRun says whether s holds, before its first space, a run of
// minKeyRest letters and digits with a digit among them, as a key's random
// part does and words joined by - or _ do not.
func randomRun(s string) bool {
	run, digit := 0, false
	for i := 0; i < len(s) && s[i] != ' '; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			run, digit = run+1, true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			run++
		default:
			run, digit = 0, false
		}
		if run >= minKeyRest && digit {
			return true
		}
	}
	return false
}

// pastedValue is what is said of a key pasted where a model, a URL or a
// duration goes (after the key's path).
const pastedValue = "holds what looks like an API key (the value is not shown): a key never goes in a file; put it in an environment variable (export MY_KEY=…) and name that variable in api_key_env"

// checkNoKey refuses v, a text that no key belongs in (a model name, a
// base_url), when it looks like one, without showing it.
func (b *builder) checkNoKey(v *tree) bool {
	if s, ok := v.str(); ok && LooksLikeKey(s) {
		b.errorf(v, v.pos(), "%s", pastedValue)
		return true
	}
	return false
}

// KeyNameProblem says what is wrong with name where the name of the
// environment variable that holds a secret goes, without showing it: ""
// when it can be that name. Refused is what no variable can be named
// (a character other than letters, digits and _, a leading digit) and what
// starts as a well-known provider's keys do.
func KeyNameProblem(name string) string {
	ident := identRE().MatchString(name)
	if LooksLikeKey(name) {
		return pastedKey
	}
	for _, p := range keyPrefixes {
		if strings.HasPrefix(name, p) && !ident {
			return pastedKey
		}
	}
	if ident {
		return ""
	}
	// The usual slips in writing a name: $NAME or ${NAME}, spaces.
	if n, ok := strings.CutPrefix(name, "$"); ok {
		if b, ok := strings.CutPrefix(n, "{"); ok {
			n = strings.TrimSuffix(b, "}")
		}
		if KeyNameProblem(n) == "" {
			if ShowsVarName(n) {
				return "is written with a $: write the variable's name alone, " + n + " (teamrun reads the variable itself)"
			}
			return "is written with a $ (the value is not shown): write the variable's name alone, without $ or braces (teamrun reads the variable itself)"
		}
	}
	if t := strings.TrimSpace(name); t != name && KeyNameProblem(t) == "" {
		return "has spaces around the variable's name (the value is not shown): write the name alone"
	}
	return notVarName
}

// maxNamePart is the longest run between _s of a name that messages show:
// a key pasted as a name is one long run (32 hex digits, say), a variable's
// name is words (AZURE_OPENAI_API_KEY_eastus2).
const maxNamePart = 16

// ShowsVarName says whether a message may show name, a variable's name
// where the name of one holding a secret goes: it reads as a name, not as
// a key pasted there. Another is named by the key that names it.
func ShowsVarName(name string) bool {
	return KeyNameProblem(name) == "" && ReadsAsName(name)
}

// ReadsAsName says whether a message may show s, typed where a name goes
// but perhaps no identifier (--var api-key=…): it is words, none longer
// than maxNamePart between the characters that are no letter or digit,
// and looks like no key.
func ReadsAsName(s string) bool {
	if LooksLikeKey(s) {
		return false
	}
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			run++
		} else {
			run = 0
		}
		if run > maxNamePart {
			return false
		}
	}
	return true
}

// NotShown is what a message says where it leaves a value out.
const NotShown = "(the value is not shown)"

// ShownValue is s, a value typed on the command line (a flag's, a session
// id, a task's name), as a message that refuses it shows it: quoted, as
// %q does, unless it looks like a key (LooksLikeKey): a key pasted in the
// wrong place (--wait "$KEY") must not reach a CI log or a cron mail. The
// one rule for every flag's bad value.
func ShownValue(s string) string {
	if LooksLikeKey(s) {
		return "what looks like an API key " + NotShown
	}
	return strconv.Quote(s)
}

// checkKeyName refuses v, the name of a variable that holds a secret, when
// it is none (KeyNameProblem). The schema refuses one that is no
// identifier, with the same words, but in a PraisonAI file (unchecked:
// true), which the schema does not check.
func (b *builder) checkKeyName(v *tree, unchecked bool) {
	s, ok := v.str()
	if !ok || !unchecked && !identRE().MatchString(s) {
		return
	}
	if p := KeyNameProblem(s); p != "" {
		b.errorf(v, v.pos(), "%s", p)
	}
}
