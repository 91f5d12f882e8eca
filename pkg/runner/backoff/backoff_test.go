package backoff

import (
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		base, limit time.Duration
		n           int
		want        time.Duration
	}{
		{time.Second, time.Minute, 1, time.Second},
		{time.Second, time.Minute, 2, 2 * time.Second},
		{time.Second, time.Minute, 4, 8 * time.Second},
		{time.Second, time.Minute, 7, time.Minute},
		{time.Second, time.Minute, 1000, time.Minute}, // no overflow
		{time.Second, 1500 * time.Millisecond, 2, 1500 * time.Millisecond},
		{0, time.Minute, 3, 0},
		{time.Second, 0, 3, 0},
		{time.Second, time.Minute, 0, time.Second},
	}
	for _, tt := range tests {
		if got := Delay(tt.base, tt.limit, tt.n); got != tt.want {
			t.Errorf("Delay(%v, %v, %d) = %v, want %v", tt.base, tt.limit, tt.n, got, tt.want)
		}
	}
}

func TestJitter(t *testing.T) {
	d := 10 * time.Second
	for range 1000 {
		if j := Jitter(d); j < d/2 || j > d {
			t.Fatalf("Jitter(%v) = %v, outside [%v, %v]", d, j, d/2, d)
		}
	}
	if Jitter(0) != 0 {
		t.Error("Jitter(0) != 0")
	}
}
