// Package spec loads a team from agents.yaml: the model every other package
// works from, its validation, placeholders and fingerprints.
package spec

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Process is how a team's tasks are scheduled.
type Process string

const (
	Sequential Process = "sequential"
	Workflow   Process = "workflow"
)

// HumanAgent is the reserved agent name of tasks that wait for a decision.
const HumanAgent = "human"

// Pos is a place in the YAML source, 1-based.
type Pos struct {
	Line, Column int
}

// Team is one agents.yaml, native or PraisonAI, after loading.
type Team struct {
	File      string // the path as given to Load
	Name      string
	Process   Process
	Variables map[string]any // the shared state's initial values
	VarOrder  []string       // Variables' keys in file order
	LLM       *LLM           // the team's default; nil when absent
	// Models are the models: aliases by name, each a complete llm
	// mapping (Alias set); wherever a model is named, an alias resolves
	// to a copy of it.
	Models map[string]*LLM `json:",omitempty"`
	// Budget bounds what the session spends on LLM requests; nil: no bound.
	Budget *Budget `json:",omitempty"`
	// Dir is `dir:` as written: where the agents' commands run; "" the
	// spec's folder.
	Dir string `json:",omitempty"`
	// WorkDir is the folder the team's commands run in unless an agent
	// names its own (tools, say): Dir resolved against the spec's folder,
	// absolute. Not in JSON: it depends on the machine.
	WorkDir  string       `json:"-"`
	Agents   []*Agent     // file order
	Tasks    []*Task      // file order: task i has id i
	Warnings []Diagnostic // unsupported keys that were ignored, and the like
	// Notes are information, not problems: a run says them as notes, which
	// --quiet leaves out (a PraisonAI schedule's crontab line, whose cron
	// job would otherwise mail it every time).
	Notes []Diagnostic `json:",omitempty"`
	Tools []*Tool      `json:",omitempty"` // the top-level tools, file order
	Allow []string     `json:",omitempty"` // dangerous built-ins the spec opts in to (execute_command)
	MCP   []*MCPServer `json:",omitempty"` // mcp.servers, file order
	// Workdir is the folder of the built-in file tools, relative to the
	// spec's folder; "" is that folder itself.
	Workdir string `json:",omitempty"`
	// Placeholders are the {name}s the rendered texts hold, where written:
	// whether each is defined depends on --var, so they are checked when
	// the variables are known (UndefinedPlaceholders).
	Placeholders []PlaceholderUse `json:"-"`
	// PraisonTemplates: the texts follow PraisonAI's templating: {a.b}
	// reads field b of the mapping a (Team.Render), and {today}, {date} and
	// its other built-in variables are filled when a run starts
	// (InitialState). A native file's {a.b} and {today} stay as written.
	PraisonTemplates bool `json:",omitempty"`
	// PraisonSteps: a PraisonAI steps: file, whose texts only {{name}}
	// placeholders fill, as PraisonAI's workflow substitutes them: a
	// {name} or ${name} (a shell line's) is text.
	PraisonSteps bool `json:",omitempty"`
	// FillTopic: a steps: file's top-level topic: holds a {{NAME}}, which
	// PraisonAI fills from the variables (and --var) as it loads the
	// file: {{topic}} reads it filled (InitialState).
	FillTopic bool `json:",omitempty"`
	// InputPlaceholders are the {{NAME}}s (built-ins aside) of a steps:
	// file's input, which PraisonAI leaves in it: a step that reads the
	// input gets them as written (UndefinedPlaceholders warns).
	InputPlaceholders []PlaceholderUse `json:"-"`
	// UnsetLists are the foreach lists (over) that neither the file's
	// variables nor an output_variable set, where written: --var may give
	// them, so they are checked when the variables are known
	// (UndefinedPlaceholders).
	UnsetLists []PlaceholderUse `json:"-"`
	// madeNames are, for the variables teamrun made for a steps file's
	// step outputs of a NAME that is no variable's name (madeVars), the
	// {{NAME_output}} (or {{STEP_loop_outputs}}) a text writes for them,
	// which the placeholder check lists in their place.
	madeNames map[string]string
	// sharedNames are the {{NAME_output}}s (and {{STEP_loop_outputs}}s)
	// that several step names come out as once _ replaces what a variable
	// name cannot hold, so none is read: the placeholders to write instead.
	sharedNames map[string][]string
	// reads is the team's VariableReads, made once with its tasks (Parse,
	// ExpandWith) when one sets a variable: the parse's warnings, the
	// keys and the schedule all ask it. A copy of the team makes its own.
	reads *VariableReads
}

// PlaceholderUse is one {name} (or PraisonAI {{name}}) in a text teamrun
// renders, at the place it is written.
type PlaceholderUse struct {
	Name string
	// Written is the placeholder as the text writes it ({{ name }}),
	// for messages.
	Written string
	Pos     Pos
	Path    string // the key holding the text, e.g. tasks.write.description
	// Over is, for a field of a foreach item ({{item.title}}), the list
	// the items come from, whose items are checked for the field.
	Over string
	// Agent says the text is an agent's: the system message of every
	// task it does, which no task's previous output reaches.
	Agent bool
	// Unwritten says the text is one teamrun gives a PraisonAI step the
	// file writes no action for, as PraisonAI gives it.
	Unwritten bool
	// Else is, for the input a step without action is given
	// (taskMore.noInput), what it is sent instead when nothing defines
	// input.
	Else string
	// Runs is, for the text of a PraisonAI loop whose items after the
	// first read the item before (Foreach.Chain), "item", and for a
	// repeat's, "iteration": its first one is the one with none before it.
	Runs string
}

// LLM says which model an LLM agent talks to and how.
type LLM struct {
	Model       string   `json:"model"`
	BaseURL     string   `json:"base_url,omitempty"`
	APIKeyEnv   string   `json:"api_key_env,omitempty"` // the variable's name, never the key
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Timeout     Duration `json:"timeout,omitempty"` // one request
	// Stream asks for the answer as server-sent events: true always,
	// false never, nil (auto) when the run shows live progress. IdleTimeout
	// is how long such a stream may be silent. Neither changes the answer,
	// so neither is part of the agent's definition (AgentKey).
	Stream      *bool    `json:"stream,omitempty"`
	IdleTimeout Duration `json:"idle_timeout,omitempty"`
	Pos         Pos      `json:"-"`
	// BaseURLAt is where the spec writes BaseURL, as messages name it:
	// the key as written (a PraisonAI file's api_base, LiteLLM's name)
	// and file:line:column; "" when no spec wrote it (config.yml).
	BaseURLAt string `json:"-"`
	// Price is what the provider charges; nil: unknown. It changes no
	// answer, so it is no part of the agent's definition (AgentKey).
	Price *Price `json:"price,omitempty"`
	// Alias is the models: entry this llm came from ("" when none), and
	// AliasPos where that entry is defined: messages about the model
	// point there, where it can be fixed.
	Alias    string `json:"alias,omitempty"`
	AliasPos Pos    `json:"-"`
}

// Budget is a session's spending limit; a zero field sets no limit.
type Budget struct {
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	MaxTokens  int     `json:"max_tokens,omitempty"`
	Pos        Pos     `json:"-"`
	// Key is the key that set MaxCostUSD when it is not budget.max_cost_usd
	// (a PraisonAI scheduler's schedule.max_cost), for messages.
	Key string `json:"-"`
}

// CostKey is the key that sets the budget's dollars, as messages name it.
func (b *Budget) CostKey() string {
	if b.Key != "" {
		return b.Key
	}
	return "budget.max_cost_usd"
}

// Price is a model's price in US dollars per million tokens. Cached
// prompt tokens cost CachedInput when it is set, else Input: without a
// discount the provider bills them as any prompt token.
//
// Each is at most MaxPrice.
type Price struct {
	Input       float64  `json:"input"`
	CachedInput *float64 `json:"cached_input,omitempty"`
	Output      float64  `json:"output"`
}

// MaxPrice bounds a price, in dollars per million tokens: a dollar a token,
// far above any model's, and low enough that no count of tokens costs more
// than a float64 holds (a cost of +Inf cannot be recorded). The schema's
// price maximum is the same.
const MaxPrice = 1_000_000

// MaxRetries bounds a task's max_retries, in every format; the schema's
// maximum is the same, so that an editor refuses what validate does.
const MaxRetries = 1000

// MaxBudget bounds a budget's max_cost_usd and max_tokens (2^53-1, the
// schema's maximum): past it a float64 no longer counts whole tokens, and
// a cost past it is no budget.
const MaxBudget = 1<<53 - 1

// AgentKind tells the kinds of agent apart: the three a file declares, and teamrun's own.
type AgentKind int

const (
	LLMAgent AgentKind = iota
	CommandAgent
	Human
	// JoinAgent is teamrun's own: it joins a foreach task's instance
	// results into one JSON array. Expand adds it; no file declares it.
	JoinAgent
	// RouteAgent is teamrun's own too: it picks the route of a PraisonAI
	// route or if step (Agent.Decides), in the runner's process, so that
	// it reads whole values and decides alike on every machine.
	RouteAgent
)

func (k AgentKind) String() string {
	switch k {
	case LLMAgent:
		return "llm"
	case CommandAgent:
		return "command"
	case Human:
		return "human"
	case JoinAgent:
		return "join"
	case RouteAgent:
		return "route"
	}
	return fmt.Sprintf("AgentKind(%d)", int(k))
}

// Agent is a member of the team. For an LLM agent LLM is resolved: its own,
// else the team's. A command agent has exactly one of Shell and Command.
type Agent struct {
	Name         string
	Kind         AgentKind
	Role         string
	Goal         string
	Backstory    string
	Instructions string
	LLM          *LLM
	Memory       bool
	Shell        string   // run by /bin/sh -c
	Command      []string // argv
	Timeout      time.Duration
	// Dir is the folder its commands run in, absolute: its `dir:`, else the
	// team's, relative to the spec's folder; without either the spec's
	// folder (as go-task runs in the Taskfile's). "" (an Agent not made by
	// Load) is the process's own folder. Not in JSON: it depends on the
	// machine.
	Dir string `json:"-"`
	// dir is the `dir:` that applies as written (the agent's, else the
	// team's): it is part of the agent's definition, the absolute folder
	// (which moves with the checkout) is not.
	dir     string
	dirPos  Pos
	dirTeam bool // dir is the team's
	Pos     Pos
	// path is where the agent is declared, as errors name it
	// (agents.NAME, roles.NAME, roles[0]); see KeyPath.
	path string
	// made: teamrun made it for a PraisonAI step (a route's or an if's
	// agent, a join, a pass-on command); no task of the file may name it.
	made bool
	// llmDefault: LLM is PraisonAI's default model, which the file did not
	// name: the project config's llm comes first (FillLLM).
	llmDefault bool
	// Decides is what a RouteAgent decides by; nil for the other kinds.
	Decides *Decision `json:",omitempty"`
	// Tools are what an LLM agent may call, resolved; MaxTurns bounds its
	// tool loop (0: DefaultMaxTurns), MaxToolCalls the calls the loop
	// runs in one attempt (0: DefaultMaxToolCalls).
	Tools        []*Tool `json:",omitempty"`
	MaxTurns     int     `json:",omitempty"`
	MaxToolCalls int     `json:",omitempty"`
	// MCP are the servers whose (allowed) tools the agent also gets.
	MCP []*MCPServer `json:",omitempty"`
}

// Task is one unit of work. Description and ExpectedOutput hold the text as
// written, placeholders included; Render fills them in.
type Task struct {
	Name           string
	Description    string
	ExpectedOutput string
	Agent          string
	Context        []string // as written; see Team.ContextOf for the effective one
	HasContext     bool     // `context` was given, even empty
	// AcceptTruncated is on_truncated: accept: an LLM answer cut at
	// max_tokens is the result instead of a failed attempt. Beside
	// HasContext: apart, each took 8 bytes.
	AcceptTruncated bool
	MaxRetries      int
	RetryDelay      time.Duration
	Timeout         time.Duration
	OutputVariable  string
	Pos             Pos

	// Foreach runs the task once per item of a list (Team.Expand); nil:
	// once.
	Foreach *Foreach `json:",omitempty"`
	// Repeat runs the task again, fed its previous output, until its
	// result says so (Team.Expand); nil: once.
	Repeat *Repeat `json:",omitempty"`
	// Expansion is, on an instance, iteration or join that Team.Expand
	// made, what made it; nil on a task as declared.
	Expansion *Expansion `json:",omitempty"`

	// more holds what few tasks have (nil: none), apart so that a task is
	// 192 bytes, not 256, 288 or 320 (size classes of Go's allocator; a
	// 10,000-task spec's tasks live through the run, and a restore
	// collects nothing while it loads). Set as the spec loads (setMore);
	// a copy of the task shares it.
	more *taskMore
}

// taskMore is what few tasks have: an output schema, a route_on, a path
// other than tasks.NAME, options, a condition, an output file.
type taskMore struct {
	options    []string // Options
	condition  []Route  // Condition
	outputFile string   // OutputFile

	// outputSchema is output_schema as JSON values (nil: none).
	outputSchema any
	schema       *jsonschema.Schema // outputSchema compiled
	routeOn      string
	// path is where the task is declared, as errors name it, when not
	// tasks.NAME (roles.R.tasks.NAME, steps[0]); see KeyPath.
	path string
	// written are, for each of a steps file's task's texts, by TaskText
	// (nil: as bound), the placeholders the bindings made read a
	// variable of teamrun's ({{repeat_iterations}} the count of the
	// repeat before it) as the file spells them: RenderTask sends one as
	// written when the variable has no value as the task runs.
	written []spellings
	// noInput is, for a PraisonAI step without action whose description
	// is the workflow's input ({{input}}), the description it has when
	// nothing defines input (textIn): the input may come from --var,
	// which the spec does not know when it loads.
	noInput string
}

// spellings are how the file spells the placeholders of a text that read
// a variable, by that variable, in the text's order: the i-th that reads
// v is written as [v][i] ("", or none: as the text writes it now).
type spellings map[string][]string

// A TaskText is one of a task's texts that are filled as it runs
// (RenderTask), in boundTexts' order.
type TaskText uint8

const (
	DescriptionText TaskText = iota
	ExpectedOutputText
	OutputFileText
)

// Text is t's text w.
func (t *Task) Text(w TaskText) string {
	switch w {
	case DescriptionText:
		return t.Description
	case ExpectedOutputText:
		return t.ExpectedOutput
	}
	return t.OutputFile()
}

// textIn is t's text w in team as it renders against state: a step given
// the workflow's input where nothing defines input (Team.defines: not the
// state, nor the file, nor any task's output_variable) has its noInput
// text instead. TaskDefs (the starting state) and RenderTask (the live
// state, where an earlier step's output_variable may have set input) both
// read a text through it and get the same choice, so the task's key, its
// record and what it is sent agree.
func (t *Task) textIn(team *Team, w TaskText, state map[string]any) string {
	if !t.takesInput(w) {
		return t.Text(w) // no choice: nothing to look up
	}
	return t.textChosen(w, team.defines(state, "input"))
}

// textChosen is t's text w, its noInput text instead where it takes the
// workflow's input and hasInput says nothing defines it.
func (t *Task) textChosen(w TaskText, hasInput bool) string {
	if t.takesInput(w) && !hasInput {
		return t.more.noInput
	}
	return t.Text(w)
}

// takesInput says whether t's text w is the workflow's input with another
// text where there is none (taskMore.noInput).
func (t *Task) takesInput(w TaskText) bool {
	return w == DescriptionText && t.more != nil && t.more.noInput != ""
}

// setNoInput sets the description t has where nothing defines input
// (taskMore.noInput); "" sets nothing.
func (t *Task) setNoInput(text string) {
	if text != "" {
		t.setMore(func(m *taskMore) { m.noInput = text })
	}
}

// spellingsOf are the written spellings of t's text w; nil when it has
// none.
func (t *Task) spellingsOf(w TaskText) spellings {
	if t.more == nil || int(w) >= len(t.more.written) {
		return nil
	}
	return t.more.written[w]
}

// Options are a human task's allowed decisions (nil: any).
func (t *Task) Options() []string {
	if t.more == nil {
		return nil
	}
	return t.more.options
}

// Condition is the task's routing on its trimmed result, in file order
// (nil: none).
func (t *Task) Condition() []Route {
	if t.more == nil {
		return nil
	}
	return t.more.condition
}

// OutputFile is output_file as written: the result is also written
// there, relative to the spec's folder ("": none).
func (t *Task) OutputFile() string {
	if t.more == nil {
		return ""
	}
	return t.more.outputFile
}

// SetOptions sets Options, on t alone (a copy of t keeps its own).
func (t *Task) SetOptions(o []string) { t.setMore(func(m *taskMore) { m.options = o }) }

// SetCondition sets Condition, on t alone.
func (t *Task) SetCondition(c []Route) { t.setMore(func(m *taskMore) { m.condition = c }) }

// SetOutputFile sets OutputFile, on t alone; an unchanged one makes no
// taskMore.
func (t *Task) SetOutputFile(f string) {
	if f != t.OutputFile() {
		t.setMore(func(m *taskMore) { m.outputFile = f })
	}
}

// OutputSchema is output_schema as JSON values (nil: none): the result
// must be JSON that fits it (CheckOutput); LLM agents also ask for it.
func (t *Task) OutputSchema() any {
	if t.more == nil {
		return nil
	}
	return t.more.outputSchema
}

// RouteOn is route_on, a JSON pointer ("": none): Condition compares the
// value there of the result (RouteKey).
func (t *Task) RouteOn() string {
	if t.more == nil {
		return ""
	}
	return t.more.routeOn
}

// schema is OutputSchema compiled; nil: none.
func (t *Task) schema() *jsonschema.Schema {
	if t.more == nil {
		return nil
	}
	return t.more.schema
}

// setMore changes t's taskMore, a copy of it: a copy of t may share it.
func (t *Task) setMore(f func(*taskMore)) {
	var m taskMore
	if t.more != nil {
		m = *t.more
	}
	f(&m)
	t.more = &m
}

// Expansion is what Team.Expand records on the tasks it makes. It lives
// behind a pointer because most tasks are not made by it: inline, its
// fields took 112 of every task's 392 bytes.
type Expansion struct {
	// ForeachOf is, on an instance or the join of an expanded task, the
	// name of the task as declared.
	ForeachOf string `json:",omitempty"`
	// After is, on the instances and join of a foreach over a task's
	// output_variable, that task: they wait for it, whatever they read.
	After []string `json:",omitempty"`
	// ExpandsWhen is, on the join of such a foreach whose list is not
	// known yet, the task whose finish expands it; JoinError, when that
	// task's output is not a list, why the join fails.
	ExpandsWhen string `json:",omitempty"`
	JoinError   string `json:",omitempty"`
	// RepeatOf is, on an iteration or the join of an expanded repeat, the
	// name of the task as declared; Iteration numbers an iteration from 1
	// (0 on the join), and Until is, from the second iteration on, the text
	// whose presence in the previous iteration's result skips it.
	RepeatOf  string `json:",omitempty"`
	Iteration int    `json:",omitempty"`
	Until     string `json:",omitempty"`
	// Counts is set on the task that counts a repeat's iterations that
	// ran (Repeat.Count); RepeatOf names the repeat.
	Counts bool `json:",omitempty"`
	// Item is, on a foreach instance, its item, bound to the foreach's
	// `as` name As (and its position Index to the index name IndexAs,
	// when there is one): Bind makes the mapping. Three fields, not a map
	// of each instance's own: a 200,000-item foreach made 200,000 maps
	// of ~300 bytes, which a plan held all at once.
	Item        any    `json:"-"`
	As, IndexAs string `json:"-"`
	Index       int    `json:"-"`
	// BindInKey is set when the instance's texts do not name its item:
	// its key then holds Bind itself, so that an instance whose item
	// changed is never restored with another item's result. (When the
	// texts name it, the rendered texts already tell the items apart, and
	// the keys stay those of the sessions recorded before.)
	BindInKey bool `json:"-"`
}

// Bind is, on a foreach instance, its item under the foreach's `as` name
// (and its position under the index name, when there is one): a command
// reads them as TEAMRUN_VAR_<NAME>, which is the only way it learns its
// item when its description does not name it. The instance's texts are
// the declared task's: they render against its Scope, the item filled in
// the same pass as the shared state's values, so an item is never filled
// again. Not serialized: the key holds it (BindInKey). nil on any other
// task.
func (x Expansion) Bind() map[string]any {
	if x.As == "" {
		return nil
	}
	m := map[string]any{x.As: x.Item}
	if x.IndexAs != "" {
		m[x.IndexAs] = x.Index // after the item, as PraisonAI sets them
	}
	return m
}

// Binds reports whether name is bound on the task (Bind), without making
// the mapping.
func (x Expansion) Binds(name string) bool {
	return x.As != "" && (name == x.As || name == x.IndexAs)
}

// Scope is what t's texts render against: state, with a foreach
// instance's item (Expansion.Bind) over it, in a map of its own; state
// itself for any other task. Each text is rendered once against it: an
// item is data, and a "{name}" in it is never filled.
func (t *Task) Scope(state map[string]any) map[string]any {
	o := overlay{state: state} // TaskDefs keeps one for every task
	return o.scope(t)
}

// Expanded is what made t (Task.Expansion), the zero Expansion for a task
// as declared.
func (t *Task) Expanded() Expansion {
	if t.Expansion == nil {
		return Expansion{}
	}
	return *t.Expansion
}

// Route sends a task's flow to Next when its trimmed result equals Value.
type Route struct {
	Value string
	Next  []string
}

// Duration is a time.Duration that marshals as Go's duration text.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// Diagnostic is one error or warning about a spec, tied to its source.
type Diagnostic struct {
	File    string
	Line    int
	Column  int
	Path    string // key path such as tasks.count.max_retries; may be empty
	Message string
}

func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Column)
	}
	b.WriteString(": ")
	if d.Path != "" {
		b.WriteString(QuotePath(d.Path))
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// QuotePath is a key path as messages print it: as it is, unless a key
// in it holds a newline, a tab or another character that does not print,
// which would break the message's line or hide where the key ends, or
// starts or ends with a space; then Go-quoted, escapes and all.
func QuotePath(path string) string {
	if strings.IndexFunc(path, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 && !spaceAtKeyEdge(path) {
		return path
	}
	return strconv.Quote(path)
}

// spaceAtKeyEdge says whether a key of path starts or ends with a space
// (a quoted "action "), which the path as it is would not show.
func spaceAtKeyEdge(path string) bool {
	return strings.HasPrefix(path, " ") || strings.HasSuffix(path, " ") ||
		strings.Contains(path, " .") || strings.Contains(path, ". ") || strings.Contains(path, " [")
}

// ErrorList is every problem found in one spec, in source order.
type ErrorList []Diagnostic

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Merge is l with more, in line order, each once.
func (l ErrorList) Merge(more ErrorList) ErrorList {
	if len(more) == 0 {
		return l
	}
	return sortDiags(append(slices.Clone(l), more...))
}

// Refusal is an invalid spec whose loading also produced warnings: they
// often explain the error (a key ignored, then "no tasks"), so they travel
// with it. errors.As still finds the ErrorList.
type Refusal struct {
	Errors   ErrorList
	Warnings []Diagnostic
	// Lists are the errors of the foreach lists the file's variables give
	// (listErrors): the file's too, but --var may give a list in their
	// place, so only validate, which takes no --var, says them.
	Lists ErrorList
}

func (r *Refusal) Error() string { return r.Errors.Error() }
func (r *Refusal) Unwrap() error { return r.Errors }

// WarningsOf returns the warnings that came with a refused spec, if any.
func WarningsOf(err error) []Diagnostic {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Warnings
	}
	return nil
}

// ListErrorsOf returns the errors of the foreach lists of a refused spec
// (Refusal.Lists), if any.
func ListErrorsOf(err error) ErrorList {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Lists
	}
	return nil
}

// TaskDef is a task as a checkpoint sees it: placeholders rendered against
// the initial shared state, its effective context resolved and its per-task
// key computed. Team.TaskDefs builds them; the restore rules compare them.
type TaskDef struct {
	ID             int      `json:"id"`
	Name           string   `json:"name"`
	Agent          string   `json:"agent"`
	Description    string   `json:"description"`
	ExpectedOutput string   `json:"expected_output"`
	Context        []string `json:"context,omitempty"` // effective: see Team.ContextOf
	AgentKey       string   `json:"agent_key"`         // hash of the agent's full definition, never a secret
	Key            string   `json:"key"`               // own fields + AgentKey + context tasks' Keys
	// OwnKey is Key without the context tasks' keys (their names stay): it
	// changes only with the task's own definition or its agent's, so a task
	// whose upstream changed can still be reused when what it reads comes
	// out the same (the early cut-off).
	OwnKey string `json:"-"`
	// Expansion is what made the task (Task.Expansion), shared with it;
	// nil on a task as declared. ExpandedFrom, After and ItemInKey read it:
	// as fields of their own they were 48 of a def's 192 bytes, and a
	// restore makes a def a task while it loads, collecting nothing.
	Expansion *Expansion `json:"-"`
}

// ExpandedFrom is, for a foreach instance, a repeat iteration or their
// join (Task.ForeachOf, Task.RepeatOf), the task as declared: the
// fingerprint, over the declared tasks, does not see its item or its
// number of iterations, so a restore compares its own definition.
func (d *TaskDef) ExpandedFrom() string {
	if d.Expansion == nil {
		return ""
	}
	return d.Expansion.ForeachOf + d.Expansion.RepeatOf
}

// After is, on the instances and join of a foreach over a task's
// output_variable, that task (Expansion.After): they are made from its
// recorded output.
func (d *TaskDef) After() []string {
	if d.Expansion == nil {
		return nil
	}
	return d.Expansion.After
}

// WaitsFor is, on the join of a foreach whose list a producer that has
// not completed makes (Expansion.ExpandsWhen), that producer; "" for any
// other task. Until it expands, the join's description and context stand
// for the instances to come: they are no definition to compare with the
// recorded join's.
func (d *TaskDef) WaitsFor() string {
	if d.Expansion == nil {
		return ""
	}
	return d.Expansion.waitsFor(d.Name)
}

// WaitsFor is TaskDef.WaitsFor of t.
func (t *Task) WaitsFor() string {
	if t.Expansion == nil {
		return ""
	}
	return t.Expansion.waitsFor(t.Name)
}

// waitsFor is the producer the join named name waits for, when x is the
// expansion of that join and the producer has not completed; else "".
func (x *Expansion) waitsFor(name string) string {
	if x.ForeachOf != name {
		return ""
	}
	return x.ExpandsWhen
}

// ItemInKey is set on a foreach instance whose texts do not name its item
// (Expansion.BindInKey): only its OwnKey tells its item apart.
func (d *TaskDef) ItemInKey() bool {
	return d.Expansion != nil && d.Expansion.BindInKey
}

// MarshalText writes d as Go's duration text, such as "1m30s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads Go's duration text.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// FillLLM gives l to the LLM agents that have no llm of their own nor the
// team's: the project's config.yml default. It comes before PraisonAI's
// default model, which stands only where no config names one.
func (t *Team) FillLLM(l LLM) {
	if l.Model == "" {
		return
	}
	// config.yml may name one of the spec's aliases; what it sets
	// besides overrides the alias, as in the spec.
	if a, ok := t.Models[l.Model]; ok {
		c := *a
		if l.BaseURL != "" {
			c.BaseURL, c.BaseURLAt = l.BaseURL, l.BaseURLAt
		}
		if l.APIKeyEnv != "" {
			c.APIKeyEnv = l.APIKeyEnv
		}
		c.Pos = l.Pos
		l = c
	}
	for _, a := range t.Agents {
		if a.Kind == LLMAgent && (a.LLM == nil || a.llmDefault) {
			c := l
			a.LLM, a.llmDefault = &c, false
		}
	}
}

// Made says teamrun made the agent for a PraisonAI step (a route's, an
// if's, a join, a command that passes an output on): no file declares it,
// and it reads no variable.
func (a *Agent) Made() bool { return a.made }

// KeyPath is the key path errors name the agent by: where it is declared
// (roles.NAME in a PraisonAI file), else agents.NAME.
func (a *Agent) KeyPath() string {
	if a.path != "" {
		return a.path
	}
	return "agents." + a.Name
}

// KeyPath is the key path errors name the task by: where the file
// declares it (steps[0] for a PraisonAI step), else tasks.NAME. An
// instance or iteration that Team.Expand made has its task's.
func (t *Task) KeyPath() string {
	if t.more != nil && t.more.path != "" {
		return t.more.path
	}
	x := t.Expanded()
	return "tasks." + cmp.Or(x.ForeachOf, x.RepeatOf, t.Name)
}

// WithoutModel lists the LLM agents that some task uses but that have no
// model, even after FillLLM: run refuses them and validate reports them.
// configPath is where the user could set a default (llm.model).
func (t *Team) WithoutModel(configPath string) []Diagnostic {
	used := t.UsedAgents()
	var out []Diagnostic
	for _, a := range t.Agents {
		if a.Kind != LLMAgent || !used[a.Name] || (a.LLM != nil && a.LLM.Model != "") {
			continue
		}
		out = append(out, Diagnostic{File: t.File, Line: a.Pos.Line, Column: a.Pos.Column, Path: a.KeyPath(),
			Message: "no model: give it llm (or shell or command for a command agent), set the team's llm, or set llm.model in " + configPath})
	}
	return out
}
