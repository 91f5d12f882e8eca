package sessionid

import "testing"

func TestPrefix(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"agents", "agents"},
		{"price watch", "price-watch"},
		{"prices+eu", "prices-eu"},
		{"preisüberwachung", "preis-berwachung"},
		{".nightly", "nightly"},
		{"-dash", "dash"},
		{"a  b!", "a-b"},
		{"???", "session"},
		{"", "session"},
	} {
		if got := Prefix(tc.name, 100); got != tc.want {
			t.Errorf("Prefix(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Prefix("abcdef", 3); got != "abc" {
		t.Errorf("Prefix cut to 3 = %q", got)
	}
}
