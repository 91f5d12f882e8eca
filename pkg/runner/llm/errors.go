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

func (r redactor) clean(s string) string {
	if r == "" {
		return s
	}
	return strings.ReplaceAll(s, string(r), "[REDACTED]")
}

func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}
