package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// corpusDir is the shared folder of real PraisonAI files.
var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus", "praisonai")

// asked is one chat request the fake model server received.
type asked struct {
	system, user string // the system message and the last user message
	answer       string
	format       string // the request's response_format, as sent ("" when none)
}

// fakeModel is an OpenAI-compatible server for the runs of PraisonAI
// files. It records each request in arrival order and answers from rules:
// the first rule whose text the user message contains gives the answer,
// so that a classifier's or a condition's reply depends on the prompt.
// Without a matching rule the answer names the agent's role and the first
// line of its prompt: distinct per step, so a later prompt that carries it
// proves that it read that step's output.
type fakeModel struct {
	rules []reply
	// together are texts of prompts that must be in flight at once (steps
	// that run in parallel): each such request is held until all have
	// come, or ten seconds have passed (apart records that: a slow machine
	// still starts parallel steps well within it).
	together []string
	mu       sync.Mutex
	reqs     []asked
	uses     map[int]int // rule -> times it answered
	arrived  int
	all      chan struct{}
	apart    bool
}

// reply answers a prompt holding when; with times, only its first times
// such prompts (an evaluator that approves the second draft). With status,
// the answer is that HTTP error instead (a failed attempt).
type reply struct {
	when, answer string
	times        int
	status       int
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages       []struct{ Role, Content string } `json:"messages"`
		ResponseFormat json.RawMessage                  `json:"response_format"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	a := asked{format: string(req.ResponseFormat)}
	status := 0
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			a.system = m.Content
		case "user":
			a.user = m.Content
		}
	}
	a.answer = defaultAnswer(a)
	f.mu.Lock()
	for i := range f.rules {
		rl := &f.rules[i]
		if strings.Contains(a.user, rl.when) && (rl.times == 0 || f.uses[i] < rl.times) {
			a.answer, status = rl.answer, rl.status
			f.uses[i]++
			break
		}
	}
	f.reqs = append(f.reqs, a)
	held := false
	for _, tg := range f.together {
		if strings.Contains(a.user, tg) {
			held = true
			f.arrived++
			if f.arrived == len(f.together) {
				close(f.all)
			}
			break
		}
	}
	f.mu.Unlock()
	if held {
		select {
		case <-f.all:
		case <-time.After(10 * time.Second):
			f.mu.Lock()
			f.apart = true
			f.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, a.answer)
		return
	}
	fmt.Fprintf(w, `{"model":"m","choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, a.answer)
}

func defaultAnswer(a asked) string {
	role, _, _ := strings.Cut(a.system, "\n")
	role = strings.TrimSuffix(strings.TrimPrefix(role, "You are "), ".")
	first, _, _ := strings.Cut(a.user, "\n")
	// Nothing that JSON would escape: a list of answers (a loop's
	// result) carries each one verbatim.
	first = strings.Map(func(r rune) rune {
		if strings.ContainsRune("\"\\<>&", r) {
			return -1
		}
		return r
	}, first)
	return fmt.Sprintf("answer of %s to: %s", role, first)
}

func (f *fakeModel) requests() []asked {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]asked(nil), f.reqs...)
}

// step is one model request a run must make: the agent (a text of its
// system message, such as its role), a text of its prompt, and the wanted
// requests (by index) whose answers its prompt must carry: what it reads.
// Requests of one group come in any order (parallel steps, loop instances
// at --max-parallel); a later group's come after all of an earlier one's.
type step struct {
	group int
	agent string
	asks  string
	reads []int
}

// runPraison runs the PraisonAI file src in a fresh folder against f with
// extra arguments and returns the exit code and the output.
func runPraison(t *testing.T, src string, f *fakeModel, args ...string) (int, string) {
	t.Helper()
	f.all = make(chan struct{})
	f.uses = map[int]int{}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	name := filepath.Base(src)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("TEAMRUN_HOME", filepath.Join(dir, "home"))
	t.Setenv("NO_COLOR", "1")
	t.Chdir(dir)
	var out bytes.Buffer
	code := run(append([]string{"teamrun", "run", name, "--session", "s"}, args...), strings.NewReader(""), &out, &out)
	return code, out.String()
}

// checkSteps matches the recorded requests against want: every request is
// one wanted step, none is missing or extra, groups come in order, and each
// prompt carries the answers of the steps it reads.
func checkSteps(t *testing.T, got []asked, want []step) {
	t.Helper()
	dump := func() string {
		var b strings.Builder
		for i, a := range got {
			fmt.Fprintf(&b, "--- request %d\n[system] %s\n[user] %s\n[answer] %s\n", i+1, a.system, a.user, a.answer)
		}
		return b.String()
	}
	if len(got) != len(want) {
		t.Fatalf("%d model requests, want %d:\n%s", len(got), len(want), dump())
	}
	at := make([]int, len(want)) // wanted step -> its request
	used := make([]bool, len(got))
	for w, st := range want {
		at[w] = -1
		for i, a := range got {
			if !used[i] && strings.Contains(a.system, st.agent) && strings.Contains(a.user, st.asks) {
				at[w], used[i] = i, true
				break
			}
		}
		if at[w] < 0 {
			t.Fatalf("no request of agent %q asking %q:\n%s", st.agent, st.asks, dump())
		}
	}
	for w, st := range want {
		for v, other := range want {
			if other.group < st.group && at[v] > at[w] {
				t.Errorf("request %d (%s) came before request %d (%s) of an earlier group", at[w]+1, st.asks, at[v]+1, other.asks)
			}
		}
		for _, r := range st.reads {
			if !strings.Contains(got[at[w]].user, got[at[r]].answer) {
				t.Errorf("request %d (%s) does not read the answer of request %d (%q):\n%s", at[w]+1, st.asks, at[r]+1, got[at[r]].answer, got[at[w]].user)
			}
		}
	}
	if t.Failed() {
		t.Log(dump())
	}
}

// TestPraisonAIStepsRun runs every steps: file of the corpus that teamrun
// can run against the fake model server, and asserts from the recorded
// requests the step order, what each step reads (parallel joins, a
// summary of all loop instances), which branch a route took, and the
// progress lines, repeat iterations included.
func TestPraisonAIStepsRun(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	const (
		topics = "Artificial Intelligence,Machine Learning,Neural Networks,Natural Language Processing"
		// the routing file's classifier answers from its prompt
		poem = "Write a poem about the ocean"
		// not in the corpus: testdata/praisonai
		gateFile         = "gate_workflow.yaml"
		parallelLoopFile = "parallel_loop.yaml"
		stepOutputsFile  = "step_outputs.yaml"
		outputJSONFile   = "output_json_steps.yaml"
		fixtureLoopFile  = "fixture_loop_workflow.yaml"
		minimalFile      = "minimal_workflow.yaml"
	)
	local := map[string]bool{gateFile: true, parallelLoopFile: true, stepOutputsFile: true, outputJSONFile: true, fixtureLoopFile: true, minimalFile: true}
	gate := []reply{
		{"Score this draft: a weak draft", "41", 0, 0},
		{"Score this draft:", "92", 0, 0},
		{"answer of Reviser", "newsletter", 0, 0},
		{"answer of Publisher to: Publish the draft: a draft for nobody", "neither", 0, 0},
		{"Pick a channel for:", "blog", 0, 0},
	}
	classify := []reply{
		{"Classify this request: " + poem, "creative", 0, 0},
		{"Classify this request: How do I fix a Go compile error", "Technical.", 0, 0},
		{"Classify this request:", "general", 0, 0},
	}
	tests := []struct {
		name     string // the subtest; the file's name when empty
		file     string
		args     []string
		rules    []reply
		together []string // prompts that run at once
		want     []step
		progress []string // lines of the run's output, in this order
		// formats maps a text of a prompt to a text its request's
		// response_format must hold (the JSON Schema asked for).
		formats map[string]string
	}{
		{file: "examples__yaml__workflows__simple_workflow.yaml", want: []step{
			{0, "Research Analyst", "Research the following topic: The benefits of renewable energy", nil},
			{1, "Content Writer", "Write a summary based on this research: the previous step's output (below)", []int{0}},
		}},
		{file: "src__praisonai-agents__tests__fixtures__multi_step_workflow.yaml", want: []step{
			{0, "Quick Researcher", "What is the capital of France?", nil},
			{1, "Brief Writer", "Based on this fact: the previous step's output (below)", []int{0}},
		}},
		{file: "src__praisonai-rust__examples__workflow.yaml", want: []step{
			{0, "Research Specialist", "Research the topic and provide key findings", nil},
			{1, "Content Writer", "Write a blog post based on the research", []int{0}},
			{2, "Editor", "Review and polish the final content", []int{1}},
		}},
		{file: "examples__yaml__workflows__remote_sandbox_workflow.yaml", want: []step{
			{0, "File Writer", "Use write_file to put exactly 'hello from step 1' in /workspace/note.txt", nil},
			{1, "File Reader", "Use read_file on /workspace/note.txt and report its exact contents", []int{0}},
		}},
		// max_retries and retry_delay (a float of seconds) carry over: the
		// research step fails once, waits a second and runs again.
		{file: "examples__yaml__workflows__workflow_robustness.yaml",
			rules: []reply{{"Research the latest trends", "the model is overloaded", 1, http.StatusBadRequest}},
			want: []step{
				{0, "Research Expert", "Research the latest trends in AI agents and autonomous systems for 2025\n\nExpected output: A comprehensive summary of key AI agent trends", nil},
				{1, "Research Expert", "Research the latest trends in AI agents and autonomous systems for 2025\n\nExpected output: A comprehensive summary of key AI agent trends", nil},
				{2, "Data Enricher", "Enrich the research with real-world examples and use cases\n\nExpected output: Research enriched with practical examples", []int{1}},
				{3, "Content Writer", "Write a well-structured summary based on the research\n\nExpected output: A polished, engaging summary paragraph", []int{2}},
			}, progress: []string{"retrying  step_1: attempt 1 failed", "the model is overloaded; retrying in 1s", "started   step_1 (attempt 2)", "completed step_1"}},
		{file: "examples__yaml__video_heygen_elevenlabs.yaml", want: []step{
			{0, "Audio Generator", `Generate speech audio for this text: "Welcome to PraisonAI! Build powerful AI agents in just three lines of code.`, nil},
			{1, "Asset Uploader", `Upload the audio file at "/tmp/workflow_speech.mp3" to HeyGen.`, []int{0}},
			{2, "Video Generator", `- avatar_id: "YOUR_AVATAR_ID"`, []int{1}},
			{3, "Video Monitor", "Wait for the video to complete.", []int{2}},
		}},
		{file: "examples__yaml__workflows__parallel_workflow.yaml", together: []string{"Research market trends", "Research competitors", "Research customer needs"}, want: []step{
			{0, "Market Research Analyst", "Research market trends for: AI-powered customer service solutions", nil},
			{0, "Competitive Intelligence Analyst", "Research competitors for: AI-powered customer service solutions", nil},
			{0, "Customer Research Analyst", "Research customer needs for: AI-powered customer service solutions", nil},
			{1, "Research Synthesizer", "Synthesize all the research findings into a comprehensive report", []int{0, 1, 2}},
		}},
		{name: "routing_creative", file: "examples__yaml__workflows__routing_workflow.yaml", rules: classify, want: []step{
			{0, "Request Classifier", "Classify this request: " + poem, nil},
			{1, "Creative Writer", poem, []int{0}},
		}, progress: []string{"completed routing", "completed routing_creative"}},
		{name: "routing_technical", file: "examples__yaml__workflows__routing_workflow.yaml", rules: classify,
			args: []string{"--var", "input=How do I fix a Go compile error"}, want: []step{
				{0, "Request Classifier", "Classify this request: How do I fix a Go compile error", nil},
				{1, "Technical Expert", "How do I fix a Go compile error", []int{0}},
			}, progress: []string{"completed routing", "completed routing_technical"}},
		{name: "routing_default", file: "examples__yaml__workflows__routing_workflow.yaml", rules: classify,
			args: []string{"--var", "input=Plan my week"}, want: []step{
				{0, "Request Classifier", "Classify this request: Plan my week", nil},
				{1, "General Assistant", "Plan my week", []int{0}},
			}, progress: []string{"completed routing", "completed routing_default"}},
		{file: "examples__yaml__workflows__loop_workflow.yaml", want: func() []step {
			var w []step
			var all []int
			for i, tp := range strings.Split(topics, ",") {
				// Each item is fed the output of the one before.
				var reads []int
				if i > 0 {
					reads = []int{i - 1}
				}
				w = append(w, step{i, "Topic Processor", "Analyze this topic: " + tp, reads})
				all = append(all, i)
			}
			return append(w, step{len(all), "Results Summarizer", "Create a comprehensive summary of all the analyzed topics", all})
		}(), progress: []string{"completed step_1[0]", "completed step_1[1]", "completed step_1[2]", "completed step_1[3]", "completed step_2"}},

		// Shapes the corpus lacks: an if: on an output variable, a route
		// without default, and a step after each reading the branch that ran.
		{name: "step_outputs", file: stepOutputsFile, rules: []reply{
			{"Analyze the module", "the module leaks", 0, 0},
			{"Review this analysis", "close the file", 0, 0},
		}, want: []step{
			{0, "Code Analyzer", "Analyze the module", nil},
			{1, "Code Reviewer", "Review this analysis: the module leaks", []int{0}},
			{2, "Code Fixer", "Fix what the review found (close the file), knowing the module leaks", []int{1}},
		}},
		{name: "parallel_loop", file: parallelLoopFile, together: []string{"Describe Lisbon", "Describe Oslo", "Describe Quito"}, want: []step{
			{0, "Travel Guide", "Describe Lisbon in one line", nil},
			{0, "Travel Guide", "Describe Oslo in one line", nil},
			{0, "Travel Guide", "Describe Quito in one line", nil},
			{1, "Editor", "Join the descriptions", []int{0, 1, 2}},
		}, progress: []string{"completed step_2"}},
		{name: "gate_then_blog", file: gateFile, rules: gate, want: []step{
			{0, "Draft Scorer", "Score this draft: a draft about tides", nil},
			{1, "Publisher", "Publish the draft: a draft about tides", []int{0}},
			{2, "Channel Classifier", "Pick a channel for: the previous step's output (below)", []int{1}},
			{3, "Blogger", "a draft about tides", []int{2}},
			{4, "Announcer", "Announce what was sent", []int{3}},
		}, progress: []string{"completed gate", "skipped   gate_else_1", "completed send_blog", "completed announce"}},
		{name: "gate_else_newsletter", file: gateFile, rules: gate, args: []string{"--var", "input=a weak draft"}, want: []step{
			{0, "Draft Scorer", "Score this draft: a weak draft", nil},
			{1, "Reviser", "Revise the draft: a weak draft", []int{0}},
			{2, "Channel Classifier", "Pick a channel for", []int{1}},
			{3, "Newsletter Editor", "a weak draft", []int{2}},
			{4, "Announcer", "Announce what was sent", []int{3}},
		}, progress: []string{"completed gate", "skipped   gate_then_1", "completed send_newsletter", "completed announce"}},
		{name: "gate_no_route", file: gateFile, rules: gate, args: []string{"--var", "input=a draft for nobody"}, want: []step{
			{0, "Draft Scorer", "Score this draft: a draft for nobody", nil},
			{1, "Publisher", "Publish the draft: a draft for nobody", []int{0}},
			{2, "Channel Classifier", "Pick a channel for", []int{1}},
			{3, "Announcer", "Announce what was sent", []int{2}},
		}, progress: []string{"completed send", "skipped   send_blog", "completed announce"}},

		// output_json: the schema is asked for and the answer checked; the
		// loop after it walks the array the answer holds.
		{name: "output_json", file: outputJSONFile, rules: []reply{
			{"TOPIC TO RESEARCH", `{"keywords": ["gemini 3", "claude 5"]}`, 0, 0},
			{"KEYWORDS TO SEARCH", `[{"title": "Gemini 3", "url": "u1"}, {"title": "Claude 5", "url": "u2"}]`, 0, 0},
		}, want: []step{
			{0, "Keyword Research Specialist", "TOPIC TO RESEARCH: AI news", nil},
			{1, "Topic Collector", "KEYWORDS TO SEARCH:\nthe previous step's output (below)", []int{0}},
			{2, "Post Writer", "Write a post about Gemini 3 (u1)", []int{1}},
			{3, "Post Writer", "Write a post about Claude 5 (u2)", []int{2}},
		}, formats: map[string]string{
			"TOPIC TO RESEARCH":  `"required":["keywords"]`,
			"KEYWORDS TO SEARCH": `"type":"array"`,
		}, progress: []string{"completed write[1]"}},

		// PraisonAI's own loop fixture: var_name binds each item.
		{name: "fixture_loop", file: fixtureLoopFile, want: []step{
			{0, "Brief Describer", "Describe apple in exactly 5 words.", nil},
			{1, "Brief Describer", "Describe banana in exactly 5 words.", []int{0}},
		}, progress: []string{"completed step_1[1]"}},
		// Steps with no action: the first is given the input (--var
		// input= where PraisonAI has --input), the next the output before.
		{name: "minimal", file: minimalFile, args: []string{"--var", "input=AI agents in 2026"}, want: []step{
			{0, "Research the given topic", "AI agents in 2026", nil},
			{1, "Write content based on research", "Carry on from the previous step's output.", []int{0}},
		}},

		// repeat: the evaluator runs again, fed its previous answer, until
		// an answer says approved.
		{file: "examples__yaml__workflows__evaluator_optimizer_workflow.yaml", args: []string{"--var", "input=a haiku"},
			rules: []reply{{"Evaluate this content", "NEEDS IMPROVEMENT: more imagery", 1, 0}, {"Evaluate this content", "Approved: clear and vivid", 0, 0}},
			want: []step{
				{0, "Content Generator", "Generate content for: a haiku", nil},
				{1, "Content Evaluator", "Evaluate this content and provide feedback", []int{0}},
				{2, "Content Evaluator", "Evaluate this content and provide feedback", []int{1}},
			}, progress: []string{"completed step_2#1", "completed step_2#2", `skipped   step_2#3: step_2#2's result contains "approved": the repeat is done`, "Approved: clear and vivid"}},
		// Every pattern in one file: classify, route (to a label), parallel,
		// loop, then a repeat until the synthesis says comprehensive.
		{file: "examples__yaml__agents_workflow.yaml",
			rules: []reply{{"Classify this request: AI trends", "technical", 0, 0},
				{"Synthesize all research findings", "a first synthesis", 1, 0}, {"Synthesize all research findings", "the comprehensive report", 0, 0}},
			want: []step{
				{0, "Request Classifier", "Classify this request: AI trends", nil},
				{1, "Technical Expert", "Research AI trends and create a comprehensive report", []int{0}},
				{2, "Research Analyst", "Research technology trends for AI trends", []int{1}},
				{2, "Market Analyst", "Analyze market opportunities for AI trends", []int{1}},
				// A loop's items run in turn, each fed the one before.
				{3, "Research Analyst", "Deep dive into Machine Learning", []int{2, 3}},
				{4, "Research Analyst", "Deep dive into Neural Networks", []int{4}},
				{5, "Research Analyst", "Deep dive into Natural Language Processing", []int{5}},
				{6, "Synthesizer", "Synthesize all research findings into a comprehensive report", []int{4, 5, 6}},
				{7, "Synthesizer", "Synthesize all research findings into a comprehensive report", []int{7}},
			}, progress: []string{"skipped   routing_default", "completed routing_technical", "completed step_4[2]", "completed step_5#1", "completed step_5#2"}},
		{file: "examples__yaml__workflows__complete_workflow.yaml",
			rules: []reply{{"Classify: AI trends", "research", 0, 0}, {"Evaluate the report quality", "APPROVED", 0, 0}},
			want: []step{
				{0, "Request Classifier", "Classify: AI trends", nil},
				{1, "Research Analyst", "AI trends\n\nContext from task \"step_1\"", []int{0}},
				{2, "Market Analyst", "Analyze market for AI trends", []int{1}},
				{2, "Competitor Analyst", "Analyze competitors for AI trends", []int{1}},
				{3, "Research Analyst", "Research Machine Learning", []int{2, 3}},
				{4, "Research Analyst", "Research Neural Networks", []int{4}},
				{5, "Research Analyst", "Research Natural Language Processing", []int{5}},
				{6, "Synthesizer", "Synthesize all findings into a comprehensive report", []int{4, 5, 6}},
				{7, "Quality Evaluator", "Evaluate the report quality", []int{7}},
			}, progress: []string{"skipped   routing_technical", "completed routing_default", "completed step_6#1", "skipped   step_6#2"}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.file] = true
	}
	// Every steps file of the corpus is here, or refused for a shape
	// teamrun does not run (pkg/spec's corpus table has the refusals).
	refused := map[string]bool{
		"examples__yaml__hybrid-workflow.yaml":            true, // run:/judge:/approve: steps
		"examples__yaml__nested_workflow.yaml":            true, // a loop of a loop
		"src__praisonai__examples__workflow_example.yaml": true, // next_tasks loops back
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.y*ml"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if bytes.Contains(data, []byte("\nsteps:")) || bytes.Contains(data, []byte("\n  steps:")) {
			if b := filepath.Base(f); !covered[b] && !refused[b] {
				t.Errorf("steps file %s is neither run here nor refused", b)
			}
		}
	}
	for _, tt := range tests {
		name := tt.name
		if name == "" {
			name = strings.TrimSuffix(tt.file, ".yaml")
		}
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(corpusDir, tt.file)
			if local[tt.file] {
				src = filepath.Join("..", "..", "testdata", "praisonai", tt.file)
			}
			f := &fakeModel{rules: tt.rules, together: tt.together}
			code, out := runPraison(t, src, f, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			checkSteps(t, f.requests(), tt.want)
			// A step asks for a schema when it gives one, and only then.
			for _, a := range f.requests() {
				want := ""
				for ask, w := range tt.formats {
					if strings.Contains(a.user, ask) {
						want = w
					}
				}
				if (want == "") != (a.format == "") || !strings.Contains(a.format, want) {
					t.Errorf("the request asking %q has response_format %q, want one holding %q", a.user, a.format, want)
				}
			}
			if f.apart {
				t.Errorf("the steps %q did not run at once", tt.together)
			}
			rest := out
			for _, p := range tt.progress {
				i := strings.Index(rest, p)
				if i < 0 {
					t.Errorf("no %q (in this order) in the output:\n%s", p, out)
					break
				}
				rest = rest[i+len(p):]
			}
		})
	}
}
