package main

// Helpers shared by the commands that work on a project and its session
// store without a spec file (session …) or with one (plan).

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
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
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", exitf(exitUsage, "--project %s: not a folder", dir)
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

// parseAge reads --older-than: a Go duration ("36h", "90m") or whole days
// ("7d"), which is what people mean for session ages.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err == nil && days >= 0 {
			// More days than a Duration holds would wrap around to an age
			// of minutes: prune would remove sessions updated just now.
			if maxDays := int(math.MaxInt64 / int64(24*time.Hour)); days > maxDays {
				return 0, fmt.Errorf("%q is longer than teamrun can count: use at most %dd", s, maxDays)
			}
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration: use e.g. 7d, 36h or 90m", s)
	}
	return d, nil
}

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

// commandArgs lets flags follow the arguments (`teamrun plan agents.yaml
// --json`, `teamrun session show ID --json`): urfave/cli stops at the first
// argument, so the flags among the rest are applied here. help is true when
// -h/--help was among them; "--" ends the flags.
func commandArgs(c *cli.Context) (args []string, help bool, err error) {
	takesNoValue := map[string]bool{}
	for _, f := range c.Command.Flags {
		isBool := false
		switch f := f.(type) {
		case *cli.BoolFlag:
			isBool = true
		case *cli.GenericFlag:
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				isBool = true
			}
		}
		for _, n := range f.Names() {
			takesNoValue[n] = isBool
		}
	}
	all := c.Args().Slice()
	// urfave/cli (the flag package) stops at the first argument that does
	// not start with "-", and consumes a "--" it meets before any argument.
	// So arguments that start with a flag-like word only follow such a "--":
	// they are all arguments, as a session id such as "-x" (a valid id).
	if len(all) > 0 && len(all[0]) > 1 && all[0][0] == '-' {
		return all, false, nil
	}
	args = []string{}
	for i := 0; i < len(all); i++ {
		a := all[i]
		if a == "--" {
			return append(args, all[i+1:]...), false, nil
		}
		if len(a) < 2 || a[0] != '-' {
			args = append(args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isBool, known := takesNoValue[name]
		switch {
		case name == "help" || name == "h":
			return nil, true, nil
		case !known:
			return nil, false, exitf(exitUsage, "flag provided but not defined: %s (see %s --help)", a, c.Command.HelpName)
		case hasValue:
		case isBool:
			value = "true"
		case i+1 < len(all):
			value = all[i+1]
			i++
		default:
			return nil, false, exitf(exitUsage, "flag %s needs a value", a)
		}
		if err := c.Set(name, value); err != nil {
			return nil, false, exitf(exitUsage, "invalid value %q for flag %s: %v", value, a, err)
		}
	}
	return args, false, nil
}

// showHelp prints a command's help, for -h after its arguments.
func showHelp(c *cli.Context) error {
	cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, c.Command)
	return nil
}

// action adapts fn to urfave/cli: flags may follow the arguments
// (commandArgs), and -h/--help among them shows the command's help.
func action(fn func(c *cli.Context, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, help, err := commandArgs(c)
		if err != nil {
			return err
		}
		if help {
			return showHelp(c)
		}
		return fn(c, args)
	}
}
