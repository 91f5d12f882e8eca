package spec

import "testing"

// Lower is Python's str.lower(), which PraisonAI matches routes, if
// conditions and repeats by: Unicode's simple mapping, and the full one
// where Python applies it (İ, a final Σ); strings.ToLower differs there.
func TestLower(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ÄRGER", "ärger"},
		{"Café", "café"},
		{"İstanbul", "i\u0307stanbul"},
		{"ΟΔΟΣ", "οδος"},             // the sigma that ends a word
		{"ΟΔΟΣ ΣΟΦΙΑ", "οδος σοφια"}, // one that starts one
		{"Σ", "σ"},                   // no letter before it
		{"ΑΣ'", "ας'"},               // an apostrophe after it is case-ignorable
		{"ΑΣ'Β", "ασ'β"},             // and a letter after that
		{"ẞ", "ß"},
		{"plain ascii", "plain ascii"},
	} {
		if got := Lower(tt.in); got != tt.want {
			t.Errorf("Lower(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
