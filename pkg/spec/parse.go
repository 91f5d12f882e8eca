package spec

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/teamrun/teamrun/internal/fserr"
)

var (
	// nameRE is the schema's $defs.name pattern, which names in every
	// format (PraisonAI's roles and steps too) follow: teamrun and an
	// editor that reads the schema hold a name to one rule.
	nameRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(schemaDefPattern("name")) })
	durationRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`) })
)

// Load reads and parses the spec at path. A read error names the file; an
// invalid spec is an ErrorList.
func Load(path string) (*Team, error) {
	if path == "" { // `teamrun run "$SPEC"`, SPEC unset
		return nil, ErrEmptyPath
	}
	data, err := readSpec(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, fserr.Bare(err))
	}
	return Parse(path, data)
}

// MaxSpecBytes bounds what Load reads: above any team written by hand or
// made (380,000 tasks take 50 MB), and a stop to reading /dev/zero, say.
const MaxSpecBytes = 64 << 20

var errSpecTooLarge = fmt.Errorf("it is over %d MiB, more than any team file: check the path", MaxSpecBytes>>20)

func readSpec(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if fi.Size() > MaxSpecBytes {
			return nil, errSpecTooLarge
		}
		return os.ReadFile(path)
	}
	f, err := os.Open(path) // a pipe or a device: read it up to the bound
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f)
}

// readBounded reads r up to MaxSpecBytes.
func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSpecBytes+1))
	if err == nil && len(data) > MaxSpecBytes {
		return nil, errSpecTooLarge
	}
	return data, err
}

// LoadStdin reads and parses a spec from stdin (the FILE `-` of validate
// and fingerprint), named "stdin" in messages.
func LoadStdin(stdin io.Reader) (*Team, error) {
	data, err := readBounded(stdin)
	if err != nil {
		return nil, fmt.Errorf("cannot read stdin: %w", err)
	}
	return Parse("stdin", data)
}

// Parse loads a team from data, native or PraisonAI. file names the source
// in messages. When the spec is invalid the error is an ErrorList holding
// every problem found, in source order.
func Parse(file string, data []byte) (*Team, error) {
	data, bad := specText(file, data)
	if bad != nil {
		return nil, ErrorList{*bad}
	}
	root, diags := parseTree(file, data)
	if len(diags) > 0 && root == nil {
		return nil, diags
	}
	if root == nil || root.isNull() {
		return nil, ErrorList{{File: file, Line: 1, Column: 1, Message: "the file is empty: expected a team with agents and tasks (see `teamrun schema`)"}}
	}
	if !root.isMap() {
		if d := agentList(file, root); d != nil {
			return nil, ErrorList{*d}
		}
		return nil, ErrorList{{File: file, Line: root.pos().Line, Column: root.pos().Column,
			Message: fmt.Sprintf("expected a mapping with agents and tasks at the top, got %s", root.describe())}}
	}
	if d := notATeam(file, root); d != nil {
		return nil, ErrorList{*d}
	}
	b := &builder{file: file, team: &Team{File: file}, taskAt: map[string]int{}, agents: map[string]bool{}, agentSrc: map[*Agent]*tree{}}
	b.diags = append(b.diags, diags...)
	if isPraison(root) {
		b.praison(root)
	} else {
		b.diags = append(b.diags, validateSchema(file, root)...)
		b.native(root)
	}
	b.checkOutputFiles()
	b.team.Warnings = groupWarnings(sortDiags(b.team.Warnings))
	if len(b.diags) > 0 {
		// A file with a step teamrun cannot run is refused as a file with
		// a feature it cannot run is (praisonFatal): its errors, all of
		// them, without the warnings about a team that will not run as
		// written anyway.
		r := &Refusal{Errors: sortDiags(b.diags), Lists: b.listErrors()}
		if b.refusedSteps == nil {
			r.Warnings = b.team.Warnings
		}
		if len(r.Warnings) == 0 && len(r.Lists) == 0 {
			return nil, r.Errors
		}
		return nil, r
	}
	base := filepath.Dir(file)
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	b.team.WorkDir = workDir(base, b.team.Dir)
	for _, a := range b.team.Agents {
		a.Dir = workDir(base, a.dir)
	}
	for i, tk := range b.team.Tasks {
		// A task's path is kept where it is not tasks.NAME, which
		// KeyPath says of a task without one.
		if i < len(b.tasks) && b.tasks[i] != nil {
			if p := b.tasks[i].path; p != "" && !(strings.HasPrefix(p, "tasks.") && p[len("tasks."):] == tk.Name) {
				tk.setMore(func(m *taskMore) { m.path = p })
			}
		}
	}
	b.collectPlaceholders(data)
	return b.team, nil
}

// workDir is dir (as written in the spec) resolved against the spec's
// folder base; "" is base itself.
func workDir(base, dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(base, dir)
}

func sortDiags[L ~[]Diagnostic](l L) L {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Column < l[j].Column
	})
	out := l[:0]
	seen := map[string]bool{}
	for _, d := range l {
		if k := d.String(); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// builder turns a tree into a Team, collecting problems instead of stopping
// at the first. It tolerates values of the wrong type: the schema check has
// already reported them.
type builder struct {
	file  string
	team  *Team
	diags ErrorList
	tasks []*tree // the source of each task, parallel to team.Tasks
	// agentSrc is the source of each agent declared in the file, for the
	// places of its texts' placeholders.
	agentSrc map[*Agent]*tree
	taskAt   map[string]int // task name -> index, for PraisonAI duplicates
	agents   map[string]bool
	// malformed are the PraisonAI agents declared as something else than
	// a mapping, reported once there, not again where a step names them.
	malformed map[string]bool
	vars      *tree // the native variables mapping, for positions
	// schedule is a PraisonAI scheduler file's schedule: value.
	schedule *tree
	// steps are a PraisonAI file's steps, which PraisonAI runs instead of
	// its roles' tasks.
	steps *tree
	// praisonMark is what makes the file a PraisonAI one (praisonMark),
	// for the messages about what the native format has and it has not.
	praisonMark string
	// stepOutputName is the name PraisonAI gives a step's output when the
	// step has no name, by agent, where it is not the agent's key: its
	// name: in an agents: file, its role text in a roles: file.
	stepOutputName map[string]string
	// conditions are the if steps' conditions, by their tasks: compiled
	// once the variables PraisonAI binds as a workflow runs are bound (a
	// condition reads them as any text does).
	conditions map[*Task]ifCond
	// refusedSteps are the PraisonAI steps refused (refuseSteps), by
	// name, reported once there, not again where a context names them.
	refusedSteps map[string]bool
	// userTexts are the PraisonAI tasks whose texts the file writes, not
	// yet bound by bindPreviousOutput.
	userTexts []*Task
	// stepNames says where each step task's name comes from (placeTask).
	stepNames map[string]nameSource
	// badNames are the step names said to be no name (step), of which
	// the names teamrun makes are not said again (madeOfBadName).
	badNames []string
	// givenLists are the foreach tasks whose list the file's variables
	// give (checkForeach), checked by listErrors.
	givenLists []givenList
	// free are the tasks nativeTasks made room for, handed out by task:
	// one list, where each task alone took the 192 bytes of its size
	// class (a 10,000-task spec's tasks live through the run).
	free []Task
}

func (b *builder) errorf(t *tree, p Pos, format string, args ...any) {
	b.diags = append(b.diags, Diagnostic{File: b.file, Line: p.Line, Column: p.Column, Path: t.path, Message: fmt.Sprintf(format, args...)})
}

func (b *builder) warnf(t *tree, p Pos, format string, args ...any) {
	b.team.Warnings = append(b.team.Warnings, Diagnostic{File: b.file, Line: p.Line, Column: p.Column, Path: t.path, Message: fmt.Sprintf(format, args...)})
}

func (b *builder) notef(t *tree, p Pos, format string, args ...any) {
	b.team.Notes = append(b.team.Notes, Diagnostic{File: b.file, Line: p.Line, Column: p.Column, Path: t.path, Message: fmt.Sprintf(format, args...)})
}

// duplicateName is the error of a task or step (kind) named as one at
// line first is: teamrun knows a task by its name alone (context:,
// --rerun, the session's records), so the two need names of their own.
func duplicateName(kind, name string, first int) string {
	return fmt.Sprintf("duplicate %s name %q (first at line %d): give the %ss different names", kind, name, first, kind)
}

func defaultName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func (b *builder) native(root *tree) {
	t := b.team
	t.Name = defaultName(b.file)
	if s, ok := root.get("name").str(); ok && s != "" {
		t.Name = s
	}
	t.Process = Sequential
	if s, ok := root.get("process").str(); ok && (s == string(Workflow)) {
		t.Process = Workflow
	}
	b.variables(root.get("variables"))
	b.models(root.get("models"))
	if bv := root.get("budget"); bv.isMap() {
		bg := &Budget{Pos: bv.kpos()}
		bg.MaxCostUSD, _ = number(bv.get("max_cost_usd"))
		if n, ok := bv.get("max_tokens").val().(int64); ok && n > 0 && n <= MaxBudget {
			bg.MaxTokens = int(n)
		}
		t.Budget = bg
	}
	if l := root.get("llm"); l != nil {
		t.LLM = b.llm(l)
	}
	var teamDirPos Pos
	if d := root.get("dir"); d != nil {
		t.Dir, _ = d.str()
		teamDirPos = d.pos()
	}
	for _, it := range root.get("allow").itemsOrNil() {
		if s, ok := it.str(); ok {
			t.Allow = append(t.Allow, s)
		}
	}
	b.tools(root.get("tools"))
	b.mcpServers(root.get("mcp"), false)
	if ms := root.get("mcp_servers"); ms != nil {
		// DESIGN's spelling of mcp.servers.
		if m := root.get("mcp").get("servers"); m != nil {
			b.errorf(ms, ms.kpos(), "mcp_servers and mcp.servers (line %d) both declare MCP servers: keep one", m.kpos().Line)
		} else {
			b.mcpServerMap(ms, false)
		}
	}
	b.workdir(root.get("workdir"))
	if ag := root.get("agents"); ag.isMap() {
		for i, name := range ag.keys() {
			b.nativeAgent(name, ag.vals()[i])
		}
	}
	for _, a := range t.Agents {
		if a.dir == "" {
			a.dir, a.dirPos, a.dirTeam = t.Dir, teamDirPos, t.Dir != ""
		}
	}
	b.nativeTasks(root.get("tasks"))
	b.check()
	b.checkForeach()
	b.checkRepeat()
	b.checkBudgetPrices(root.get("budget").get("max_cost_usd"))
}

// checkBudgetPrices warns at mv, the key that sets the budget's dollars,
// when they cannot see what an agent spends: a model without a price has
// an unknown cost.
func (b *builder) checkBudgetPrices(mv *tree) {
	if msg, ok := b.team.unpricedWarning(); ok {
		b.warnf(mv, mv.kpos(), "%s", msg)
	}
}

// unpricedWarning says that agents some task uses have no price while
// the budget counts dollars; false when there is nothing to say. Its
// warning's key is the budget's CostKey.
func (t *Team) unpricedWarning() (string, bool) {
	if t.Budget == nil || t.Budget.MaxCostUSD <= 0 {
		return "", false
	}
	used := t.UsedAgents()
	var unpriced []string
	for _, a := range t.Agents {
		if used[a.Name] && a.Kind == LLMAgent && (a.LLM == nil || a.LLM.Price == nil) {
			unpriced = append(unpriced, a.Name)
		}
	}
	if len(unpriced) == 0 {
		return "", false
	}
	fix, also := "llm.price, a models: alias with one, or prices: in .teamrun/config.yml", "; max_tokens does"
	if t.Budget.Key != "" {
		// A PraisonAI scheduler's max_cost: that format has no prices.
		fix, also = "prices: in .teamrun/config.yml; a PraisonAI file sets none", ""
	}
	return fmt.Sprintf("agents %s have no price (%s): their cost is unknown and %s does not count it%s", strings.Join(unpriced, ", "), fix, t.Budget.CostKey(), also), true
}

// checkOutputFiles refuses two tasks writing one output_file: the second
// would silently replace the first's result.
func (b *builder) checkOutputFiles() {
	first := map[string]string{}
	for i, tk := range b.team.Tasks {
		if tk.OutputFile() == "" {
			continue
		}
		var fv *tree
		if i < len(b.tasks) {
			fv = b.tasks[i].get("output_file")
		}
		if fv == nil {
			fv = &tree{at: placeOf(tk.Pos)}
		}
		if strings.ContainsRune(tk.OutputFile(), 0) {
			b.errorf(fv, fv.pos(), "a file name cannot hold a NUL byte")
			continue
		}
		if syn := b.team.syntax(); syn != praisonSteps && len(placeholdersIn(tk.OutputFile(), syn)) > 0 {
			// Kept as written (README: DESIGN fills the texts it names,
			// and PraisonAI a task's output_file never): said, so that a
			// file named "{topic}.md" is no surprise.
			dir, name := filepath.Split(tk.OutputFile())
			where := "in " + filepath.Clean(dir)
			if dir == "" {
				where = "beside the spec"
			}
			b.warnf(fv, fv.pos(), "output_file %q is used as written, a file named %s %s: only a task's description and expected_output and an agent's role, goal, backstory and instructions take {placeholders}", tk.OutputFile(), name, where)
		}
		p := filepath.Clean(tk.OutputFile())
		if other, dup := first[p]; dup {
			b.errorf(fv, fv.pos(), "task %q writes %s too: give each task its own output_file", other, tk.OutputFile())
			continue
		}
		first[p] = tk.Name
	}
}

func (b *builder) variables(v *tree) {
	t := b.team
	b.vars = v
	t.Variables = map[string]any{}
	if !v.isMap() {
		return
	}
	for i, k := range v.keys() {
		if _, dup := t.Variables[k]; !dup {
			t.VarOrder = append(t.VarOrder, k)
		}
		t.Variables[k] = v.vals()[i].plain()
		if why := notJSON(v.vals()[i]); why != "" {
			// DESIGN §4: stored as {}, with a warning. It is {} from the
			// start, so a first run and its --continue see one value.
			b.warnf(v.vals()[i], v.vals()[i].pos(), "%s: JSON cannot hold it, so the checkpoint cannot store it; the run uses {} instead", why)
			t.Variables[k] = map[string]any{}
		}
	}
}

// notJSON says what in a variable's value JSON cannot hold (NaN, an
// infinity, a mapping key that is no string), or "".
func notJSON(v *tree) string {
	if k := v.typed(); len(k) > 0 {
		return fmt.Sprintf("a mapping with keys that are not strings (%s)", strings.Join(k, ", "))
	}
	if f, ok := v.float(); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return fmt.Sprintf("%s is not a number JSON has", v.text)
	}
	for _, c := range append(slices.Clone(v.vals()), v.items()...) {
		if why := notJSON(c); why != "" {
			return why
		}
	}
	return ""
}

// models reads the top-level models: mapping of aliases. An alias names a
// real model: one alias naming another would make a chain whose end is
// hard to see, so it is an error.
func (b *builder) models(v *tree) {
	if !v.isMap() {
		return
	}
	t := b.team
	t.Models = make(map[string]*LLM, len(v.keys()))
	for i, name := range v.keys() {
		if l := b.llmFields(v.vals()[i]); l != nil {
			l.Alias, l.AliasPos = name, v.vals()[i].kpos()
			t.Models[name] = l
		}
	}
	for i, name := range v.keys() {
		l := t.Models[name]
		if l == nil || l.Model == name {
			continue
		}
		if _, ok := t.Models[l.Model]; ok {
			m := v.vals()[i]
			if mt := m.get("model"); mt != nil {
				m = mt
			}
			b.errorf(m, m.pos(), "names the alias %q: an alias names a real model; copy %q's settings here instead", l.Model, l.Model)
		}
	}
}

// llm reads a model name or an llm mapping; a model that names one of the
// models: aliases takes the alias's settings, under the ones the mapping
// sets itself.
func (b *builder) llm(v *tree) *LLM {
	var l *LLM
	if s, ok := v.str(); ok {
		if b.checkNoKey(v) {
			return nil
		}
		l = &LLM{Model: s}
	} else if l = b.llmFields(v); l == nil {
		return nil
	}
	l.Pos = v.pos()
	a, ok := b.team.Models[l.Model]
	if !ok {
		return l
	}
	r := *a
	r.Pos = v.pos()
	if v.isMap() {
		for _, k := range v.keys() {
			switch k {
			case "base_url":
				r.BaseURL, r.BaseURLAt = l.BaseURL, l.BaseURLAt
			case "api_key_env":
				r.APIKeyEnv = l.APIKeyEnv
			case "temperature":
				r.Temperature = l.Temperature
			case "max_tokens":
				r.MaxTokens = l.MaxTokens
			case "timeout":
				r.Timeout = l.Timeout
			case "price":
				r.Price = l.Price
			case "stream":
				r.Stream = l.Stream
			case "idle_timeout":
				r.IdleTimeout = l.IdleTimeout
			}
		}
	}
	return &r
}

// llmFields reads an llm mapping's fields as written.
func (b *builder) llmFields(v *tree) *LLM {
	if !v.isMap() {
		return nil
	}
	l := &LLM{Pos: v.pos()}
	l.Model, _ = v.get("model").str()
	if b.checkNoKey(v.get("model")) {
		l.Model = ""
	}
	l.BaseURL, l.BaseURLAt = b.baseURL(v.get("base_url"))
	l.APIKeyEnv, _ = v.get("api_key_env").str()
	b.checkKeyName(v.get("api_key_env"), false)
	if p := v.get("price"); p.isMap() {
		l.Price = &Price{}
		l.Price.Input, _ = number(p.get("input"))
		l.Price.Output, _ = number(p.get("output"))
		if c, ok := number(p.get("cached_input")); ok {
			l.Price.CachedInput = &c
		}
	}
	if tv := v.get("temperature"); tv != nil {
		switch x := tv.val().(type) {
		case float64:
			l.Temperature = &x
		case int64:
			f := float64(x)
			l.Temperature = &f
		}
	}
	if mt, ok := v.get("max_tokens").val().(int64); ok && mt > 0 && mt < 1<<31 {
		l.MaxTokens = int(mt)
	}
	l.Timeout = Duration(b.duration(v.get("timeout")))
	if s, ok := v.get("stream").val().(bool); ok {
		l.Stream = &s
	}
	l.IdleTimeout = Duration(b.duration(v.get("idle_timeout")))
	return l
}

// baseURL reads a base_url, refused at its key, as written, when it is no
// URL a request can go to (ParseBaseURL): it is in the file, so validate
// and plan refuse it as run would; at is where it is written, as a
// message about its requests names it (LLM.BaseURLAt). "" when unset.
func (b *builder) baseURL(v *tree) (url, at string) {
	s, ok := v.str()
	if !ok || strings.TrimSpace(s) == "" {
		return s, ""
	}
	if _, err := ParseBaseURL(s); err != nil {
		b.errorf(v, v.pos(), "%v", err)
	}
	p := v.pos()
	return s, fmt.Sprintf("%s (%s:%d:%d)", v.path, b.file, p.Line, p.Column)
}

// number reads an integer or a float.
func number(v *tree) (float64, bool) {
	switch x := v.val().(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// duration reads a Go duration the schema has already checked the shape of;
// only values out of range are left to report.
func (b *builder) duration(v *tree) time.Duration {
	s, ok := v.str()
	if !ok || !durationRE().MatchString(s) {
		return 0
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "μs", "µs"))
	if err != nil {
		b.errorf(v, v.pos(), "expected a duration such as 30s, 5m or 1h30m, got %s: it is out of range", v.describe())
		return 0
	}
	return d
}

func (b *builder) nativeAgent(name string, v *tree) {
	a := &Agent{Name: name, Pos: v.kpos(), path: v.path}
	b.agentSrc[a] = v
	if name == HumanAgent {
		b.errorf(v, v.kpos(), "%q is reserved for tasks that wait for a human decision; rename this agent", HumanAgent)
	}
	a.Role, _ = v.get("role").str()
	a.Goal, _ = v.get("goal").str()
	a.Backstory, _ = v.get("backstory").str()
	a.Instructions, _ = v.get("instructions").str()
	if m, ok := v.get("memory").val().(bool); ok {
		a.Memory = m
	}
	a.Timeout = b.duration(v.get("timeout"))
	if d := v.get("dir"); d != nil {
		a.dir, _ = d.str()
		a.dirPos = d.pos()
	}
	var kinds []string
	if l := v.get("llm"); l != nil {
		kinds = append(kinds, "llm")
		a.LLM = b.llm(l)
	}
	if s := v.get("shell"); s != nil {
		kinds = append(kinds, "shell")
		a.Shell, _ = s.str()
	}
	if c := v.get("command"); c.isSeq() {
		kinds = append(kinds, "command")
		for _, it := range c.items() {
			s, _ := it.str()
			a.Command = append(a.Command, s)
		}
		if len(c.items()) > 0 {
			if s, ok := c.items()[0].str(); ok && strings.TrimSpace(s) == "" {
				b.errorf(c.items()[0], c.items()[0].pos(), "the program to run (the first item) is empty: name it, e.g. [wc, -w]")
			}
		}
	} else if c != nil {
		kinds = append(kinds, "command")
	}
	switch {
	case len(kinds) > 1:
		b.errorf(v, v.kpos(), "has %s: an agent is either an LLM agent (llm) or a command agent (shell or command), so keep exactly one", strings.Join(kinds, " and "))
	case len(kinds) == 1 && kinds[0] == "llm":
		a.Kind = LLMAgent
	case len(kinds) == 1:
		a.Kind = CommandAgent
	case b.team.LLM != nil:
		a.Kind = LLMAgent
		cp := *b.team.LLM
		a.LLM = &cp
	default:
		// An LLM agent that names no model: the project's config.yml may
		// supply one (llm.model, DESIGN §5); run refuses it, before anything is
		// written, when none does, and validate reports it.
		a.Kind = LLMAgent
	}
	if mv := v.get("memory"); a.Memory && a.Kind == CommandAgent {
		// A command keeps no conversation: the flag would only run its
		// tasks one at a time and keep the early cut-off from reusing them.
		b.warnf(mv, mv.kpos(), "ignored: memory keeps an LLM agent's conversation, and a command agent has none; remove it")
		a.Memory = false
	}
	if a.Kind == CommandAgent {
		// A command is sent its task's description on stdin and nothing
		// else: a prompt text would be silently dropped, and still be in
		// its key and in what its tasks are said to read.
		for _, f := range []struct {
			key  string
			text *string
		}{{"role", &a.Role}, {"goal", &a.Goal}, {"backstory", &a.Backstory}, {"instructions", &a.Instructions}} {
			if kv := v.get(f.key); kv != nil {
				b.warnf(kv, kv.kpos(), "ignored: a command agent is sent no prompt, only its task's description on stdin; %s is for an LLM agent: remove it", f.key)
				*f.text = ""
			}
		}
	}
	b.agentTools(a, v)
	if n, ok := v.get("max_turns").val().(int64); ok && n > 0 {
		a.MaxTurns = int(min(n, 1000))
	}
	if n, ok := v.get("max_tool_calls").val().(int64); ok && n > 0 {
		a.MaxToolCalls = int(min(n, 10000))
	}
	b.team.Agents = append(b.team.Agents, a)
}

func (b *builder) nativeTasks(v *tree) {
	// Room for every task at once: grown a task at a time, the two lists
	// of a 10,000-task spec allocated 0.6 MB, not 0.16.
	n := len(v.vals()) + len(v.items())
	b.team.Tasks = slices.Grow(b.team.Tasks, n)
	b.tasks = slices.Grow(b.tasks, n)
	b.free = make([]Task, n)
	switch {
	case v.isMap():
		for i, name := range v.keys() {
			// A key is cut from a block of the parse's paths: the task
			// keeps its name to the end, and its name alone, not 32 KiB.
			b.task(strings.Clone(name), v.vals()[i])
		}
	case v.isSeq():
		first := map[string]int{}
		for _, it := range v.items() {
			nameT := it.get("name")
			name, ok := nameT.str()
			if !ok || name == "" {
				continue // the schema reports it
			}
			if line, dup := first[name]; dup {
				b.errorf(nameT, nameT.pos(), "%s", duplicateName("task", name, line))
				continue
			}
			first[name] = nameT.pos().Line
			it.path = "tasks." + name
			b.task(name, it)
		}
	}
}

func (b *builder) task(name string, v *tree) {
	var tk *Task
	if len(b.free) > 0 {
		tk, b.free = &b.free[0], b.free[1:]
	} else {
		tk = new(Task)
	}
	*tk = Task{Name: name, Pos: v.kpos()}
	tk.Description, _ = v.get("description").str()
	tk.ExpectedOutput, _ = v.get("expected_output").str()
	tk.Agent, _ = v.get("agent").str()
	if c := v.get("context"); c != nil {
		tk.HasContext = true
		if s, ok := c.str(); ok {
			tk.Context = []string{s}
		}
		for _, it := range c.items() {
			if s, ok := it.str(); ok {
				tk.Context = append(tk.Context, s)
			}
		}
	}
	if n, ok := v.get("max_retries").val().(int64); ok && n >= 0 {
		if n > MaxRetries {
			b.errorf(v.get("max_retries"), v.get("max_retries").pos(), "expected at most %d, got %s", MaxRetries, v.get("max_retries").describe())
		}
		tk.MaxRetries = int(min(n, MaxRetries))
	} else if f, ok := v.get("max_retries").val().(float64); ok && f > MaxRetries {
		// An integer too large for int64 arrives as a float: still too many.
		b.errorf(v.get("max_retries"), v.get("max_retries").pos(), "expected at most %d, got %s", MaxRetries, v.get("max_retries").describe())
	}
	tk.RetryDelay = b.duration(v.get("retry_delay"))
	tk.Timeout = b.duration(v.get("timeout"))
	tk.OutputVariable, _ = v.get("output_variable").str()
	tk.Foreach = b.foreach(v.get("foreach"))
	tk.Repeat = b.repeat(v.get("repeat"), false)
	if s, _ := v.get("on_truncated").str(); s == "accept" {
		tk.AcceptTruncated = true
	}
	if sv := v.get("output_schema"); sv != nil {
		if _, isBool := sv.val().(bool); sv.isMap() || isBool {
			b.outputSchema(sv, tk)
		}
	}
	if f, _ := v.get("output_file").str(); f != "" {
		tk.SetOutputFile(f)
	}
	if rv := v.get("route_on"); rv != nil {
		on, _ := rv.str()
		tk.setMore(func(m *taskMore) { m.routeOn = on })
		if v.get("condition") == nil {
			b.errorf(rv, rv.kpos(), "route_on says where in the result condition looks: give the task a condition too")
		}
	}
	var options []string
	for _, it := range v.get("options").itemsOrNil() {
		if s, ok := it.str(); ok {
			options = append(options, s)
		}
	}
	if options != nil {
		tk.SetOptions(options)
	}
	if c := v.get("condition"); c.isMap() {
		tk.SetCondition(routesOf(c))
	}
	b.team.Tasks = append(b.team.Tasks, tk)
	b.tasks = append(b.tasks, v)
}

func (t *tree) itemsOrNil() []*tree {
	if t.isSeq() {
		return t.items()
	}
	return nil
}

// check applies the rules a schema cannot express: references resolve,
// context has no cycle, routes and options agree.
func (b *builder) check() {
	t := b.team
	if len(t.Tasks) == 0 {
		return // the schema (or the PraisonAI loader) reports a team without tasks
	}
	index := t.Finder()
	var agentNames []string
	agentSet := make(map[string]bool, len(t.Agents))
	for _, a := range t.Agents {
		if a.made {
			continue // only its step's task runs it, and names it in no key
		}
		agentNames = append(agentNames, a.Name)
		agentSet[a.Name] = true
	}
	// The names, for the suggestions of an unknown one only: made then.
	var names []string
	taskNames := func() []string {
		if names == nil {
			names = make([]string, len(t.Tasks))
			for i, tk := range t.Tasks {
				names[i] = tk.Name
			}
		}
		return names
	}
	first := map[string]*tree{} // for namedTwice, one list at a time
	for i, tk := range t.Tasks {
		src := b.tasks[i]
		// A task's output is a file named after it in TEAMRUN_CONTEXT_DIR;
		// 128 characters (the schema's limit) may exceed NAME_MAX in UTF-8.
		if len(tk.Name) > maxNameBytes {
			at, pos := src, src.kpos()
			if nv := src.get("name"); nv != nil {
				at, pos = nv, nv.pos()
			}
			b.errorf(at, pos, "the task name is %d bytes in UTF-8; a task's output is a file named after it in TEAMRUN_CONTEXT_DIR, where at most %d bytes fit: shorten it", len(tk.Name), maxNameBytes)
		}
		if strings.Contains(tk.Name, ",") && tk.Expansion == nil {
			at, pos := src, src.kpos()
			if nv := src.get("name"); nv != nil {
				at, pos = nv, nv.pos()
			}
			b.warnf(at, pos, "the task name %s has a comma: --rerun, --rerun-from and --keep split their value at commas, so they cannot name it; rename it", quoteShort(tk.Name))
		}
		if av := src.get("agent"); av != nil && tk.Agent != "" && tk.Agent != HumanAgent && !agentSet[tk.Agent] && !b.malformed[tk.Agent] {
			b.errorf(av, av.pos(), "%s", unknownRef("agent", tk.Agent, agentNames, "declare it under agents"))
		}
		if cv := src.get("context"); cv != nil {
			items := cv.items()
			if !cv.isSeq() {
				items = []*tree{cv}
			}
			clear(first)
			for _, it := range items {
				name, ok := it.str()
				if !ok || b.namedTwice(first, it, name, "context", "it is read once, as PraisonAI reads it") {
					continue
				}
				j, found := index.last(name)
				switch {
				case !found && b.refusedSteps[name]:
					// said where the step is refused
				case !found:
					b.errorf(it, it.pos(), "%s", unknownRef("task", name, taskNames(), "context names tasks of this file"))
				case j == i:
					b.errorf(it, it.pos(), "a task cannot read its own output: remove %q from its context", name)
				case j > i && t.Process != Workflow:
					fix := "use process: workflow for a DAG"
					if t.PraisonTemplates {
						// A PraisonAI file's tasks always run in file order.
						fix = "move it before this task, or write the team in the native format, whose process: workflow runs a DAG"
					}
					b.errorf(it, it.pos(), "task %q comes later in the file; in a sequential team a task reads only tasks before it (%s)", name, fix)
				}
			}
		}
		cond := src.get("condition")
		for ri, r := range tk.Condition() {
			rv := cond.vals()[ri]
			items := rv.items()
			if !rv.isSeq() {
				items = []*tree{rv}
			}
			clear(first)
			for _, it := range items {
				name, ok := it.str()
				if !ok || b.namedTwice(first, it, name, "this route", "it runs once") {
					continue
				}
				if j, found := index.last(name); !found && b.refusedSteps[name] {
					continue // said where the step is refused
				} else if !found {
					b.errorf(it, it.pos(), "%s", unknownRef("task", name, taskNames(), "a condition routes to tasks of this file"))
				} else if j == i {
					b.errorf(it, it.pos(), "a task cannot route to itself")
				} else if j < i && t.Process != Workflow {
					b.errorf(it, it.pos(), "task %q comes earlier in the file; in a sequential team it has run before %q decides, so a condition routes only to later tasks (move it after %q, or use process: workflow)", name, tk.Name, tk.Name)
				}
			}
			if len(tk.Options()) > 0 && !contains(tk.Options(), r.Value) {
				b.errorf(rv, rv.kpos(), "%q is not one of the task's options (%s)", r.Value, strings.Join(tk.Options(), ", "))
			}
		}
		routesValid := !slices.ContainsFunc(tk.Condition(), func(r Route) bool { return !contains(tk.Options(), r.Value) })
		if len(tk.Options()) > 0 && len(tk.Condition()) > 0 && routesValid {
			// A decision that no route takes fails the task, again at every
			// --continue: say so before anything runs. (A misspelt route is
			// reported above; the options it leaves uncovered would be noise.)
			for oi, o := range tk.Options() {
				if !slices.ContainsFunc(tk.Condition(), func(r Route) bool { return r.Value == o }) {
					it := src.get("options").items()[oi]
					b.errorf(it, it.pos(), "option %q has no route in condition: deciding it would fail the task; add `%s: []` to route it nowhere", o, o)
				}
			}
		}
		if ov := src.get("options"); ov != nil && len(tk.Options()) > 0 && tk.Agent != HumanAgent && tk.Agent != "" {
			b.errorf(ov, ov.kpos(), "only a task whose agent is %q has options", HumanAgent)
		}
	}
	b.checkCycles(&index)
	if len(b.diags) == 0 {
		b.team.keepReads() // the tasks are final
	}
	b.checkVariableWaits()
	b.checkEnvNames()
}

// checkVariableWaits warns of each task of a workflow whose texts name the
// output_variable of a task it neither waits for nor is waited for by
// (VariableReads.races): it starts as soon as what it waits for is done,
// so whether it sees that task's value or the one before is a race. A
// task the producer waits for runs first, and reads the value before.
func (b *builder) checkVariableWaits() {
	t := b.team
	if t.Process != Workflow || len(b.diags) > 0 {
		return
	}
	reads := t.VariableReads()
	for p, j := range reads.Outputs() {
		v := t.Tasks[j].OutputVariable
		for i, tk := range t.Tasks {
			if !reads.races(p, i) || (tk.Foreach != nil && (tk.Foreach.As == v || tk.Foreach.Index == v)) {
				continue
			}
			if t.ReadsVariable(tk, v) {
				src := b.tasks[i]
				b.warnf(src, src.kpos(), "reads {%s}, which task %s sets (output_variable), but does not wait for it: in a workflow it may start first and see the value before; add %s to its context", v, t.Tasks[j].Name, t.Tasks[j].Name)
			}
		}
	}
	// Two tasks it waits for that set the variable, neither after the
	// other: whichever ends last sets what it reads.
	for i, tk := range t.Tasks {
		if len(reads.outputs) < 2 {
			break
		}
		var byVar map[string][]int
		reads.Sources(i, func(j int) {
			p := slices.Index(reads.outputs, j)
			if v := t.Tasks[j].OutputVariable; reads.after[p].has(i) && t.ReadsVariable(tk, v) {
				if byVar == nil {
					byVar = map[string][]int{}
				}
				byVar[v] = append(byVar[v], j)
			}
		})
		for _, v := range slices.Sorted(maps.Keys(byVar)) {
			if set := byVar[v]; len(set) > 1 && unordered(reads, set) {
				src := b.tasks[i]
				var names []string
				for _, j := range set {
					names = append(names, t.Tasks[j].Name)
				}
				b.warnf(src, src.kpos(), "reads {%s}, which tasks %s all set (output_variable), and none of them waits for another: in a workflow they may end in either order, and the last to end sets what it reads; put one in the other's context", v, strings.Join(names, ", "))
			}
		}
	}
}

// unordered says whether no two of tasks run one after the other
// (VariableReads.After).
func unordered(reads *VariableReads, tasks []int) bool {
	for _, j := range tasks {
		for _, k := range tasks {
			if j != k && reads.After(j, k) {
				return false
			}
		}
	}
	return true
}

// namedTwice says whether the list of task names at hand (first: the names
// so far, by their first mention) named name before, at it, and if so says
// so: a slip, refused in a native file as a duplicate key or task name is.
// A PraisonAI file, which PraisonAI runs reading the task once (agents.py
// de-duplicates the context texts), gets a warning saying what teamrun
// does instead (once), which is the same.
func (b *builder) namedTwice(first map[string]*tree, it *tree, name, list, once string) bool {
	f, dup := first[name]
	if !dup {
		first[name] = it
		return false
	}
	msg := fmt.Sprintf("duplicate task %q in %s (first at line %d, column %d)", name, list, f.pos().Line, f.pos().Column)
	if b.team.PraisonTemplates { // a PraisonAI file
		b.warnf(it, it.pos(), "%s: %s; name it once", msg, once)
	} else {
		b.errorf(it, it.pos(), "%s: name it once", msg)
	}
	return true
}

// checkEnvNames warns when two names of the shared state (variables and
// output_variable) reach command agents as the same TEAMRUN_VAR_<NAME>
// (upper case): the agents would see only one of them.
func (b *builder) checkEnvNames() {
	type named struct {
		name string
		at   *tree
		pos  Pos
	}
	var names []named
	if b.vars.isMap() {
		for i, k := range b.vars.keys() {
			names = append(names, named{k, b.vars.vals()[i], b.vars.vals()[i].kpos()})
		}
	}
	for i, tk := range b.team.Tasks {
		if ov := b.tasks[i].get("output_variable"); ov != nil && tk.OutputVariable != "" {
			names = append(names, named{tk.OutputVariable, ov, ov.pos()})
		}
	}
	first := map[string]string{}
	for _, n := range names {
		env := EnvName(n.name)
		prev, seen := first[env]
		switch {
		case !seen:
			first[env] = n.name
		case prev != n.name:
			b.warnf(n.at, n.pos, "%q and %q both reach command agents as TEAMRUN_VAR_%s, so they see only one of them: rename one", prev, n.name, env)
		}
	}
}

// EnvClash returns the first two of names, in sorted order, that EnvName
// makes one (dry_run and dry~run): a tool given both as TEAMRUN_ARG_<NAME>
// would see only one of them. ok is false when there are none.
func EnvClash(names []string) (a, b string, ok bool) {
	sorted := slices.Sorted(slices.Values(names))
	first := make(map[string]string, len(sorted))
	for _, n := range sorted {
		env := EnvName(n)
		if prev, seen := first[env]; seen && prev != n {
			return prev, n, true
		}
		first[env] = n
	}
	return "", "", false
}

// EnvName is a name after TEAMRUN_VAR_ or TEAMRUN_ARG_, as the runner makes it:
// upper case, anything but ASCII letters, digits and _ replaced by _.
func EnvName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		default:
			return '_'
		}
	}, name)
}

// maxNameBytes is the longest file name most file systems take (NAME_MAX):
// a declared task's context file is named after it (DESIGN §3).
const maxNameBytes = 255

// waitsFor is what each task waits for as declared: its context and, in a
// workflow, the tasks whose condition routes to it (a sequential team
// runs in file order and routes only forward).
func (b *builder) waitsFor(index *TaskFinder) func(i int) []int {
	t := b.team
	routedBy := make(map[int][]int)
	if t.Process == Workflow {
		for i, tk := range t.Tasks {
			for _, r := range tk.Condition() {
				for _, name := range r.Next {
					if j, ok := index.last(name); ok && j != i {
						routedBy[j] = append(routedBy[j], i)
					}
				}
			}
		}
	}
	return func(i int) []int {
		var out []int
		for _, name := range t.Tasks[i].Context {
			if j, ok := index.last(name); ok && j != i {
				out = append(out, j)
			}
		}
		return append(out, routedBy[i]...)
	}
}

// checkCycles reports each dependency cycle once, at the first of its tasks.
// A task waits for its context tasks and, in a workflow, for every task whose
// condition routes to it (the route decides whether it runs), so a cycle may
// go through condition routes too.
func (b *builder) checkCycles(index *TaskFinder) {
	t := b.team
	const (
		white = iota
		grey
		black
	)
	deps := b.waitsFor(index)
	isRoute := func(from, to int) bool { // from waits for to only because to routes to from
		for _, name := range t.Tasks[from].Context {
			if j, ok := index.last(name); ok && j == to {
				return false
			}
		}
		return true
	}
	color := make([]uint8, len(t.Tasks)) // a byte a task: 8 were 80 KB for 10,000
	var stack []int
	var visit func(i int) bool
	reported := false
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range deps(i) {
			if color[j] == grey {
				// The cycle is the stack from j on.
				start := 0
				for k, s := range stack {
					if s == j {
						start = k
					}
				}
				var names []string
				first := stack[start]
				for _, s := range stack[start:] {
					names = append(names, t.Tasks[s].Name)
					if s < first {
						first = s
					}
				}
				names = append(names, t.Tasks[j].Name)
				cycle := append(append([]int{}, stack[start:]...), j)
				var routes []string
				for k := 0; k+1 < len(cycle); k++ {
					if isRoute(cycle[k], cycle[k+1]) {
						routes = append(routes, fmt.Sprintf("%s waits for %s, whose condition routes to it", t.Tasks[cycle[k]].Name, t.Tasks[cycle[k+1]].Name))
					}
				}
				src := b.tasks[first]
				if len(routes) == 0 {
					b.errorf(src, src.kpos(), "context forms a cycle: %s", strings.Join(names, " -> "))
				} else {
					b.errorf(src, src.kpos(), "context and condition form a cycle: %s (%s); none of these tasks could ever start", strings.Join(names, " -> "), strings.Join(routes, ", "))
				}
				reported = true
				return true
			}
			if color[j] == white && visit(j) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range t.Tasks {
		if color[i] == white && !reported {
			stack = stack[:0]
			visit(i)
		}
	}
}

func unknownRef(kind, name string, known []string, hint string) string {
	msg := fmt.Sprintf("unknown %s %s", kind, ShownValue(name))
	if m := closest(name, known); m != "" {
		return msg + fmt.Sprintf(" (did you mean %q?)", m)
	}
	if len(known) > 0 && len(known) <= 8 {
		return msg + fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
	}
	return msg + ": " + hint
}

// isPraison tells a PraisonAI file from a native one by keys only PraisonAI
// uses; a native file with a typo stays native and gets a did-you-mean.
func isPraison(root *tree) bool { return praisonMark(root) != "" }

// praisonMark is what makes root a PraisonAI file, as a message says it
// (steps: (line 7)); "" for a native file.
func praisonMark(root *tree) string {
	for _, k := range []string{"framework", "topic", "roles", "steps", "workflow", "dependencies", "config", "input"} {
		if v := root.get(k); v != nil {
			return fmt.Sprintf("%s: (line %d)", k, v.kpos().Line)
		}
	}
	if v := root.get("type"); v != nil {
		if s, _ := v.str(); s == "job" || s == "hybrid" {
			return fmt.Sprintf("type: %s (line %d)", s, v.kpos().Line)
		}
	}
	ag := root.get("agents")
	if ag.isSeq() && len(ag.items()) > 0 && ag.items()[0].isMap() {
		return fmt.Sprintf("agents: as a list of roles (line %d)", ag.kpos().Line)
	}
	if ag.isMap() {
		for _, v := range ag.vals() {
			if ts := v.get("tasks"); ts != nil {
				return fmt.Sprintf("an agent with tasks: (%s, line %d)", v.path, ts.kpos().Line)
			}
		}
	}
	return ""
}

// routesOf reads a condition mapping {VALUE: task or [tasks]} in file
// order; a value with no task has a nil Next.
func routesOf(c *tree) []Route {
	routes := make([]Route, 0, len(c.keys()))
	for i, val := range c.keys() {
		r := Route{Value: val}
		t := c.vals()[i]
		if s, ok := t.str(); ok {
			r.Next = []string{s}
		}
		for _, it := range t.items() {
			if s, ok := it.str(); ok {
				r.Next = append(r.Next, s)
			}
		}
		routes = append(routes, r)
	}
	return routes
}
