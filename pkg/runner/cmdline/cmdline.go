// Package cmdline builds the teamrun command lines that run, plan and the
// session commands print for users to paste (resume, decide, logs): which
// store and project they name and how a decide hint reads. They are quoted by
// shellcmd. It sits below both runner and plan, which cannot import each
// other.
package cmdline

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
)

// Placeholder stands for the value the user completes a decide command
// with.
const Placeholder = "VALUE"

// Store is the `--store URL` of a command printed for the user to paste:
// the store given on the command line, shown without its password, so
// that the pasted command finds the same session; nothing when none was
// given, as the default chain finds it again. A folder named from the
// current one is named from the root, as --project is: pasted in another
// folder, `--store rel-st` was another store, and the session missing (a
// URL, and a ~ path that teamrun reads as $HOME, name the same store
// anywhere).
func Store(store string) []string {
	if store == "" {
		return nil
	}
	// FILE:///x and file:/x are URLs as the store reads them, no folders.
	if store = stores.Spelt(store); !stores.IsURL(store) && !strings.HasPrefix(store, "~") {
		if abs, err := filepath.Abs(store); err == nil {
			store = abs
		}
	}
	return shellcmd.Flag("--store", stores.Shown(store))
}

// Where is what a printed command names so that, pasted in any folder,
// it reaches the run's session and project: the store the command line
// gave ("" for none) and the project's folder, the spec's (absolute; ""
// for none).
type Where struct {
	Store   string
	Project string
}

// Project is the `--project DIR` of a printed command that writes to the
// project (session decide audits): dir when it is not the current
// folder, so that the record lands in dir's .teamrun wherever the command
// is pasted; nothing when it is (checkpoint.SamePath: through a link
// too), as the default finds it again.
func Project(dir string) []string {
	if wd, err := os.Getwd(); dir == "" || err == nil && checkpoint.SamePath(wd, dir) {
		return nil
	}
	return shellcmd.Flag("--project", dir)
}

// Decide is `teamrun session decide` recording value for task of session,
// in the store and project of w; value "" leaves Placeholder for the user
// to fill in.
func Decide(w Where, session, task, value string) string {
	if value == "" {
		value = Placeholder // shellcmd.Quote leaves it as it is
	}
	return shellcmd.Command("session decide", append(Store(w.Store), Project(w.Project)...), []string{session, task, value}, nil)
}

// Logs is `teamrun session logs` showing the output attempt of task kept.
func Logs(store, session, task string, attempt int) string {
	return shellcmd.Command("session logs", nil, []string{session, task}, append([]string{"--attempt", strconv.Itoa(attempt)}, Store(store)...))
}

// ShowTask is `teamrun session show` listing task's tool calls and
// attempts.
func ShowTask(store, session, task string) string {
	return shellcmd.Command("session show", nil, []string{session}, append([]string{"--task", task}, Store(store)...))
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
