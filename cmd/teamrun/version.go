package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// versionString describes the binary from the build information the Go
// toolchain embeds: the module version (a tag when installed as a module,
// "(devel)" from a checkout), the VCS revision and whether the tree had
// uncommitted changes, and the Go version it was built with.
func versionString(info *debug.BuildInfo, ok bool) string {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	if !ok || info == nil {
		return "unknown (no build information) " + runtime.Version() + " " + platform
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)" // go test binaries and `go run` leave it empty
	}
	var rev, modified, when string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			when = s.Value
		}
	}
	var parts []string
	parts = append(parts, v)
	if rev != "" {
		r := "revision " + rev
		if when != "" {
			r += " of " + when
		}
		if modified == "true" {
			r += ", dirty"
		}
		parts = append(parts, r)
	} else {
		parts = append(parts, "no VCS revision")
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return fmt.Sprintf("%s (%s) %s %s", parts[0], strings.Join(parts[1:], ", "), goVersion, platform)
}

// buildVersion is versionString of this binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionString(info, ok)
}

// versionCommand is `teamrun version`, as --version.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version: module, VCS revision, Go version and platform (as --version)",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitf(exitUsage, "version takes no arguments")
			}
			return showVersion(c)
		},
	}
}

// shownError ends a command line whose answer was --version's: what
// followed it is not run (`teamrun --version run agents.yaml`), and the
// exit is 0.
type shownError struct{}

func (shownError) Error() string { return "" }

// showVersion is --version: the version, and the command line ends.
func showVersion(c *cli.Context) error {
	fmt.Fprintf(c.App.Writer, "%s version %s\n", c.App.Name, c.App.Version)
	return shownError{}
}
