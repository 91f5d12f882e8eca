package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/internal/fserr"
	"github.com/teamrun/teamrun/internal/shellcmd"
	"github.com/teamrun/teamrun/schemas"
)

//go:embed starter/agents.yaml
var starterSpec []byte

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a commented starter agents.yaml that runs offline",
		ArgsUsage: "[FILE]",
		Description: "Writes FILE (default agents.yaml) and, beside it, agents.schema.json for editors (the\n" +
			"file's yaml-language-server line names it). An existing FILE is never overwritten\n" +
			"(exit 2, nothing written); an existing agents.schema.json is left as it is, but a folder\n" +
			"of that name is exit 2, nothing written. FILE ends in \".yaml\" or \".yml\": the starter\n" +
			"is commented YAML (another name is exit 2, nothing written).\n" +
			"Folders on FILE's path that do not exist are made.\n\n" +
			"Examples:\n" +
			"   teamrun init && teamrun run agents.yaml\n" +
			"   teamrun init pipelines/nightly.yaml",
		Action: action(func(c *cli.Context, args []string) error {
			path := "agents.yaml"
			switch len(args) {
			case 0:
			case 1:
				path = args[0]
			default:
				return exitf(exitUsage, "init takes at most one FILE, got %d arguments", len(args))
			}
			if strings.TrimSpace(path) == "" {
				return exitf(exitUsage, "init: the FILE is empty: name one ending in .yaml (teamrun init agents.yaml); nothing was written")
			}
			// The starter is commented YAML: a .json (or any other) name
			// would hold a file that is not what it says, and as JSON the
			// comments that make it a starter would be lost.
			if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
				return exitf(exitUsage, "init: %s: the starter team is commented YAML; name a FILE ending in .yaml or .yml (%s); nothing was written", path, shellcmd.Command("init", nil, []string{yamlName(path)}, nil))
			}
			dir := filepath.Dir(path)
			missing, err := missingFolders(dir)
			var file *notFolderError
			switch {
			case errors.As(err, &file):
				return exitf(exitUsage, "init: %s is a file, not a folder: name a FILE in a folder (teamrun init FILE); nothing was written", file.path)
			case err != nil:
				return writeFileError("init: ", "read", dir, err, "nothing was written", "teamrun init FILE")
			}
			// Checked before anything is written: kept as an existing
			// schema, a folder left FILE's yaml-language-server line
			// naming it.
			schema := filepath.Join(dir, "agents.schema.json")
			if fi, err := os.Stat(schema); err == nil && fi.IsDir() {
				return exitf(exitUsage, "init: %s is a folder, not a file: it is in the way of the schema written beside FILE for editors; move it, or name a FILE in another folder (teamrun init FILE); nothing was written", schema)
			}
			// The help's `teamrun init pipelines/nightly.yaml` in a fresh
			// checkout: missing folders are made, as the store makes its
			// own, and removed again when FILE cannot be written.
			undo := func() {
				for _, d := range missing {
					os.Remove(d)
				}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				undo()
				return writeFileError("init: ", "create the folder", dir, err, "nothing was written", "teamrun init FILE")
			}
			// O_EXCL: a file that appears meanwhile is not overwritten either.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return exitf(exitUsage, "init: %s already exists; nothing was written (remove it, or name another FILE: teamrun init FILE)", path)
			}
			if err != nil {
				undo()
				return writeFileError("init: ", "create", path, err, "nothing was written", "teamrun init FILE")
			}
			_, err = f.Write(starterSpec)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				undo()
				return writeFileError("init: ", "write", path, err, "nothing was written", "teamrun init FILE")
			}
			if len(missing) > 0 {
				// Said, so that a misspelt folder does not go unseen.
				fmt.Fprintf(c.App.Writer, "made the folder %s\n", dir)
			}
			fmt.Fprintf(c.App.Writer, "wrote %s\n", path)
			switch err := writeNew(schema, schemas.AgentsSchema); {
			case err == nil:
				fmt.Fprintf(c.App.Writer, "wrote %s (the schema editors read)\n", schema)
			case errors.Is(err, fs.ErrExist):
				fmt.Fprintf(c.App.Writer, "kept %s as it is (`teamrun schema` prints this version's)\n", schema)
			default:
				adminWarnf(c, "%v: editors will not find the schema (`teamrun schema > %s` writes it)", err, schema)
			}
			fmt.Fprintf(c.App.Writer, "next: %s\n", shellcmd.Command("run", nil, []string{path}, nil))
			return nil
		}),
	}
}

// notFolderError is a part of init's FILE that is a file, not a folder.
type notFolderError struct{ path string }

func (e *notFolderError) Error() string { return e.path + " is a file, not a folder" }

// missingFolders are dir and those of its parents that do not exist,
// deepest first: what making dir makes, and removing them undoes. A part
// of dir that is a file is a notFolderError.
func missingFolders(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			return missing, nil
		case err == nil:
			return nil, &notFolderError{path: d}
		case !errors.Is(err, fs.ErrNotExist) && fserr.Of(err) != fserr.NotDir:
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			return missing, nil
		}
	}
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// yamlName is the FILE that init's hint suggests for path, a name that is
// no .yaml: path with .yaml in place of its extension (x.json: x.yaml); in
// a folder that path names (sub/, or an existing folder), its
// agents.yaml; for a stream or a device (-, /dev/stdout), agents.yaml: a
// hidden sub/.yaml, a "-.yaml" or a /dev/stdout.yaml was no fix.
func yamlName(path string) string {
	fi, err := os.Stat(path)
	switch {
	case strings.HasSuffix(path, "/") || err == nil && fi.IsDir():
		return filepath.Join(path, "agents.yaml")
	case path == "-" || err == nil && !fi.Mode().IsRegular():
		return "agents.yaml"
	}
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".yaml"
}
