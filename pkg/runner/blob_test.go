package runner

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

const bigTeam = `
process: workflow
llm: {model: m, base_url: BASE}
agents:
  w: {role: Writer}
  count: {shell: 'wc -c < "$TEAMRUN_CONTEXT_DIR/one" | tr -d " "'}
tasks:
  one: {description: One, agent: w}
  two: {description: Two, agent: w, context: [one]}
  three: {description: Three, agent: count, context: [one]}
`

// An LLM's answer over the threshold is stored out of line like a
// command's stdout; a later LLM task gets it whole in its prompt, a
// command task as a file, and a resumed run restores it.
func TestLargeLLMResultStoredOutOfLine(t *testing.T) {
	big := strings.Repeat("big answer ", checkpoint.BlobThreshold/11+1000)
	asks := func(req chatRequest, s string) bool {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, s) {
				return true
			}
		}
		return false
	}
	f := &fakeLLM{answer: func(n int, req chatRequest, w http.ResponseWriter) {
		if asks(req, "Two") {
			reply(w, "short")
			return
		}
		reply(w, big)
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := newProject(t, srv.URL, bigTeam)
	sum, out, err := p.run(t, false)
	if err != nil || sum.Outcome != Succeeded {
		t.Fatalf("run: %v %+v\n%.2000s", err, sum, out)
	}
	sess := p.session(t)
	one, _ := sess.Task("one")
	if one.Blob == nil || one.Result != "" || one.Blob.Digest != checkpoint.Digest(big) {
		t.Fatalf("one: blob %+v, %d bytes in line; want its %d bytes out of line", one.Blob, len(one.Result), len(big))
	}
	if _, err := os.Stat(filepath.Join(p.home, "sessions", "s1.blobs", one.Blob.Hex())); err != nil {
		t.Fatalf("the blob file: %v", err)
	}
	data, err := p.sessionFileBytes()
	if err != nil || strings.Contains(string(data), "big answer big answer") {
		t.Fatalf("the session's files hold the result in line (%v)", err)
	}
	prompted := false
	for i := range f.count() {
		prompted = prompted || (asks(f.request(i), "Two") && asks(f.request(i), strings.TrimSpace(big)))
	}
	if !prompted {
		t.Error("task two's prompt lacks the whole output of one")
	}
	if three, _ := sess.Task("three"); strings.TrimSpace(three.Result) != strconv.Itoa(len(big)) {
		t.Errorf("three read %q bytes of one's context file, want %d", three.Result, len(big))
	}
	sum, out, err = p.run(t, true)
	if err != nil || sum.Outcome != Succeeded || sum.Restored != 3 {
		t.Fatalf("--continue: %v %+v\n%.2000s", err, sum, out)
	}
}

// A command's stdout over the threshold goes from its spool file to Large,
// not to memory; at or under it, and with a StdoutLimit, it is returned.
func TestRunCommandLargeOutput(t *testing.T) {
	n := checkpoint.BlobThreshold
	tests := []struct {
		name  string
		size  int
		limit int
		large bool
	}{
		{"small", 10, 0, false},
		{"at the threshold", n, 0, false},
		{"over it", n + 1, 0, true},
		{"over it with a limit", n + 1, 100, false},
		{"over it, failed", -(n + 1), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int64 = -1
			shell := "head -c " + strconv.Itoa(tc.size) + " /dev/zero"
			if tc.size < 0 {
				shell = "head -c " + strconv.Itoa(-tc.size) + " /dev/zero; exit 3"
			}
			out, err := RunCommand(context.Background(), &Groups{}, CommandSpec{
				Shell: shell, Spool: t.TempDir(), StdoutLimit: tc.limit,
				Large: func(r io.Reader) error {
					var err error
					got, err = io.Copy(io.Discard, r)
					return err
				},
			})
			if tc.size < 0 {
				var ce *CommandError
				if !errors.As(err, &ce) || ce.ExitCode != 3 || out != "" || got >= 0 {
					t.Fatalf("a failed command: %v, %d bytes returned, Large got %d; want its error and nothing read", err, len(out), got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.large != (got >= 0) || (tc.large && (got != int64(tc.size) || out != "")) {
				t.Fatalf("Large got %d bytes, %d returned; want large=%v", got, len(out), tc.large)
			}
			if want := min(tc.size, max(tc.limit, 0)); !tc.large && tc.limit > 0 && len(out) != want {
				t.Fatalf("%d bytes returned, want %d", len(out), want)
			}
		})
	}
}
