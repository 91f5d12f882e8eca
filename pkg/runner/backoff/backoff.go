// Package backoff is the one exponential backoff rule of the runner: task
// retries (retry_delay) and LLM request retries both wait by it.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Delay is the wait before retry n (1 for the first): base doubled n-1
// times, capped at limit. A base or limit of 0 or less means no wait.
func Delay(base, limit time.Duration, n int) time.Duration {
	if base <= 0 || limit <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Jitter is d with its upper half random, so that parallel clients do not
// retry in lockstep.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
