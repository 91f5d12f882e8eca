package main

import (
	"testing"
	"time"
)

func TestRelative(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"},
		{9 * time.Second, "just now"},
		{-5 * time.Second, "just now"},
		{42 * time.Second, "42s ago"},
		{5 * time.Minute, "5m ago"},
		{3*time.Hour + 59*time.Minute, "3h ago"},
		{47 * time.Hour, "47h ago"},
		{3 * 24 * time.Hour, "3d ago"},
		{90 * 24 * time.Hour, "3mo ago"},
		{3 * 365 * 24 * time.Hour, "3y ago"},
		{-2 * time.Minute, "in 2m"},
	} {
		if got := relative(tc.d); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestFormatWhen(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	at := now.Add(-90 * time.Minute).In(time.FixedZone("X", 3600))
	if got, want := formatWhen(at, now, false), "2026-03-04T10:30:00Z"; got != want {
		t.Errorf("pipe: got %q, want %q", got, want)
	}
	if got, want := formatWhen(at, now, true), "1h ago"; got != want {
		t.Errorf("terminal: got %q, want %q", got, want)
	}
	if got := formatWhen(time.Time{}, now, false); got != "-" {
		t.Errorf("zero time: got %q", got)
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "7d", want: 7 * 24 * time.Hour},
		{in: "0d", want: 0},
		{in: "36h", want: 36 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: " 1h30m ", want: 90 * time.Minute},
		{in: "", bad: true},
		{in: "d", bad: true},
		{in: "-3d", bad: true},
		{in: "-1h", bad: true},
		{in: "soon", bad: true},
		{in: "1.5d", bad: true},
	} {
		got, err := parseAge(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseAge(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
