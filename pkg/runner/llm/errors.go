package llm

import (
	"errors"
	"fmt"
	"net/http"
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
// characters that also occurs in the key: for text a server wrote.
func (r redactor) cleanAll(s string) string {
	s = r.clean(s)
	key := string(r)
	if len(key) < minFragment || len(s) < minFragment {
		return s
	}
	var b strings.Builder
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
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
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
