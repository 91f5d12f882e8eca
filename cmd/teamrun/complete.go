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
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/spec"
)

// The bash and zsh scripts began as urfave/cli's (its autocomplete
// folder); they are teamrun's now: they read the binary's answer as data
// (each says how).
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
// The word before the completion flag is the one being completed when it
// starts with "-" (a flag, or `--session=ni`); the scripts send "" for a
// word that does not (the shell filters by its prefix), so that the words
// before it are finished: after `--json ""` come arguments, not flags. A
// line without it (an older script's) ends with its last finished word.
//
// The line's flags count wherever they stand, as they do when the command
// runs: the finished words are put in order by normalizeArgs, the one rule,
// so that `run a.yaml --store DIR --session <TAB>` lists DIR's sessions.
//
// A "--" on it ends the flags: only arguments come after it, and the shell
// completes file names (urfave/cli would run the command, the completion
// flag an argument). `help TOPIC…` completes the commands it names so far.
func complete(ctx context.Context, app *cli.App, args []string) error {
	line := args[1 : len(args)-1]
	if slices.Contains(line, "--") {
		return nil
	}
	done, want := completionTarget(app.Commands, line)
	if rest := leadingGlobal(done); len(rest) > 0 && (rest[0] == "help" || rest[0] == "h") {
		cmds := app.Commands
		for _, w := range rest[1:] {
			c := findCommand(cmds, w)
			if c == nil {
				return nil
			}
			cmds = c.Subcommands
		}
		for _, c := range cmds {
			if isHelpTopic(c, len(rest) == 1) {
				fmt.Fprintln(app.Writer, c.Name)
			}
		}
		return nil
	}
	wireCompletion(app.Commands, want)
	return app.RunContext(ctx, append(completionContext(app.Commands, args[0], done), completionFlag))
}

// completing is what a completion line asks for: a flag's name, a flag's
// value (`--session ` or `--session=`, eq), or else an argument.
type completing struct {
	flagName bool
	value    string // the flag whose value, as named on the line ("session", "o")
	eq       bool
}

// completionTarget splits a completion line (without the program and the
// completion flag) into its finished words, which the completion reads as
// the command does, and what is being completed. A flag that waits for its
// value (`--session` last) is not among the finished words: its value is
// what is asked for.
func completionTarget(root []*cli.Command, line []string) (done []string, want completing) {
	done, cur := line, ""
	if n := len(line); n > 0 && (line[n-1] == "" || strings.HasPrefix(line[n-1], "-")) {
		done, cur = line[:n-1], line[n-1]
	}
	switch {
	case strings.HasPrefix(cur, "-") && strings.Contains(cur, "="):
		name, _, _ := strings.Cut(strings.TrimLeft(cur, "-"), "=")
		return done, completing{value: name, eq: true}
	case cur != "":
		// A whole flag that takes a value is taken as waiting for it, as
		// an older script sends `--session <TAB>`.
		if name, ok := valueFlag(root, done, cur); ok {
			return done, completing{value: name}
		}
		return done, completing{flagName: true}
	case len(done) > 0:
		if name, ok := valueFlag(root, done[:len(done)-1], done[len(done)-1]); ok {
			return done[:len(done)-1], completing{value: name}
		}
	}
	return done, completing{}
}

// valueFlag reports whether word is a flag, without its value, that takes
// one (not a switch, nor --wait, after which arguments follow) of the
// command that the words before it name; name is the flag as typed.
func valueFlag(root []*cli.Command, before []string, word string) (name string, ok bool) {
	if !shellcmd.ReadAsFlag(word) || strings.Contains(word, "=") {
		return "", false
	}
	cmd, _, _, _ := commandAt(root, leadingGlobal(before))
	if cmd == nil {
		return "", false
	}
	name = strings.TrimLeft(word, "-")
	kind, _ := kindOf(cmd, name)
	return name, kind == flagValue
}

// leadingGlobal is line without the global flags before the command.
func leadingGlobal(line []string) []string {
	for len(line) > 0 && shellcmd.ReadAsFlag(line[0]) {
		line = line[1:]
	}
	return line
}

// completionContext is the command line urfave/cli runs to complete after
// the finished words done: normalizeArgs's, without its "--" (urfave/cli
// completes nothing after one), so that every flag is parsed wherever it
// stood. A line normalizeArgs refuses (a flag given twice) is completed as
// it stands, with the flags before a subcommand moved after it, for
// urfave/cli to reach the subcommand.
func completionContext(root []*cli.Command, prog string, done []string) []string {
	norm, err := normalizeArgs(root, append([]string{prog}, done...))
	if err == nil {
		return slices.DeleteFunc(norm, func(w string) bool { return w == "--" })
	}
	global := len(done) - len(leadingGlobal(done))
	rest := done[global:]
	if cmd, names, tail, _ := commandAt(root, rest); cmd != nil {
		rest = append(names, tail...)
	}
	return append(append([]string{prog}, done[:global]...), rest...)
}

// wireCompletion gives every command a BashComplete hook that offers what
// want asks for: a flag's name (urfave/cli's), a flag's value, or else
// what the command's own hook offers for its arguments (a command without
// one leaves them to the shell: files, or its subcommands).
func wireCompletion(cmds []*cli.Command, want completing) {
	for _, cmd := range cmds {
		own := cmd.BashComplete
		cmd.BashComplete = func(c *cli.Context) {
			switch {
			case want.value != "":
				prefix := ""
				if want.eq {
					prefix = dashed(want.value) + "="
				}
				offer(c.App.Writer, prefix, flagValues(c, cmd, want.value))
			case want.flagName || own == nil:
				cli.DefaultCompleteWithFlags(cmd)(c)
			default:
				var b strings.Builder
				w := c.App.Writer
				c.App.Writer = &b
				own(c)
				c.App.Writer = w
				offer(w, "", strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"))
			}
		}
		wireCompletion(cmd.Subcommands, want)
	}
}

// offer prints values, one a line, each led by prefix (`--session=`). A
// value the command would read as a flag (a session "-dash") is offered
// only after a prefix: alone it is refused (--session=-dash, `-- -dash`
// are the forms the command takes). A value that would not stay one line
// of the answer, or one word for the shell (a control character), is left
// out.
func offer(w io.Writer, prefix string, values []string) {
	for _, v := range values {
		if v == "" || prefix == "" && shellcmd.ReadAsFlag(v) || strings.ContainsFunc(v, unicode.IsControl) {
			continue
		}
		fmt.Fprintln(w, prefix+v)
	}
}

// flagValues are the values cmd's flag name takes that teamrun knows, by the
// placeholder in its usage: `ID` a session id, `TASK` a task of the FILE
// on the line (or of the session ID, for a command whose argument is one);
// --reuse its modes.
func flagValues(c *cli.Context, cmd *cli.Command, name string) []string {
	f := flagNamed(cmd, name)
	switch {
	case f == nil:
		return nil
	case hasName(f.Names(), "reuse"):
		return []string{"strict", "unchanged"} // checkpoint.ParseReuse's words
	case placeholder(f) == "ID":
		return sessionIDs(c)
	case placeholder(f) != "TASK" || c.NArg() == 0:
		return nil
	}
	switch strings.Trim(strings.Fields(cmd.ArgsUsage + " ")[0], "[]") {
	case "FILE":
		return taskNames(c.Args().First())
	case "ID":
		return sessionTasks(c, c.Args().First(), func(*checkpoint.TaskRecord) bool { return true })
	}
	return nil
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

// taskNames are the tasks of the spec at path; nothing when it does not
// load, or is no regular file: a FIFO would hold the shell until a writer
// came (it is opened without blocking, and checked once open, so that one
// put in its place meanwhile is not read either).
func taskNames(path string) []string {
	f, fi, err := regfile.Open(path, 0) // a named pipe would wait for a writer
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi.Size() > spec.MaxSpecBytes {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, spec.MaxSpecBytes))
	if err != nil {
		return nil
	}
	team, err := spec.Parse(path, data)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(team.Tasks))
	for _, t := range team.Tasks {
		names = append(names, t.Name)
	}
	return names
}
