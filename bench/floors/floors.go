// Package floors is what any durable runner must pay per task, with
// nothing of its own around it: a process started (or an HTTP request
// made) and a journal line made durable. bench/compare.sh runs it through
// the floor command, and the benchmarks of package bench call it, so that
// both measure against the same floor.
package floors

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// line is the journal line a task's completion costs: about the size of
// teamrun's completed record of a task with an empty result.
const line = `{"k":"completed","task":"t123","result":""}` + "\n"

// Journal is an append-only file whose every line is durable before
// Commit returns; lines written while a sync is in flight wait for the
// next one, which covers them all (group commit).
type Journal struct {
	f       *os.File
	mu      sync.Mutex
	synced  sync.Cond
	written int // lines written
	durable int // lines covered by a finished sync
	syncing bool
}

// Create makes a journal at path, replacing what was there.
func Create(path string) (*Journal, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	j := &Journal{f: f}
	j.synced.L = &j.mu
	return j, nil
}

// Close closes the journal's file.
func (j *Journal) Close() error { return j.f.Close() }

// Commit appends line and returns once it is durable.
func (j *Journal) Commit() error {
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
		err := fdatasync(j.f)
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

// Exec runs argv n times, parallel at a time, committing a line to j
// after each.
func Exec(n, parallel int, argv []string, j *Journal) error {
	if parallel < 1 {
		return fmt.Errorf("floors: %d at a time", parallel)
	}
	tasks := make(chan struct{})
	errs := make(chan error, parallel)
	for range parallel {
		go func() {
			for range tasks {
				if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
					errs <- err
					return
				}
				if err := j.Commit(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	reported := 0 // workers that sent their end on errs
	for sent := 0; sent < n && first == nil; {
		select {
		case tasks <- struct{}{}:
			sent++
		case first = <-errs: // a worker stops early only on an error
			reported++
		}
	}
	close(tasks)
	for ; reported < parallel; reported++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// chatBody is a chat completion request of the size a short task's is.
const chatBody = `{"model":"m","messages":[{"role":"system","content":"You are Writer. Answer"},` +
	`{"role":"user","content":"task 1"}]}`

// LLM makes n chat completion requests to baseURL one after the other,
// on one kept-alive connection, committing a line to j after each answer.
func LLM(ctx context.Context, baseURL string, n int, j *Journal) error {
	client := &http.Client{}
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/chat/completions", strings.NewReader(chatBody))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("floors: %s answered %s", baseURL, resp.Status)
		}
		if err := j.Commit(); err != nil {
			return err
		}
	}
	return nil
}
