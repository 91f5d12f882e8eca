// Package cmdline builds the teamrun command lines that run, plan and the
// session commands print for users to paste (resume, decide, logs): one
// place for how they quote, where their flags go and which store they
// name. It sits below both runner and plan, which cannot import each other.
package cmdline

import (
	"slices"
	"strconv"
	"strings"

	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
)

// Placeholder stands for the value the user completes a decide command
// with.
const Placeholder = "VALUE"

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

// Store is the `--store URL` of a command printed for the user to paste:
// the store given on the command line, shown without its password, so
// that the pasted command finds the same session; nothing when none was
// given, as the default chain finds it again.
func Store(store string) []string {
	if store == "" {
		return nil
	}
	return []string{"--store", Quote(stores.Shown(store))}
}

// Decide is `teamrun session decide` recording value for task of session,
// in store ("" when the command line named none); value "" leaves
// Placeholder for the user to fill in.
func Decide(store, session, task, value string) string {
	if value == "" {
		value = Placeholder // Quote leaves it as it is
	}
	return Command("session decide", Store(store), []string{session, task, value}, nil)
}

// Logs is `teamrun session logs` showing the output attempt of task kept.
func Logs(store, session, task string, attempt int) string {
	return Command("session logs", nil, []string{session, task}, append([]string{"--attempt", strconv.Itoa(attempt)}, Store(store)...))
}

// OneOf is a decide command with the values it takes in place of its
// Placeholder, for a hint: "… rerun|fail|unknown". A command with no
// placeholder, or no options, comes back as it is.
func OneOf(command string, options []string) string {
	if c, ok := strings.CutSuffix(command, " "+Placeholder); ok && len(options) > 0 {
		return c + " " + strings.Join(options, "|")
	}
	return command
}
