package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/spec"
	"github.com/teamrun/teamrun/schemas"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check specs against the schema and the meaning rules; nothing is run or written",
		ArgsUsage: "FILE...",
		Description: "Prints every problem as file:line:column: key: message on stderr and exits 2 when a\n" +
			"spec is invalid; warnings (keys teamrun ignores) go to stderr too. Exit 0: all valid.",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return exitf(exitUsage, "validate needs at least one FILE (try: teamrun validate agents.yaml)")
			}
			loadingGC(c.Args().Slice()...)
			bad := 0
			for _, path := range c.Args().Slice() {
				team, err := loadSpec(c, path)
				if err != nil {
					bad++
					// With the errors of the lists the file gives, which
					// run and plan say once --var is known.
					printSpecError(c.App.ErrWriter, err, spec.ListErrorsOf(err))
					continue
				}
				// The config's prices may settle a warning: it is read first.
				problems := modelProblems(path, team)
				// The task set run and plan make from the spec's own
				// variables, refused as they refuse it (a foreach over a
				// value that is no list).
				if _, err := runner.TaskSetOf(team, nil, nil); err != nil {
					problems = append(problems, setProblems(err)...)
				}
				printSpecWarnings(c.App.ErrWriter, team)
				printPlaceholderWarnings(c.App.ErrWriter, team, nil)
				if len(problems) > 0 {
					bad++
					for _, p := range problems {
						fmt.Fprintln(c.App.ErrWriter, p)
					}
					continue
				}
				// The agents the file declares: not those teamrun makes
				// for a PraisonAI step (a parallel's join, a route).
				declared := 0
				for _, a := range team.Agents {
					if !a.Made() {
						declared++
					}
				}
				fmt.Fprintf(c.App.Writer, "%s: valid (%s, %s, %s)\n", team.File, // "stdin" for -
					specPlural(declared, "agent"), specPlural(len(team.Tasks), "task"), team.Process)
			}
			if bad > 0 {
				return exitf(exitUsage, "%s of %d invalid", specPlural(bad, "spec"), c.NArg())
			}
			return nil
		},
	}
}

func schemaCommand() *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "print the JSON Schema (2020-12) of agents.yaml",
		Description: "Editors can use it through a first line such as\n" +
			"  # yaml-language-server: $schema=./agents.schema.json",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitf(exitUsage, "schema takes no arguments")
			}
			_, err := c.App.Writer.Write(schemas.AgentsSchema)
			return err
		},
	}
}

func fingerprintCommand() *cli.Command {
	vars := &varsFlag{}
	return &cli.Command{
		Name:      "fingerprint",
		Usage:     "print the task-set fingerprint of a spec (16 hex digits)",
		ArgsUsage: "FILE",
		Flags: []cli.Flag{
			&cli.GenericFlag{Name: "var", Usage: "set `KEY=VALUE` as run does (repeatable)", Value: vars},
		},
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) != 1 {
				return exitf(exitUsage, "fingerprint needs exactly one FILE")
			}
			team, err := loadSpec(c, args[0])
			if err != nil {
				if !isSpecErrorList(err) {
					return withCode(exitUsage, err) // such as "cannot read FILE: ...", said once
				}
				printSpecError(c.App.ErrWriter, err, nil)
				return exitf(exitUsage, "%s is invalid", args[0])
			}
			printSpecWarnings(c.App.ErrWriter, team)
			// A new session's task set, as run computes it (and refuses it).
			set, err := runner.TaskSetOf(team, nil, vars.vals)
			if err != nil {
				return withCode(exitUsage, err)
			}
			fmt.Fprintln(c.App.Writer, set.Fingerprint)
			return nil
		}),
	}
}

// loadSpec is spec.Load, but `-` reads stdin: validate and fingerprint
// need no project folder (run and plan refuse a stream: spec.ProjectDir).
func loadSpec(c *cli.Context, path string) (*spec.Team, error) {
	if path == "-" {
		return spec.LoadStdin(c.App.Reader)
	}
	return spec.Load(path)
}

// modelProblems is runner.SpecProblems after the project's config.yml
// (its llm.model default), each naming the file as path: what run and
// plan refuse. It reads config.yml only when it exists: validate writes
// nothing. A spec read from a stream (/dev/stdin) is checked alone: it
// has no project folder, and /dev/.teamrun is none of its own.
func modelProblems(path string, team *spec.Team) []string {
	dir, err := spec.ProjectDir(path)
	if errors.Is(err, spec.ErrStreamSpec) {
		return specProblems(team.File, team, spec.ConfigPath("")) // "stdin" for -
	}
	if err != nil {
		return []string{"teamrun: " + err.Error()}
	}
	config := spec.ConfigPath(dir)
	if _, err := team.ApplyProjectConfig(config); err != nil {
		return []string{"teamrun: " + err.Error()}
	}
	return specProblems(path, team, config)
}

// specProblems is runner.SpecProblems with config applied, one line each,
// naming the file as path (as given, not absolute): what validate reports
// and plan refuses.
func specProblems(path string, team *spec.Team, config string) []string {
	var out []string
	for _, d := range runner.SpecProblems(team, config) {
		d.File = path
		out = append(out, d.String())
	}
	return out
}

// keyWarnings are runner.MissingKeys as plan says them: a warning each,
// naming the file as path, as the run's environment may have what this
// one lacks; run refuses the team without it. validate, which checks the
// spec alone, says nothing of the environment.
func keyWarnings(path string, team *spec.Team) []string {
	var out []string
	for _, d := range runner.MissingKeys(team, os.Getenv) {
		d.File = path
		out = append(out, d.String()+" (run refuses the team until it is set)")
	}
	return out
}

// setProblems are the lines of err, a task set's refusal (TaskSetOf),
// one for each of the problems it joins, but those of a foreach over a
// variable the spec lacks: a warning already, as --var may give it.
func setProblems(err error) []string {
	errs := []error{err}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	var out []string
	for _, e := range errs {
		if !errors.Is(e, spec.ErrNoVariable) {
			out = append(out, e.Error())
		}
	}
	return out
}

// isSpecErrorList reports whether err lists a spec's problems, rather than
// saying why it could not be read.
func isSpecErrorList(err error) bool {
	var list spec.ErrorList
	return errors.As(err, &list)
}

// printSpecError writes one line per problem of an invalid spec, and of
// also, more of its problems, in line order with them.
func printSpecError(w io.Writer, err error, also spec.ErrorList) {
	for _, d := range spec.WarningsOf(err) {
		fmt.Fprintln(w, runner.WarningLine(d.String()))
	}
	var list spec.ErrorList
	if errors.As(err, &list) {
		for _, d := range list.Merge(also) {
			fmt.Fprintln(w, d.String())
		}
		return
	}
	fmt.Fprintln(w, "teamrun:", err)
}

func printSpecWarnings(w io.Writer, team *spec.Team) {
	for _, d := range team.Warnings {
		fmt.Fprintln(w, runner.WarningLine(d.String()))
	}
	for _, d := range team.Notes {
		fmt.Fprintln(w, "teamrun: note: "+d.String())
	}
}

// printPlaceholderWarnings warns about the {name}s nothing defines, given
// the state a run would start from (nil: the file's variables only).
func printPlaceholderWarnings(w io.Writer, team *spec.Team, state map[string]any) {
	for _, d := range team.UndefinedPlaceholders(state) {
		fmt.Fprintln(w, runner.WarningLine(d.String()))
	}
}

func specPlural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
