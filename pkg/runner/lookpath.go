package runner

import (
	"os/exec"
	"strings"
	"sync"
)

// pathCache remembers where in PATH a command name was found, for the
// rest of the run, as a shell's hash table does: PATH is searched once per
// name, not once per task (ten missing directories cost more than a small
// task's own bookkeeping). Only names found are kept, so a program that a
// task installs is found by the next task; one found that is removed since
// is looked up anew (see RunCommand). The zero value is ready; a nil one
// looks up every time.
type pathCache struct {
	mu    sync.Mutex
	found map[string]string
}

func (c *pathCache) look(name string) (string, error) {
	if c == nil || strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	c.mu.Lock()
	path, ok := c.found[name]
	c.mu.Unlock()
	if ok {
		return path, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.found == nil {
		c.found = map[string]string{}
	}
	c.found[name] = path
	c.mu.Unlock()
	return path, nil
}

// forget drops name, whose program is no longer where it was found.
func (c *pathCache) forget(name string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.found, name)
	c.mu.Unlock()
}

// program is where name's program is, looked up through c when name has
// no slash, as exec.Command would find it (its error an *exec.Error).
func (c *pathCache) program(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	return c.look(name)
}
