package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// hangingLLM never answers: it holds each request open until the client
// goes away, counting them.
type hangingLLM struct {
	mu sync.Mutex
	n  int
}

func (f *hangingLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	<-r.Context().Done()
}

func (f *hangingLLM) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// A request under way when a kill -9 ends the run counts as a Ctrl-C's
// does: interrupted, its usage unknown, estimated from its size, in the
// session's totals and its budget. A cron job killed again and again (by
// timeout -s KILL, the OOM killer) cannot spend without bound: plan says,
// after the kill that spends the budget, that the run halts, and the run
// halts without a request.
func TestLLMKill9InFlightCounted(t *testing.T) {
	f := &hangingLLM{}
	p := llmCrashProject(t, f, `
budget: {max_tokens: 600}
agents:
  writer: {role: Writer, llm: {model: m, base_url: %s/v1, price: {input: 1, output: 2}}}
tasks:
  draft: {description: Write it `+strings.Repeat("well ", 100)+`, agent: writer}
`)
	kills := 0
	for ; kills < 6; kills++ {
		out, code := p.teamrun(t, "plan", p.spec, "--session", "s1")
		if kills > 0 && (code != 0 || !strings.Contains(out, "interrupted last time")) {
			t.Fatalf("plan after %d kills: exit %d\n%s", kills, code, out)
		}
		if strings.Contains(out, "the session's budget is reached") {
			break
		}
		sent := func() bool { return f.requests() > kills }
		runOut, killed := p.killWhen(t, sent, "run", p.spec, "--continue", "--session", "s1")
		if !killed {
			t.Fatalf("run %d ended before it sent its request:\n%s", kills+1, runOut)
		}
		if kills > 0 && !strings.Contains(runOut, fmt.Sprintf("task draft was cut off in attempt %d with a request that may have been under way, counted as 1 interrupted request of unknown usage (estimated from its size: ", kills)) {
			t.Errorf("run %d does not say what the killed request counts:\n%s", kills+1, runOut)
		}
	}
	// Each killed request counts some 200 tokens: the third reaches 600.
	if kills < 2 || kills > 4 {
		t.Fatalf("plan saw the budget reached after %d kills, want 2 to 4", kills)
	}
	out, code := p.teamrun(t, "run", p.spec, "--continue", "--session", "s1")
	if code != 3 || f.requests() != kills || !strings.Contains(out, "halted: the session's budget is reached before task \"draft\"") {
		t.Fatalf("after %d kills: exit %d, %d requests:\n%s", kills, code, f.requests(), out)
	}
	est := regexp.MustCompile(fmt.Sprintf(`session %d interrupted requests of unknown usage \(estimated from their size: ([0-9,]+) tokens, \$0\.000[0-9]+\)`, kills)).FindStringSubmatch(out)
	if est == nil || !strings.Contains(out, "the session has used "+est[1]+" tokens ("+est[1]+" of them estimated for interrupted requests)") {
		t.Errorf("the session does not count each killed request:\n%s", out)
	}
	show, code := p.teamrun(t, "session", "show", "s1", "--json")
	if code != 0 || strings.Count(show, `"no_end": true`) != kills {
		t.Errorf("session show: exit %d; want %d requests counted as cut by the kills:\n%s", code, kills, show)
	}
}
