package spec

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// valueHint points at the value yaml.v3 stops at when the cause is how a
// value is written, and says how to write it: yaml.v3 names the line of
// the mapping it was reading ("did not find expected key" at the line of
// the task), or none at all (an unknown anchor: line 1), and its words
// name YAML's grammar, not what to change.
func valueHint(d Diagnostic, data []byte) Diagnostic {
	lines := bytes.Split(data, []byte("\n"))
	at := func(n, col int, msg string) Diagnostic {
		d.Line, d.Column = n, col
		d.Message += msg
		return d
	}
	switch {
	case strings.Contains(d.Message, "unknown anchor"):
		m := anchorRE().FindStringSubmatch(d.Message)
		if m == nil {
			return d
		}
		for n, l := range lines {
			if i := bytes.Index(l, []byte("*"+m[1])); i >= 0 {
				return at(n+1, utf8.RuneCount(l[:i])+1, ": *"+m[1]+" names an anchor (&"+m[1]+") written before it; to write the text *"+m[1]+", quote the value")
			}
		}
	case strings.Contains(d.Message, "found character that cannot start any token") && !strings.Contains(d.Message, "tab in the indentation"):
		// A plain value cannot start with @ or ` (reserved by YAML);
		// yaml.v3 names its line.
		if n, col, ok := valueStarting(lines[:min(d.Line, len(lines))], d.Line, func(v string) bool { return v[0] == '@' || v[0] == '`' }); ok {
			return at(n, col, ": a value that starts with @ or ` must be quoted")
		}
	case strings.Contains(d.Message, "did not find expected key"),
		strings.Contains(d.Message, "did not find expected node content"):
		// A value that starts with { is a mapping, and text after it
		// ({topic} is here) no YAML; a line indented to no key above it.
		if n, col, ok := valueStarting(lines, d.Line, flowThenText); ok {
			return at(n, col, `: a value that starts with { or [ is read as a mapping or a list, and text after it is no YAML: quote the whole value ("{topic} is here")`)
		}
		if n, ok := strayIndent(lines, d.Line); ok {
			return at(n, 1, ": this line is indented to no key above it: indent it as the keys it belongs with")
		}
	case strings.Contains(d.Message, "found unexpected end of stream"):
		for n := min(d.Line, len(lines)); n >= 1; n-- {
			if col, ok := unclosedQuote(lines[n-1]); ok {
				return at(n, col, ": the quoted value that starts here is never closed: end it with the same quote")
			}
		}
	}
	return d
}

var anchorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`unknown anchor '([^']*)'`) })

// valueStarting finds, from line from (1-based) on, the first line whose
// value (after "key: " or "- ") is not empty and is: its line and the
// value's column.
func valueStarting(lines [][]byte, from int, is func(v string) bool) (int, int, bool) {
	for n := max(from, 1); n <= len(lines); n++ {
		l := string(bytes.TrimRight(lines[n-1], "\r"))
		rest := strings.TrimLeft(l, " ")
		if strings.HasPrefix(rest, "- ") {
			rest = strings.TrimLeft(rest[2:], " ")
		}
		if m := plainKeyRE().FindStringIndex(rest); m != nil {
			rest = rest[m[1]:]
		}
		if rest != "" && is(rest) {
			return n, utf8.RuneCountInString(l[:len(l)-len(rest)]) + 1, true
		}
	}
	return 0, 0, false
}

// flowThenText reports a value that starts with a flow collection ({ or
// [) that closes on its line, with text after it.
func flowThenText(v string) bool {
	if v[0] != '{' && v[0] != '[' {
		return false
	}
	depth := 0
	for i, r := range v {
		switch r {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				rest := strings.TrimSpace(v[i+1:])
				return rest != "" && !strings.HasPrefix(rest, "#")
			}
		}
	}
	return false
}

// strayIndent finds, from line from on, a line indented less than the
// line before it but more than the key it would then belong to: indented
// to no key above it.
func strayIndent(lines [][]byte, from int) (int, bool) {
	var levels []int // the indents of the lines open above
	for n := 1; n <= len(lines); n++ {
		l := bytes.TrimRight(lines[n-1], "\r")
		if len(bytes.TrimSpace(l)) == 0 || bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			continue
		}
		in := len(l) - len(bytes.TrimLeft(l, " "))
		popped := false
		for len(levels) > 0 && levels[len(levels)-1] > in {
			levels, popped = levels[:len(levels)-1], true
		}
		if popped && n >= from && (len(levels) == 0 || levels[len(levels)-1] < in) {
			return n, true
		}
		if len(levels) == 0 || levels[len(levels)-1] < in {
			levels = append(levels, in)
		}
	}
	return 0, false
}

// unclosedQuote reports a line whose value starts a quoted text that the
// line does not close, and the quote's column.
func unclosedQuote(l []byte) (int, bool) {
	s := string(bytes.TrimRight(l, "\r"))
	rest := strings.TrimLeft(s, " ")
	if strings.HasPrefix(rest, "- ") {
		rest = strings.TrimLeft(rest[2:], " ")
	}
	if m := plainKeyRE().FindStringIndex(rest); m != nil {
		rest = rest[m[1]:]
	}
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return 0, false
	}
	q, body := rest[0], rest[1:]
	for i := 0; i < len(body); i++ {
		switch {
		case q == '"' && body[i] == '\\':
			i++
		case body[i] == q && q == '\'' && i+1 < len(body) && body[i+1] == '\'':
			i++
		case body[i] == q:
			return 0, false
		}
	}
	return utf8.RuneCountInString(s[:len(s)-len(rest)]) + 1, true
}
