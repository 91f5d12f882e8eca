package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPraisonAICorpus runs every real PraisonAI file of the shared corpus:
// each loads (warnings name file:line:col and key) or is refused with one
// line naming the unsupported feature. The table is the golden outcome, so a
// change of behaviour fails here.
func TestPraisonAICorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "praisonai")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	tests := []struct {
		file     string
		refused  bool
		tasks    int
		warnings int
		first    string // the error (refused) or the first warning (loads), exactly
	}{
		{"agents-scrapewebitetool.yaml", false, 3, 2, `agents-scrapewebitetool.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"agents_playbook__create-movie-agents.yaml", false, 3, 2, `agents_playbook__create-movie-agents.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"agents_playbook__finance-research.yaml", false, 3, 2, `agents_playbook__finance-research.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"examples__ag2__ag2_basic.yaml", false, 1, 1, `examples__ag2__ag2_basic.yaml:1:1: framework: "ag2" is ignored: teamrun runs the team itself`},
		{"examples__ag2__ag2_bedrock.yaml", false, 1, 3, `examples__ag2__ag2_bedrock.yaml:1:1: framework: "ag2" is ignored: teamrun runs the team itself`},
		{"examples__ag2__ag2_multi_agent.yaml", false, 2, 1, `examples__ag2__ag2_multi_agent.yaml:1:1: framework: "ag2" is ignored: teamrun runs the team itself`},
		{"examples__cookbooks__yaml__aws_bedrock_agents.yaml", false, 3, 5, `examples__cookbooks__yaml__aws_bedrock_agents.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"examples__cookbooks__yaml__secondary_market_research_agents.yaml", false, 6, 5, `examples__cookbooks__yaml__secondary_market_research_agents.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"examples__python__tools__e2b__agents.yaml", false, 3, 3, `examples__python__tools__e2b__agents.yaml:9:5: agents.web_scraper.output_file: not supported by teamrun, ignored: only a task's output_file is written: set it on the task`},
		{"examples__researchers.yml", false, 2, 3, `examples__researchers.yml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"examples__scientific_writing__agents.yaml", false, 3, 0, ``},
		{"examples__yaml__agents_workflow.yaml", false, 9, 6, `examples__yaml__agents_workflow.yaml:18:3: workflow.planning: not supported by teamrun, ignored: no planning or reflection step runs; add a task (or a repeat: with until:) for it`},
		{"examples__yaml__cli_backend.yaml", true, 0, 0, `examples__yaml__cli_backend.yaml:8:5: roles.coder.cli_backend: CLI backends are not supported: use a command agent (shell: or command:) in the native format`},
		{"examples__yaml__hybrid-workflow.yaml", true, 0, 0, `examples__yaml__hybrid-workflow.yaml:11:1: type: PraisonAI "hybrid" workflows (run:, judge:, approve: steps) are not supported: use command agents (shell:) for run: and a human task for approve: in the native format`},
		{"examples__yaml__message_steering_example.yaml", false, 2, 3, `examples__yaml__message_steering_example.yaml:9:5: message_steering: not supported by teamrun, ignored: no message is steered into an agent while it runs (in 2 agents, lines 9, 26)`},
		{"examples__yaml__nested_workflow.yaml", true, 0, 0, `examples__yaml__nested_workflow.yaml:43:13: workflow.steps[0].loop.steps[0]: a loop runs one agent step here: give it agent: and action: (a loop of a loop, parallel, route or if step is not supported yet)`},
		{"examples__yaml__teams__research-writer__agents.yaml", false, 2, 1, `examples__yaml__teams__research-writer__agents.yaml:32:1: dependencies: not supported, ignored: tasks run in file order, each reading the previous task's output (give a task context: to choose what it reads)`},
		{"examples__yaml__toolsets_workflow.yaml", false, 5, 1, `examples__yaml__toolsets_workflow.yaml:18:5: toolsets: not supported, ignored: the agent runs without these toolsets (list its tools under tools) (in 5 agents, lines 18, 28, 38, 51, 61)`},
		{"examples__yaml__video_heygen_elevenlabs.yaml", false, 4, 4, "examples__yaml__video_heygen_elevenlabs.yaml:28:9: agents.audio_generator.tools[0]: tool \"elevenlabs_speak_to_file\" is not available in teamrun, ignored: the agent runs without it; in the native format a command tool provides it: " + "`tools: {elevenlabs_speak_to_file: {description: ..., parameters: {type: object, properties: {query: {type: string}}}, command: [./elevenlabs_speak_to_file]}}` and the agent's `tools: [elevenlabs_speak_to_file]`"},
		{"examples__yaml__workflows__complete_workflow.yaml", false, 10, 6, `examples__yaml__workflows__complete_workflow.yaml:5:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"examples__yaml__workflows__evaluator_optimizer_workflow.yaml", false, 2, 2, `examples__yaml__workflows__evaluator_optimizer_workflow.yaml:5:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"examples__yaml__workflows__loop_workflow.yaml", false, 2, 2, `examples__yaml__workflows__loop_workflow.yaml:5:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"examples__yaml__workflows__parallel_workflow.yaml", false, 4, 2, `examples__yaml__workflows__parallel_workflow.yaml:5:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"examples__yaml__workflows__remote_sandbox_workflow.yaml", false, 2, 1, `examples__yaml__workflows__remote_sandbox_workflow.yaml:23:1: tools_run_on: not supported by teamrun, ignored: tools run on this machine, where teamrun runs`},
		{"examples__yaml__workflows__routing_workflow.yaml", false, 5, 2, `examples__yaml__workflows__routing_workflow.yaml:5:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"examples__yaml__workflows__simple_workflow.yaml", false, 2, 2, `examples__yaml__workflows__simple_workflow.yaml:5:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"examples__yaml__workflows__workflow_robustness.yaml", false, 3, 3, `examples__yaml__workflows__workflow_robustness.yaml:11:1: description: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"src__praisonai-agents__tests__fixtures__multi_step_workflow.yaml", false, 2, 0, ``},
		{"src__praisonai-agents__tests__fixtures__simple_agents.yaml", false, 1, 0, ``},
		{"src__praisonai-rust__examples__workflow.yaml", false, 3, 1, "src__praisonai-rust__examples__workflow.yaml:17:9: agents[0].tools[0]: tool \"search_web\" is not available in teamrun, ignored: the agent runs without it; in the native format a command tool provides it: " + "`tools: {search_web: {description: ..., parameters: {type: object, properties: {query: {type: string}}}, command: [./search_web]}}` and the agent's `tools: [search_web]`"},
		{"src__praisonai__agents-advanced.yaml", false, 3, 8, `src__praisonai__agents-advanced.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"src__praisonai__agents.yaml", false, 2, 1, "src__praisonai__agents.yaml:25:7: roles.command_executor.tools[0]: tool \"execute_command\" is not given to the agent: it runs any command the model writes; allow it with the top-level `approve: [execute_command]` (or `allow:`), or declare a command tool in the native format"},
		{"src__praisonai__examples__python__frameworks__openai_agents__agents.yaml", false, 1, 1, `src__praisonai__examples__python__frameworks__openai_agents__agents.yaml:1:1: framework: "openai_agents" is ignored: teamrun runs the team itself`},
		{"src__praisonai__examples__workflow_example.yaml", true, 0, 0, `src__praisonai__examples__workflow_example.yaml:86:5: steps[3].next_tasks: "review_task" loops back to an earlier step: teamrun runs a DAG of tasks, so route forward with condition: instead`},
		{"src__praisonai__test_agents.yaml", false, 1, 4, `src__praisonai__test_agents.yaml:4:5: roles.researcher.name: not supported by teamrun, ignored: a label only: the key that holds it names the agent or the team`},
		{"src__praisonai__tests__agents-advanced.yaml", false, 3, 6, `src__praisonai__tests__agents-advanced.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"src__praisonai__tests__agents.yaml", false, 2, 2, `src__praisonai__tests__agents.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"src__praisonai__tests__autogen-agents.yaml", false, 2, 2, `src__praisonai__tests__autogen-agents.yaml:1:1: framework: "autogen" is ignored: teamrun runs the team itself`},
		{"src__praisonai__tests__inbuilt-tool-agents.yaml", false, 3, 2, `src__praisonai__tests__inbuilt-tool-agents.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
		{"src__praisonai__tests__search-tool-agents.yaml", false, 3, 2, `src__praisonai__tests__search-tool-agents.yaml:1:1: framework: "crewai" is ignored: teamrun runs the team itself`},
	}
	want := map[string]bool{}
	for _, tt := range tests {
		want[tt.file] = true
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	if len(files) < 40 {
		t.Errorf("corpus has %d files, expected 40", len(files))
	}
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("corpus file %s has no expected outcome in the table", filepath.Base(f))
		}
	}
	located := regexp.MustCompile(`^[^:]+:\d+:\d+: [A-Za-z_.\[\]0-9-]+: `)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			team, err := Load(filepath.Join(dir, tt.file))
			if tt.refused {
				var list ErrorList
				if !errors.As(err, &list) {
					t.Fatalf("want a refusal, got %v", err)
				}
				if len(list) != 1 || strings.Contains(err.Error(), "\n") {
					t.Fatalf("a refusal is exactly one error line, got:\n%v", err)
				}
				// What validate and run print: the warnings said with it,
				// then the error; at most two lines, the error naming the
				// key of the feature.
				lines := len(list)
				for _, w := range WarningsOf(err) {
					lines += 1 + strings.Count(w.String(), "\n")
				}
				if lines > 2 {
					t.Errorf("refused in %d lines, want at most 2:\n%v\n%v", lines, ErrorList(WarningsOf(err)), err)
				}
				if !located.MatchString(list[0].String()) {
					t.Errorf("the refusal does not name file:line:col and the key: %s", list[0])
				}
				got := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
				if got != tt.first {
					t.Errorf("refusal:\n got %s\nwant %s", got, tt.first)
				}
				return
			}
			if err != nil {
				t.Fatalf("want it to load, got:\n%v", err)
			}
			if len(team.Tasks) != tt.tasks {
				t.Errorf("%d tasks, want %d", len(team.Tasks), tt.tasks)
			}
			if len(team.Warnings) != tt.warnings {
				t.Errorf("%d warnings, want %d:\n%v", len(team.Warnings), tt.warnings, ErrorList(team.Warnings))
			}
			for _, w := range team.Warnings {
				if !located.MatchString(w.String()) {
					t.Errorf("warning does not name file:line:col and key: %s", w)
				}
			}
			if len(team.Warnings) > 0 {
				if got := strings.TrimPrefix(team.Warnings[0].String(), dir+string(filepath.Separator)); got != tt.first {
					t.Errorf("first warning:\n got %s\nwant %s", got, tt.first)
				}
			}
			for _, a := range team.Agents {
				if strings.HasPrefix(a.Name, "route:") || strings.HasPrefix(a.Name, "if:") {
					// teamrun's own agents that route steps workflows, and
					// the commands that pass an output on past a branch
					if (a.Kind != RouteAgent || a.Decides == nil) && (a.Kind != CommandAgent || a.Shell == "") {
						t.Errorf("router %s should be a route agent or a command: %+v", a.Name, a)
					}
					continue
				}
				if a.Kind != LLMAgent || a.LLM == nil || a.LLM.Model == "" {
					t.Errorf("role %s should be an LLM agent with a model: %+v", a.Name, a)
				}
			}
			// A loaded team is usable: its fingerprint and keys compute.
			if fp := team.Fingerprint(team.InitialState(nil)); len(fp) != 16 {
				t.Errorf("fingerprint %q", fp)
			}
		})
	}
}

// The corpus files whose agents use read_file or write_file load with those
// built-ins; the other tools each get a warning naming them.
func TestPraisonAICorpusTools(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "praisonai")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	tests := []struct {
		file   string
		tools  map[string]string // agent -> its tools, comma-separated
		warned []string          // tools named by a warning
	}{
		{"examples__yaml__message_steering_example.yaml", map[string]string{"researcher": "write_file", "writer": "read_file,write_file"}, []string{"internet_search"}},
		{"examples__yaml__toolsets_workflow.yaml", map[string]string{"analyst": "read_file,write_file", "researcher": ""}, nil},
		{"src__praisonai__agents.yaml", map[string]string{"file_reader": "read_file", "command_executor": "write_file"}, []string{"execute_command"}},
		{"src__praisonai__test_agents.yaml", map[string]string{"researcher": ""}, []string{"search_web", "get_weather", "calculate"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			team, err := Load(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			for agent, want := range tt.tools {
				var names []string
				for _, tl := range team.Agent(agent).Tools {
					names = append(names, tl.Name)
				}
				if got := strings.Join(names, ","); got != want {
					t.Errorf("agent %s has tools %q, want %q", agent, got, want)
				}
			}
			all := ErrorList(team.Warnings).Error()
			for _, w := range tt.warned {
				if !strings.Contains(all, fmt.Sprintf("tool %q", w)) {
					t.Errorf("no warning names tool %s:\n%s", w, all)
				}
			}
		})
	}
}

// A PraisonAI key teamrun does not read is one warning saying what
// ignoring it means there, never "a misspelt key?" for a key PraisonAI
// documents; agent: Agent (its chat agent) is what teamrun runs anyway.
func TestPraisonAIKeyWarnings(t *testing.T) {
	const steps = "steps:\n  - agent: a\n    action: hi\n"
	tests := []struct{ name, src, want string }{
		{"history is a trace", "history: true\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:1: history: not supported by teamrun, ignored: teamrun keeps that trace always: each task's attempts, tool calls and outputs are in the session"},
		{"top-level context is compaction", "context: true\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:1: context: not supported by teamrun, ignored: teamrun compacts no context: each task is given the outputs it reads in full"},
		{"an agent's context", "agents:\n  a: {role: A, llm: m, context: true}\n" + steps,
			"w.yaml:2:24: agents.a.context: not supported by teamrun, ignored: an agent reads no context of its own"},
		// a class PraisonAI resolves in tools.py; a mapping is the step's output_schema
		{"output_json naming a class", "agents:\n  a: {role: A, llm: m}\n" + steps + "    output_json: Article\n",
			"w.yaml:6:5: steps[0].output_json: not supported by teamrun, ignored: the result is not checked as JSON; in the native format a task's output_schema:"},
		{"output_json a schema", "agents:\n  a: {role: A, llm: m}\n" + steps + "    output_json: {type: object}\n", ""},
		{"handoff", "agents:\n  a: {role: A, llm: m, handoff: [b]}\n" + steps,
			"w.yaml:2:24: agents.a.handoff: not supported by teamrun, ignored: agents never hand the conversation to each other"},
		{"tool_choice", "agents:\n  a: {role: A, llm: m, tool_choice: auto}\n" + steps,
			"w.yaml:2:24: agents.a.tool_choice: not supported by teamrun, ignored: the model chooses its tool calls itself"},
		{"agent: Agent", "agents:\n  a: {agent: Agent, role: A, llm: m}\n" + steps, ""},
		{"metadata", "metadata: {name: demo}\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:1: metadata: not supported by teamrun, ignored: a recipe's label only"},
		{"model routing", "models:\n  gpt-4o-mini: {provider: openai}\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:1: models: not supported by teamrun, ignored: no model is picked by a task's complexity"},
		{"a list of tools", "tools:\n  - name: GitTools\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:1: tools: not supported by teamrun, ignored: these tools are not loaded"},
		{"guardrail", "agents:\n  a: {role: A, llm: m}\n" + steps + "    guardrail: short\n",
			"w.yaml:6:5: steps[0].guardrail: not supported by teamrun, ignored: the answer is not checked against it"},
		{"create_directory", "agents:\n  a: {role: A, llm: m}\n" + steps + "    create_directory: true\n",
			"w.yaml:6:5: steps[0].create_directory: not supported by teamrun, ignored: teamrun makes output_file's folder anyway"},
		{"context_from", "agents:\n  a: {role: A, llm: m}\n" + steps + "    context_from: [x]\n",
			"w.yaml:6:5: steps[0].context_from: not supported by teamrun, ignored: PraisonAI's YAML workflows read none either: the step reads the step before it; a step's context: adds the steps it names"},
		{"a condition as text", "agents:\n  a: {role: A, llm: m}\n" + steps + "    condition: \"{{flag}}\"\n",
			`w.yaml:6:5: steps[0].condition: ignored: the task runs always, as in PraisonAI, which reads a condition only as a mapping of results to the tasks they run (beside task_type: decision), not as a text such as "{{flag}}"; an if: step`},
		{"workflow.stream", "workflow: {stream: true}\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:12: workflow.stream: not supported by teamrun, ignored: teamrun streams an LLM answer on its own whenever a run shows live progress on a terminal; in the native format an llm's stream: (auto, true or false) sets it"},
		{"an agent's stream", "agents:\n  a: {role: A, llm: m, stream: false}\n" + steps,
			"w.yaml:2:24: agents.a.stream: not supported by teamrun, ignored: teamrun streams an LLM answer on its own"},
		{"an x- key holds anchors", "x-defaults: &d {role: A, llm: m}\nagents:\n  a: *d\n" + steps, ""},
		{"memory as PraisonAI's store", "framework: praisonai\nroles:\n  a:\n    memory: {provider: rag}\n    tasks:\n      t: {description: d}\n",
			"w.yaml:4:5: roles.a.memory: ignored: this mapping configures PraisonAI's memory store, which teamrun has not, so the agent runs without memory: write memory: true to keep its conversation of the run, checkpointed in the session"},
		{"memory: true", "framework: praisonai\nconfig: {memory: true}\nroles:\n  a:\n    memory: false\n    tasks:\n      t: {description: d}\n", ""},
		// PraisonAI's workflow process reads them: none is a misspelt key.
		{"a decision task", "framework: praisonai\nroles:\n  a:\n    tasks:\n      d: {description: d, task_type: decision, condition: {ok: [e]}}\n      e: {description: e}\n", ""},
		{"task_type without condition", "framework: praisonai\nroles:\n  a:\n    tasks:\n      d: {description: d, task_type: loop}\n",
			"w.yaml:5:27: roles.a.tasks.d.task_type: not supported by teamrun, ignored: teamrun reads task_type only as decision beside a condition: mapping of results to the tasks they run; this one runs as any task does"},
		{"next_tasks forward", "framework: praisonai\nroles:\n  a:\n    tasks:\n      d: {description: d, next_tasks: [e], is_start: true}\n      e: {description: e}\n",
			"w.yaml:5:27: roles.a.tasks.d.next_tasks: ignored: tasks run in file order, each after the ones it reads (context:)"},
		{"next_tasks forward, one name", "framework: praisonai\nroles:\n  a:\n    tasks:\n      d: {description: d, next_tasks: e}\n      e: {description: e}\n",
			"w.yaml:5:27: roles.a.tasks.d.next_tasks: ignored: tasks run in file order, each after the ones it reads (context:)"},
		// A key of an agent step beside route:, parallel: or if: is
		// PraisonAI's, ignored there by its parser too: no misspelling.
		{"agent beside route", "agents:\n  a: {role: A, llm: m}\n" + steps + "  - {agent: a, route: {x: [a]}}\n",
			"w.yaml:6:6: steps[1].agent: ignored, as PraisonAI ignores it here: a route step runs only the agents its labels list (route: {LABEL: [AGENT]}), each fed the output of the step before it; to run this agent there, list it under a label; to have it classify, give it the step before the route"},
		{"action beside route", "agents:\n  a: {role: A, llm: m}\n" + steps + "  - {action: sort, route: {x: [a]}}\n",
			"w.yaml:6:6: steps[1].action: ignored, as PraisonAI ignores it here: a route step runs only the agents its labels list (route: {LABEL: [AGENT]}), each fed the output of the step before it; to use this, give it a step of its own"},
		{"agent beside parallel", "agents:\n  a: {role: A, llm: m}\n" + steps + "  - {agent: a, parallel: [{agent: a, action: x}]}\n",
			"w.yaml:6:6: steps[1].agent: ignored, as PraisonAI ignores it here: a parallel step runs only the steps it lists; to use this, put it in one of them"},
		{"expected_output beside if", "agents:\n  a: {role: A, llm: m}\n" + steps + "  - {expected_output: y, if: {condition: \"{{previous_output}}\", then: [{agent: a}]}}\n",
			"w.yaml:6:6: steps[1].expected_output: ignored, as PraisonAI ignores it here: an if step runs only the steps of its then: or else:; to use this, put it in one of them"},
		// PraisonAI reads a step's steps: beside loop: alone: no misspelling.
		{"steps in a step", "agents:\n  a: {role: A, llm: m}\n" + steps + "    steps: [{agent: a, action: y}]\n",
			"w.yaml:6:5: steps[0].steps: not supported by teamrun, ignored: PraisonAI reads a step's steps: only beside loop:, and runs none of them here either: write them in the file's steps: list, in the order they run"},
		{"a misspelt key beside route", "agents:\n  a: {role: A, llm: m}\n" + steps + "  - {agnet: a, route: {x: [a]}}\n",
			"w.yaml:6:6: steps[1].agnet: not supported by teamrun, ignored: nothing reads it (a misspelt key?"},
		// An agent's keys of PraisonAI's and CrewAI's Agent: none is a
		// misspelt key, and knowledge says what the agent goes without.
		{"knowledge", "framework: praisonai\nroles:\n  r:\n    knowledge: [docs/handbook.pdf]\n    tasks:\n      t: {description: d}\n",
			"w.yaml:4:5: roles.r.knowledge: not supported by teamrun, ignored: teamrun has no knowledge store, so the agent runs without its documents: list read_file in its tools to let it read them, or put what it needs in a task's text"},
		{"retrieval_config", "agents:\n  a: {role: A, llm: m, retrieval_config: {top_k: 5}}\n" + steps,
			"w.yaml:2:24: agents.a.retrieval_config: not supported by teamrun, ignored: teamrun has no knowledge store, so the agent runs without its documents"},
		{"allow_code_execution", "agents:\n  a: {role: A, llm: m, allow_code_execution: true}\n" + steps,
			"w.yaml:2:24: agents.a.allow_code_execution: not supported by teamrun, ignored: the agent runs no code of its own; execute_command in its tools"},
		{"code_execution_mode", "agents:\n  a: {role: A, llm: m, code_execution_mode: safe}\n" + steps,
			"w.yaml:2:24: agents.a.code_execution_mode: not supported by teamrun, ignored: the agent runs no code of its own"},
		{"markdown", "agents:\n  a: {role: A, llm: m, markdown: true}\n" + steps,
			"w.yaml:2:24: agents.a.markdown: not supported by teamrun, ignored: the system message asks for no format: say in a task's expected_output how the answer should look"},
		{"max_retry_limit", "agents:\n  a: {role: A, llm: m, max_retry_limit: 3}\n" + steps,
			"w.yaml:2:24: agents.a.max_retry_limit: not supported by teamrun, ignored: a task's max_retries: sets how often a failed task is tried again"},
		{"respect_context_window", "agents:\n  a: {role: A, llm: m, respect_context_window: true}\n" + steps,
			"w.yaml:2:24: agents.a.respect_context_window: not supported by teamrun, ignored: nothing is summarised to fit the model's context window"},
		{"use_system_prompt", "agents:\n  a: {role: A, llm: m, use_system_prompt: false}\n" + steps,
			"w.yaml:2:24: agents.a.use_system_prompt: not supported by teamrun, ignored: teamrun always sends the system message it makes from role, goal, backstory and instructions"},
		{"run_on, tools_run_on's old spelling", "run_on: docker\nagents:\n  a: {role: A, llm: m}\n" + steps,
			"w.yaml:1:1: run_on: not supported by teamrun, ignored: tools run on this machine, where teamrun runs"},
		// The sampling settings PraisonAI's LLM (and CrewAI's, through
		// LiteLLM) sends: known keys, whose warning says what the model
		// does without them, never "a misspelt key?".
		{"llm.top_p", "framework: praisonai\nroles:\n  r:\n    llm: {model: m, top_p: 0.9}\n    tasks:\n      t: {description: d}\n",
			"w.yaml:4:21: roles.r.llm.top_p: not supported by teamrun, ignored: the model's default top_p is used (of the sampling settings teamrun sends only temperature and max_tokens)"},
		{"llm.presence_penalty", "agents:\n  a: {role: A, llm: {model: m, presence_penalty: 0.1}}\n" + steps,
			"w.yaml:2:32: agents.a.llm.presence_penalty: not supported by teamrun, ignored: the model's default presence_penalty is used"},
		{"llm.frequency_penalty", "llm: {model: m, frequency_penalty: 0.1}\nagents:\n  a: {role: A}\n" + steps,
			"w.yaml:1:17: llm.frequency_penalty: not supported by teamrun, ignored: the model's default frequency_penalty is used"},
		{"llm.seed", "agents:\n  a: {role: A, llm: {model: m, seed: 7}}\n" + steps,
			"w.yaml:2:32: agents.a.llm.seed: not supported by teamrun, ignored: no seed is sent"},
		{"llm.stop", "agents:\n  a: {role: A, llm: {model: m, stop: [END]}}\n" + steps,
			"w.yaml:2:32: agents.a.llm.stop: not supported by teamrun, ignored: the answer is not cut at a stop text"},
		{"llm.logprobs", "agents:\n  a: {role: A, llm: {model: m, logprobs: true}}\n" + steps,
			"w.yaml:2:32: agents.a.llm.logprobs: not supported by teamrun, ignored: no token probabilities are asked for"},
		{"llm.response_format", "agents:\n  a: {role: A, llm: {model: m, response_format: {type: json_object}}}\n" + steps,
			"w.yaml:2:32: agents.a.llm.response_format: not supported by teamrun, ignored: the result is not checked as JSON"},
		{"llm.timeout", "agents:\n  a: {role: A, llm: {model: m, timeout: 30}}\n" + steps,
			"w.yaml:2:32: agents.a.llm.timeout: not supported by teamrun, ignored: a request times out after 5 minutes"},
		{"reasoning_steps", "framework: praisonai\nroles:\n  r:\n    reasoning_steps: true\n    llm: m\n    tasks:\n      t: {description: d}\n",
			"w.yaml:4:5: roles.r.reasoning_steps: not supported by teamrun, ignored: the model's reasoning is neither shown nor kept apart: the task's result is its answer"},
		// Outside an llm: those names are too common to be taken for it.
		{"seed beside a step's agent", "agents:\n  a: {role: A, llm: m}\n" + steps + "    seed: 7\n",
			"w.yaml:6:5: steps[0].seed: not supported by teamrun, ignored: nothing reads it (a misspelt key?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("w.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, w := range team.Warnings {
				said = append(said, w.String())
			}
			if got := strings.Join(said, "\n"); tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) || tt.want != "" && len(said) != 1 {
				t.Errorf("warnings:\n%s\nwant one starting:\n%s", got, tt.want)
			}
		})
	}
}

// What teamrun cannot run in a PraisonAI file is refused in one line naming
// the key.
func TestPraisonAIRefusedInOneLine(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"includes", "framework: praisonai\nroles:\n  a:\n    role: A\n    tasks:\n      t: {description: d}\nincludes:\n  - other-recipe\n",
			"r.yaml:7:1: includes: nested workflows are not supported: write their steps in this file's steps"},
		{"hierarchical", "framework: praisonai\nprocess: hierarchical\nroles:\n  a:\n    role: A\n    tasks:\n      t: {description: d}\n",
			"r.yaml:2:1: process: PraisonAI's hierarchical process (a manager model assigns each task to an agent and checks the result) is not supported: write process: sequential to run the tasks in file order, each by the agent that declares it"},
		{"a media agent", "agents:\n  d:\n    agent: VideoAgent\n    role: Director\nsteps:\n  - agent: d\n    action: film it\n",
			`r.yaml:3:5: agents.d.agent: "VideoAgent" agents are not supported: teamrun runs chat agents, and VideoAgent's media or document work needs its own API; call that from a command agent (shell: or command:) in the native format`},
		// next_tasks that loop back: one rule for a roles: file's tasks, a
		// tasks: list's, and a steps: file's steps.
		{"a role's task loops back", "framework: praisonai\nroles:\n  w:\n    tasks:\n      draft: {description: d}\n  r:\n    tasks:\n      decide: {description: e, task_type: decision, condition: {ok: [], no: [revise]}}\n      revise: {description: f, next_tasks: [draft]}\n",
			`r.yaml:9:32: roles.r.tasks.revise.next_tasks: "draft" loops back to an earlier task: teamrun runs a DAG of tasks, so route forward with condition: instead`},
		{"a task loops back by one name", "framework: praisonai\nroles:\n  w:\n    tasks:\n      draft: {description: d}\n      review: {description: r, next_tasks: draft}\n",
			`r.yaml:6:32: roles.w.tasks.review.next_tasks: "draft" loops back to an earlier task: teamrun runs a DAG of tasks, so route forward with condition: instead`},
		{"a task loops to itself", "framework: praisonai\nroles:\n  w:\n    tasks:\n      draft: {description: d, next_tasks: [draft]}\n",
			`r.yaml:5:31: roles.w.tasks.draft.next_tasks: "draft" loops back to its own task: teamrun runs a DAG of tasks, so route forward with condition: instead`},
		{"a top-level task_I loops back", "agents:\n  - {name: w, role: W}\ntasks:\n  - {agent: w, description: d}\n  - {agent: w, description: e, next_tasks: [task_0]}\n",
			`r.yaml:5:32: tasks[1].next_tasks: "task_0" loops back to an earlier task: teamrun runs a DAG of tasks, so route forward with condition: instead`},
		{"a step loops back past a parallel", "agents:\n  a: {role: A}\nsteps:\n  - {agent: a, action: x}\n  - parallel:\n      - {name: p1, agent: a, action: y}\n      - {name: p2, agent: a, action: z}\n  - {agent: a, action: w, next_tasks: [p2]}\n",
			`r.yaml:8:27: steps[2].next_tasks: "p2" loops back to an earlier step: teamrun runs a DAG of tasks, so route forward with condition: instead`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("r.yaml", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 || list[0].String() != tt.want {
				t.Errorf("err:\n%v\nwant exactly:\n%s", err, tt.want)
			}
		})
	}
}

// A PraisonAI file's wrong value is the native format's error, not a
// setting dropped with a warning; and its advice fits the format.
func TestPraisonAIValueErrors(t *testing.T) {
	const role = "framework: praisonai\nroles:\n  a:\n    role: A\n"
	tests := []struct{ name, src, want string }{
		{"temperature as text", role + "    llm: {model: m, temperature: \"0.7\"}\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:34: roles.a.llm.temperature: expected a number from 0 to 2, got string "0.7"`},
		{"temperature out of range", role + "    llm: {model: m, temperature: 3}\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:34: roles.a.llm.temperature: expected a number from 0 to 2, got integer 3`},
		{"max_tokens as text", role + "    llm: {model: m, max_tokens: \"512\"}\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:33: roles.a.llm.max_tokens: expected a whole number of tokens, at least 1, got string "512"`},
		// PyYAML reads YAML 1.1's yes and on as true, teamrun's YAML as
		// text: never a memory turned off by a spelling, nor "not supported".
		{"memory: yes", role + "    memory: yes\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:13: roles.a.memory: expected true or false, got string "yes": write true (PraisonAI's YAML reads yes as true, teamrun's as text)`},
		{"config memory: Off", "framework: praisonai\nconfig: {memory: Off}\nroles:\n  a:\n    tasks:\n      t: {description: d}\n",
			`p.yaml:2:18: config.memory: expected true or false, got string "Off": write false (PraisonAI's YAML reads Off as false, teamrun's as text)`},
		// y and n are text to PyYAML too (memory: n is a truthy string
		// there), and so is a mixed case: no hint to write true or false.
		{"memory: n", role + "    memory: n\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:13: roles.a.memory: expected true or false, got string "n"`},
		{"memory: yEs", role + "    memory: yEs\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:13: roles.a.memory: expected true or false, got string "yEs"`},
		{"memory: YES", role + "    memory: YES\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:13: roles.a.memory: expected true or false, got string "YES": write true (PraisonAI's YAML reads YES as true, teamrun's as text)`},
		{"memory a number", role + "    memory: 1\n    tasks:\n      t: {description: d}\n",
			`p.yaml:5:13: roles.a.memory: expected true or false, got integer 1`},
		{"loop parallel: on", "agents:\n  a: {role: A}\nvariables: {xs: [1]}\nsteps:\n  - {agent: a, action: x, loop: {over: xs, parallel: on}}\n",
			`p.yaml:5:54: steps[0].loop.parallel: expected true or false, got string "on": write true (PraisonAI's YAML reads on as true, teamrun's as text)`},
		// Task names are per role in PraisonAI, one namespace in teamrun.
		{"two roles' tasks of one name", "framework: praisonai\nroles:\n  a:\n    tasks:\n      sum: {description: d}\n  b:\n    tasks:\n      sum: {description: e}\n",
			`p.yaml:8:7: roles.b.tasks.sum: duplicate task name "sum" (first at line 5): give the tasks different names`},
		{"two listed agents of one name", "agents:\n  - {name: a, role: A}\n  - {name: a, role: B}\nsteps:\n  - {agent: a, action: x}\n",
			`p.yaml:3:5: agents.a: duplicate agent name "a" (first at line 2): give the agents different names`},
		{"a later task in context", role + "    tasks:\n      t: {description: d, context: [u]}\n      u: {description: e}\n",
			`p.yaml:6:37: roles.a.tasks.t.context[0]: task "u" comes later in the file; in a sequential team a task reads only tasks before it (move it before this task, or write the team in the native format, whose process: workflow runs a DAG)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 || list[0].String() != tt.want {
				t.Errorf("err:\n%v\nwant exactly:\n%s", err, tt.want)
			}
		})
	}
}

// topic: and variables.topic are one variable: two values are said, and the
// later one in the file is used; the same value twice is no conflict.
func TestPraisonAIVariableSetTwice(t *testing.T) {
	for _, tt := range []struct{ second, want string }{
		{"B", "t.yaml:3:3: variables.topic: sets the variable topic, as topic (line 1) does, to another value: this one, later in the file, is used; keep one"},
		{"A", ""},
	} {
		team, err := Parse("t.yaml", []byte("topic: A\nvariables:\n  topic: "+tt.second+"\nagents:\n  a: {role: A, llm: m}\nsteps:\n  - agent: a\n    action: about {{topic}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		var said []string
		for _, w := range team.Warnings {
			said = append(said, w.String())
		}
		if got := strings.Join(said, "\n"); got != tt.want || team.Variables["topic"] != tt.second {
			t.Errorf("second %s: warnings %q, topic %v; want %q, %s", tt.second, got, team.Variables["topic"], tt.want, tt.second)
		}
	}
}

// A file with steps: runs its steps, as PraisonAI's workflow does; its
// roles' tasks are said to be ignored (even one named as a step is).
func TestPraisonAIStepsOverRoleTasks(t *testing.T) {
	team, err := Parse("s.yaml", []byte(`framework: praisonai
roles:
  a:
    role: A
    llm: m
    tasks:
      work: {description: role task}
steps:
  - name: work
    agent: a
    action: step action
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Tasks) != 1 || team.Tasks[0].Description != "step action" {
		t.Errorf("tasks %+v, want the step alone", team.Tasks)
	}
	want := "s.yaml:6:5: roles.a.tasks: ignored: the file has steps: (line 8), and PraisonAI then runs its steps, not its roles' tasks; make these tasks steps to run them"
	if len(team.Warnings) != 1 || team.Warnings[0].String() != want {
		t.Errorf("warnings %v, want %q", team.Warnings, want)
	}
}

// Top-level tasks: beside steps: are said to be ignored, as a role's are:
// PraisonAI's workflow runs the steps alone.
func TestPraisonAIStepsOverTopTasks(t *testing.T) {
	team, err := Parse("s.yaml", []byte(`agents:
  a: {role: A, llm: m}
tasks:
  t1: {description: native task, agent: a}
steps:
  - {agent: a, action: step action}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Tasks) != 1 || team.Tasks[0].Description != "step action" {
		t.Errorf("tasks %+v, want the step alone", team.Tasks)
	}
	want := "s.yaml:3:1: tasks: ignored: the file has steps: (line 5), and PraisonAI then runs its steps, not its tasks; make these tasks steps to run them"
	if len(team.Warnings) != 1 || team.Warnings[0].String() != want {
		t.Errorf("warnings %v, want %q", team.Warnings, want)
	}
}

// A native command agent (shell: or command:) in a file read as a
// PraisonAI one, where it would be an LLM role sent to a model and its
// command never run, is refused, saying why the file is read so and
// where commands run.
func TestPraisonAICommandAgentRefused(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"shell, steps", "input: go\nagents:\n  sh: {shell: cat}\n  w: {role: W, llm: m}\nsteps:\n  - {agent: sh, action: hi}\n",
			"s.yaml:3:8: agents.sh.shell: a command agent (shell:) is the native format's, and this file is read as a PraisonAI file, because it has steps: (line 5), where every agent is an LLM role: to run a command, write the team in the native format (agents with shell: or command:, tasks: naming them, and none of PraisonAI's keys; see `teamrun schema`)"},
		{"command, topic", "topic: AI\nagents:\n  sh: {role: R, command: [wc, -w]}\ntasks:\n  t: {description: d, agent: sh}\n",
			"s.yaml:3:17: agents.sh.command: a command agent (command:) is the native format's, and this file is read as a PraisonAI file, because it has topic: (line 1), where every agent is an LLM role"},
		{"a roles mapping", "framework: praisonai\nroles:\n  sh:\n    shell: cat\n    tasks: {t: {description: d}}\n",
			"s.yaml:4:5: roles.sh.shell: a command agent (shell:) is the native format's, and this file is read as a PraisonAI file, because it has framework: (line 1)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// A role's task reads {{input}} (topic: when input: is not given) and
// {{previous_output}} as a step does; a file that reads no input gets none.
func TestPraisonAIRoleTaskTemplates(t *testing.T) {
	src := `framework: praisonai
topic: AI
roles:
  a:
    role: A
    goal: "Study {{input}}"
    llm: m
    tasks:
      t1: {description: "Research {{input}}"}
      t2: {description: "Improve: {{previous_output}}", expected_output: "{{ topic }} notes"}
`
	team, err := Parse("r.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Warnings) != 0 || team.Variables["input"] != "AI" {
		t.Errorf("warnings %v, input %v", team.Warnings, team.Variables["input"])
	}
	state := team.InitialState(nil)
	if got := team.Render(team.Agents[0].Goal, state); got != "Study AI" {
		t.Errorf("goal %q", got) // {{input}} kept its outer braces: "{AI}"
	}
	defs := team.TaskDefs(state)
	if got := defs[0].Description; got != "Research AI" {
		t.Errorf("t1 %q", got)
	}
	if got := defs[1].Description + " / " + defs[1].ExpectedOutput; got != "Improve: the previous step's output (below) / AI notes" {
		t.Errorf("t2 %q", got)
	}
	plain, err := Parse("r.yaml", []byte(strings.ReplaceAll(src, "{{input}}", "it")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Variables["input"]; ok {
		t.Error("input set in a file that never reads it")
	}
}

// workflow.llm (or default_llm, its old name) is the model of the agents
// without one, as PraisonAI's workflow gives it them.
func TestPraisonAIWorkflowLLM(t *testing.T) {
	const rest = "agents:\n  a: {role: A}\n  b: {role: B, llm: own}\nsteps:\n  - {agent: a, action: x}\n  - {agent: b, action: y}\n"
	tests := []struct {
		name, src string
		a         string // agent a's model; b keeps its own
		warning   string
	}{
		{"workflow.llm", "workflow: {llm: wf-model}\n" + rest, "wf-model", ""},
		{"default_llm", "workflow: {default_llm: old-model}\n" + rest, "old-model", ""},
		{"both", "workflow: {llm: wf-model, default_llm: old-model}\n" + rest, "wf-model", "w.yaml:1:27: workflow.default_llm: ignored: workflow.llm (line 1) sets the default model; keep one"},
		{"and a top-level llm", "llm: top\nworkflow:\n  llm: wf-model\n" + rest, "wf-model", "w.yaml:1:1: llm: ignored: workflow.llm (line 3) sets the default model, as PraisonAI's workflow reads it; keep one"},
		{"none", rest, praisonDefaultModel, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("w.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := team.Agent("a").LLM.Model; got != tt.a {
				t.Errorf("a's model %q, want %q", got, tt.a)
			}
			if got := team.Agent("b").LLM.Model; got != "own" {
				t.Errorf("b's model %q, want its own", got)
			}
			var said []string
			for _, w := range team.Warnings {
				said = append(said, w.String())
			}
			if got := strings.Join(said, "\n"); got != tt.warning {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.warning)
			}
		})
	}
}

// max_completion_tokens, OpenAI's name for the answer's bound that its
// reasoning models take, bounds the answer as max_tokens does (the client
// sends it under the name the model takes); beside max_tokens it is one
// too many.
func TestPraisonAIMaxCompletionTokens(t *testing.T) {
	const steps = "steps:\n  - {agent: a, action: x}\n"
	tests := []struct {
		name, llm string
		want      int
		warning   string
	}{
		{"alone", "{model: m, max_completion_tokens: 9}", 9, ""},
		{"beside max_tokens", "{model: m, max_tokens: 5, max_completion_tokens: 9}", 5,
			"w.yaml:2:47: agents.a.llm.max_completion_tokens: ignored: max_tokens (line 2) bounds the answer; keep one"},
		{"max_tokens", "{model: m, max_tokens: 5}", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("w.yaml", []byte("agents:\n  a: {role: A, llm: "+tt.llm+"}\n"+steps))
			if err != nil {
				t.Fatal(err)
			}
			if got := team.Agent("a").LLM.MaxTokens; got != tt.want {
				t.Errorf("a's max_tokens %d, want %d", got, tt.want)
			}
			var said []string
			for _, w := range team.Warnings {
				said = append(said, w.String())
			}
			if got := strings.Join(said, "\n"); got != tt.warning {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.warning)
			}
		})
	}
	if _, err := Parse("w.yaml", []byte("agents:\n  a: {role: A, llm: {model: m, max_completion_tokens: 0}}\n"+steps)); err == nil ||
		!strings.Contains(err.Error(), "agents.a.llm.max_completion_tokens: expected a whole number of tokens, at least 1") {
		t.Errorf("max_completion_tokens: 0: %v", err)
	}
}

// A top-level task in a list without a name is task_I, as PraisonAI names
// it (I from 0, its place in the list).
func TestPraisonAITopTaskNames(t *testing.T) {
	const head = "framework: praisonai\nagents:\n  c: {role: Lead}\ntasks:\n"
	tests := []struct {
		name, tasks string
		want        string // the task names, or the error
	}{
		{"unnamed", "  - {description: Plan, agent: c}\n  - {name: cut, description: Cut, agent: c}\n  - {description: Ship, agent: c}\n", "task_0 cut task_2"},
		{"a name that is no text", "  - {name: [x], description: Plan, agent: c}\n", "t.yaml:5:12: tasks[0].name: expected a task name, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("t.yaml", []byte(head+tt.tasks))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = strings.Join(team.TaskNames(), " ")
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A role without role: is its key, as PraisonAI's roles: files read it
// (yaml_parser.py), so the agent's system message still says who it is.
func TestPraisonAIRoleDefault(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no role", "roles:\n  data_analyst:\n    goal: Analyse\n    tasks:\n      t: {description: d}\n", "data_analyst"},
		{"a role", "roles:\n  data_analyst:\n    role: Analyst\n    tasks:\n      t: {description: d}\n", "Analyst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("r.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := team.Agent("data_analyst").Role; got != tt.want {
				t.Errorf("role %q, want %q", got, tt.want)
			}
		})
	}
}

// A role or agent that is not a mapping is an error at its line, not a
// crash, whether or not a role before it was well formed.
func TestPraisonAIRoleNotAMapping(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"null role", "framework: praisonai\nroles:\n  researcher:\n", "r.yaml:3:14: roles.researcher: expected a mapping, got null"},
		{"string role", "roles:\n  r: x\n", `r.yaml:2:6: roles.r: expected a mapping, got string "x"`},
		{"list role", "roles:\n  r: [1]\n", "r.yaml:2:6: roles.r: expected a mapping, got a list"},
		{"after a good role", "roles:\n  a:\n    tasks: {t: {description: d}}\n  b: 3\n", "r.yaml:4:6: roles.b: expected a mapping, got integer 3"},
		// The step names an agent that is declared: only the agent's own error.
		{"null agent with steps", "framework: praisonai\nagents:\n  a:\nsteps:\n  - agent: a\n    action: x\n", "r.yaml:3:5: agents.a: expected a mapping, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("r.yaml", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v, want an ErrorList", err)
			}
			if len(list) != 1 || list[0].String() != tt.want {
				t.Errorf("got %q, want [%q]", err, tt.want)
			}
		})
	}
}

// {{previous_output}} follows one rule in a roles: file, a tasks: list, a
// steps: file and a scheduler's task: a task with something before it
// (the task before it in file order, its context:, the step before it)
// reads the context teamrun appends; one with nothing before it keeps it
// as written, as PraisonAI sends it, with a warning. An agent's texts,
// its system message for every task it does, always keep it, warned.
func TestPreviousOutputNeedsSomethingBefore(t *testing.T) {
	const bound = "the previous step's output (below)"
	tests := []struct {
		name, src string
		texts     []string // each task's description / expected_output
		warned    []string // the start of each warning's path: message, in order
	}{
		{"a role's first task", "framework: praisonai\nroles:\n  a:\n    role: A\n    llm: m\n    tasks:\n      t1: {description: \"First: {{previous_output}}\", expected_output: \"{{previous_output}}\"}\n      t2: {description: \"Then {{previous_output}}\"}\n",
			[]string{"First: {{previous_output}} / {{previous_output}}", "Then " + bound + " / "},
			[]string{"roles.a.tasks.t1.description: {{previous_output}}: nothing defines previous_output", "roles.a.tasks.t1.expected_output: {{previous_output}}: nothing defines previous_output"}},
		{"a tasks: list", "framework: praisonai\nagents:\n  - {name: a, role: A, llm: m}\ntasks:\n  - {agent: a, description: \"First: {{previous_output}}\"}\n  - {agent: a, description: \"Then {{previous_output}}\"}\n",
			[]string{"First: {{previous_output}} / ", "Then " + bound + " / "},
			[]string{"tasks[0].description: {{previous_output}}: nothing defines previous_output"}},
		{"context: [] reads nothing", "framework: praisonai\nroles:\n  a:\n    llm: m\n    tasks:\n      t1: {description: one}\n      t2: {description: \"Then {{previous_output}}\", context: []}\n      t3: {description: \"Last {{previous_output}}\", context: [t1]}\n",
			[]string{"one / ", "Then {{previous_output}} / ", "Last " + bound + " / "},
			[]string{"roles.a.tasks.t2.description: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; it is the output of the task before, and the first task, or one with context: [], has none;"}},
		{"a steps: file", "agents:\n  a: {role: A, llm: m}\nsteps:\n  - {agent: a, action: \"First: {{previous_output}}\"}\n  - {agent: a, action: \"Then {{previous_output}}\"}\n",
			[]string{"First: {{previous_output}} / ", "Then " + bound + " / "},
			[]string{"steps[0].action: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; it is the output of the step before, and the first step has none;"}},
		{"an agent's texts", "agents:\n  a:\n    role: \"A {{previous_output}}\"\n    goal: \"Improve {{previous_output}}\"\n    backstory: b\n    instructions: \"Use {{previous_output}}\"\n    llm: m\nsteps:\n  - {agent: a, action: one}\n  - {agent: a, action: two}\n",
			[]string{"one / ", "two / "},
			[]string{"agents.a.role: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; an agent's texts make the system message of every task it does, where PraisonAI fills no previous output either: write {{previous_output}} in a step's action or a task's description;",
				"agents.a.goal: {{previous_output}}", "agents.a.instructions: {{previous_output}}"}},
		{"a role's texts", "framework: praisonai\nroles:\n  a:\n    goal: \"Improve {{previous_output}}\"\n    llm: m\n    tasks:\n      t1: {description: one}\n      t2: {description: two}\n",
			[]string{"one / ", "two / "},
			[]string{"roles.a.goal: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; an agent's texts"}},
		{"a scheduler's task", "framework: praisonai\nagents:\n  - {name: a, role: A, llm: m}\ntask: \"Check {{previous_output}}\"\n",
			[]string{"Check {{previous_output}} / "},
			[]string{"task: {{previous_output}}: nothing defines previous_output"}},
		// A loop's first item has the step before it, or nothing: the
		// items after it read the item before.
		{"a loop that opens the file", "variables: {xs: [a, b, c]}\nagents:\n  a: {role: A, llm: m}\nsteps:\n  - {name: l, agent: a, action: \"{{item}} after {{previous_output}}\", loop: {over: xs}}\n  - {agent: a, action: \"Then {{previous_output}}\"}\n",
			[]string{"{{item}} after {{previous_output}} / ", "{{item}} after " + bound + " / ", "{{item}} after " + bound + " / ", "the results of l[0..2] as a JSON array / ", "Then " + bound + " / "},
			[]string{"steps[0].action: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; it is the output of the step before, and the loop's first item has none (the items after it read the item before);"}},
		{"a loop after a step", "variables: {xs: [a, b]}\nagents:\n  a: {role: A, llm: m}\nsteps:\n  - {agent: a, action: one}\n  - {name: l, agent: a, action: \"{{item}} after {{previous_output}}\", loop: {over: xs}}\n",
			[]string{"one / ", "{{item}} after " + bound + " / ", "{{item}} after " + bound + " / ", "the results of l[0..1] as a JSON array / "},
			nil},
		{"a repeat that opens the file", "agents:\n  a: {role: A, llm: m}\nsteps:\n  - {name: r, agent: a, action: \"Improve {{previous_output}}\", repeat: {until: ok, max_iterations: 2}}\n",
			[]string{"Improve {{previous_output}} / ", "Improve " + bound + " / ", "the result of the last iteration of r#1..2 that ran / "},
			[]string{"steps[0].action: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; it is the output of the step before, and the repeat's first iteration has none (the iterations after it read the one before);"}},
		{"a repeat after a step", "agents:\n  a: {role: A, llm: m}\nsteps:\n  - {agent: a, action: one}\n  - {name: r, agent: a, action: \"Improve {{previous_output}}\", repeat: {until: ok, max_iterations: 2}}\n",
			[]string{"one / ", "Improve " + bound + " / ", "Improve " + bound + " / ", "the result of the last iteration of r#1..2 that ran / "},
			nil},
		{"a parallel loop that opens the file", "variables: {xs: [a, b]}\nagents:\n  a: {role: A, llm: m}\nsteps:\n  - {name: l, agent: a, action: \"{{item}} after {{previous_output}}\", loop: {over: xs, parallel: true}}\n",
			[]string{"{{item}} after {{previous_output}} / ", "{{item}} after {{previous_output}} / ", "the results of l[0..1] as a JSON array / "},
			[]string{"steps[0].action: {{previous_output}}: nothing defines previous_output (variables:, an output_variable or --var previous_output=VALUE), so the text keeps it as written; it is the output of the step before, and the first step has none;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("p.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			run, err := team.Expand(team.Variables)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, tk := range run.Tasks {
				texts = append(texts, tk.Description+" / "+tk.ExpectedOutput)
			}
			if !slices.Equal(texts, tt.texts) {
				t.Errorf("texts %q, want %q", texts, tt.texts)
			}
			var said []string
			for _, d := range team.UndefinedPlaceholders(nil) {
				said = append(said, d.Path+": "+d.Message)
			}
			ok := len(said) == len(tt.warned)
			for i := range min(len(said), len(tt.warned)) {
				ok = ok && strings.HasPrefix(said[i], tt.warned[i])
			}
			if !ok {
				t.Errorf("warnings:\n%s\nwant, starting:\n%s", strings.Join(said, "\n"), strings.Join(tt.warned, "\n"))
			}
		})
	}
}

// An agent or a role's task in a list without a name is an error saying
// to write name:, and the errors inside it are said with it, all at once.
func TestPraisonAIListedNamesNeeded(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"an unnamed role's own errors", "framework: praisonai\nroles:\n  - role: Planner\n    llm: {model: m, temperature: 9}\n    tasks:\n      - {description: Plan}\n      - {name: refine}\n  - name: second\n    tasks:\n      - {description: Review}\n",
			`l.yaml:3:5: roles[0]: an agent in a list needs a name: add name: NAME (steps and tasks name the agent by it)
l.yaml:4:34: roles[0].llm.temperature: expected a number from 0 to 2, got integer 9
l.yaml:6:9: roles[0].tasks[0]: a task in a list needs a name: add name: NAME (context: and --rerun name the task by it)
l.yaml:7:9: roles[0].tasks[1]: missing required key "description"
l.yaml:10:9: roles[1].tasks[0]: a task in a list needs a name: add name: NAME (context: and --rerun name the task by it)`},
		{"an empty name", "framework: praisonai\nroles:\n  - name: \"\"\n    tasks:\n      t: {description: d}\n",
			`l.yaml:3:5: roles[0]: an agent in a list needs a name: add name: NAME (steps and tasks name the agent by it)`},
		{"a name that is no text", "framework: praisonai\nroles:\n  - name: 123\n    tasks:\n      t: {description: d}\n",
			`l.yaml:3:11: roles[0].name: expected the agent's name as text, got integer 123 (if that is meant as a text, quote it: name: "123")`},
		{"a role that is no mapping", "framework: praisonai\nroles:\n  - reviewer\n",
			`l.yaml:3:5: roles[0]: expected a mapping such as {name: NAME, …} for the agent, got string "reviewer"`},
		{"a task name that is no text", "framework: praisonai\nroles:\n  - name: a\n    tasks:\n      - {name: [x], description: d}\n",
			`l.yaml:5:16: roles[0].tasks[0].name: expected the task's name as text, got a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("l.yaml", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v, want errors", err)
			}
			var got []string
			for _, d := range list {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

// TestPraisonAIDuplicateTaskThroughAlias: a role's tasks repeated through
// an alias or a merge key clash at the place that repeats them (the
// anchor's task is the first), not at the anchor's line twice.
func TestPraisonAIDuplicateTaskThroughAlias(t *testing.T) {
	const head = "framework: praisonai\ntopic: AI\nroles:\n"
	const task = "      t1: {description: d, expected_output: e}\n"
	const fix = `duplicate task name "t1" (first at line 8, repeated here through an alias or a merge key): write this role's tasks out, with names of their own`
	for _, tt := range []struct{ name, roles, want string }{
		{"a role's alias", "  a: &r\n    role: A\n    goal: g\n    tasks:\n" + task + "  b: *r\n",
			"r.yaml:9:6: roles.b.tasks.t1: " + fix},
		{"its tasks' alias", "  a:\n    role: A\n    goal: g\n    tasks: &ts\n" + task + "  b:\n    role: B\n    tasks: *ts\n",
			"r.yaml:11:12: roles.b.tasks.t1: " + fix},
		{"a merge key", "  a: &r\n    role: A\n    goal: g\n    tasks:\n" + task + "  b:\n    <<: *r\n    role: B\n",
			"r.yaml:10:5: roles.b.tasks.t1: " + fix},
		{"written twice", "  a:\n    role: A\n    goal: g\n    tasks:\n" + task + "  b:\n    role: B\n    tasks:\n" + task,
			`r.yaml:12:7: roles.b.tasks.t1: duplicate task name "t1" (first at line 8): give the tasks different names`},
		{"a task's alias under two keys", "  a:\n    role: A\n    goal: g\n    tasks:\n      t1: &t {description: d}\n  b:\n    role: B\n    tasks:\n      t1: *t\n",
			`r.yaml:12:7: roles.b.tasks.t1: duplicate task name "t1" (first at line 8): give the tasks different names`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("r.yaml", []byte(head+tt.roles))
			var l ErrorList
			if !errors.As(err, &l) || len(l) != 1 || l[0].String() != tt.want {
				t.Errorf("err:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}
