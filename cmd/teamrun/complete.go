package main

// Shell completion. urfave/cli answers a line ending in
// --generate-bash-completion with the commands and the flags; what only
// teamrun knows — session ids, the task names of the FILE on the line, a
// flag's choices — comes from the BashComplete hooks wired here. The scripts
// `teamrun completion SHELL` prints ask the binary for every word.

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The bash and zsh scripts are urfave/cli's (its autocomplete folder),
// named for teamrun.
var (
	//go:embed completion/teamrun.bash
	bashCompletion string
	//go:embed completion/teamrun.zsh
	zshCompletion string
	//go:embed completion/values.fish
	fishValues string
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Commands, flags, session ids, --reuse modes and a session's task names (session\n" +
			"decide, session logs) complete; file names where a FILE goes.\n\n" +
			"Install:\n" +
			"   bash: echo 'source <(teamrun completion bash)' >> ~/.bashrc\n" +
			"   zsh:  echo 'source <(teamrun completion zsh)' >> ~/.zshrc   (after compinit)\n" +
			"   fish: teamrun completion fish > ~/.config/fish/completions/teamrun.fish",
		BashComplete: func(c *cli.Context) {
			if c.NArg() == 0 {
				fmt.Fprint(c.App.Writer, "bash\nzsh\nfish\n")
			}
		},
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) != 1 {
				return exitf(exitUsage, "completion needs one shell: bash, zsh or fish (e.g. source <(teamrun completion bash))")
			}
			switch args[0] {
			case "bash":
				_, err := io.WriteString(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := io.WriteString(c.App.Writer, zshCompletion)
				return err
			case "fish":
				script, err := fishCompletion(c.App)
				if err != nil {
					return err
				}
				_, err = io.WriteString(c.App.Writer, script)
				return err
			}
			return exitf(exitUsage, "completion: unknown shell %q: use bash, zsh or fish", args[0])
		}),
	}
}

// fishCompletion is urfave/cli's fish script (commands and flags with their
// descriptions) with what it lacks: a subcommand is not offered again once
// one is on the line, and arguments and the flags whose values teamrun knows
// ask the binary (fish completes an option's value only from the option's
// own entries).
func fishCompletion(app *cli.App) (string, error) {
	static, err := app.ToFishCompletion()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			if subs := cmd.Subcommands; len(subs) > 0 {
				var names []string
				for _, s := range subs {
					names = append(names, s.Names()...)
				}
				seen := fmt.Sprintf("-n '__fish_seen_subcommand_from %s'", strings.Join(cmd.Names(), " "))
				static = strings.ReplaceAll(static, "complete -r -c teamrun "+seen+" -a ",
					fmt.Sprintf("complete -r -c teamrun -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a ",
						strings.Join(cmd.Names(), " "), strings.Join(names, " ")))
			}
			for _, f := range cmd.Flags {
				if knowsValues(f) {
					fmt.Fprintf(&b, "complete -c teamrun -n '__fish_seen_subcommand_from %s' -l %s -x -a '(__fish_teamrun_values)'\n",
						strings.Join(cmd.Names(), " "), f.Names()[0])
				}
			}
			walk(cmd.Subcommands)
		}
	}
	walk(app.Commands)
	return static + fishValues + b.String(), nil
}

// knowsValues reports whether flagValues completes f's value.
func knowsValues(f cli.Flag) bool {
	p := placeholder(f)
	return p == "ID" || p == "TASK" || hasName(f.Names(), "reuse")
}

// complete answers a line for shell completion (it ends with
// --generate-bash-completion), and never runs its command.
//
// A "--" on it ends the flags: only arguments come after it, and the shell
// completes file names (urfave/cli would run the command, the completion
// flag an argument). `help TOPIC…` completes the commands it names so far.
// Flags before a subcommand (`session --store DIR decide ID`) are moved
// after it, as normalizeArgs does, for urfave/cli to reach the subcommand.
func complete(ctx context.Context, app *cli.App, args []string) error {
	line := args[1 : len(args)-1]
	if slices.Contains(line, "--") {
		return nil
	}
	global := 0
	for global < len(line) && shellcmd.ReadAsFlag(line[global]) {
		global++
	}
	rest := line[global:]
	if len(rest) > 0 && (rest[0] == "help" || rest[0] == "h") {
		cmds := app.Commands
		for _, w := range rest[1:] {
			c := findCommand(cmds, w)
			if c == nil {
				return nil
			}
			cmds = c.Subcommands
		}
		for _, c := range cmds {
			if !c.Hidden {
				fmt.Fprintln(app.Writer, c.Name)
			}
		}
		return nil
	}
	wireCompletion(app.Commands, app.Commands, line)
	if cmd, names, tail, _ := commandAt(app.Commands, rest); cmd != nil {
		rest = append(names, tail...)
	}
	return app.RunContext(ctx, append(append(slices.Clone(args[:1+global]), rest...), completionFlag))
}

// wireCompletion gives every command a BashComplete hook for line, the
// command line being completed (without the program and the completion
// flag). A flag that takes a value completes its value; after a word that
// starts with "-" urfave/cli completes the flag; otherwise the command's own
// hook completes its arguments (a command without one leaves them to the
// shell: files).
func wireCompletion(root, cmds []*cli.Command, line []string) {
	for _, cmd := range cmds {
		own := cmd.BashComplete
		cmd.BashComplete = func(c *cli.Context) {
			if values, ok := flagValues(root, line, func() []string { return sessionIDs(c) }); ok {
				for _, v := range values {
					fmt.Fprintln(c.App.Writer, v)
				}
				return
			}
			if len(line) > 0 && strings.HasPrefix(line[len(line)-1], "-") || own == nil {
				cli.DefaultCompleteWithFlags(cmd)(c)
				return
			}
			own(c)
		}
		wireCompletion(root, cmd.Subcommands, line)
	}
}

// flagValues completes the value of the flag the line ends with (`--session`,
// or `--session=ni` as bash hands it over), by the placeholder in its usage:
// `ID` a session id, `TASK` a task of the FILE on the line; --reuse its modes.
// ok is false when the line does not end with a flag that takes a value.
func flagValues(root []*cli.Command, line []string, ids func() []string) (values []string, ok bool) {
	if len(line) == 0 {
		return nil, false
	}
	last := line[len(line)-1]
	if len(last) < 2 || last[0] != '-' {
		return nil, false
	}
	name, _, eq := strings.Cut(strings.TrimLeft(last, "-"), "=")
	cmd, _, rest, _ := commandAt(root, line[:len(line)-1])
	if cmd == nil {
		return nil, false
	}
	kind, _ := kindOf(cmd, name)
	if kind != flagValue {
		return nil, false
	}
	var f cli.Flag
	for _, fl := range cmd.Flags {
		if hasName(fl.Names(), name) {
			f = fl
		}
	}
	switch placeholder(f) {
	case "ID":
		values = ids()
	case "TASK":
		_, pos, err := splitFlags(cmd, "", rest)
		if err == nil && len(pos) > 0 {
			values = taskNames(pos[0])
		}
	}
	if name == "reuse" {
		values = []string{"strict", "unchanged"} // checkpoint.ParseReuse's words
	}
	if eq {
		for i, v := range values {
			values[i] = dashed(name) + "=" + v
		}
	}
	return values, true
}

// placeholder is the back-quoted word of a flag's usage ("the session `ID`"),
// as urfave/cli's help shows it.
func placeholder(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	u := df.GetUsage()
	i := strings.IndexByte(u, '`')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(u[i+1:], '`')
	if j < 0 {
		return ""
	}
	return u[i+1 : i+1+j]
}

// sessionIDs are the store's session ids; nothing when it cannot be read
// (a completion never prints an error into the command line).
func sessionIDs(c *cli.Context) []string {
	store, err := openStore(c)
	if err != nil {
		return nil
	}
	defer store.Close()
	list, err := store.List(c.Context)
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(list))
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// taskNames are the tasks of the spec at path; nothing when it does not load.
func taskNames(path string) []string {
	team, err := spec.Load(path)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(team.Tasks))
	for _, t := range team.Tasks {
		names = append(names, t.Name)
	}
	return names
}
