// Package shellcmd is the one rule for a teamrun command line printed for
// users to paste: how its words are quoted and where "--" goes. It
// imports nothing of teamrun's, so that every package that prints such a
// line (the store's messages among them) uses it.
package shellcmd

import (
	"slices"
	"strings"
)

// Quote quotes s for a POSIX shell when it needs it.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ReadAsFlag reports whether teamrun reads word, where an argument may
// stand, as a flag: it starts with "-" and is more than "-" (stdin).
// Only after "--" is such a word an argument.
func ReadAsFlag(word string) bool { return len(word) > 1 && word[0] == '-' }

// Flag is a flag and its value as words of a command line to paste
// (`--session s1`, the value quoted). A value teamrun would read as a flag
// (a session named "-x") is joined to it with "=" (`--session=-x`): the
// only way teamrun takes such a value, as after a flag that takes one the
// next word is refused when it starts with "-".
func Flag(name, value string) []string {
	if ReadAsFlag(value) {
		return []string{name + "=" + Quote(value)}
	}
	return []string{name, Quote(value)}
}

// Command is `teamrun cmd` with its arguments args, each quoted, between
// the flags before and after them (flag words, quoted by the caller). An
// argument teamrun would read as a flag (a task or file named "-ask")
// makes the flags all go first and "--" end them, so that the line still
// works when pasted: `teamrun session decide -- s1 -ask yes`.
func Command(cmd string, before, args, after []string) string {
	words := append([]string{"teamrun", cmd}, before...)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = Quote(a)
	}
	if slices.ContainsFunc(args, ReadAsFlag) {
		words = append(append(append(words, after...), "--"), quoted...)
	} else {
		words = append(append(words, quoted...), after...)
	}
	return strings.Join(words, " ")
}
