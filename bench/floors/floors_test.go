package floors

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, bytes.Repeat([]byte(line), bytes.Count(b, []byte("\n")))) {
		t.Fatalf("%s holds something else than whole lines: %q", path, b)
	}
	return bytes.Count(b, []byte("\n"))
}

// Every commit leaves its whole line, however many commit at once.
func TestJournalCommitsEveryline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				if err := j.Commit(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if n := lines(t, path); n != 200 {
		t.Errorf("%d lines, want 200", n)
	}
}

func TestExec(t *testing.T) {
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("no /bin/true")
	}
	for _, tc := range []struct {
		argv        []string
		n, parallel int
		wantErr     string
	}{
		{[]string{"/bin/true"}, 30, 1, ""},
		{[]string{"/bin/true"}, 30, 8, ""},
		{[]string{"/bin/true"}, 3, 40, ""}, // more at a time than tasks
		{[]string{"/bin/true"}, 0, 2, ""},
		{[]string{"/bin/true"}, 3, 0, "0 at a time"},
		{[]string{"/bin/false"}, 30, 4, "exit status 1"}, // a failed task stops it, no hang
	} {
		path := filepath.Join(t.TempDir(), "j")
		j, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		err = Exec(tc.n, tc.parallel, tc.argv, j)
		j.Close()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Exec(%d, %d, %v): %v, want an error with %q", tc.n, tc.parallel, tc.argv, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Exec(%d, %d, %v): %v", tc.n, tc.parallel, tc.argv, err)
			continue
		}
		if got := lines(t, path); got != tc.n {
			t.Errorf("Exec(%d, %d): %d lines, want %d", tc.n, tc.parallel, got, tc.n)
		}
	}
}

func TestLLM(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.URL.Path+" "+string(b))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"done"}}]}`)
	}))
	defer ok.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusTooManyRequests)
	}))
	defer failing.Close()

	path := filepath.Join(t.TempDir(), "j")
	j, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := LLM(context.Background(), ok.URL+"/v1", 5, j); err != nil {
		t.Fatal(err)
	}
	if err := LLM(context.Background(), failing.URL+"/v1", 5, j); err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("a server answering 429: %v, want an error naming it", err)
	}
	j.Close()
	if n := lines(t, path); n != 5 {
		t.Errorf("%d lines, want 5 (one per answered request)", n)
	}
	want := "POST /v1/chat/completions " + chatBody
	if len(bodies) != 5 || bodies[0] != want || bodies[4] != want {
		t.Errorf("requests: %q, want 5 of %q", bodies, want)
	}
}
