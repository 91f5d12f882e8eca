package spec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// praisonDefaultModel is the model PraisonAI itself uses for a role
// without llm, so a PraisonAI file means the same here.
const praisonDefaultModel = "gpt-4o-mini"

// praison loads the PraisonAI format: roles (or agents) with nested tasks,
// or top-level tasks naming their agent. A key teamrun does not support is a
// warning when the team still runs as written; a feature of the whole file
// it cannot run is one error naming it, and nothing else; a step it cannot
// run is one error among the file's others (refuseSteps).
func (b *builder) praison(root *tree) {
	if d := praisonFatal(b.file, root); d != nil {
		b.diags = ErrorList{*d}
		return
	}
	t := b.team
	b.praisonMark = praisonMark(root)
	t.Name = defaultName(b.file)
	t.Process = Sequential
	t.Variables = map[string]any{}
	t.PraisonTemplates = true
	// PraisonAI's workflow runs a steps: file, its agents_generator a
	// roles: or tasks: file, and they fill placeholders differently.
	t.PraisonSteps = stepsOf(root) != nil
	setBy := map[string]*tree{}
	setVar := func(k string, v *tree) {
		if first, dup := setBy[k]; !dup {
			t.VarOrder = append(t.VarOrder, k)
		} else if !reflect.DeepEqual(first.plain(), v.plain()) {
			// topic: and variables.topic, say: both are the variable topic.
			b.warnf(v, v.kpos(), "sets the variable %s, as %s (line %d) does, to another value: this one, later in the file, is used; keep one", k, first.path, first.kpos().Line)
		}
		setBy[k] = v
		t.Variables[k] = v.plain()
	}
	defaultMemory := false
	// First pass: settings the agents inherit, wherever they are in the file.
	if cfg := root.get("config"); cfg.isMap() {
		for i, k := range cfg.keys() {
			v := cfg.vals()[i]
			switch k {
			case "llm":
				t.LLM = b.praisonLLM(v)
			case "memory":
				if m, ok := b.praisonMemory(v); ok {
					defaultMemory = m
				}
			default:
				b.praisonIgnored(v)
			}
		}
	}
	if l := root.get("llm"); l != nil {
		t.LLM = b.praisonLLM(l)
	}
	// workflow.llm (default_llm, its old name) is the model PraisonAI's
	// workflow gives agents without one: the team's default model.
	if w := root.get("workflow"); w.isMap() {
		wl := w.get("llm")
		if old := w.get("default_llm"); !old.isNull() {
			if wl.isNull() {
				wl = old
			} else {
				b.warnf(old, old.kpos(), "ignored: workflow.llm (line %d) sets the default model; keep one", wl.kpos().Line)
			}
		}
		if !wl.isNull() {
			for _, other := range []*tree{root.get("llm"), root.get("config").get("llm")} {
				if !other.isNull() {
					b.warnf(other, other.kpos(), "ignored: %s (line %d) sets the default model, as PraisonAI's workflow reads it; keep one", wl.path, wl.kpos().Line)
				}
			}
			t.LLM = b.praisonLLM(wl)
		}
	}
	for i, k := range root.keys() {
		v := root.vals()[i]
		if strings.HasPrefix(k, "x-") {
			continue // a home for YAML anchors, as in the native format
		}
		switch k {
		case "config", "llm", "roles", "agents", "tasks", "steps", "task":
			// handled above or below
		case "workflow":
			if ws, top := v.get("steps"), root.get("steps"); ws != nil && top != nil {
				// stepsOf runs the top-level ones, as PraisonAI's
				// workflow parser does.
				b.warnf(ws, ws.kpos(), "ignored: the top-level steps: (line %d) run; keep one list of steps", top.kpos().Line)
			}
			b.praisonWorkflow(v, setVar)
		case "schedule":
			b.praisonSchedule(v)
		case "name":
			if s, ok := v.str(); ok && s != "" {
				t.Name = s
			} else {
				b.errorf(v, v.pos(), "expected string, got %s", v.gotText())
			}
		case "process":
			if s, _ := v.str(); s == string(Workflow) && stepsOf(root) == nil {
				// PraisonAI's workflow process is ordered steps, each fed the
				// previous output: teamrun's sequential process, not its DAG.
				b.warnf(v, v.kpos(), "PraisonAI's workflow runs the tasks in order, each fed the previous output: teamrun runs them so (sequential); for a DAG of independent tasks use the native format")
			}
		case "mcp":
			b.mcpServers(v, true)
		case "workdir":
			b.workdir(v)
		case "allow", "approve":
			// approve: is PraisonAI's list (or one name) of the tools it
			// runs without asking first; allow: is teamrun's. Of teamrun's
			// tools only execute_command waits for such a yes: the file
			// tools run anyway.
			items := v.itemsOrNil()
			if _, ok := v.str(); ok {
				items = []*tree{v}
			} else if !v.isSeq() && !v.isNull() {
				b.warnf(v, v.kpos(), "ignored: expected a list of tool names, such as [execute_command], got %s", v.describe())
			}
			for _, it := range items {
				s, _ := it.str()
				switch {
				case s == ExecuteCommand:
					t.Allow = append(t.Allow, s)
				case s != "" && BuiltinTool(s) != nil:
					// runs without asking: the approval is granted already
				case s != "" && k == "approve":
					b.warnf(it, it.pos(), "ignored: teamrun has no tool %s to approve: execute_command is the only one that needs it (read_file, write_file and list_files run without asking)", quoteShort(s))
				default:
					b.praisonIgnored(it)
				}
			}
		case "topic", "input":
			if !v.isNull() {
				setVar(k, v)
			}
		case "variables":
			if v.isMap() {
				for j, vk := range v.keys() {
					setVar(vk, v.vals()[j])
				}
			} else if !v.isNull() {
				b.errorf(v, v.pos(), "expected a mapping, got %s", v.describe())
			}
		case "framework":
			if s, _ := v.str(); s != "" && s != "praisonai" {
				b.warnf(v, v.kpos(), "%q is ignored: teamrun runs the team itself", s)
			}
		case "dependencies":
			if len(v.items()) > 0 || len(v.keys()) > 0 {
				b.warnf(v, v.kpos(), "not supported, ignored: tasks run in file order, each reading the previous task's output (give a task context: to choose what it reads)")
			}
		default:
			b.praisonIgnored(v)
		}
	}
	roles := root.get("roles")
	if roles == nil {
		roles = root.get("agents")
	} else if ag := root.get("agents"); ag != nil {
		b.errorf(ag, ag.kpos(), "both roles and agents are given: keep one")
	}
	b.steps = stepsOf(root)
	switch {
	case roles.isMap():
		// PraisonAI's name of an agent (yaml_parser.py): the role text in
		// a roles: file, else its name:; it names the agent's step outputs.
		nameKey := "name"
		if root.get("roles") != nil {
			nameKey = "role"
		}
		for i, name := range roles.keys() {
			if s, ok := roles.vals()[i].get(nameKey).str(); ok && s != "" && s != name {
				if b.stepOutputName == nil {
					b.stepOutputName = map[string]string{}
				}
				b.stepOutputName[name] = s
			}
			if a := b.praisonRole(name, roles.vals()[i], false, defaultMemory); a != nil && nameKey == "role" && roles.vals()[i].get("role") == nil {
				a.Role = name // PraisonAI's role when none is given (yaml_parser.py)
			}
		}
	case roles.isSeq():
		for _, it := range roles.items() {
			name, ok := b.listedName(it, "agent", "steps and tasks name the agent by it")
			if !ok {
				continue
			}
			if name == "" {
				// Said; its other errors are said too, all at once, under
				// its place in the list, which names no role.
				name = it.path
			} else {
				it.path = strings.SplitN(it.path, "[", 2)[0] + "." + name
			}
			b.praisonRole(name, it, true, defaultMemory)
		}
	case roles != nil && !roles.isNull():
		b.errorf(roles, roles.pos(), "expected a mapping of roles, got %s", roles.describe())
	}
	if tasks := root.get("tasks"); tasks != nil && !b.tasksBesideSteps(tasks, "its tasks") {
		b.praisonTopTasks(tasks)
	}
	if tv := root.get("task"); tv != nil {
		b.praisonSchedulerTask(tv)
	}
	// PraisonAI: input is the workflow's input, topic its old name; a
	// file of roles gets it when a text reads it.
	if _, ok := t.Variables["input"]; !ok && (b.steps != nil || readsInput(t)) {
		if tp, ok := t.Variables["topic"]; ok {
			t.Variables["input"] = tp
			t.VarOrder = append(t.VarOrder, "input")
		}
	}
	if b.steps == nil {
		b.bindPreviousOutput()
	} else {
		b.praisonSteps(b.steps) // binds it among the steps' bindings
		input := setBy["input"]
		if root.get("input") == nil && input == nil {
			input = setBy["topic"] // read as the input
		}
		b.inputPlaceholders(input)
		if tp := setBy["topic"]; tp != nil && tp == root.get("topic") {
			s, _ := tp.str()
			t.FillTopic = strings.Contains(s, "{{")
			// What the variable topic reads: a --var of it is used, and
			// what nothing defines stays in it, as in a text.
			for _, w := range placeholdersIn(s, praisonSteps) {
				if w.name != "topic" {
					t.Placeholders = append(t.Placeholders, PlaceholderUse{Name: w.name, Written: w.as, Pos: tp.pos(), Path: tp.path})
				}
			}
		}
	}
	if len(t.Tasks) == 0 && len(b.diags) == 0 {
		if b.steps != nil {
			// steps: [] (a mapping or null is refused where it is read)
			b.errorf(b.steps, b.steps.pos(), "the workflow has no steps: list at least one, such as - {agent: NAME, action: TEXT}")
		} else {
			b.diags = append(b.diags, Diagnostic{File: b.file, Line: root.pos().Line, Column: root.pos().Column,
				Message: "the team has no tasks: give a role tasks (roles.NAME.tasks) or list them under tasks:"})
		}
	}
	// PraisonAI's top-level MCP servers serve every agent.
	for _, a := range t.Agents {
		if a.Kind == LLMAgent {
			a.MCP = append(a.MCP, t.MCP...)
		}
	}
	b.warnSkippedReads()
	b.check()
	b.checkForeach()
	b.checkRepeat()
	if bg := t.Budget; bg != nil {
		b.checkBudgetPrices(b.schedule.get(strings.TrimPrefix(bg.Key, "schedule.")))
	}
}

// inputPlaceholders records the {{NAME}}s of a steps file's input (the
// value of v, input: or topic:) that PraisonAI leaves in it as written:
// it fills only its built-in variables there (yaml_parser.py), and puts
// the input into a step's text after the variables (workflows.py), so a
// step that reads the input gets them as written. Nothing when no step
// reads it.
func (b *builder) inputPlaceholders(v *tree) {
	s, ok := v.str()
	if !ok || !strings.Contains(s, "{{") || !readsInput(b.team) {
		return
	}
	for _, w := range placeholdersIn(s, praisonSteps) {
		if _, builtin := praisonBuiltin(w.name, time.Time{}); !builtin {
			b.team.InputPlaceholders = append(b.team.InputPlaceholders, PlaceholderUse{Name: w.name, Written: w.as, Pos: v.pos(), Path: v.path})
		}
	}
}

// readsInput reports whether a text of t's agents or tasks has an {input}
// placeholder.
func readsInput(t *Team) bool {
	var texts []string
	for _, a := range t.Agents {
		texts = append(texts, a.Role, a.Goal, a.Backstory, a.Instructions)
	}
	for _, tk := range t.Tasks {
		texts = append(texts, tk.Description, tk.ExpectedOutput)
	}
	return slices.ContainsFunc(texts, func(s string) bool { return slices.Contains(placeholderNames(s, t.syntax()), "input") })
}

// praisonFatal finds the first feature teamrun cannot run, if any.
func praisonFatal(file string, root *tree) *Diagnostic {
	at := func(v *tree, msg string) *Diagnostic {
		return &Diagnostic{File: file, Line: v.kpos().Line, Column: v.kpos().Column, Path: v.path, Message: msg}
	}
	if ty := root.get("type"); ty != nil {
		s, _ := ty.str()
		return at(ty, fmt.Sprintf("PraisonAI %q workflows (run:, judge:, approve: steps) are not supported: use command agents (shell:) for run: and a human task for approve: in the native format", s))
	}
	if inc := root.get("includes"); inc != nil && !inc.isNull() {
		return at(inc, "nested workflows are not supported: write their steps in this file's steps")
	}
	if p := root.get("process"); p != nil {
		s, ok := p.str()
		if s == "hierarchical" {
			return at(p, "PraisonAI's hierarchical process (a manager model assigns each task to an agent and checks the result) is not supported: write process: sequential to run the tasks in file order, each by the agent that declares it")
		}
		if !ok || (s != string(Sequential) && s != string(Workflow)) {
			return at(p, fmt.Sprintf("process %s is not supported: use sequential or workflow", p.describe()))
		}
	}
	roles := root.get("roles")
	if roles == nil {
		roles = root.get("agents")
	}
	var agents []*tree
	if roles.isMap() {
		agents = append(agents, roles.vals()...)
	}
	agents = append(agents, roles.itemsOrNil()...)
	if stepsOf(root) == nil {
		if d := tasksLoopBack(file, agents, root.get("tasks")); d != nil {
			return d
		}
	}
	for _, a := range agents {
		if cb := a.get("cli_backend"); cb != nil && !cb.isNull() {
			return at(cb, "CLI backends are not supported: use a command agent (shell: or command:) in the native format")
		}
		// agent: names the class PraisonAI makes the agent of; Agent is
		// its chat agent, which is what teamrun runs.
		if class, ok := a.get("agent").str(); ok && class != "" && class != "Agent" {
			return at(a.get("agent"), fmt.Sprintf("%s agents are not supported: teamrun runs chat agents, and %s's media or document work needs its own API; call that from a command agent (shell: or command:) in the native format", quoteShort(class), class))
		}
	}
	return nil
}

// tasksLoopBack finds the first task of roles (their tasks:) or of the
// top-level tasks whose next_tasks loops back, in the order praison adds
// them: the roles' tasks, then the top-level ones.
func tasksLoopBack(file string, roles []*tree, top *tree) *Diagnostic {
	var order flowOrder
	place := map[*tree]int{}
	var tasks []*tree
	add := func(list *tree, unnamed func(i int) string) {
		for i, k := range list.keys() {
			place[list.vals()[i]] = order.add(k)
			tasks = append(tasks, list.vals()[i])
		}
		for i, it := range list.itemsOrNil() {
			name, ok := it.get("name").str()
			if !ok && unnamed != nil {
				name = unnamed(i)
			}
			place[it] = order.add(name)
			tasks = append(tasks, it)
		}
	}
	for _, r := range roles {
		add(r.get("tasks"), nil)
	}
	// A top-level list's task without a name is task_I (praisonTopTasks).
	add(top, func(i int) string { return fmt.Sprintf("task_%d", i) })
	for _, tk := range tasks {
		if nt := tk.get("next_tasks"); nt != nil {
			if msg := order.loopsBack(nt, place[tk], "task"); msg != "" {
				return &Diagnostic{File: file, Line: nt.kpos().Line, Column: nt.kpos().Column, Path: nt.path, Message: msg}
			}
		}
	}
	return nil
}

// praisonIgnored warns about a key teamrun does not support. A key without a
// value (null, or an empty list) drops nothing, so it passes silently.
func (b *builder) praisonIgnored(v *tree) {
	if v.isNull() || (v.isSeq() && len(v.items()) == 0) || (v.isMap() && len(v.keys()) == 0) {
		return
	}
	effect := ignoredEffect(v.path)
	if key := v.path[strings.LastIndexAny(v.path, ".]")+1:]; effect == unreadKey && strings.TrimSpace(key) != key && strings.TrimSpace(key) != "" {
		// A quoted key keeps its spaces: "action " is not action.
		effect = fmt.Sprintf("the key %q has a space at its start or end, which YAML keeps inside quotes: write %s", key, strings.TrimSpace(key))
	}
	b.warnf(v, v.kpos(), "not supported by teamrun, ignored: %s", effect)
}

// ignoredEffect says what ignoring PraisonAI key path means for the run,
// and the native construct where one exists.
func ignoredEffect(path string) string {
	key := path[strings.LastIndexByte(path, '.')+1:]
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = key[:i]
	}
	switch key {
	case "verbose":
		return "progress looks the same either way; teamrun run -v shows each task's lines"
	case "stream":
		// PraisonAI's workflow and agents take it to print the answer as
		// it comes; teamrun decides that itself, per llm.
		return "teamrun streams an LLM answer on its own whenever a run shows live progress on a terminal; in the native format an llm's stream: (auto, true or false) sets it"
	case "allow_delegation":
		return "agents never hand work to each other; give that work a task of its own"
	case "cache":
		return "every request is sent anew; a finished task is restored from the session instead"
	case "planning", "reasoning", "self_reflect", "min_reflect", "max_reflect", "reflect_llm":
		return "no planning or reflection step runs; add a task (or a repeat: with until:) for it"
	case "function_calling_llm":
		return "tool calls use the agent's own llm"
	case "callbacks", "callback", "step_callback":
		return "no Python callback runs; a command task after it can do that work"
	case "history":
		return "teamrun keeps that trace always: each task's attempts, tool calls and outputs are in the session (teamrun session show ID --task TASK, teamrun session logs ID)"
	case "memory", "memory_config":
		return "teamrun keeps no memory store (PraisonAI's provider, across runs), so the agent has no memory beyond what each task is given; memory: true keeps its conversation of the run, checkpointed in the session"
	case "async_execution":
		return "tasks run in order; in the native format, process: workflow runs independent tasks side by side"
	case "output_file":
		return "only a task's output_file is written: set it on the task"
	case "aws_region", "api_type", "api_version":
		return "teamrun calls only OpenAI-compatible endpoints: set llm.base_url (a proxy such as LiteLLM's)"
	case "max_iter", "max_execution_time", "max_rpm":
		return "the run has no such limit; a task's timeout:, an agent's max_turns: or a budget: bounds it"
	case "name", "description":
		return "a label only: the key that holds it names the agent or the team"
	case "tools_run_on":
		return "tools run on this machine, where teamrun runs"
	case "run_on":
		// PraisonAI's workflow loader reads a top-level run_on: as the old
		// spelling of tools_run_on:; nothing reads it elsewhere.
		if path == "run_on" {
			return ignoredEffect("tools_run_on")
		}
	case "context_from":
		// PraisonAI's markdown workflows and Python steps take it; its YAML
		// loader does not, so a step reads the one before it there too.
		return "PraisonAI's YAML workflows read none either: the step reads the step before it; a step's context: adds the steps it names"
	case "message_steering":
		return "no message is steered into an agent while it runs"
	case "context":
		if path == "context" {
			return "teamrun compacts no context: each task is given the outputs it reads in full"
		}
		return "an agent reads no context of its own: a task's or step's context: lists what it reads"
	case "output_json", "output_pydantic":
		return "the result is not checked as JSON; in the native format a task's output_schema: (a JSON Schema) asks for JSON and checks it"
	case "handoff", "handoffs":
		return "agents never hand the conversation to each other; a route: step (or a task's condition:) picks the agent that goes on"
	case "tool_choice":
		return "the model chooses its tool calls itself"
	case "config":
		return "nothing runs differently"
	case "metadata":
		if path == "metadata" {
			return "a recipe's label only; its requires: is not checked, but an undefined {{VAR}} is a warning naming the --var it needs"
		}
	case "models":
		if path == "models" {
			return "no model is picked by a task's complexity: each agent talks to its own llm (else the file's default); in the native format models: defines model aliases"
		}
	case "tools":
		if path == "tools" {
			return "these tools are not loaded: an agent gets the built-in file tools its own tools: names; in the native format a top-level tools: mapping declares command tools"
		}
	case "guardrail", "guardrails":
		return "the answer is not checked against it; a later step (or a repeat: with until:) can check it"
	case "create_directory":
		return "teamrun makes output_file's folder anyway"
	// The keys below are in PraisonAI's own schema of these files
	// (praisonai/config/schema.py): none is a misspelling.
	case "streaming":
		return ignoredEffect("stream")
	case "planning_llm", "planning_tools", "reflection":
		return ignoredEffect("planning")
	case "manager_llm":
		return "no manager model assigns or checks the tasks: each is done by the agent that declares it"
	case "providers":
		return "an agent's llm picks its endpoint (a provider prefix such as groq/, or llm.base_url) and its key comes from the environment; in the native format models: defines aliases with base_url and api_key_env"
	case "acp", "lsp":
		return "teamrun serves no ACP or LSP client: it runs the team and exits"
	case "system_template", "prompt_template", "response_template":
		return "teamrun writes the prompts itself: the system message from role, goal, backstory and instructions, the user message from the task's description, expected output and the outputs it reads"
	case "tool_timeout":
		return "the built-in tools have no time limit; in the native format a command tool's timeout: bounds each call"
	case "tool_retry_policy":
		return "a failed tool call is an error result the model reads, and it may call the tool again"
	case "autonomy":
		return "the agent works through its task's prompt and the tools it lists, at most max_turns model requests (default 10) an attempt"
	case "approval":
		return "no tool asks before it runs: the file tools run as they are, and execute_command only with the top-level approve: (or allow:)"
	case "skills":
		return "no skills are loaded: the agent has its role, goal, backstory and the tools it lists"
	case "web", "web_fetch":
		return "the agent has no web access of its own; in the native format a command tool or an MCP server can fetch pages"
	case "runtime":
		return ignoredEffect("tools_run_on")
	// Keys PraisonAI's docs give (docs.praison.ai) beside its schema's.
	case "images":
		return "teamrun sends text only: no image is attached; a command agent can read the image and put what it holds into the text"
	case "human_input":
		return "no one is asked for feedback after the task; in the native format a task whose agent is human halts the run for `teamrun session decide`"
	case "llm_routing", "llm_models", "routing_strategy":
		return ignoredEffect("models")
	case "output_structure":
		return ignoredEffect("output_json")
	case "min_iterations":
		return ignoredEffect("planning")
	// An agent's keys of PraisonAI's (and CrewAI's) Agent.
	case "knowledge", "knowledge_sources", "retrieval_config":
		return "teamrun has no knowledge store, so the agent runs without its documents: list read_file in its tools to let it read them, or put what it needs in a task's text"
	case "allow_code_execution", "code_execution_mode":
		return "the agent runs no code of its own; execute_command in its tools (with the top-level allow: [execute_command]) runs shell commands, or a command task runs a script"
	case "markdown":
		return "the system message asks for no format: say in a task's expected_output how the answer should look"
	case "max_retry_limit":
		return "a task's max_retries: sets how often a failed task is tried again"
	case "respect_context_window":
		return "nothing is summarised to fit the model's context window: a request too long for it fails the attempt"
	case "use_system_prompt":
		return "teamrun always sends the system message it makes from role, goal, backstory and instructions"
	case "task_type":
		// PraisonAI's workflow process: decision (read beside a condition
		// mapping), loop (over a file) or task.
		return "teamrun reads task_type only as decision beside a condition: mapping of results to the tasks they run; this one runs as any task does"
	case "reasoning_steps":
		// An Agent's and an LLM's: shows a reasoning model's reasoning.
		return "the model's reasoning is neither shown nor kept apart: the task's result is its answer"
	case "reasoning_effort":
		return "the model's default reasoning effort is used"
	}
	if e := llmIgnoredEffect(path, key); e != "" {
		return e
	}
	// Keys whose names are too common to mean PraisonAI's anywhere else.
	switch path {
	case "toolsets":
		return "no toolset is loaded: list the tools an agent uses under its tools"
	case "workflow.timeout":
		return "the run has no overall time limit; a step's timeout: bounds that step"
	case "workflow.max_parallel":
		return "teamrun run --max-parallel N (default 4) bounds the steps that run at once"
	case "workflow.error_handling":
		return "a failed step fails the run (exit 1) after its retries; `--continue` runs it again"
	case "workflow.output":
		return ignoredEffect("verbose")
	case "workflow.router":
		return ignoredEffect("models")
	}
	if strings.HasPrefix(path, "agents.") || strings.HasPrefix(path, "roles.") {
		if key == "max_iterations" && !strings.Contains(path, ".tasks.") {
			return ignoredEffect("planning") // the agent's self-reflection rounds
		}
	}
	if strings.Contains(path, "steps[") {
		switch key {
		case "task":
			return "PraisonAI's workflow runner takes a step's text from action: (or description:), never from task: move it there"
		case "type":
			return "a step's kind comes from its keys (agent:, route:, parallel:, loop:, repeat:, if:)"
		case "count":
			return "a loop runs once per item of a list: loop: {over: VAR}"
		case "routes":
			return "PraisonAI's workflow runner routes with route: {LABEL: [AGENT, …]} after the step that classifies, never with routes: write that"
		case "steps":
			// PraisonAI reads it beside loop: alone (its loop of several
			// steps); a step without agent: is a generic step there.
			return "PraisonAI reads a step's steps: only beside loop:, and runs none of them here either: write them in the file's steps: list, in the order they run"
		}
	}
	return unreadKey
}

const unreadKey = "nothing reads it (a misspelt key? the schema lists the keys teamrun reads)"

// llmIgnoredEffect says what ignoring key of an llm: mapping (path
// ending llm.KEY) means: one of the settings PraisonAI's LLM (and
// CrewAI's, through LiteLLM) sends with each request, of which teamrun
// sends temperature and max_tokens only. "" for any other key, or one not
// under llm: their names (stop, n, seed) are too common to mean this
// elsewhere.
func llmIgnoredEffect(path, key string) string {
	if path != "llm."+key && !strings.HasSuffix(path, ".llm."+key) {
		return ""
	}
	const sends = " (of the sampling settings teamrun sends only temperature and max_tokens)"
	switch key {
	case "top_p", "presence_penalty", "frequency_penalty", "logit_bias":
		return fmt.Sprintf("the model's default %s is used%s", key, sends)
	case "seed":
		return "no seed is sent: the model samples as it does without one" + sends
	case "stop", "stop_phrases":
		return "the answer is not cut at a stop text" + sends
	case "n":
		return "one answer is asked for, the one PraisonAI would use"
	case "logprobs", "top_logprobs":
		return "no token probabilities are asked for: a task's result is the answer's text"
	case "response_format":
		return ignoredEffect("output_json")
	case "timeout":
		return "a request times out after 5 minutes, teamrun's default; in the native format llm.timeout sets it"
	}
	return ""
}

// praisonKey says whether key is one PraisonAI's files use that the native
// format does not have, for the advice to a file that lacks framework:.
func praisonKey(key string) bool {
	return key == "toolsets" || key == "model" || ignoredEffect(key) != unreadKey
}

func (b *builder) praisonLLM(v *tree) *LLM {
	if s, ok := v.str(); ok && s != "" {
		if b.checkNoKey(v) {
			return nil
		}
		return &LLM{Model: s, Pos: v.pos()}
	}
	if !v.isMap() {
		b.errorf(v, v.pos(), "expected a model name or a mapping with model, got %s", v.gotText())
		return nil
	}
	l := &LLM{Pos: v.pos()}
	for i, k := range v.keys() {
		f := v.vals()[i]
		s, isStr := f.str()
		switch k {
		case "model":
			if !isStr || s == "" {
				b.errorf(f, f.pos(), "expected a model name, got %s", f.gotText())
			} else if b.checkNoKey(f) {
				return nil
			}
			l.Model = s
		case "base_url":
			l.BaseURL, l.BaseURLAt = b.baseURL(f)
		case "api_base":
			// LiteLLM's name for base_url, which PraisonAI's docs use:
			// dropped, the requests (and the key) would go to OpenAI.
			if bu := v.get("base_url"); bu != nil {
				b.warnf(f, f.kpos(), "ignored: base_url (line %d) says where requests go; keep one", bu.kpos().Line)
			} else {
				l.BaseURL, l.BaseURLAt = b.baseURL(f)
			}
		case "api_key_env":
			l.APIKeyEnv = s
			b.checkKeyName(f, true)
		case "temperature":
			// The native schema's rule: the API refuses anything else.
			if x, ok := number(f); ok && x >= 0 && x <= 2 {
				l.Temperature = &x
			} else if !f.isNull() {
				b.errorf(f, f.pos(), "expected a number from 0 to 2, got %s", f.describe())
			}
		case "max_tokens", "max_completion_tokens":
			// OpenAI's newer name for the same bound, which its reasoning
			// models take in place of max_tokens: read as max_tokens, which
			// the client sends under the name the model takes.
			if mt := v.get("max_tokens"); k == "max_completion_tokens" && mt != nil {
				b.warnf(f, f.kpos(), "ignored: max_tokens (line %d) bounds the answer; keep one", mt.kpos().Line)
				continue
			}
			if n, ok := f.val().(int64); ok && n > 0 && n < 1<<31 {
				l.MaxTokens = int(n)
			} else if !f.isNull() {
				b.errorf(f, f.pos(), "expected a whole number of tokens, at least 1, got %s", f.describe())
			}
		case "api_key":
			if !f.isNull() {
				b.warnf(f, f.kpos(), "ignored: teamrun never reads a key from the spec; set OPENAI_API_KEY, or name another variable in api_key_env")
			}
		default:
			b.praisonIgnored(f)
		}
	}
	if l.Model == "" {
		if v.get("model") == nil {
			b.errorf(v, v.kpos(), "missing required key \"model\"")
		}
		return nil
	}
	return l
}

// praisonRole adds the agent a role declares, and returns it; nil when the
// role is not a mapping (an error is reported then).
func (b *builder) praisonRole(name string, v *tree, listed bool, memory bool) *Agent {
	a := &Agent{Name: name, Kind: LLMAgent, Memory: memory, Pos: v.kpos(), path: v.path}
	b.agentSrc[a] = v
	if name == HumanAgent {
		b.errorf(v, v.kpos(), "%q is reserved for tasks that wait for a human decision; rename this role", HumanAgent)
	} else if !nameRE().MatchString(name) {
		b.errorf(v, v.kpos(), "expected a name without slashes or control characters, not starting with a dot or a space, got %s", quoteShort(name))
	}
	if b.agents[name] {
		if first := b.team.Agent(name); first != nil {
			b.errorf(v, v.kpos(), "%s", duplicateName("agent", name, first.Pos.Line))
		} else {
			b.errorf(v, v.kpos(), "duplicate agent name %q: give the agents different names", name)
		}
	}
	b.agents[name] = true
	if !v.isMap() {
		b.errorf(v, v.pos(), "expected a mapping, got %s", v.describe())
		if b.malformed == nil {
			b.malformed = map[string]bool{}
		}
		b.malformed[name] = true
		return nil
	}
	var tasks *tree
	for i, k := range v.keys() {
		f := v.vals()[i]
		str := func(dst *string) { b.praisonString(f, dst) }
		switch k {
		case "role":
			str(&a.Role)
		case "goal":
			str(&a.Goal)
		case "backstory":
			str(&a.Backstory)
		case "instructions":
			str(&a.Instructions)
		case "llm":
			if !f.isNull() {
				a.LLM = b.praisonLLM(f)
			}
		case "model":
			if l := v.get("llm"); !l.isNull() {
				b.warnf(f, f.kpos(), "ignored: llm: (line %d) sets the model; keep one of them", l.kpos().Line)
			} else if a.LLM == nil {
				var m string
				str(&m)
				if m != "" {
					a.LLM = &LLM{Model: m, Pos: f.pos()}
				}
			}
		case "memory":
			if m, ok := b.praisonMemory(f); ok {
				a.Memory = m
			}
		case "name":
			// In an agents: file with steps it names the steps' outputs.
			if s, _ := f.str(); !listed && (b.steps == nil || s == "" || b.stepOutputName[name] != s) {
				b.praisonIgnored(f)
			}
		case "agent":
			// Agent, PraisonAI's chat agent (praisonFatal refuses others).
		case "tasks":
			tasks = f
		case "tools":
			b.praisonTools(a, f)
		case "toolsets":
			if hasTools(f) {
				b.warnf(f, f.kpos(), "not supported, ignored: the agent runs without these toolsets (list its tools under tools)")
			}
		case "shell", "command":
			// The native format's command agent: here it would be an LLM
			// role, sent to a model, and the command never run.
			b.errorf(f, f.kpos(), "a command agent (%s:) is the native format's, and this file is read as a PraisonAI file, because it has %s, where every agent is an LLM role: to run a command, write the team in the native format (agents with shell: or command:, tasks: naming them, and none of PraisonAI's keys; see `teamrun schema`)", k, b.praisonMark)
		default:
			b.praisonIgnored(f)
		}
	}
	if a.LLM == nil {
		if b.team.LLM != nil {
			cp := *b.team.LLM
			a.LLM = &cp
		} else {
			// Unless the project's config.yml names one (FillLLM).
			a.LLM, a.llmDefault = &LLM{Model: praisonDefaultModel}, true
		}
	}
	b.team.Agents = append(b.team.Agents, a)
	if b.tasksBesideSteps(tasks, "its roles' tasks") {
		return a
	}
	switch {
	case tasks.isMap():
		for i, tn := range tasks.keys() {
			tv := tasks.vals()[i]
			if nv := tv.get("name"); nv != nil {
				if s, _ := nv.str(); s != "" && s != tn {
					b.warnf(nv, nv.kpos(), "ignored: the task is named %q, its key; rename the key to name it %q", tn, s)
				}
			}
			b.nestedAgent(tv, name)
			b.praisonTask(tn, tv, name, v)
		}
	case tasks.isSeq():
		for _, it := range tasks.items() {
			tn, ok := b.listedName(it, "task", "context: and --rerun name the task by it")
			if !ok {
				continue
			}
			if tn == "" {
				tn = it.path // as for an agent without a name
			}
			b.nestedAgent(it, name)
			b.praisonTask(tn, it, name, v)
		}
	case tasks != nil && !tasks.isNull():
		b.errorf(tasks, tasks.pos(), "expected a mapping of tasks, got %s", tasks.describe())
	}
	return a
}

// listedName is the name: of it, an agent or a task (kind) in a list;
// what says what names it by that. "" when it has none: an error then
// says to write it, and its other keys are still worth reading, for
// their errors. ok is false when it is no mapping (an error says so).
func (b *builder) listedName(it *tree, kind, what string) (name string, ok bool) {
	if !it.isMap() {
		b.errorf(it, it.pos(), "expected a mapping such as {name: NAME, …} for the %s, got %s", kind, it.gotText())
		return "", false
	}
	nv := it.get("name")
	s, isText := nv.str()
	switch {
	case isText && s != "":
		return s, true
	case nv.isNull() || isText:
		article := "a"
		if kind == "agent" {
			article = "an"
		}
		b.errorf(it, it.pos(), "%s %s in a list needs a name: add name: NAME (%s)", article, kind, what)
	default:
		b.errorf(nv, nv.pos(), "expected the %s's name as text, got %s", kind, nv.gotText())
	}
	return "", true
}

// nestedAgent warns when a task under a role names another agent: the
// role runs it, as in PraisonAI.
func (b *builder) nestedAgent(tv *tree, role string) {
	if av := tv.get("agent"); av != nil {
		if s, _ := av.str(); s != "" && s != role {
			b.warnf(av, av.kpos(), "ignored: the task is under role %q, which runs it; move it under %q (or to top-level tasks:) for %q to run it", role, s, s)
		}
	}
}

// repeatedAt is where the task at v, of role, is repeated through an
// alias (b: *r, tasks: *ts) or a merge key (<<: *r): the first of those
// places that comes after the task, as YAML has an anchor before its
// aliases. False when none does (a task written where it is).
func repeatedAt(v, role *tree) (Pos, bool) {
	tasks := role.get("tasks")
	if tasks == nil {
		return Pos{}, false // a top-level task
	}
	at := v.kpos()
	for _, p := range []Pos{tasks.pos(), tasks.kpos(), role.pos()} {
		if p.Line > at.Line || p.Line == at.Line && p.Column > at.Column {
			return p, true
		}
	}
	return Pos{}, false
}

// hasTools tells whether a tools list names any tool: PraisonAI files often
// carry tools: [”] as a placeholder.
func hasTools(v *tree) bool {
	if v.isSeq() {
		for _, it := range v.items() {
			if s, ok := it.str(); !(ok && s == "") && !it.isNull() {
				return true
			}
		}
		return false
	}
	return !v.isNull()
}

// tasksBesideSteps warns that tasks (of roles, or top-level; what says
// which) do not run, and says so, when the file has steps: PraisonAI's
// workflow then runs its steps alone. False when the file has no steps,
// or tasks holds none.
func (b *builder) tasksBesideSteps(tasks *tree, what string) bool {
	if b.steps == nil || tasks == nil || len(tasks.keys()) == 0 && len(tasks.items()) == 0 {
		return false
	}
	b.warnf(tasks, tasks.kpos(), "ignored: the file has steps: (line %d), and PraisonAI then runs its steps, not %s; make these tasks steps to run them", b.steps.kpos().Line, what)
	return true
}

func (b *builder) praisonTopTasks(v *tree) {
	switch {
	case v.isMap():
		for i, name := range v.keys() {
			f := v.vals()[i]
			agent, _ := f.get("agent").str()
			if f.get("agent") == nil {
				b.errorf(f, f.kpos(), "missing required key \"agent\"")
			}
			b.praisonTask(name, f, agent, nil)
		}
	case v.isSeq():
		for i, it := range v.items() {
			name, ok := it.get("name").str()
			if it.get("name").isNull() {
				// PraisonAI's name for it (agents_generator.py).
				name, ok = fmt.Sprintf("task_%d", i), true
			}
			if !ok || name == "" {
				nv := it.get("name")
				b.errorf(nv, nv.pos(), "expected a task name, got %s", nv.gotText())
				continue
			}
			agent, _ := it.get("agent").str()
			if it.get("agent") == nil {
				b.errorf(it, it.pos(), "missing required key \"agent\"")
			}
			b.praisonTask(name, it, agent, nil)
		}
	case !v.isNull():
		b.errorf(v, v.pos(), "expected a mapping of tasks, got %s", v.describe())
	}
}

// praisonTask adds the task name declared at v, of role (nil: a
// top-level task) or run by agent.
func (b *builder) praisonTask(name string, v *tree, agent string, role *tree) {
	if i, dup := b.taskAt[name]; dup {
		first := b.team.Tasks[i].Pos
		if at, ok := repeatedAt(v, role); ok && first == v.kpos() {
			b.errorf(v, at, "duplicate task name %q (first at line %d, repeated here through an alias or a merge key): write this role's tasks out, with names of their own", name, first.Line)
			return
		}
		b.errorf(v, v.kpos(), "%s", duplicateName("task", name, first.Line))
		return
	}
	if !nameRE().MatchString(name) {
		b.errorf(v, v.kpos(), "expected a name without slashes or control characters, not starting with a dot or a space, got %s", quoteShort(name))
	}
	tk := &Task{Name: name, Agent: agent, Pos: v.kpos()}
	if !v.isMap() {
		b.errorf(v, v.pos(), "expected a mapping, got %s", v.describe())
		return
	}
	if v.get("description") == nil {
		b.errorf(v, v.kpos(), "missing required key \"description\"")
	}
	for i, k := range v.keys() {
		f := v.vals()[i]
		str := func(dst *string) { b.praisonString(f, dst) }
		switch k {
		case "description":
			str(&tk.Description)
		case "expected_output":
			str(&tk.ExpectedOutput)
		case "agent", "name":
			// read by the caller
		case "context":
			b.praisonContext(f, tk)
		case "output_file":
			f := tk.OutputFile()
			str(&f)
			tk.SetOutputFile(f)
		case "max_retries":
			b.praisonRetries(f, tk)
		case "retry_delay":
			tk.RetryDelay = b.seconds(f)
		case "output_variable":
			str(&tk.OutputVariable)
		case "condition":
			b.praisonCondition(f, tk)
		case "tools":
			b.praisonTools(b.team.Agent(agent), f)
		default:
			if !b.praisonFlowKey(k, f, v, "tasks") {
				b.praisonIgnored(f)
			}
		}
	}
	b.taskAt[name] = len(b.team.Tasks)
	b.team.Tasks = append(b.team.Tasks, tk)
	b.tasks = append(b.tasks, v)
	b.userTexts = append(b.userTexts, tk)
}

// praisonMemory reads a memory: setting: true or false, as the native
// format's; a mapping configures PraisonAI's memory store, which teamrun
// has not (a warning). ok is false when it sets nothing.
func (b *builder) praisonMemory(f *tree) (on, ok bool) {
	if f.isMap() {
		if len(f.keys()) == 0 {
			return false, false
		}
		b.warnf(f, f.kpos(), "ignored: this mapping configures PraisonAI's memory store, which teamrun has not, so the agent runs without memory: write memory: true to keep its conversation of the run, checkpointed in the session")
		return false, false
	}
	return b.praisonBool(f)
}

// praisonBool reads a true or false; anything else is an error (null sets
// nothing). PyYAML, PraisonAI's loader, reads YAML 1.1's yes and on (and
// no and off) as booleans, in lower case, capitalised or upper case, where
// teamrun's YAML reads text: the error says which to write, rather than
// read the file otherwise than PraisonAI. (y and n are text to PyYAML too.)
func (b *builder) praisonBool(f *tree) (v, ok bool) {
	if f.isNull() {
		return false, false
	}
	if v, ok := f.val().(bool); ok {
		return v, true
	}
	msg := "expected true or false, got " + f.describe()
	if s, isStr := f.str(); isStr {
		// PyYAML's bool resolver: one case throughout, or capitalised.
		lower := strings.ToLower(s)
		if s != lower && s != strings.ToUpper(s) && s != strings.ToUpper(s[:1])+lower[1:] {
			lower = ""
		}
		switch lower {
		case "yes", "on":
			msg += ": write true (PraisonAI's YAML reads " + s + " as true, teamrun's as text)"
		case "no", "off":
			msg += ": write false (PraisonAI's YAML reads " + s + " as false, teamrun's as text)"
		}
	}
	b.errorf(f, f.pos(), "%s", msg)
	return false, false
}

// praisonString sets *dst from a string value; null leaves it as it is.
func (b *builder) praisonString(f *tree, dst *string) {
	if s, ok := f.str(); ok {
		*dst = s
	} else if !f.isNull() {
		b.errorf(f, f.pos(), "expected string, got %s", f.gotText())
	}
}
