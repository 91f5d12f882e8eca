// Command floor is what any durable runner must pay per task, for
// bench/compare.sh:
//
//	floor direct N DIR [P]  N × (fork/exec /bin/true + append a line + fdatasync),
//	                        P at a time (default 1): a line written while a
//	                        sync is in flight waits for the next one, which
//	                        covers every line before it (group commit)
//	floor sh N DIR          N × (sh -c true + append a line + fdatasync)
//	floor rss CMD ARG…      run CMD and print its peak RSS in KiB
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
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
	usage := fmt.Errorf("usage: floor direct N DIR [P], floor sh N DIR, or floor rss CMD ARG…")
	if len(args) < 3 || (args[0] != "direct" && args[0] != "sh") || len(args) > 4 || (args[0] == "sh" && len(args) == 4) {
		return usage
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	parallel := 1
	if len(args) == 4 {
		if parallel, err = strconv.Atoi(args[3]); err != nil || parallel < 1 {
			return usage
		}
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
	j := &journal{f: f}
	j.synced.L = &j.mu
	tasks := make(chan struct{})
	errs := make(chan error, parallel)
	for range parallel {
		go func() {
			for range tasks {
				if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
					errs <- err
					return
				}
				if err := j.commit(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range n {
		select {
		case tasks <- struct{}{}:
		case err := <-errs:
			return err // a worker failed
		}
	}
	close(tasks)
	for range parallel {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// journal is an append-only file whose every line is durable before
// commit returns, one fdatasync shared by all lines written meanwhile.
type journal struct {
	f       *os.File
	mu      sync.Mutex
	synced  sync.Cond
	written int // lines written
	durable int // lines covered by a finished sync
	syncing bool
}

const line = `{"k":"completed","task":"t123","result":""}` + "\n"

func (j *journal) commit() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.WriteString(line); err != nil {
		return err
	}
	j.written++
	mine := j.written
	for j.durable < mine {
		if j.syncing {
			j.synced.Wait()
			continue
		}
		j.syncing = true
		upto := j.written
		j.mu.Unlock()
		err := unix.Fdatasync(int(j.f.Fd()))
		j.mu.Lock()
		j.syncing = false
		j.synced.Broadcast()
		if err != nil {
			return err
		}
		j.durable = upto
	}
	return nil
}
