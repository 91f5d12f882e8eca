package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/ownfiles"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/atomicfile"
	"github.com/teamrun/teamrun/pkg/checkpoint/transfer"
	"github.com/teamrun/teamrun/pkg/runner"
)

func sessionExportCommand() *cli.Command {
	return &cli.Command{
		Name:            "export",
		HideHelpCommand: true, // session ids such as "h" stay arguments
		Usage:           "write a session as one JSON document, to move it to another store",
		ArgsUsage:       "ID",
		Description: "The document is the session with every completed transition folded in; `session\n" +
			"import` reads it into any store (a folder or PostgreSQL).\n\n" +
			"Example:\n" +
			"   teamrun session export nightly-1 --output nightly-1.json\n" +
			"   teamrun session import nightly-1.json --store postgres://teamrun@db/teamrun",
		Flags: []cli.Flag{projectFlag(), storeFlagDef(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (mode 0600) instead of stdout (-: stdout)"}},
		BashComplete: completeSessions,
		Action: action(func(c *cli.Context, args []string) error {
			id, err := oneArg(args, "session export", "teamrun session export ID")
			if err != nil {
				return err
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			if err := checkpoint.ValidateID(id); err != nil {
				return withCode(exitUsage, err)
			}
			out := c.String("output")
			if where := keptByTeamrun(a.store, out); where != "" {
				return exitf(exitUsage, "-o %s: it is %s: the document would replace one of those files, or pass for one; nothing was written: name a file outside it, or leave -o out for stdout", out, where)
			}
			doc, err := transfer.Export(c.Context, a.store, id)
			if errors.Is(err, checkpoint.ErrNotFound) {
				return a.notFound(c, id)
			}
			if err != nil {
				return storeExit(err)
			}
			if out == "" || out == "-" { // "-": stdout, as import's "-" is stdin
				_, err := c.App.Writer.Write(doc)
				return err
			}
			// Whole or not at all: an interrupted export leaves no half a document.
			if err := atomicfile.Write(out, doc, 0o600); err != nil {
				if errors.Is(err, checkpoint.ErrNotRegular) {
					return exitf(exitUsage, "-o %s: %v: the document replaces the file it is written to; name a file, or leave -o out for stdout", out, errors.Unwrap(err))
				}
				var ae *atomicfile.Error
				if errors.As(err, &ae) && ae.Renamed {
					return writeFileError("", "sync the folder of", out, ae.Err, "the document is in it whole, but a power cut may undo that", "-o FILE")
				}
				if errors.As(err, &ae) {
					err = ae.Err
				}
				return writeFileError("", "write", out, err, "nothing was written (a file already there is left as it was)", "-o FILE")
			}
			fmt.Fprintf(c.App.ErrWriter, "exported session %s from %s to %s\n", id, a.store.Location(), out)
			return nil
		}),
	}
}

func sessionImportCommand() *cli.Command {
	return &cli.Command{
		Name:            "import",
		HideHelpCommand: true,
		Usage:           "read a session that `session export` wrote into this store",
		ArgsUsage:       "FILE",
		Description: "The session keeps its id; a store that already has that id is left alone (exit 2:\n" +
			"delete it there first). FILE - reads stdin. The import is audited.\n\n" +
			"Example:\n" +
			"   teamrun session import nightly-1.json --store postgres://teamrun@db/teamrun",
		Flags: []cli.Flag{projectFlag(), storeFlagDef()},
		Action: action(func(c *cli.Context, args []string) error {
			if len(args) != 1 {
				return exitf(exitUsage, "session import needs exactly one FILE (e.g. teamrun session import nightly-1.json)")
			}
			file := args[0]
			if file == "" {
				return exitf(exitUsage, "session import: the FILE is empty: name the file session export wrote (or - for stdin)")
			}
			data, err := readInput(c.Context, file, c.App.Reader)
			if file == "-" {
				file = "stdin"
			}
			if errors.Is(err, context.Canceled) {
				return &runner.ReadInterruptedError{Read: file, Done: "nothing was imported", Err: err}
			}
			if errors.Is(err, errEmpty) && file == "stdin" {
				// cron's stdin, or a pipe whose export failed.
				return exitf(exitUsage, "stdin is empty (nothing was piped in?): nothing was imported; pipe in what session export wrote (teamrun session export ID | teamrun session import -)")
			}
			if errors.Is(err, errEmpty) {
				return exitf(exitUsage, "%s is empty: nothing was imported; name the file session export wrote (teamrun session export ID -o FILE)", file)
			}
			if errors.Is(err, errNoObject) {
				return exitf(exitUsage, "%s is not a session that teamrun session export wrote (%v)", file, err)
			}
			if err != nil {
				// The message names the file once.
				return exitf(exitUsage, "cannot read %s: %v", file, fserr.Bare(err))
			}
			a, err := openAdmin(c)
			if err != nil {
				return err
			}
			id, err := transfer.Import(c.Context, a.store, file, data)
			var de *transfer.DocumentError
			switch {
			case errors.As(err, &de), errors.Is(err, checkpoint.ErrExists):
				return withCode(exitUsage, err)
			case err != nil:
				return storeExit(err)
			}
			if err := a.project.Audit(c.Context, checkpoint.AuditRecord{Event: checkpoint.EventCreated, Session: id, Store: a.store.Location(),
				Detail: "imported from " + file}); err != nil {
				return storeExit(fmt.Errorf("session %s was imported, but the audit log could not be written: %w", id, err))
			}
			fmt.Fprintf(c.App.Writer, "imported session %s into %s\n", id, a.store.Location())
			return nil
		}),
	}
}

// keptByTeamrun says where out lies, and what is kept there, when that is
// a folder teamrun keeps its own files in — the file store's folder (its
// sessions), or a .teamrun folder — and "" otherwise (stdout included).
// Links and relative paths are resolved first, as the rename that writes
// out would resolve them (ownfiles.RenameTarget).
func keptByTeamrun(store checkpoint.Backend, out string) string {
	if out == "" || out == "-" {
		return ""
	}
	real := ownfiles.RenameTarget(out)
	var guards []ownfiles.Guard
	if h, ok := store.(interface{ Home() string }); ok {
		guards = append(guards, ownfiles.Guard{Path: h.Home(),
			What: "inside the session store " + h.Home() + ", whose files are the sessions' own (snapshots, journals, locks, results, logs)"})
	}
	return ownfiles.Of(real, guards, real)
}

// errNoObject: what import was given does not start as a JSON object does.
var errNoObject = errors.New("it is no JSON object")

// errEmpty: what import was given is empty (or only white space).
var errEmpty = errors.New("empty")

// readInput reads file, or stdin for "-", given up at Ctrl-C
// (runner.Interruptible): a pipe or FIFO may never get its writer. What
// is no JSON object is refused at its first byte (errNoObject), not read
// whole: /dev/zero or a stray binary would be read until memory ran out.
func readInput(ctx context.Context, file string, stdin io.Reader) ([]byte, error) {
	return runner.Interruptible(ctx, func() ([]byte, error) {
		r := stdin
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		br := bufio.NewReader(r)
		for {
			b, err := br.ReadByte()
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil, errEmpty
				}
				return nil, err
			}
			if b == ' ' || b == '\t' || b == '\n' || b == '\r' {
				continue
			}
			if b != '{' {
				return nil, errNoObject
			}
			_ = br.UnreadByte()
			return io.ReadAll(br)
		}
	})
}
