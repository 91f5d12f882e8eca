package spec

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/schemas"
)

// TestNotATeam: files that are not teams are refused in one line saying
// what they are, never with one error per key.
func TestNotATeam(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the one error, exactly; "" = not refused as not-a-team
	}{
		{"deploy", "name: API\nagents:\n  researcher:\n    name: R\n    instructions: Answer.\ndeploy:\n  type: api\n  port: 8000\n",
			"f.yaml:6:1: deploy: this file serves agents as an API (deploy:); teamrun runs tasks: give the agents tasks (tasks: with description and agent) to run them here"},
		{"deploy list of agents", "framework: praisonai\nagents:\n  - role: Assistant\ndeploy:\n  port: 8080\n",
			"f.yaml:4:1: deploy: this file serves agents as an API (deploy:); teamrun runs tasks: give the agents tasks (tasks: with description and agent) to run them here"},
		{"gateway", "gateway:\n  port: 8765\nagents:\n  personal:\n    model: gpt-4o-mini\nchannels:\n  telegram:\n    token: x\n",
			"f.yaml:1:1: gateway: this is a chat-bot gateway configuration (gateway:/channels: route messages to agents), not a team: teamrun runs a team's tasks to an end and answers no chat; a team has agents and tasks (see `teamrun schema`)"},
		{"channels only", "agents:\n  a:\n    model: m\nchannels:\n  slack: {}\n",
			"f.yaml:4:1: channels: this is a chat-bot gateway configuration (gateway:/channels: route messages to agents), not a team: teamrun runs a team's tasks to an end and answers no chat; a team has agents and tasks (see `teamrun schema`)"},
		{"benchmark", "jobs_dir: jobs\nagents:\n  - import_path: x.agent:A\n    model_name: openai/gpt-4o\ndatasets:\n  - name: tb\n",
			"f.yaml:2:1: agents: this is a benchmark job configuration (agents listed by import_path/model_name), not a team: teamrun runs agents.yaml teams with tasks (see `teamrun schema`)"},
		{"recipe", "name: blog\nversion: 1.0.0\nagents: agents.yaml\ntools: tools.py\n",
			`f.yaml:3:1: agents: this is a recipe manifest (agents: names the file "agents.yaml"), not a team: run that file instead (teamrun run agents.yaml)`},
		{"recipe with includes", "name: ai-quick-news\nversion: 1.0.0\ndescription: d\ncategory: content\nauthor: A\nincludes:\n  - wordpress-publisher\n",
			"f.yaml:6:1: includes: this is a recipe manifest (includes: lists the recipes it uses), not a team: PraisonAI runs the recipe's agents.yaml (or workflow.yaml) beside it; run that file instead (teamrun run agents.yaml)"},
		{"helm values", "replicaCount: 2\nimage:\n  tag: latest\nservice:\n  port: 80\ningress:\n  enabled: false\nresources: {}\n",
			"f.yaml:1:1: this is not a team: most top-level keys (replicaCount, image, service, ingress, …) are not agents.yaml keys, so it looks like another tool's configuration (such as Helm values); teamrun runs a file with agents and tasks (see `teamrun schema`)"},
		{"single agent", "agent:\n  name: helper\n  instructions: Help.\nmcp:\n  servers:\n    time: {command: npx}\n",
			"f.yaml:1:1: agent: this is a single agent (agent:) with no task: PraisonAI answers prompts with it, teamrun runs a team's tasks to an end; declare it under agents: and say what it should do (steps: [{agent: NAME, action: WHAT}], or tasks:, see `teamrun schema`)"},
		{"list of CrewAI agents", "- name: Analyst\n  role: Analyst\n  goal: g\n  backstory: b\n- name: Writer\n  role: Writer\n  backstory: b\n",
			"f.yaml:1:1: this is a list of agents (each item with role, goal and backstory), as a CrewAI agents file, not a team: CrewAI keeps the tasks in a tasks.yaml beside it; teamrun runs one file with both, a mapping at the top: put the agents under roles: (each under its name) and give each its tasks (roles.NAME.tasks)"},
		{"list of other things", "- role: Analyst\n  goal: g\n- just a string\n",
			"f.yaml:1:1: expected a mapping with agents and tasks at the top, got a list"},
		{"CrewAI agents file", "researcher:\n  role: Researcher\n  goal: g\n  backstory: b\nwriter:\n  role: Writer\n  goal: g\n",
			"f.yaml:1:1: this is a CrewAI agents file (each top-level key an agent with role, goal and backstory), not a team: CrewAI keeps the tasks in a tasks.yaml beside it; teamrun runs one file with both: put the agents under roles: and give each its tasks (roles.NAME.tasks)"},
		{"PraisonAI agents with no task", "agents:\n  mapper:\n    name: Mapper\n    instructions: Map it.\n    verbose: true\n",
			"f.yaml:1:1: agents: these agents have no task: PraisonAI makes one from each agent's instructions, teamrun runs the tasks a file writes down: give each agent a step (steps: [{agent: NAME, action: WHAT}]) or a task (tasks:, see `teamrun schema`)"},
		{"PraisonAI agents with a version", "version: \"1.0\"\nagents:\n  planner:\n    system_prompt: You plan.\n",
			"f.yaml:2:1: agents: these agents have no task: PraisonAI makes one from each agent's instructions, teamrun runs the tasks a file writes down: give each agent a step (steps: [{agent: NAME, action: WHAT}]) or a task (tasks:, see `teamrun schema`)"},
		{"agents with instructions only, a mapping", "agents:\n  assistant:\n    instructions: You are helpful.\n",
			"f.yaml:1:1: agents: these agents have no task: PraisonAI makes one from each agent's instructions, teamrun runs the tasks a file writes down: give each agent a step (steps: [{agent: NAME, action: WHAT}]) or a task (tasks:, see `teamrun schema`)"},
		{"agents with instructions only, a list", "agents:\n  - name: assistant\n    instructions: You are helpful.\n",
			"f.yaml:1:1: agents: these agents have no task: PraisonAI makes one from each agent's instructions, teamrun runs the tasks a file writes down: give each agent a step (steps: [{agent: NAME, action: WHAT}]) or a task (tasks:, see `teamrun schema`)"},
		{"recipe manifest requiring", "name: ai-fact-checker\nversion: 1.0.0\nauthor: PraisonAI\ntags: [fact-check]\nconfig:\n  citation_required: true\ninput:\n  type: object\nrequires:\n  env: [OPENAI_API_KEY]\nworkflow:\n  agents:\n    - name: fact_checker\n      role: Fact Verification Specialist\n",
			"f.yaml:9:1: requires: this is a recipe manifest (requires: lists what the recipe needs), not a team: PraisonAI runs the recipe's agents.yaml (or workflow.yaml) beside it; run that file instead (teamrun run agents.yaml)"},
		{"recipe manifest naming its workflow", "name: blog\nversion: 1.0.0\nworkflow: workflow.yaml\n",
			`f.yaml:3:1: workflow: this is a recipe manifest (workflow: names the file "workflow.yaml"), not a team: run that file instead (teamrun run workflow.yaml)`},
		// A native file without tasks keeps the schema's errors.
		{"native agents with no task", "agents:\n  a:\n    shell: echo\n", ""},
		// A team is a team whatever else it carries.
		{"deploy next to tasks", "agents:\n  a:\n    shell: echo hi\ntasks:\n  t:\n    agent: a\n    description: d\ndeploy:\n  port: 1\n", ""},
		{"role tasks next to deploy", "framework: praisonai\nroles:\n  r:\n    role: R\n    tasks:\n      t:\n        description: d\ndeploy:\n  port: 1\n", ""},
		{"many unknown keys next to tasks", "agents:\n  a:\n    shell: echo hi\ntasks:\n  t:\n    agent: a\n    description: d\nx: 1\ny: 2\nz: 3\nw: 4\n", ""},
		{"two unknown keys", "name: n\nfoo: 1\nbar: 2\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tt.src))
			var list ErrorList
			if tt.want == "" {
				if errors.As(err, &list) {
					for _, d := range list {
						if strings.Contains(d.Message, "not a team") || strings.Contains(d.Message, "serves agents") {
							t.Errorf("refused as not a team: %s", d)
						}
					}
				}
				return
			}
			if !errors.As(err, &list) {
				t.Fatalf("err = %v, want an ErrorList", err)
			}
			if len(list) != 1 || list[0].String() != tt.want {
				t.Errorf("got %d errors:\n%s\nwant exactly:\n%s", len(list), list.Error(), tt.want)
			}
		})
	}
}

// TestGroupedWarnings: one warning about one key in several roles is one
// line listing where; different warnings stay apart.
func TestGroupedWarnings(t *testing.T) {
	src := "framework: praisonai\nroles:\n  a:\n    role: A\n    verbose: true\n    tasks:\n      t1:\n        description: d\n  b:\n    role: B\n    verbose: true\n    cache: true\n    tasks:\n      t2:\n        description: d\n"
	team, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"f.yaml:5:5: verbose: not supported by teamrun, ignored: progress looks the same either way; teamrun run -v shows each task's lines (in 2 agents, lines 5, 11)",
		"f.yaml:12:5: roles.b.cache: not supported by teamrun, ignored: every request is sent anew; a finished task is restored from the session instead",
	}
	if got := ErrorList(team.Warnings).Error(); got != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestRefusalKeepsWarnings: the warning that explains a refusal comes with
// it (a task list under a misspelt key is ignored, so there are no tasks).
func TestRefusalKeepsWarnings(t *testing.T) {
	src := "framework: praisonai\nroles:\n  a:\n    role: A\n    task:\n      t1:\n        description: d\n"
	_, err := Parse("f.yaml", []byte(src))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	ws := WarningsOf(err)
	if len(ws) != 1 || ws[0].String() != "f.yaml:5:5: roles.a.task: not supported by teamrun, ignored: nothing reads it (a misspelt key? the schema lists the keys teamrun reads)" {
		t.Errorf("warnings with the refusal: %v", ErrorList(ws))
	}
	if WarningsOf(ErrorList{{Message: "x"}}) != nil {
		t.Error("a plain ErrorList has no warnings")
	}
}

// TestPraisonTaskNativeKeys: keys teamrun supports natively are honoured in
// a PraisonAI role's tasks, not called unsupported; a role's model: next to
// llm: is a warning, not dropped silently.
func TestPraisonTaskNativeKeys(t *testing.T) {
	src := `framework: praisonai
roles:
  a:
    role: A
    llm: gpt-4o
    model: gpt-3.5
    tasks:
      classify:
        description: Classify
        max_retries: 2
        retry_delay: 1.5
        output_variable: label
        condition:
          good: [write]
          bad: []
      write:
        description: Write about {label}
`
	team, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := team.Tasks[0]
	if c.MaxRetries != 2 || c.RetryDelay.Seconds() != 1.5 || c.OutputVariable != "label" || len(c.Condition()) != 2 {
		t.Errorf("classify = %+v", c)
	}
	want := "f.yaml:6:5: roles.a.model: ignored: llm: (line 5) sets the model; keep one of them"
	if got := ErrorList(team.Warnings).Error(); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

// TestPraisonNestedTaskAgentName: a nested task's agent: and name: that
// disagree with where it is are warnings, never dropped silently.
func TestPraisonNestedTaskAgentName(t *testing.T) {
	src := `framework: praisonai
roles:
  a:
    role: A
    tasks:
      t1:
        name: first
        agent: b
        description: d
      t2:
        name: t2
        agent: a
        description: d
  b:
    role: B
`
	team, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`f.yaml:7:9: roles.a.tasks.t1.name: ignored: the task is named "t1", its key; rename the key to name it "first"`,
		`f.yaml:8:9: roles.a.tasks.t1.agent: ignored: the task is under role "a", which runs it; move it under "b" (or to top-level tasks:) for "b" to run it`,
	}
	if got := ErrorList(team.Warnings).Error(); got != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if team.Tasks[0].Agent != "a" {
		t.Errorf("t1 runs with %q", team.Tasks[0].Agent)
	}
}

// nativeAgentKeys, which tell PraisonAI's agents from native ones, are the
// schema's.
func TestNativeAgentKeys(t *testing.T) {
	var doc struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schemas.AgentsSchema, &doc); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(doc.Defs["agent"].Properties))
	if len(keys) == 0 || !slices.Equal(keys, nativeAgentKeys) {
		t.Errorf("the schema's agent keys %v, nativeAgentKeys %v", keys, nativeAgentKeys)
	}
}
