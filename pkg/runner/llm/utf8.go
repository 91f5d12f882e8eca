package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// wireText is an answer's text as the server sent it, byte for byte (nil:
// absent or null). encoding/json would put U+FFFD in place of each byte
// that is not UTF-8, and a server that cuts a character between two stream
// events (llama.cpp-style byte tokens) sends each half as such bytes: only
// joined do they make the character.
type wireText []byte

var errNotString = errors.New("not a JSON string")

// UnmarshalJSON unquotes a JSON string, keeping bytes that are not UTF-8
// as they are, or joins the text parts of an array of them, which
// OpenAI's format allows for a message's content
// ([{"type":"text","text":"…"}], as some gateways and Mistral's
// reasoning models send). Other values are type errors, which
// encoding/json names with the member's path. Unmarshal has checked the
// syntax already.
func (t *wireText) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*t = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		return t.joinParts(b)
	case len(b) == 0 || b[0] != '"':
		return notText(b)
	}
	out, err := unquote(b)
	if err != nil {
		return err
	}
	*t = out
	return nil
}

// joinParts is the text of an array of content parts: its text parts
// joined. Parts of other types (a reasoning model's "thinking") are not
// the answer.
func (t *wireText) joinParts(b []byte) error {
	var parts []struct {
		Type string          `json:"type"`
		Text json.RawMessage `json:"text"`
	}
	if json.Unmarshal(b, &parts) != nil {
		return notText(b)
	}
	var out []byte
	for _, p := range parts {
		if p.Type != "text" {
			continue
		}
		s, err := unquote(p.Text)
		if err != nil {
			return notText(b)
		}
		out = append(out, s...)
	}
	*t = out
	return nil
}

// notText is the type error of a value b that is no text.
func notText(b []byte) error {
	kind := "object"
	switch {
	case len(b) == 0:
	case b[0] == '[':
		kind = "array"
	case b[0] == 't' || b[0] == 'f':
		kind = "bool"
	case b[0] != '{':
		kind = "number"
	}
	return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[string]()}
}

// unquote is JSON string b's bytes, as unquoted as encoding/json does but
// with the bytes that are not UTF-8 kept.
func unquote(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, errNotString
	}
	s := b[1 : len(b)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return nil, errNotString
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return nil, errNotString
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// A pair makes one character. A lone half is kept as its
				// three bytes (WTF-8), which are no UTF-8: a proxy that
				// cuts text by UTF-16 units sends a pair's halves in two
				// events, and textJoiner joins them, as it joins a
				// character's bytes; a half that stays alone becomes
				// U+FFFD there, said.
				r2, ok := rune(0), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s[i+2:])
				}
				if pair := utf16.DecodeRune(r, r2); ok && pair != utf8.RuneError {
					out = utf8.AppendRune(out, pair)
					i += 6
				} else {
					out = append(out, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
				}
				continue
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, errNotString
		}
		i += 2
	}
	return out, nil
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// textJoiner joins an answer's pieces as bytes, so that a character cut
// between two of them comes out whole. What it gives is always UTF-8: a
// byte that cannot be part of a character becomes U+FFFD, and so does a
// character the text ends inside of; mended says so.
type textJoiner struct {
	text    strings.Builder
	pending []byte // the start of a character whose rest has not come yet
	bad     int    // bytes that could be part of no character, each now U+FFFD
	lone    int    // UTF-16 surrogates without their pair, each now U+FFFD
	cut     bool   // the text ended inside a character, now one U+FFFD
}

// add joins p and returns the text it completes ("" when p only starts a
// character, or is the first half of a surrogate pair).
func (j *textJoiner) add(p []byte) string {
	j.pending = append(j.pending, p...)
	start := j.text.Len()
	i := 0
	for i < len(j.pending) {
		if r, n := surrogateAt(j.pending[i:]); n != 0 {
			if n < 0 {
				break // its bytes have not all come
			}
			if r < 0xdc00 { // a pair's first half: its second may follow
				r2, n2 := surrogateAt(j.pending[i+n:])
				if n2 < 0 {
					break
				}
				if n2 > 0 && r2 >= 0xdc00 {
					j.text.WriteRune(utf16.DecodeRune(r, r2))
					i += n + n2
					continue
				}
			}
			j.text.WriteRune(utf8.RuneError)
			j.lone++
			i += n
			continue
		}
		if !utf8.FullRune(j.pending[i:]) {
			break
		}
		r, n := utf8.DecodeRune(j.pending[i:])
		if r == utf8.RuneError && n == 1 {
			j.text.WriteRune(utf8.RuneError)
			j.bad++
		} else {
			j.text.Write(j.pending[i : i+n])
		}
		i += n
	}
	j.pending = append(j.pending[:0], j.pending[i:]...)
	return j.text.String()[start:]
}

// size is how many bytes of text have come, joined or not.
func (j *textJoiner) size() int { return j.text.Len() + len(j.pending) }

// end ends the text and returns what that adds: U+FFFD for a character
// the text ends inside of, else "".
func (j *textJoiner) end() string {
	if len(j.pending) == 0 {
		return ""
	}
	if _, n := surrogateAt(j.pending); n == len(j.pending) {
		j.lone++ // a pair's first half, and no second
	} else {
		j.cut = true
	}
	j.pending = nil
	j.text.WriteRune(utf8.RuneError)
	return string(utf8.RuneError)
}

// mended says why the text holds U+FFFD the server did not send; "" when
// it holds none.
func (j *textJoiner) mended() string {
	var what []string
	if j.bad > 0 {
		what = append(what, fmt.Sprintf("sent %d byte(s) that are not UTF-8", j.bad))
	}
	if j.lone > 0 {
		what = append(what, fmt.Sprintf("sent %d UTF-16 surrogate(s) without their pair (such as \\ud83d alone)", j.lone))
	}
	if j.cut {
		what = append(what, "ended the answer inside a character (the first bytes of a UTF-8 character and not the rest)")
	}
	if len(what) == 0 {
		return ""
	}
	return "its server " + strings.Join(what, " and ") + ": the result has U+FFFD (\uFFFD) in their place"
}

// surrogateAt reads the UTF-16 surrogate b starts with, as unquote keeps a
// lone one: its three bytes as if it were a character (WTF-8). n is 3, 0
// when b starts with no surrogate, -1 when too little of b has come to
// tell.
func surrogateAt(b []byte) (r rune, n int) {
	switch {
	case len(b) == 0:
		return 0, -1
	case b[0] != 0xed:
		return 0, 0
	case len(b) == 1:
		return 0, -1
	case b[1] < 0xa0 || b[1] > 0xbf: // U+D000–U+D7FF, a character, or no UTF-8
		return 0, 0
	case len(b) == 2:
		return 0, -1
	case b[2]&0xc0 != 0x80:
		return 0, 0
	}
	return 0xd000 | rune(b[1]&0x3f)<<6 | rune(b[2]&0x3f), 3
}
