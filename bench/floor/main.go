// Command floor is what any durable runner must pay per task, for
// bench/compare.sh:
//
//	floor direct N DIR   N × (fork/exec /bin/true + append a line + fdatasync)
//	floor sh N DIR       N × (sh -c true + append a line + fdatasync)
//	floor rss CMD ARG…   run CMD and print its peak RSS in KiB
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) >= 2 && args[0] == "rss" {
		cmd := exec.Command(args[1], args[2:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return err
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return fmt.Errorf("no rusage on this system")
		}
		fmt.Println(ru.Maxrss) // KiB on Linux
		return nil
	}
	if len(args) != 3 || (args[0] != "direct" && args[0] != "sh") {
		return fmt.Errorf("usage: floor direct|sh N DIR, or floor rss CMD ARG…")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(args[2], "floor.journal"))
	if err != nil {
		return err
	}
	defer f.Close()
	argv := []string{"/bin/true"}
	if args[0] == "sh" {
		argv = []string{"/bin/sh", "-c", "true"}
	}
	line := []byte(`{"k":"completed","task":"t123","result":""}` + "\n")
	for range n {
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			return err
		}
		if _, err := f.Write(line); err != nil {
			return err
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
	}
	return nil
}
