package main

// The command-line conventions every command shares: flags anywhere on the
// line, `teamrun help CMD`, did-you-mean for commands and flags, flag errors
// that say what was expected. urfave/cli does the parsing, the suggestions and
// the help; this file only puts the line into the shape it expects.

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/spec"
)

const completionFlag = "--generate-bash-completion"

// flagKind is how a flag takes its value on the command line.
type flagKind int

const (
	flagUnknown  flagKind = iota
	flagBool              // --json
	flagValue             // --session ID, --session=ID
	flagOptional          // --wait, --wait=1m, --wait 1m (a value only if it parses)
)

// valueWords is a flag value that knows its words: Accepts says whether the
// next word on the line is its value. It decides for a flag that may stand
// alone (IsBoolFlag: --wait, --wait 1d), and for a word that starts with
// "-" after a flag that needs a value: a negative number or duration, which
// no flag is, is the value, for Set to refuse saying what it wants.
type valueWords interface {
	Accepts(s string) bool
}

// normalizeArgs rewrites a command line into the form urfave/cli parses (it
// stops at the first argument): the flags of the command go first, the
// arguments after a "--", so that `teamrun run agents.yaml --continue` and
// `teamrun run --help agents.yaml` mean what they say. `help CMD…` and
// `--help CMD…` become `CMD… --help`, and `--wait 1s` becomes `--wait=1s`.
// With --help among the flags the arguments are dropped: the help is the
// command's. A line for shell completion is complete's.
func normalizeArgs(cmds []*cli.Command, args []string) ([]string, error) {
	if len(args) < 2 || args[len(args)-1] == completionFlag {
		return args, nil
	}
	out := []string{args[0]}
	rest := args[1:]
	// Global flags (--help, --version) before the command stay where they
	// are, except a --help that names a topic: `teamrun --help run` is
	// `teamrun help run`.
	askedHelp := false
	for len(rest) > 0 && shellcmd.ReadAsFlag(rest[0]) && rest[0] != "--" {
		if isHelpFlag(rest[0]) && !askedHelp {
			askedHelp = true
		} else {
			out = append(out, rest[0])
		}
		rest = rest[1:]
	}
	if askedHelp {
		rest = append([]string{"help"}, rest...)
	}
	if len(rest) == 0 {
		return out, nil
	}
	if rest[0] == "help" || rest[0] == "h" {
		// `help help` is the list of commands, as `help` is: that is
		// what help does.
		topic := rest[1:]
		for len(topic) > 0 && (topic[0] == "help" || topic[0] == "h" || topic[0] == "--") {
			topic = topic[1:]
		}
		switch {
		case len(topic) == 0 || isHelpFlag(topic[0]):
			return append(out, "--help"), nil
		case shellcmd.ReadAsFlag(topic[0]):
			// help takes no flag: refused as any command refuses one,
			// not with urfave/cli's help dump on stdout.
			return nil, exitf(exitUsage, "unknown flag %s (see teamrun --help)", flagWord(topic[0]))
		case findCommand(cmds, topic[0]) == nil:
			return nil, exitf(exitUsage, "no help topic %q.%s (teamrun --help lists the commands)", topic[0], topicDidYouMean(cmds, topic[0]))
		}
		rest = append([]string{"help"}, topic...)
	}
	cmd, names, rest, helpFor := commandAt(cmds, rest)
	if cmd == nil {
		return append(out, rest...), nil
	}
	out = append(out, names...)
	path := "teamrun " + strings.Join(names, " ")
	// `session help nothing` is no help for session: a topic that is none
	// of its subcommands is refused as `session nothing` is, whatever
	// flags stand around it (`session help --store DIR nothing`,
	// `session nothing --help`); the flags of its subcommands are no
	// topic (`session --store DIR --help nothing`): helpTopics skips them
	// with their values. A command with no subcommands has no topic
	// either: `help run nothing` is refused as `help session nothing` is,
	// while `run agents.yaml --help` is run's help, its argument dropped.
	noTopic := func(helpWord bool) error {
		pos := helpTopics(cmd, rest)
		switch {
		case len(pos) == 0:
			return nil
		case len(cmd.Subcommands) > 0:
			return exitf(exitUsage, "no help topic %q in %s: use %s.%s (%s --help)", pos[0], path, subcommandList(cmd.Subcommands), didYouMean(cmd.Subcommands, pos[0]), path)
		case helpWord:
			return exitf(exitUsage, "no help topic %q in %s, which has none (teamrun help %s)", pos[0], path, strings.Join(names, " "))
		}
		return nil
	}
	if helpFor {
		if err := noTopic(true); err != nil {
			return nil, err
		}
		return append(out, "--help"), nil
	}
	flags, pos, err := splitFlags(cmd, path, rest)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(flags, isHelpFlag) {
		if err := noTopic(false); err != nil {
			return nil, err
		}
		return append(out, flags...), nil
	}
	if words := helpTopics(cmd, rest); len(cmd.Subcommands) > 0 && len(words) > 0 {
		// `session rm ID --store URL`: a word where a subcommand goes
		// that names none. That is the mistake, which the command's
		// action names; the flags around it are a subcommand's, which
		// the command itself would refuse as unknown.
		return append(out, append([]string{"--"}, words...)...), nil
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out, nil
}

// isHelpFlag reports whether word asks for help: -h, --help (or -help).
func isHelpFlag(word string) bool {
	if !shellcmd.ReadAsFlag(word) {
		return false
	}
	name := strings.TrimLeft(word, "-")
	return name == "help" || name == "h"
}

// asksHelp reports whether a line normalizeArgs wrote asks for help: a
// help flag among its flags, before the "--" that leads its arguments.
func asksHelp(line []string) bool {
	if i := slices.Index(line, "--"); i >= 0 {
		line = line[:i]
	}
	return slices.ContainsFunc(line, isHelpFlag)
}

// flagWord is a flag as typed, without the value given with "=".
func flagWord(word string) string {
	w, _, _ := strings.Cut(word, "=")
	return w
}

// commandAt reads the command a line names (after the global flags): the
// command, its names as typed ("session", "show"), the words after them, and
// whether the line asks for its help (`help CMD…`, `session help list`). cmd
// is nil, and rest the line, when the first word is no command.
func commandAt(cmds []*cli.Command, line []string) (cmd *cli.Command, names, rest []string, help bool) {
	rest = line
	if len(rest) > 1 && (rest[0] == "help" || rest[0] == "h") && findCommand(cmds, rest[1]) != nil {
		help, rest = true, rest[1:]
	}
	if len(rest) == 0 {
		return nil, nil, line, false
	}
	if cmd = findCommand(cmds, rest[0]); cmd == nil {
		return nil, nil, line, false
	}
	names, rest = []string{rest[0]}, rest[1:]
	for len(cmd.Subcommands) > 0 && len(rest) > 0 {
		// Flags go anywhere: those before the subcommand (`session --store
		// DIR list`) are the subcommand's, moved after its name.
		n := leadingFlags(cmd.Subcommands, rest)
		if n >= len(rest) {
			break
		}
		if rest[n] == "help" { // teamrun session [--store DIR] help [list]
			help, rest = true, append(slices.Clip(rest[:n]), rest[n+1:]...)
			continue
		}
		sub := findCommand(cmd.Subcommands, rest[n])
		if sub == nil {
			break
		}
		cmd = sub
		names = append(names, rest[n])
		rest = append(slices.Clip(rest[:n]), rest[n+1:]...)
	}
	return cmd, names, rest, help
}

// leadingFlags counts the words at the start of line that are flags of one
// of subs, with their values, or help flags (`session --help list` is the
// help of list, as `session list --help` is); an unknown one ends them.
func leadingFlags(subs []*cli.Command, line []string) int {
	i := 0
	for i < len(line) && shellcmd.ReadAsFlag(line[i]) && line[i] != "--" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(line[i], "-"), "=")
		kind := flagUnknown
		for _, sub := range subs {
			if k, _ := kindOf(sub, name); k != flagUnknown {
				kind = k
				break
			}
		}
		switch {
		case kind == flagUnknown && !isHelpFlag(line[i]):
			return i
		case hasValue || kind != flagValue:
			i++
		default:
			i += 2
		}
	}
	return i
}

// helpTopics are the words of a help line for cmd that are no flags: the
// flags of cmd and of its subcommands are skipped with their values, an
// unknown one alone.
func helpTopics(cmd *cli.Command, line []string) []string {
	cmds := append([]*cli.Command{cmd}, cmd.Subcommands...)
	var pos []string
	for i := 0; i < len(line); i++ {
		switch n := leadingFlags(cmds, line[i:]); {
		case line[i] == "--":
			return append(pos, line[i+1:]...)
		case n > 0:
			i += n - 1
		case !shellcmd.ReadAsFlag(line[i]):
			pos = append(pos, line[i])
		}
	}
	return pos
}

// splitFlags separates a command's flags (with their values) from its
// arguments; everything after "--" is an argument.
//
// A flag that takes one value is refused the second time it is given
// (urfave/cli would keep the last in silence); one that collects values
// (--var, --rerun: repeats) may repeat, and so may a switch (--json).
//
// A flag given again under another of its names (-v --verbose) is written
// as it was first: urfave/cli refuses two spellings of one flag, where the
// same one twice is the switch.
func splitFlags(cmd *cli.Command, path string, rest []string) (flags, pos []string, err error) {
	given := map[cli.Flag]bool{}
	spelled := map[cli.Flag]string{}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return flags, append(pos, rest[i+1:]...), nil
		}
		if !shellcmd.ReadAsFlag(a) {
			pos = append(pos, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		kind, opt := kindOf(cmd, name)
		if f := flagNamed(cmd, name); f != nil && kind != flagBool && !repeats(f) {
			// The values are not repeated back: a store URL may hold a password.
			if given[f] {
				return nil, nil, exitf(exitUsage, "%s is given twice: give it once (see %s --help)", flagTitle(f), path)
			}
			given[f] = true
		}
		if f := flagNamed(cmd, name); f != nil {
			if first, ok := spelled[f]; !ok {
				spelled[f] = name
			} else if first != name {
				a = dashed(first) + a[len(flagWord(a)):] // with its "=value", if any
			}
		}
		switch {
		case hasValue, kind == flagBool, kind == flagUnknown:
			// An unknown flag is left for urfave/cli to refuse, with a suggestion.
			flags = append(flags, a)
		case kind == flagOptional:
			// A word that is no value is the next argument, unless the
			// command has its one FILE already (`run a.yaml --wait abc`):
			// then it is a bad value, and said so.
			if i+1 < len(rest) && (opt.Accepts(rest[i+1]) || cmd.ArgsUsage == "FILE" && len(pos) > 0 && !shellcmd.ReadAsFlag(rest[i+1])) {
				flags = append(flags, a+"="+rest[i+1])
				i++
				continue
			}
			flags = append(flags, a)
		case i+1 < len(rest):
			if err := valueAfter(cmd, path, a, opt, rest[i+1]); err != nil {
				return nil, nil, err
			}
			flags = append(flags, a, rest[i+1])
			i++
		default:
			return nil, nil, exitf(exitUsage, "%s needs a value (see %s --help)", a, path)
		}
	}
	return flags, pos, nil
}

// valueAfter refuses next as the value of flag (as typed, `--session`) when
// teamrun reads it as a flag (shellcmd.ReadAsFlag): `--session $ID
// --continue` with ID unset would start a session named "--continue" and
// drop --continue. A value that starts with "-" goes after "=", the one
// place where it cannot be a flag: `--session=-x`. A word the flag's value
// accepts (a negative number) is its value.
func valueAfter(cmd *cli.Command, path, flag string, v valueWords, next string) error {
	if !shellcmd.ReadAsFlag(next) || v != nil && v.Accepts(next) {
		return nil
	}
	flag = flagWord(flag)
	if kind, _ := kindOf(cmd, strings.TrimLeft(flagWord(next), "-")); kind != flagUnknown {
		return exitf(exitUsage, `%s needs a value, but %s follows it, a flag of %s (a variable left unset?): give the value, and one that starts with "-" as %s=-x (see %s --help)`,
			flag, flagWord(next), path, flag, path)
	}
	// Not said back: it may be a value, and a store URL's may hold a password.
	return exitf(exitUsage, `%s needs a value, but the word after it starts with "-", which reads as a flag: give such a value as %s=-x (see %s --help)`, flag, flag, path)
}

func kindOf(cmd *cli.Command, name string) (flagKind, valueWords) {
	if name == "help" || name == "h" {
		return flagBool, nil
	}
	for _, f := range cmd.Flags {
		if !hasName(f.Names(), name) {
			continue
		}
		switch f := f.(type) {
		case *cli.BoolFlag:
			return flagBool, nil
		case *cli.GenericFlag:
			v, _ := f.Value.(valueWords)
			if o, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && o.IsBoolFlag() && v != nil {
				return flagOptional, v
			}
			return flagValue, v
		}
		return flagValue, nil
	}
	return flagUnknown, nil
}

// flagNamed is cmd's flag called name (or one of its aliases), nil when
// it has none.
func flagNamed(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if hasName(f.Names(), name) {
			return f
		}
	}
	return nil
}

// sliceFlag is a flag that collects a value each time it is given:
// urfave/cli's slices (--rerun), and --var's own value.
type sliceFlag interface{ IsSliceFlag() bool }

// repeats says whether f may be given more than once.
func repeats(f cli.Flag) bool {
	if g, ok := f.(*cli.GenericFlag); ok {
		s, ok := g.Value.(sliceFlag)
		return ok && s.IsSliceFlag()
	}
	s, ok := f.(sliceFlag)
	return ok && s.IsSliceFlag()
}

// flagTitle names f with its aliases, as typed: "--output/-o".
func flagTitle(f cli.Flag) string {
	names := f.Names()
	for i, n := range names {
		names[i] = dashed(n)
	}
	return strings.Join(names, "/")
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if hasName(c.Names(), name) {
			return c
		}
	}
	return nil
}

func hasName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// unknownCommand is the error for `teamrun runn`, with a did-you-mean.
func unknownCommand(c *cli.Context, name string) error {
	return exitf(exitUsage, "unknown command %q.%s (teamrun --help lists the commands)", name, didYouMean(c.Command.Subcommands, name))
}

// unknownSessionCommand is the error for `teamrun session lst`, naming
// the subcommands there are.
func unknownSessionCommand(c *cli.Context, name string) error {
	return exitf(exitUsage, "unknown session command %q: use %s.%s (teamrun session --help)", name, subcommandList(c.Command.Subcommands), didYouMean(c.Command.Subcommands, name))
}

// subcommandList names the visible commands of cmds: "list, show or diff".
func subcommandList(cmds []*cli.Command) string {
	var names []string
	for _, sc := range cmds {
		if !sc.Hidden {
			names = append(names, sc.Name)
		}
	}
	return orList(names)
}

// orList is "a, b or c".
func orList(words []string) string {
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " or " + words[n-1]
	}
	return strings.Join(words, ", ")
}

// didYouMean is the suggestion for a mistyped command among cmds, led by a
// space, or "" when none is close (spec.Closest, the rule of every
// did-you-mean: urfave/cli's own suggests its best match however far, as
// "completion" for "nothing"). It never suggests "help": that is no fix.
func didYouMean(cmds []*cli.Command, name string) string {
	return closestOf(cmds, name, func(c *cli.Command) bool { return !c.Hidden })
}

// topicDidYouMean is didYouMean among the help topics of the top level
// (cmds, the app's commands), the environment topic among them.
func topicDidYouMean(cmds []*cli.Command, name string) string {
	return closestOf(cmds, name, func(c *cli.Command) bool { return isHelpTopic(c, true) })
}

// isHelpTopic reports whether `help` offers c (top: among the app's own
// commands): a visible command, or the environment topic, which is hidden
// as a command, not as a topic.
func isHelpTopic(c *cli.Command, top bool) bool {
	return !c.Hidden || top && c.Name == environmentTopic
}

func closestOf(cmds []*cli.Command, name string, offered func(*cli.Command) bool) string {
	var names []string
	for _, c := range cmds {
		if offered(c) {
			names = append(names, c.Names()...)
		}
	}
	if s := spec.Closest(name, names); s != "" {
		return " " + fmt.Sprintf(cli.SuggestDidYouMeanTemplate, s)
	}
	return ""
}

var (
	undefinedFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(.*)$`) })
	needsArgument = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag needs an argument: -+(.*)$`) })
	invalidValue  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^invalid value "(.*)" for flag -+([^:]*): (.*)$`) })
	invalidBool   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^invalid boolean value "(.*)" for -+([^:]*): (.*)$`) })
)

// usageError rewords urfave/cli's flag errors (those of the flag package):
// the flag as it is typed, what was expected, and a did-you-mean for a flag
// that does not exist. It replaces the full help urfave/cli prints to stdout.
func usageError(c *cli.Context, err error, isSubcommand bool) error {
	help := c.Command.HelpName
	if help == "" {
		help = c.App.Name
	}
	msg := err.Error()
	if m := undefinedFlag().FindStringSubmatch(msg); m != nil {
		typed := asTyped(c, m[1])
		if owners := flagOwners(c.App.Commands, "", m[1]); !isSubcommand && len(owners) > 0 {
			// `teamrun -v run FILE`: flags go anywhere after the command.
			hint := ""
			if m[1] == "v" {
				hint = "; --version prints the version"
			}
			who := orList(owners)
			if len(owners) > 3 {
				who = fmt.Sprintf("%s and %d more", strings.Join(owners[:3], ", "), len(owners)-3)
			}
			return exitf(exitUsage, "unknown flag %s before the command: a command's flags go after its name, as in teamrun %s … %s (a flag of %s)%s",
				typed, owners[0], typed, who, hint)
		}
		var names []string
		for _, f := range c.Command.Flags {
			names = append(names, f.Names()...)
		}
		if !c.Command.HideHelp {
			names = append(names, "help")
		}
		hint := ""
		closest := spec.Closest(m[1], names)
		switch {
		case c.Command.ArgsUsage != "" && !strings.HasPrefix(typed, "--") && len(closest) != 1:
			// `session decide s1 -ask yes`: a task named "-ask", or a
			// session named "-dash" (which is also near --task). Near a
			// short flag (-qv), it is the flags run together.
			hint = fmt.Sprintf(`: an argument that starts with "-" goes after "--", as in %s … -- %s`, help, typed)
			if closest != "" {
				hint += fmt.Sprintf("; or did you mean %q?", dashed(closest))
			}
		case closest != "":
			hint = ". " + fmt.Sprintf(cli.SuggestDidYouMeanTemplate, dashed(closest))
		}
		return exitf(exitUsage, "unknown flag %s%s (see %s --help)", typed, hint, help)
	}
	if m := needsArgument().FindStringSubmatch(msg); m != nil {
		return exitf(exitUsage, "%s needs a value (see %s --help)", asTyped(c, m[1]), help)
	}
	if m := invalidValue().FindStringSubmatch(msg); m != nil {
		// The flag's Set shows the value as spec.ShownValue has it, or
		// not at all (--var's may be a key): it is not repeated here.
		return exitf(exitUsage, "%s: %s", asTyped(c, m[2]), m[3])
	}
	if m := invalidBool().FindStringSubmatch(msg); m != nil {
		if m[3] != "parse error" { // a flag that may stand alone, such as --wait, said why
			return exitf(exitUsage, "%s: %s", asTyped(c, m[2]), m[3])
		}
		v, err := strconv.Unquote(`"` + m[1] + `"`) // the flag package's %q
		if err != nil {
			v = m[1]
		}
		return exitf(exitUsage, "%s: want true or false (or the flag alone), got %s", asTyped(c, m[2]), spec.ShownValue(v))
	}
	return withCode(exitUsage, err)
}

// lineKey is the App.Metadata entry that holds the command line as typed
// (run sets it), for the errors that name a flag.
const lineKey = "line"

// asTyped is flag name as the command line has it ("-qv", "--wait"): the
// flag package's messages give every flag one dash.
func asTyped(c *cli.Context, name string) string {
	line, _ := c.App.Metadata[lineKey].([]string)
	for _, w := range line {
		if w == "--" {
			break
		}
		if w = flagWord(w); w == "-"+name || w == "--"+name {
			return w
		}
	}
	return dashed(name)
}

// flagOwners are the commands among cmds (named from prefix, "session
// list") that have the flag name, help aside.
func flagOwners(cmds []*cli.Command, prefix, name string) []string {
	var out []string
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, f := range c.Flags {
			if hasName(f.Names(), name) {
				out = append(out, prefix+c.Name)
				break
			}
		}
		out = append(out, flagOwners(c.Subcommands, prefix+c.Name+" ", name)...)
	}
	return out
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// wireCommands gives every command the shared usage-error handler and
// hides urfave/cli's per-command help subcommand (`teamrun help CMD` and
// `CMD --help` cover it; a session id such as "h" stays an argument).
func wireCommands(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = usageError
		c.HideHelpCommand = true
		c.Before = emptyFlag
		if act := c.Action; act != nil {
			c.Action = func(cc *cli.Context) error { return explained(cc, act(cc)) }
		}
		wireCommands(c.Subcommands)
	}
}

// explained is err as command c ends with it: the commands it tells to
// paste name the store c was given (checkpoint.NameStore), and advice that
// is a fix to make first (checkpoint.Retryable: "free some space") is
// followed by how this command does again what failed (againAdvice). The
// exit code stays.
func explained(c *cli.Context, err error) error {
	checkpoint.NameStore(err, pasteStore(c))
	if !checkpoint.Retryable(err) {
		return err
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.code, err: &againError{err: ee.err, again: againAdvice(c, err)}}
	}
	return &againError{err: err, again: againAdvice(c, err)}
}

// explainedText is err's message as explained has it, for a warning or a
// --json field.
func explainedText(c *cli.Context, err error) string { return explained(c, err).Error() }

type againError struct {
	err   error
	again string
}

func (e *againError) Error() string { return e.err.Error() + ", then " + e.again }
func (e *againError) Unwrap() error { return e.err }

// againAdvice is what does again what failed once its cause is dealt
// with. A run resumes its session, unless it failed before the project
// named it (runner.UnnamedError: --continue would resume another); any
// other command is simply run again — a list, a show or an export never
// has a session to resume.
func againAdvice(c *cli.Context, err error) string {
	var path []string
	for _, cc := range c.Lineage() {
		if cc.Command != nil && cc.Command.Name != c.App.Name { // the root's is the app's
			path = append([]string{cc.Command.Name}, path...)
		}
	}
	name := strings.Join(path, " ")
	var unnamed *runner.UnnamedError
	if name == "run" && !errors.As(err, &unnamed) {
		return "rerun with --continue (nothing acknowledged is lost)"
	}
	return "run the same `teamrun " + name + "` again"
}

// emptyFlag refuses a flag given an empty value (`--store "$URL"` with URL
// unset, `--store=`), exit 2 before anything is read or written: left to
// the command, it meant "the default" in silence — another store, the
// current folder, every spec. An empty --session is a bad id (DESIGN §5).
func emptyFlag(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		sf, ok := f.(*cli.StringFlag)
		if !ok || !c.IsSet(sf.Name) || strings.TrimSpace(c.String(sf.Name)) != "" {
			continue
		}
		if sf.Name == "session" {
			return withCode(exitUsage, fmt.Errorf("--session: %w", checkpoint.ValidateID("")))
		}
		// The usage names the value in backquotes: "the session store `URL`".
		what := "value"
		if _, rest, ok := strings.Cut(sf.Usage, "`"); ok {
			if name, _, ok := strings.Cut(rest, "`"); ok && name != "" {
				what = name
			}
		}
		// --output/-o: either may have been typed.
		return exitf(exitUsage, "%s is empty (a variable left unset?): give its %s, or leave it out (see %s --help)", flagTitle(sf), what, c.Command.HelpName)
	}
	return nil
}

// posIntFlag is a whole number ≥ 1 (--max-parallel).
type posIntFlag struct{ n int }

func (p *posIntFlag) String() string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(p.n)
}

func (p *posIntFlag) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%s is too large: want a whole number ≥ 1 (up to %d)", spec.ShownValue(s), math.MaxInt)
	}
	if err != nil || n < 1 {
		return fmt.Errorf("want a whole number ≥ 1, got %s", spec.ShownValue(s))
	}
	p.n = n
	return nil
}

// Accepts reports whether s is a number, for Set to refuse with what it
// wants: -1 after --limit is its bad value, not a flag (valueWords).
func (p *posIntFlag) Accepts(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
