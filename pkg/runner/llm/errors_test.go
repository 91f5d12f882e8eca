package llm

import "testing"

// EndsAttempts: the failures a task's new attempt cannot help, and not the
// ones it may (or that the server asked to be tried again).
func TestEndsAttempts(t *testing.T) {
	tests := []struct {
		name string
		e    Error
		want bool
	}{
		{"quota", Error{StatusCode: 429, Err: ErrQuota}, true},
		{"key refused", Error{StatusCode: 401}, true},
		{"forbidden", Error{StatusCode: 403}, true},
		{"not found", Error{StatusCode: 404}, true},
		{"401 the server asked to retry", Error{StatusCode: 401, Retryable: true}, false},
		{"rate limit, retries ran out", Error{StatusCode: 429, Retryable: true}, false},
		{"cut at max_tokens", Error{StatusCode: 200}, false},
		{"bad request", Error{StatusCode: 400}, false},
		{"no answer", Error{Retryable: true}, false},
	}
	for _, tt := range tests {
		if got := tt.e.EndsAttempts(); got != tt.want {
			t.Errorf("%s: EndsAttempts %v, want %v", tt.name, got, tt.want)
		}
	}
}
