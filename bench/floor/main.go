// Command floor is what any durable runner must pay per task (package
// floors), for bench/compare.sh and the benchmarks of package bench:
//
//	floor direct N DIR [P]  N × (fork/exec /bin/true + a journal line made durable),
//	                        P at a time (default 1), their syncs shared
//	floor sh N DIR          N × (sh -c true + a journal line made durable)
//	floor llm N URL DIR     N × (a chat completion request to URL + a journal line made durable)
//	floor rss CMD ARG…      run CMD and print its peak RSS in KiB
//	floor faults CMD ARG…   run CMD and print its page faults (minor and major)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/teamrun/teamrun/bench/floors"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: floor direct N DIR [P], floor sh N DIR, floor llm N URL DIR, floor rss CMD ARG…, or floor faults CMD ARG…")

// run runs the floor args name; rss and faults print their figure on
// out, after what the command printed there.
func run(args []string, out io.Writer) error {
	if len(args) >= 2 && (args[0] == "rss" || args[0] == "faults") {
		cmd := exec.Command(args[1], args[2:]...)
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Run(); err != nil {
			return err
		}
		figure := peakRSS
		if args[0] == "faults" {
			figure = pageFaults
		}
		n, err := figure(cmd.ProcessState)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, n)
		return err
	}
	if len(args) < 3 {
		return errUsage
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		return errUsage
	}
	var floor func(*floors.Journal) error
	dir := args[2]
	switch {
	case args[0] == "llm" && len(args) == 4:
		dir = args[3]
		floor = func(j *floors.Journal) error { return floors.LLM(context.Background(), args[2], n, j) }
	case args[0] == "sh" && len(args) == 3:
		floor = func(j *floors.Journal) error { return floors.Exec(n, 1, []string{"/bin/sh", "-c", "true"}, j) }
	case args[0] == "direct" && (len(args) == 3 || len(args) == 4):
		parallel := 1
		if len(args) == 4 {
			if parallel, err = strconv.Atoi(args[3]); err != nil || parallel < 1 {
				return errUsage
			}
		}
		floor = func(j *floors.Journal) error { return floors.Exec(n, parallel, []string{"/bin/true"}, j) }
	default:
		return errUsage
	}
	j, err := floors.Create(filepath.Join(dir, "floor.journal"))
	if err != nil {
		return err
	}
	defer j.Close()
	return floor(j)
}
