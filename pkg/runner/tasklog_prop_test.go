package runner

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/runner/llm"
)

// A command's output (its log, -v lines, a large result read through
// redactedReader) and a stream's deltas (task_delta) pass through a
// redacting writer: however the text comes in writes, what is passed on,
// put together, is what RedactKeys makes of the whole text, and at every
// write the start of it.
func TestRedactingWriterIsRedactKeysOfTheWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := func(k string) string {
		i := r.IntN(len(k))
		return k[i : i+1+r.IntN(len(k)-i)]
	}
	for n := range 5000 {
		keys := []string{"sk-SECRETKEY-0123456789abcdef", "sk-proj-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKLzdocJ2isAj", strings.Repeat("ab", 4+r.IntN(5))}
		keys = keys[:1+r.IntN(len(keys))]
		var b strings.Builder
		for range 1 + r.IntN(8) {
			switch k := keys[r.IntN(len(keys))]; r.IntN(3) {
			case 0:
				b.WriteString(k)
			case 1:
				b.WriteString(pieces(k))
			default:
				b.WriteString([]string{" ", "token ", "\n", "sk-", "EC", "0K", "a"}[r.IntN(7)])
			}
		}
		text := b.String()
		want := llm.RedactKeys(text, keys...)

		c := &chunks{}
		w := redacting(c, keys)
		var deltas []string
		delta, _, flush := redactedDeltas(func(s string) { deltas = append(deltas, s) }, nil, keys)
		for rest := text; rest != ""; {
			size := 1 + r.IntN(len(rest))
			w.Write([]byte(rest[:size]))
			delta(rest[:size])
			if got := strings.Join(c.got, ""); !strings.HasPrefix(want, got) {
				t.Fatalf("case %d: keys %q, text %q: writes %q are not the start of %q", n, keys, text, c.got, want)
			}
			rest = rest[size:]
		}
		w.Close()
		flush()
		if got := strings.Join(c.got, ""); got != want {
			t.Fatalf("case %d: keys %q, text %q: writes %q, whole %q", n, keys, text, c.got, want)
		}
		if got := strings.Join(deltas, ""); got != want {
			t.Fatalf("case %d: keys %q, text %q: deltas %q, whole %q", n, keys, text, deltas, want)
		}
	}
}
