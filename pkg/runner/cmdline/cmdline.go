// Package cmdline builds the teamrun command lines that run, plan and the
// session commands print for users to paste (resume, decide, logs): one
// place for how they quote and which store they name. It sits below both
// runner and plan, which cannot import each other.
package cmdline

import (
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

// StoreFlag is the " --store URL" of a command printed for the user to
// paste: the store given on the command line, shown without its password,
// so that the pasted command finds the same session; "" when none was
// given, as the default chain finds it again.
func StoreFlag(store string) string {
	if store == "" {
		return ""
	}
	return " --store " + Quote(stores.Shown(store))
}

// Decide is `teamrun session decide` recording value for task of session,
// in store ("" when the command line named none); value "" leaves
// Placeholder for the user to fill in.
func Decide(store, session, task, value string) string {
	if value == "" {
		value = Placeholder
	} else {
		value = Quote(value)
	}
	return "teamrun session decide" + StoreFlag(store) + " " + Quote(session) + " " + Quote(task) + " " + value
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
