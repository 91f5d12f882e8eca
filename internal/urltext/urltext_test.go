package urltext

import "testing"

// A scheme spelt short is told apart from one spelt whole and from a
// folder's path, the case of the scheme ignored.
func TestSchemeShort(t *testing.T) {
	for _, tt := range []struct {
		s, scheme, rest string
		how             Short
		needs           string
	}{
		{"http:/u:pw@h/v1", "http", "u:pw@h/v1", SlashShort, "needs two slashes after http:"},
		{"HTTPS:h", "https", "h", SlashShort, "needs two slashes after https:"},
		{"http//u:pw@h", "http", "u:pw@h", ColonShort, "needs a colon after http"},
		{"https//h/v1", "https", "h/v1", ColonShort, "needs a colon after https"},
		{"postgresql//u:pw@db/app", "postgresql", "u:pw@db/app", ColonShort, "needs a colon after postgresql"},
		{"postgres:u:pw@db/app", "postgres", "u:pw@db/app", SlashShort, "needs two slashes after postgres:"},
		{"http://h/v1", "http", "h/v1", NotShort, ""},
		{"http:///h/v1", "http", "/h/v1", NotShort, ""},
		{"httpx//h", "", "httpx//h", NotShort, ""},
		{"./http//h", "", "./http//h", NotShort, ""},
		{"http/h", "", "http/h", NotShort, ""},
		{"", "", "", NotShort, ""},
	} {
		scheme, rest, how := SchemeShort(tt.s, "https", "http", "postgresql", "postgres")
		if scheme != tt.scheme || rest != tt.rest || how != tt.how || how.Needs(scheme) != tt.needs {
			t.Errorf("SchemeShort(%q) = %q, %q, %v (%q); want %q, %q, %v (%q)", tt.s, scheme, rest, how, how.Needs(scheme), tt.scheme, tt.rest, tt.how, tt.needs)
		}
	}
}
