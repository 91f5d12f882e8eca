package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
)

// paidLLM streams: its first answer reports its usage (105 tokens) and
// then breaks off (no finish_reason, no [DONE]), which the client retries;
// it holds the second request open until the client goes away (the test
// kills teamrun then); later ones answer "final" for 12 tokens.
type paidLLM struct {
	mu     sync.Mutex
	n      int
	second chan struct{}
}

func (f *paidLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	switch n {
	case 1:
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"half an ans\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"total_tokens\":105}}\n\n")
	case 2:
		close(f.second)
		<-r.Context().Done()
	default:
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"final\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func (f *paidLLM) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// A kill -9 while a plain LLM attempt retries loses none of what its
// earlier requests were billed: each request's usage is journaled as it
// is paid, so after --continue the session's totals are every paid
// request's (105 + 12 tokens, and their cost), not only the last one's.
func TestLLMCrashKeepsPaidUsage(t *testing.T) {
	f := &paidLLM{second: make(chan struct{})}
	p := llmCrashProject(t, f, `
agents:
  writer: {role: Writer, llm: {model: m, base_url: %s/v1, stream: true, price: {input: 1, output: 2}}}
tasks:
  draft: {description: Write it, agent: writer}
`)
	p.crash(t, func() bool {
		select {
		case <-f.second:
			return true
		default:
			return false
		}
	})
	out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	if code != 0 || !strings.Contains(out, "final") || f.requests() != 3 {
		t.Fatalf("--continue: exit %d, %d requests:\n%s", code, f.requests(), out)
	}
	// 105 tokens at $1/$2 per million: $0.00011; 12 more: $0.000014; and
	// the request under way at the kill, estimated from its size.
	if !strings.Contains(out, "tokens:  this run 12 tokens ($0.000014); session 117 tokens ($0.000124) + 1 interrupted request of unknown usage (estimated from its size: ") {
		t.Errorf("the session does not count the requests the crash cut off the attempt of:\n%s", out)
	}
	if !strings.Contains(out, "task draft was cut off in attempt 1 after paying for 105 tokens ($0.00011) and with a request that may have been under way, counted as 1 interrupted request of unknown usage (estimated from its size: ") {
		t.Errorf("the resume does not say what the cut attempt counts:\n%s", out)
	}
	show, code := p.teamrun(t, "session", "show", "s1", "--json")
	if code != 0 || strings.Count(show, `"prompt_tokens": 100`) != 1 || strings.Count(show, `"no_end": true`) != 1 {
		t.Errorf("session show: exit %d; want the paid request's call once, and the one under way:\n%s", code, show)
	}
}

// brokenProxy stands before a real server: it passes its first streamed
// answer on without the finish_reason and [DONE] (a stream that broke
// off after its usage chunk, which the client retries), holds the second
// request open until the client goes away, and passes later ones whole.
type brokenProxy struct {
	base   string // the real server's, such as http://127.0.0.1:11434/v1
	mu     sync.Mutex
	n      int
	second chan struct{}
}

func (p *brokenProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.n++
	n := p.n
	p.mu.Unlock()
	if n == 2 {
		close(p.second)
		<-r.Context().Done()
		return
	}
	resp, err := http.Post(p.base+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	finish := regexp.MustCompile(`"finish_reason":"[a-z]`)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if n == 1 && (strings.Contains(line, "[DONE]") || finish.MatchString(line)) {
			continue
		}
		fmt.Fprintf(w, "%s\n", line)
	}
}

// The kill -9 of TestLLMCrashKeepsPaidUsage against a real server (the
// tiny model, streaming, its usage as Ollama reports it): the request
// whose stream broke off was paid and stays in the session's totals.
func TestRealLLMCrashKeepsPaidUsage(t *testing.T) {
	px := &brokenProxy{base: strings.TrimRight(testenv.LLMBaseURL(t), "/"), second: make(chan struct{})}
	p := llmCrashProject(t, px, `
agents:
  judge: {role: Judge, llm: {model: tiny-approve, base_url: %s, stream: true, temperature: 0}}
tasks:
  verdict: {description: Approve or reject the release, agent: judge}
`)
	p.crash(t, func() bool {
		select {
		case <-px.second:
			return true
		default:
			return false
		}
	})
	out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	m := regexp.MustCompile(`tokens:  this run (\d+) tokens[^;]*; session (\d+) tokens`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("--continue: exit %d:\n%s", code, out)
	}
	// The same prompt to a deterministic model: the paid request of the
	// killed run counted as much as the answer of this one.
	if run, session := m[1], m[2]; run == "0" || fmt.Sprint(2*atoi(t, run)) != session {
		t.Errorf("this run %s tokens, session %s: want the session to count the request the crash cut off the attempt of:\n%s", run, session, out)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// bigLLM answers every request with the same large text (non-streamed),
// counting the requests.
type bigLLM struct {
	mu     sync.Mutex
	n      int
	answer string
}

func (f *bigLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}}`, f.answer)
}

func (f *bigLLM) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// A kill -9 while an LLM task's output_file is being written (its temp
// file beside it exists, the answer paid for) leaves no file under its
// name; after --continue the file is the whole answer and no part of the
// temp file is left beside it (the rerun's write sweeps what the killed
// one left). The task runs again, and says that what it paid for in the
// cut attempt is counted and what it asks again is paid again: never paid
// twice in silence. The journal cannot tell a write from a request under
// way (which a record of each would cost a sync each to tell): the cut
// attempt also counts one request it may have had under way, estimated.
func TestLLMCrashWritingOutputFile(t *testing.T) {
	answer := strings.Repeat("0123456789abcde\n", 1<<20) // 16 MiB: its write takes a while
	// The write lasts some milliseconds, so a kill aimed at it can come
	// after the rename on a loaded machine, or the run pass it unseen.
	// What the kill left tells whether it came in time (the temp file is
	// there: a killed run renames nothing); a run that missed is tried
	// again afresh, so that the checks below always see a kill mid-write.
	var (
		f      *bigLLM
		p      *crashProject
		outDir string
	)
	const tries = 20
	for try := 1; ; try++ {
		f = &bigLLM{answer: answer}
		p = llmCrashProject(t, f, `
agents:
  writer: {role: Writer, llm: {model: m, base_url: %s/v1, stream: false, price: {input: 1, output: 2}}}
tasks:
  draft: {description: Write it, agent: writer, output_file: out/draft.md}
`)
		outDir = filepath.Join(p.dir, "out")
		writing := func() bool { return len(tempsIn(outDir, "draft.md")) > 0 }
		out, killed := p.killWhen(t, writing, "run", p.spec, "--session", "s1")
		if killed && writing() {
			break
		}
		if try == tries {
			t.Fatalf("in %d runs no kill -9 came while draft.md was being written; the last run:\n%.2000s", tries, out)
		}
		t.Logf("run %d: the kill -9 missed the write of draft.md; trying again", try)
	}
	if _, err := os.Lstat(filepath.Join(outDir, "draft.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a kill -9 mid-write left draft.md (%v); want nothing under its name", err)
	}
	out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	if code != 0 {
		t.Fatalf("--continue: exit %d:\n%.2000s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(outDir, "draft.md")); err != nil || string(b) != answer {
		t.Fatalf("after --continue draft.md: %d bytes, %v; want the whole answer", len(b), err)
	}
	if names := dirNames(outDir); !slices.Equal(names, []string{"draft.md"}) {
		t.Errorf("after --continue the output folder holds %q; want draft.md alone", names)
	}
	summary := out
	if i := strings.LastIndex(out, "summary "); i >= 0 { // not the 16 MiB before it
		summary = out[i:]
	}
	// The completion is recorded after the write: the kill came before it.
	if n := f.requests(); n != 2 {
		t.Errorf("%d requests; want 2: the one the kill cut the write of, and the rerun's", n)
	}
	if !strings.Contains(out, "task draft was cut off in attempt 1 after paying for 105 tokens ($0.00011) and with a request that may have been under way, counted as 1 interrupted request of unknown usage (estimated from its size: ") ||
		!strings.Contains(out, "), which the session's totals count: it runs again, and what it asks again is paid again") ||
		!strings.Contains(summary, "session 210 tokens ($0.00022) + 1 interrupted request of unknown usage") {
		t.Errorf("the task ran again without saying what its cut attempt paid:\n%s", summary)
	}
}

// dirNames lists the names in dir (none when it cannot be read).
func dirNames(dir string) []string {
	des, _ := os.ReadDir(dir)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// tempsIn lists the temp files of name in dir: what atomicfile writes
// before it renames one over name.
func tempsIn(dir, name string) []string {
	return slices.DeleteFunc(dirNames(dir), func(n string) bool { return !strings.HasPrefix(n, "."+name+".tmp-") })
}

// llmCrashProject serves h and writes spec, a format whose %s is the
// server's URL, as the team of a crashProject.
func llmCrashProject(t *testing.T, h http.Handler, spec string) *crashProject {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := &crashProject{dir: dir, spec: filepath.Join(dir, "team.yaml")}
	if err := os.WriteFile(p.spec, []byte(fmt.Sprintf(spec, srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
