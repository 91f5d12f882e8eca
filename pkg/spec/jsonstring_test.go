package spec

import (
	"testing"
	"unicode/utf8"
)

// appendJSONStringByByte is appendJSONString as it was, a byte at a time:
// the task keys of stored sessions were hashed over its output, so the
// faster one must write exactly the same bytes.
func appendJSONStringByByte(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				if c < 0x20 {
					b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func TestAppendJSONStringUnchanged(t *testing.T) {
	cases := []string{"", "plain", "task 12", `q"uote`, `back\slash`, "tab\tnl\ncr\r", "\b\f\x00\x01\x1f\x7f", "<html> & ünï ✓ \u2028",
		"bad \xff\xfe utf8", "\xe2\x9c", "ends in \\", "\"", "mixed \"a\\b\"\n\xc3\xa9\xff end"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "ab"+string([]byte{byte(c)})+"cd")
	}
	for _, s := range cases {
		if got, want := string(appendJSONString([]byte("x"), s)), string(appendJSONStringByByte([]byte("x"), s)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}
