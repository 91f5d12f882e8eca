package llm

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Sentinels that every *Error matches with errors.Is: a caller tells a
// failure worth another try later (the server was busy or unreachable and the
// client's retries ran out) from one that the same request will always meet
// (a bad key, an unknown model, a malformed answer).
var (
	ErrExhausted = errors.New("llm: retries exhausted")
	ErrPermanent = errors.New("llm: permanent error")
	// ErrQuota is a 429 that says the account cannot pay (OpenAI's
	// insufficient_quota): permanent, never retried.
	ErrQuota = errors.New("llm: quota used up")
)

// Error is a failed Complete call. Its text names the model, the endpoint
// (without credentials or query) and the HTTP status with the server's own
// message; the API key is removed from every field before it is stored.
type Error struct {
	Model      string
	URL        string // the endpoint, credentials and query removed
	StatusCode int    // 0 when no HTTP response arrived (transport error, timeout)
	Message    string // the server's error message, or what went wrong on the wire
	Attempts   int    // requests sent, retries included
	Retryable  bool   // the last failure was transient (429, 5xx, transport): retries ran out
	Err        error  // the underlying cause, if any (such as context.DeadlineExceeded)
	// Calls are the requests that reported usage before it failed: they
	// were paid for.
	Calls []Call
	// unread is an answer that came but was not read to its end (a stream
	// that broke off, an answer over maxBody): the server may bill it, as
	// a request teamrun cut off.
	unread bool
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %q at %s: %s", e.Model, e.URL, e.detail())
	if e.Retryable {
		fmt.Fprintf(&b, " (gave up after %s)", attemptsText(e.Attempts))
	}
	return b.String()
}

// detail is the status and the message, without model and URL.
func (e *Error) detail() string {
	if e.StatusCode == 0 {
		return e.Message
	}
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// EndsAttempts says whether no new attempt of the task could help: the
// account cannot pay (ErrQuota), the key is refused (401, 403) or the
// endpoint or model is not there (404). A task's retry would send the same
// request to the same account and meet the same answer; other permanent
// failures (an answer cut at max_tokens, a refusal) may go otherwise on a
// new attempt.
func (e *Error) EndsAttempts() bool {
	if e.Retryable {
		return false // the server asked for another try (x-should-retry)
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	}
	return errors.Is(e.Err, ErrQuota)
}

// Unwrap lets errors.Is match ErrExhausted or ErrPermanent, and the cause.
func (e *Error) Unwrap() []error {
	kind := ErrPermanent
	if e.Retryable {
		kind = ErrExhausted
	}
	if e.Err == nil {
		return []error{kind}
	}
	return []error{kind, e.Err}
}

// redactor removes a secret from text that may reach a user.
type redactor string

// Redacted stands where a key was.
const Redacted = "[REDACTED]"

const redacted = Redacted

// minFragment is the shortest piece of a key that cleanAll removes: a
// server that echoes a key partly ("sk-proj-****…") or a message cut inside
// one must not hand out most of it, while a few characters give nothing
// away and would make ordinary words vanish.
const minFragment = 8

// RedactKey removes key, and any run of minFragment or more of its
// characters, from text a tool or a server wrote, before it is kept or
// sent on. A key shorter than minFragment (a local server's "ollama")
// guards nothing and is left alone: removing it would cut ordinary words.
func RedactKey(key, text string) string {
	if !Redactable(key) {
		return text
	}
	return redactor(key).cleanAll(text)
}

// Redactable says whether RedactKey removes key (it is long enough).
func Redactable(key string) bool { return len(key) >= minFragment }

// RedactKeys is RedactKey of every key in turn.
func RedactKeys(text string, keys ...string) string {
	for _, k := range keys {
		text = RedactKey(k, text)
	}
	return text
}

func (r redactor) clean(s string) string {
	if r == "" {
		return s
	}
	return strings.ReplaceAll(s, string(r), redacted)
}

// cleanAll removes the key and every run of at least minFragment
// characters that also occurs in the key: for text a server wrote. Whole
// keys go first; the runs are looked for between them, in the text as
// written, so that what one redaction put in ("[REDACTED]") never joins a
// run: what cleanAll makes of a text then depends on each part of it alone
// wherever no run of key characters crosses between them (KeyStream).
func (r redactor) cleanAll(s string) string {
	key := string(r)
	if len(key) < minFragment {
		return r.clean(s)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, key)
		if i < 0 {
			break
		}
		r.pieces(&b, s[:i])
		b.WriteString(redacted)
		s = s[i+len(key):]
	}
	if b.Len() == 0 {
		return r.piecesOf(s)
	}
	r.pieces(&b, s)
	return b.String()
}

// piecesOf is s with every run of minFragment or more key characters
// redacted (pieces).
func (r redactor) piecesOf(s string) string {
	var b strings.Builder
	if !r.pieces(&b, s) {
		return s
	}
	return b.String()
}

// pieces writes s to b with each run of minFragment or more characters
// that occurs in the key replaced, longest first from the left; it says
// whether it replaced any.
func (r redactor) pieces(b *strings.Builder, s string) bool {
	key := string(r)
	last := 0 // s[:last] is copied or replaced
	for i := 0; i+minFragment <= len(s); {
		if !strings.Contains(key, s[i:i+minFragment]) {
			i++
			continue
		}
		j := i + minFragment
		for j < len(s) && strings.Contains(key, s[i:j+1]) {
			j++
		}
		b.WriteString(s[last:i])
		b.WriteString(redacted)
		last, i = j, j
	}
	b.WriteString(s[last:])
	return last > 0
}

// KeyStream redacts a text that comes in parts (a command's writes, a
// stream's deltas) exactly as RedactKeys redacts the whole: what Next and
// End return, put together, is RedactKeys of all the parts put together,
// however the text is split. It holds back what the next part could still
// make a piece of a key.
type KeyStream struct {
	stages []keyStage
}

// keyStage is one key's RedactKey on a stream: RedactKeys redacts key by
// key, each on what the one before made, so the stream does too.
type keyStage struct {
	key  redactor
	held string // the text not yet redacted, from a point cleanAll splits at
}

// maxHeld bounds what a stage holds: beyond it (a MiB of text that is all
// pieces of a key joined up, which a random key does not allow) it lets go
// of all but what the next part could still join.
const maxHeld = 1 << 20

// NewKeyStream redacts keys (those RedactKey removes) from a stream.
func NewKeyStream(keys ...string) *KeyStream {
	var k KeyStream
	for _, key := range keys {
		if Redactable(key) {
			k.stages = append(k.stages, keyStage{key: redactor(key)})
		}
	}
	return &k
}

// Redacts says whether k removes any key.
func (k *KeyStream) Redacts() bool { return len(k.stages) > 0 }

// Next takes the next part of the text and returns what of the redacted
// text can no longer change.
func (k *KeyStream) Next(s string) string {
	for i := range k.stages {
		s = k.stages[i].next(s)
	}
	return s
}

// End returns the rest of the redacted text: the text is complete.
func (k *KeyStream) End() string {
	s := ""
	for i := range k.stages {
		st := &k.stages[i]
		s = st.next(s)
		s += st.key.cleanAll(st.held)
		st.held = ""
	}
	return s
}

// Drop forgets what k holds: the text so far is discarded (a stream
// retried) and what comes next starts a new one.
func (k *KeyStream) Drop() {
	for i := range k.stages {
		k.stages[i].held = ""
	}
}

func (st *keyStage) next(s string) string {
	st.held += s
	c := st.key.cut(st.held)
	if c == 0 && len(st.held) > maxHeld {
		c = len(st.held) - st.key.joinable(st.held)
	}
	out := st.key.cleanAll(st.held[:c])
	st.held = st.held[c:]
	return out
}

// cut is where cleanAll splits s whatever comes after it: cleanAll(s+x) is
// cleanAll(s[:cut]) + cleanAll(s[cut:]+x) for every x. A whole key or a
// run of key characters that crossed it would have to hold a piece of
// minFragment characters crossing it, or begin in a end of s that x can
// go on with; cut is before both.
func (r redactor) cut(s string) int {
	c := len(s) - r.joinable(s)
	for {
		p := max(0, c-minFragment+1)
		for p < c && (p+minFragment > len(s) || !strings.Contains(string(r), s[p:p+minFragment])) {
			p++
		}
		if p == c {
			return c
		}
		c = p
	}
}

// joinable is the length of the longest end of s that occurs in the key:
// what a next part could make a piece of it. Every end of an end that
// occurs in the key occurs too, so the lengths that do are 0..joinable.
func (r redactor) joinable(s string) int {
	n := min(len(s), len(r))
	return sort.Search(n+1, func(m int) bool {
		return m > 0 && !strings.Contains(string(r), s[len(s)-m:])
	}) - 1
}

// snippet is the start of a server's text, redacted before it is cut.
func (r redactor) snippet(text string) string {
	return snippet(r.cleanAll(text[:min(len(text), windowLimit)]))
}

func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// CallsOf is the requests a failed Complete paid for: they count as usage
// though no result came of them.
func CallsOf(err error) []Call {
	var e *Error
	if errors.As(err, &e) {
		return e.Calls
	}
	var s *stoppedCalls
	if errors.As(err, &s) {
		return s.calls
	}
	return nil
}
