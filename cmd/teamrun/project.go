package main

// Helpers shared by the commands that work on a project and its session
// store without a spec file (session …) or with one (plan).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/pkg/spec"
)

// projectFlag is --project DIR: the folder whose .teamrun/ holds state.json,
// audit.log and config.yml (DESIGN §5). Default: the current folder.
func projectFlag() cli.Flag {
	return &cli.StringFlag{
		Name:        "project",
		Usage:       "the project `DIR` whose .teamrun/ holds state.json, audit.log and config.yml",
		DefaultText: "the current folder",
	}
}

// storeFlagDef is --store URL, on every command that reads sessions; it is
// read by storeFlag. The default chain is stores.Location's.
func storeFlagDef() cli.Flag {
	return &cli.StringFlag{
		Name:        "store",
		Usage:       "the session store `URL`: a folder, file://PATH or postgres://user@host/db (a password from ~/.pgpass or PGPASSWORD)",
		DefaultText: "$TEAMRUN_STORE, else $TEAMRUN_HOME, else ~/.teamrun",
	}
}

// projectDir resolves --project, or the current folder, to an absolute path.
func projectDir(c *cli.Context) (string, error) {
	dir := c.String("project")
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", exitf(exitUsage, "--project %s: %v", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", exitf(exitUsage, "--project %s: does not exist: name the project's folder (the one with its .teamrun)", dir)
	case err != nil:
		return "", exitf(exitUsage, "--project %s: cannot read it: %v", dir, fserr.Bare(err))
	case !fi.IsDir():
		return "", exitf(exitUsage, "--project %s: not a folder: name the project's folder (the one with its .teamrun)", dir)
	}
	return abs, nil
}

// jsonFlag is --json: machine-readable output on stdout.
func jsonFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print " + what + " as JSON"}
}

// formatWhen renders t relative to now for people at a terminal ("5m ago"),
// and as RFC 3339 otherwise so that scripts can parse it.
func formatWhen(t, now time.Time, tty bool) string {
	if t.IsZero() {
		return "-"
	}
	if !tty {
		return t.UTC().Format(time.RFC3339)
	}
	return relative(now.Sub(t))
}

// relative is a short human duration such as "3h ago" or "in 2m".
func relative(d time.Duration) string {
	suffix := " ago"
	prefix := ""
	if d < 0 {
		d = -d
		prefix, suffix = "in ", ""
	}
	var s string
	switch {
	case d < 10*time.Second:
		return "just now"
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh", int(d/time.Hour))
	case d < 60*24*time.Hour:
		s = fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case d < 2*365*24*time.Hour:
		s = fmt.Sprintf("%dmo", int(d/(30*24*time.Hour)))
	default:
		s = fmt.Sprintf("%dy", int(d/(365*24*time.Hour)))
	}
	return prefix + s + suffix
}

// ageFlag is --older-than DUR, read as parseDuration reads it when the
// line is parsed, before anything is opened; typed is the value as given,
// for the summary.
type ageFlag struct {
	d     time.Duration
	typed string
}

func (a *ageFlag) String() string {
	if a == nil {
		return ""
	}
	return a.typed
}

func (a *ageFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" { // --older-than "$AGE", AGE unset: not "everything"
		return errors.New("an empty duration: give one (--older-than=7d), or leave it out for the project's max_session_age_days")
	}
	d, err := parseAge(s)
	if err != nil {
		return err
	}
	a.d, a.typed = d, s
	return nil
}

// Accepts: a duration, or a number, is --older-than's (durationArg).
func (a *ageFlag) Accepts(s string) bool { return durationArg(s) }

// parseAge reads --older-than: a duration (parseDuration), which is
// what people mean for session ages.
func parseAge(s string) (time.Duration, error) { return parseDuration(s, "7d, 36h or 90m") }

// durationArg reports whether s is meant as a duration flag's value:
// written as a duration (durationSyntax), however long and even negative,
// or a bare number, for parseDuration and the flag to say what is wrong
// with it. `--wait 1d FILE` takes the 1d, and `--wait -5s` refuses it
// (valueWords).
func durationArg(s string) bool {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return true
	}
	return durationSyntax().MatchString(strings.TrimSpace(s))
}

// parseDuration is the one rule for a duration flag (--older-than,
// --wait=DUR): a Go duration ("36h", "90m") or whole days ("7d"), not
// negative, and no longer than a time.Duration holds: more would wrap
// around to minutes (prune would remove sessions updated just now). An
// error gives examples of what it takes.
func parseDuration(s, examples string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	shown := spec.ShownValue(s)
	if !durationSyntax().MatchString(s) {
		return 0, fmt.Errorf("%s is not a duration: use e.g. %s", shown, examples)
	}
	maxDays := int(math.MaxInt64 / int64(24*time.Hour))
	tooLong := fmt.Errorf("%s is longer than teamrun can count: use at most %dd", shown, maxDays)
	notOne := fmt.Errorf("%s is not a duration: use e.g. %s", shown, examples)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		switch {
		case err == nil && days > maxDays, errors.Is(err, strconv.ErrRange) && days > 0:
			return 0, tooLong
		case err != nil || days < 0: // 1.5d: whole days only
			return 0, notOne
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && !strings.HasPrefix(s, "-"):
		// Written as a duration (durationSyntax): only its size is wrong.
		return 0, tooLong
	case err != nil || d < 0:
		return 0, notOne
	}
	return d, nil
}

// durationSyntax matches a word written as a duration, good or not: what
// time.ParseDuration reads, whatever its size and sign, or days (parseDuration
// takes whole ones).
var durationSyntax = sync.OnceValue(func() *regexp.Regexp {
	const number = `([0-9]+(\.[0-9]*)?|\.[0-9]+)`
	return regexp.MustCompile(`^[-+]?(0|(` + number + `(ns|us|µs|μs|ms|s|m|h))+|` + number + `d)$`)
})

// writeJSON prints v indented, one document followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return withCode(exitStore, fmt.Errorf("writing JSON: %w", err))
	}
	return nil
}

// action adapts fn to urfave/cli, giving it the command's arguments: by then
// normalizeArgs has moved the flags that followed them (`teamrun plan
// agents.yaml --json`) in front, and -h/--help anywhere shows the help.
func action(fn func(c *cli.Context, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		return fn(c, c.Args().Slice())
	}
}
