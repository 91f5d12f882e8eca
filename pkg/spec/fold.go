package spec

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The one case rule of the texts a run matches: a repeat's until, an if
// step's contains and in, a route's labels. PraisonAI lowers both sides
// with Python's str.lower(), so teamrun does too, the same on every
// machine: never by the locale (cron's C locale folds no é), never by a
// tool's own tables (awk's tolower is ASCII only).

// Lower is s in lower case as Python's str.lower() makes it: Unicode's
// simple lower-case mapping, except where Python applies the full one —
// İ (U+0130) becomes i and a combining dot above, and a capital sigma
// that ends a word becomes ς, not σ.
func Lower(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == 'İ' || r == 'Σ' }) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 1)
	for i, r := range s {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma says whether the Σ at s[i] ends a word, in Unicode's
// Final_Sigma context as Python tests it: a cased letter before it and
// none after it, case-ignorable characters (marks, apostrophes) between.
func finalSigma(s string, i int) bool {
	j := i
	var before rune
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if !caseIgnorable(r) {
			before = r
			break
		}
	}
	if before == 0 || !cased(before) {
		return false
	}
	for _, r := range s[i+len("Σ"):] {
		if !caseIgnorable(r) {
			return !cased(r)
		}
	}
	return true
}

// cased is Unicode's Cased property.
func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.In(r, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifiers, and the apostrophes and dots that may sit inside
// a word (Word_Break MidLetter, MidNumLet, Single_Quote).
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '·', '\u0387', '\u055F', '\u05F4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// ContainsFold says whether sub is in s, both lowered (Lower): a repeat's
// until, an if step's contains and in. "" is in every text.
func ContainsFold(s, sub string) bool {
	return strings.Contains(Lower(s), Lower(sub))
}

// HasWordFold says whether word is in s as a word, both lowered (Lower):
// where it is found, the characters on either side, if any, are no
// letter, digit or _ (grep -w's rule, in every locale).
func HasWordFold(s, word string) bool {
	s, word = Lower(s), Lower(word)
	if word == "" {
		return false
	}
	for from := 0; from <= len(s)-len(word); {
		k := strings.Index(s[from:], word)
		if k < 0 {
			return false
		}
		start, end := from+k, from+k+len(word)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (start == 0 || !wordRune(before)) && (end == len(s) || !wordRune(after)) {
			return true
		}
		_, n := utf8.DecodeRuneInString(s[start:])
		from = start + n
	}
	return false
}

// wordRune is a character a word is made of: a letter, a digit or _.
func wordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
