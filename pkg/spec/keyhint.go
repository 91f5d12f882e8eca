package spec

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxKeyChars is the longest key YAML reads in the "key: value" form (an
// implicit key): yaml.v3, as the YAML spec allows, gives up on a longer
// one and then reports the ": " after it as "mapping values are not
// allowed" (or "could not find expected ':'"), which points at the value.
const maxKeyChars = 1024

// longKeyHint replaces yaml.v3's message for a key longer than
// maxKeyChars on the line it names with one that says so, points at the
// key and says what to do. Without it, colonHint would advise quoting the
// value, which does not help (a quoted key has the same limit).
func longKeyHint(d Diagnostic, data []byte) Diagnostic {
	flow := strings.HasPrefix(d.Message, "invalid YAML: did not find expected ',' or")
	if !flow && !strings.HasPrefix(d.Message, "invalid YAML: mapping values are not allowed") &&
		!strings.HasPrefix(d.Message, "invalid YAML: could not find expected ':'") {
		return d
	}
	lines := bytes.Split(data, []byte("\n"))
	if d.Line < 1 || d.Line > len(lines) {
		return d
	}
	l := string(bytes.TrimRight(lines[d.Line-1], "\r"))
	col, n := longKeyOn(l, flow)
	if n == 0 {
		return d
	}
	d.Column = col
	d.Message = fmt.Sprintf("invalid YAML: this key is %d characters long, and YAML reads a key written as `key: value` (quoted or not) only up to %d: shorten it, or write it as an explicit key, `? ` and the key on one line and `: ` and the value on the next", n, maxKeyChars)
	return d
}

// longKeyOn finds on line l a key followed by ":" that is longer than
// maxKeyChars characters: its 1-based column and its length, or 0, 0. A
// key starts after the indentation or a "- ", or in a flow collection
// after a "{", "[" or ",".
func longKeyOn(l string, flow bool) (col, n int) {
	starts := []int{len(l) - len(strings.TrimLeft(l, " "))}
	for s := starts[0]; strings.HasPrefix(l[s:], "- "); {
		s += 2 + len(l[s+2:]) - len(strings.TrimLeft(l[s+2:], " "))
		starts = append([]int{s}, starts...) // after the "- ", not before it
	}
	for i := 0; flow && i < len(l); i++ {
		if c := l[i]; c == '{' || c == '[' || c == ',' {
			starts = append(starts, i+1+len(l[i+1:])-len(strings.TrimLeft(l[i+1:], " ")))
		}
	}
	for _, s := range starts {
		end := keyEnd(l, s)
		if end < 0 {
			continue
		}
		if k := utf8.RuneCountInString(l[s:end]); k > maxKeyChars {
			return utf8.RuneCountInString(l[:s]) + 1, k
		}
	}
	return 0, 0
}

// keyEnd is the index of the ":" that ends a key starting at s in l (after
// a quoted key's closing quote), or -1.
func keyEnd(l string, s int) int {
	i := s
	if s < len(l) && (l[s] == '"' || l[s] == '\'') {
		q := l[s]
		for i = s + 1; i < len(l); i++ {
			if l[i] == '\\' && q == '"' {
				i++
				continue
			}
			if l[i] == q {
				if q == '\'' && i+1 < len(l) && l[i+1] == '\'' {
					i++
					continue
				}
				break
			}
		}
		if i >= len(l) {
			return -1
		}
		i++
		for i < len(l) && l[i] == ' ' {
			i++
		}
		if i < len(l) && l[i] == ':' {
			return i
		}
		return -1
	}
	for ; i < len(l); i++ {
		if l[i] == ':' && (i+1 == len(l) || strings.IndexByte(" ,]}", l[i+1]) >= 0) {
			return i
		}
	}
	return -1
}
