package llm

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomKey is a key to redact: random; one that repeats itself ("abab…";
// "sk-SECRETKEY-…" has E, C and R twice), where a run of key characters
// can start at more than one place in the key; or one made of what a
// redaction puts in ("[REDACTED]").
func randomKey(r *rand.Rand) string {
	switch r.IntN(5) {
	case 0:
		return strings.Repeat("ab", 4+r.IntN(6))
	case 3: // what a redaction puts in must not join a run
		return randomText(r, "[]REDACTab", 8+r.IntN(12))
	case 1:
		return "sk-SECRETKEY-0123456789abcdef"
	case 2:
		unit := randomText(r, "abc", 1+r.IntN(4))
		return strings.Repeat(unit, 8/len(unit)+1+r.IntN(3))
	}
	return randomText(r, "abcdefghABCDEFGH0123456789-_", 8+r.IntN(40))
}

func randomText(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// streamText joins words, key pieces (any start, any length, 8 or more
// characters and fewer) and whole keys.
func streamText(r *rand.Rand, keys []string) string {
	var b strings.Builder
	for range 1 + r.IntN(12) {
		k := keys[r.IntN(len(keys))]
		switch r.IntN(4) {
		case 0:
			b.WriteString(k)
		case 1, 2:
			i := r.IntN(len(k))
			b.WriteString(k[i : i+1+r.IntN(len(k)-i)])
		default:
			b.WriteString(randomText(r, "ab ECRK-\n[]x", r.IntN(6)))
		}
	}
	return b.String()
}

// However a text is cut into parts, what a KeyStream returns for them,
// put together, is what RedactKeys makes of the whole text.
func TestKeyStreamIsRedactKeysOfTheWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 20000 {
		keys := []string{randomKey(r)}
		for range r.IntN(3) {
			keys = append(keys, randomKey(r))
		}
		keys = append(keys, "short") // not redacted: too short
		text := streamText(r, keys)
		want := RedactKeys(text, keys...)
		ks := NewKeyStream(keys...)
		var got strings.Builder
		for rest := text; rest != ""; {
			size := 1 + r.IntN(len(rest))
			if r.IntN(3) == 0 {
				size = 1
			}
			got.WriteString(ks.Next(rest[:size]))
			if !strings.HasPrefix(want, got.String()) {
				t.Fatalf("case %d: keys %q, text %q: after %q the stream gave %q, not the start of %q", n, keys, text, text[:len(text)-len(rest)+size], got.String(), want)
			}
			rest = rest[size:]
		}
		got.WriteString(ks.End())
		if got.String() != want {
			t.Fatalf("case %d: keys %q, text %q: stream %q, whole %q", n, keys, text, got.String(), want)
		}
	}
}

// The cases a tester found: the held-back end matched the key at another
// place than the run it ended, so 8 key characters went out unredacted.
func TestKeyStreamCutInsideARun(t *testing.T) {
	for _, tt := range []struct{ key, text string }{
		{"sk-SECRETKEY-0123456789abcdef", "sk-SECREC"},
		{"sk-proj-u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKLzdocJ2isAj", "key id: u8jzPde0K"},
		{"sk-SECRETKEY-0123456789abcdef", "Answer: sk-SECREC"},
	} {
		ks := NewKeyStream(tt.key)
		got := ks.Next(tt.text) + ks.End()
		if want := RedactKeys(tt.text, tt.key); got != want || strings.Contains(got, tt.text[len(tt.text)-9:len(tt.text)-1]) {
			t.Errorf("%q: got %q, want %q", tt.text, got, want)
		}
	}
}

// Drop forgets the text held: what comes after starts anew.
func TestKeyStreamDrop(t *testing.T) {
	const key = "sk-SECRETKEY-0123456789abcdef"
	ks := NewKeyStream(key)
	got := ks.Next("say sk-SECR")
	ks.Drop()
	got += ks.Next("again") + ks.End()
	if got != "say again" {
		t.Errorf("got %q", got)
	}
}
