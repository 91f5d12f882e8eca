package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	spans := []span{
		{task: "fetch", attempt: 1, start: at(0), end: at(5), outcome: "completed"},
		{task: "a-much-longer-name", attempt: 3, start: at(5), end: at(10), outcome: "failed"},
		{task: "tiny", attempt: 1, start: at(2), end: at(2), outcome: "completed"},
		{task: "died", attempt: 2, start: at(7.5), outcome: "no end recorded"},
	}
	var out bytes.Buffer
	printTimeline(&out, spans, 78, false) // leaves 10 columns for the bars
	want := `timeline (from 2026-03-01T10:00:00Z, 10s in all):
  TASK                ATTEMPT  START  DURATION  OUTCOME
  fetch               1        +0s    5s        completed        |#####     |
  a-much-longer-name  3        +5s    5s        failed           |     #####|
  tiny                1        +2s    0s        completed        |  #       |
  died                2        +7.5s  -         no end recorded  |       ???|
`
	if out.String() != want {
		t.Errorf("timeline:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printTimeline(&out, spans[:1], 59, true)
	if !strings.Contains(out.String(), "|██████████|") {
		t.Errorf("a terminal gets block bars:\n%s", out.String())
	}
	for _, lw := range []int{40, 80, 200} {
		out.Reset()
		printTimeline(&out, spans, lw, false)
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[2:] {
			n := len([]rune(l))
			if lw >= 80 && n > lw-1 || n > max(lw-1, 78) {
				t.Errorf("width %d: a line of %d columns: %q", lw, n, l)
			}
		}
	}
}
