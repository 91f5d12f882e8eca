// Command teamrun runs a team of agents described in agents.yaml and
// checkpoints every task so that `--continue` resumes where it stopped.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/pkg/runner"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// Exit codes of DESIGN §3.
const (
	exitOK          = 0
	exitTaskFailed  = 1
	exitUsage       = 2
	exitHalted      = 3
	exitLocked      = 4
	exitStore       = 5
	exitInterrupted = 130
	exitTerminated  = 143
)

// exitError carries the process exit code of a command's failure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx := context.Background()
	var in *runner.Interrupts
	if cmd := commandOf(args); cmd == "run" || cmd == "session" || cmd == "init" {
		// They finish what they write before they stop; the others
		// stop at once, as any program does, a blocked read included.
		// Caught here, before anything else, and by this handler alone:
		// a signal that comes while the command starts is its first.
		ctx, in = runner.WatchInterrupts(ctx)
		defer in.Stop()
	} else if !runner.QuitDumps() {
		defer quitAtOnce()()
	}
	ios := iostreams.System(stdin, stdout, stderr, os.Getenv)
	app := newApp(ios, in)
	app.Metadata = map[string]any{lineKey: args[1:]}
	var err error
	if n := len(args); n > 1 && args[n-1] == completionFlag {
		err = complete(ctx, app, args)
	} else if args, err = normalizeArgs(app.Commands, args); err == nil {
		if commandOf(args) == "run" && !asksHelp(args) {
			// Only a run outlives its reader; its help, as a
			// completion (above), ends at a broken pipe as any
			// program does.
			defer keepOnBrokenPipe()()
		}
		err = app.RunContext(ctx, args)
	}
	var ee *exitError
	if oerr := ios.OutErr(); oerr != nil && !errors.As(err, &ee) {
		// The output went nowhere (a full disk under `> file`): the
		// command did not do what it was asked, whatever it made of the
		// failed write (most printing ignores it). A command that ends
		// with its own code (a failed task, a halt) keeps it.
		fmt.Fprintf(stderr, "teamrun: the output is incomplete: %v\n", oerr)
		return exitStore
	}
	if err == nil || errors.As(err, new(shownError)) {
		return exitOK
	}
	if in != nil && in.Signal() != nil && errors.Is(err, context.Canceled) {
		// Stopped by the signal: its exit code, whatever the command
		// made of the cancelled read or write.
		fmt.Fprintln(stderr, "teamrun:", err)
		return runner.ExitCodeOf(in.Signal())
	}
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "teamrun:", ee.err)
		}
		return ee.code
	}
	// Anything else comes from flag parsing or a command without its own code.
	fmt.Fprintln(stderr, "teamrun:", err)
	return exitUsage
}

// quitAtOnce ends a command that writes nothing at SIGQUIT (Ctrl-\) with
// its code, 131, as SIGINT, SIGTERM and SIGHUP end it (the shell reports
// theirs), not with Go's dump of every goroutine and exit 2, which says
// bad usage.
func quitAtOnce() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			os.Exit(runner.ExitCodeOf(s))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// commandOf is the command args name ("" for none). The commands that
// write (run, session, init) catch SIGINT, SIGTERM, SIGHUP and SIGQUIT
// to end what they write first.
func commandOf(args []string) string {
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// keepOnBrokenPipe makes a write to an output whose reader went away (`|
// head`, a `less` quit) fail with EPIPE instead of killing the process: a
// run then finishes its tasks, their lines dropped, where SIGPIPE would
// end it as kill -9 does, mid-attempt (an LLM call paid twice). The
// command agents it starts get SIGPIPE as usual: exec resets a handled
// signal. The output's loss is reported at the end (iostreams.OutErr).
func keepOnBrokenPipe() (stop func()) {
	ch := make(chan os.Signal, 1) // only to be notified: nothing reads it
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

// newApp is the command line; in is the signals' handler of a command
// that writes (nil for one that does not, or in a test that builds the
// app alone).
func newApp(ios *iostreams.IOStreams, in *runner.Interrupts) *cli.App {
	app := &cli.App{
		Name:    "teamrun",
		Usage:   "run a team of agents from agents.yaml, checkpointed and resumable",
		Version: buildVersion(),
		// urfave/cli's own version flag is also -v, which is run's
		// --verbose (DESIGN §3): `teamrun -v` printed the version where
		// the user asked for a verbose run. --version is teamrun's own.
		HideVersion: true,
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "version", Usage: "print the version (also: teamrun version)"}},
		Before: func(c *cli.Context) error {
			if c.Bool("version") {
				return showVersion(c)
			}
			return nil
		},
		Reader:               ios.In,
		Writer:               ios.Out,
		ErrWriter:            ios.ErrOut,
		EnableBashCompletion: true,
		Suggest:              true,
		// Errors are printed once, by run, with their exit code.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			return unknownCommand(c, c.Args().First())
		},
		Commands: []*cli.Command{
			// Each command lives in its own file as a constructor, e.g. validateCommand().
			validateCommand(),
			schemaCommand(),
			fingerprintCommand(),
			runCommand(ios, in),
			sessionCommand(ios),
			planCommand(),
			completionCommand(),
			initCommand(),
			versionCommand(),
			environmentCommand(),
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate + appHelpTopics,
	}
	wireCommands(app.Commands)
	return app
}
