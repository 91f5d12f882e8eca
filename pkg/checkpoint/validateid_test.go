package checkpoint

import (
	"strings"
	"testing"
)

// TestValidateIDWording: the message names the offending character as a
// character, at its position in characters (F6: "é" was reported as the
// byte 'Ã').
func TestValidateIDWording(t *testing.T) {
	tests := []struct {
		id   string
		want string
	}{
		{"", "empty"},
		{"é", `character 'é' at 1`},
		{"abé", `character 'é' at 3`},
		{"aé b", `character 'é' at 2`},
		{"ab\xff", "byte 0xFF (not UTF-8) at 3"},
		{"a b", `character ' ' at 2`},
		{strings.Repeat("é", 100), `character 'é' at 1`}, // 200 bytes, but 100 characters
		{strings.Repeat("x", 129), "129 characters"},
		{".x", "starts with a dot"},
	}
	for _, tt := range tests {
		err := ValidateID(tt.id)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ValidateID(%q) = %v, want it to say %q", tt.id, err, tt.want)
		}
	}
}
