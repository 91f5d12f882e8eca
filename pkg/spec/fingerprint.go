package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func sortStrings(s []string) { sort.Strings(s) }

func hash16(b []byte) string { return hash16As(b, "") }

// hash16As is hash16, known itself when they are the same: a string of
// its own is made only for another.
func hash16As(b []byte, known string) string {
	sum := sha256.Sum256(b)
	var h [16]byte
	hex.Encode(h[:], sum[:8])
	if string(h[:]) == known {
		return known
	}
	return string(h[:])
}

// TaskDefs returns the tasks as a checkpoint compares them: placeholders
// rendered against state, effective context resolved, keys computed.
func (t *Team) TaskDefs(state map[string]any) []TaskDef { return t.TaskDefsKnown(state, nil) }

// Known is what a task had before (a session's record of it), for
// TaskDefsKnown; the zero Known: nothing.
type Known struct {
	Key, OwnKey, AgentKey string
	Context               []string // never written through
}

// TaskDefsKnown is TaskDefs where known (nil: none) gives what task i,
// named name, had before: a def whose keys or context come out the same
// share their strings and list, not ones of their own (0.48 MB at 10,000
// tasks, made while a restore loads, collecting nothing). known is asked
// from two goroutines at once. A key known that a teamrun from before
// keys left out max_retries and timeout hashed is the def's where it is
// the task's (olderKey), so that its result is still reused.
//
// A variable that a task always sets before task i starts (Overwritten)
// is rendered into task i's texts, and its agent's key, as a name with no
// value: its starting value (variables:, --var) is never what i reads. The
// keys a teamrun that rendered it from state recorded are the def's where
// they are the task's rendered so (unhidden), as olderKey's are.
//
// So is a key recorded by a teamrun that chose a PraisonAI step's text by
// the file's input: alone (Task.textChosen), not as Task.textIn does.
func (t *Team) TaskDefsKnown(state map[string]any, known func(i int, name string) Known) []TaskDef {
	return t.taskDefs(state, known, t.presetVariables(state), false)
}

// taskDefs is TaskDefsKnown, hiding for each task what preset (nil:
// nothing) says is set before it; older: the defs as a teamrun before
// those rules rendered them (unhidden), for FingerprintBefore.
func (t *Team) taskDefs(state map[string]any, known func(i int, name string) Known, preset *presetVariables, older bool) []TaskDef {
	if known == nil {
		known = func(int, string) Known { return Known{} }
	}
	defs := make([]TaskDef, len(t.Tasks))
	agentKeys := map[string]string{}
	agents := make(map[string]*Agent, len(t.Agents))
	for _, a := range t.Agents {
		if _, dup := agents[a.Name]; !dup {
			agents[a.Name] = a
		}
	}
	over := overlay{state: state}
	var hidden, reads []string  // task i's of preset (hiddenAt, agentReads), reused
	var before map[int]unhidden // by task, where hiding changed it
	for i, tk := range t.Tasks {
		ak, ok := agentKeys[tk.Agent]
		if !ok {
			ak = agentKeyOf(tk.Agent, agents[tk.Agent], state, t.syntax(), nil)
			agentKeys[tk.Agent] = ak
		}
		scope := over.scope(tk)
		text := tk.textIn(t, DescriptionText, scope)
		defs[i] = TaskDef{
			ID:             i,
			Name:           tk.Name,
			Agent:          tk.Agent,
			Description:    t.Render(text, scope),
			ExpectedOutput: t.Render(tk.ExpectedOutput, scope),
			Context:        t.contextAs(i, known(i, tk.Name).Context),
			AgentKey:       ak,
			Expansion:      tk.Expansion,
		}
		_, written := t.Variables["input"]
		was := tk.textChosen(DescriptionText, written)
		if preset == nil && was == text {
			continue // as ever: nothing hidden, the text chosen as before
		}
		d := &defs[i]
		u := unhidden{d.Description, d.ExpectedOutput, d.AgentKey}
		if was != text {
			u.description = t.Render(was, scope)
		}
		if older {
			d.Description = u.description
			continue
		}
		if preset != nil {
			hidden = preset.hiddenAt(hidden[:0], i)
		}
		if len(hidden) == 0 {
			if u.description != d.Description {
				if before == nil {
					before = map[int]unhidden{}
				}
				before[i] = u
			}
			continue
		}
		d.Description = renderHiding(text, scope, t.syntax(), hidden)
		d.ExpectedOutput = renderHiding(tk.ExpectedOutput, scope, t.syntax(), hidden)
		if reads = t.agentReads(reads[:0], agents[tk.Agent], hidden); len(reads) > 0 {
			id := tk.Agent + "\x00" + strings.Join(reads, "\x00")
			if d.AgentKey, ok = agentKeys[id]; !ok {
				d.AgentKey = agentKeyOf(tk.Agent, agents[tk.Agent], state, t.syntax(), reads)
				agentKeys[id] = d.AgentKey
			}
			if was := known(i, tk.Name).AgentKey; was != d.AgentKey && was == ak {
				// Recorded so by a teamrun that rendered them from the
				// starting state: the agent is as it was.
				d.AgentKey = was
			}
		}
		if u != (unhidden{d.Description, d.ExpectedOutput, d.AgentKey}) {
			if before == nil {
				before = map[int]unhidden{}
			}
			before[i] = u
		}
	}
	index := t.Finder() // defs[i] is named as t.Tasks[i]
	// Keys include the keys of context tasks, so compute them depth first;
	// a cycle (only in an unvalidated team) is cut rather than followed.
	const (
		todo = iota
		busy
		done
	)
	sources := t.variablesFrom()
	// A task's own key reads no other task's: a large team has them
	// hashed beside the keys, on another core.
	own := func(from, to int) {
		var buf []byte
		for i := from; i < to; i++ {
			noKeys := make([]string, len(defs[i].Context))
			buf = appendTaskKeyJSON(buf[:0], t.Tasks[i], &defs[i], noKeys, sources[i], keySettings{})
			was := known(i, defs[i].Name).OwnKey
			defs[i].OwnKey = hash16As(buf, was)
			if defs[i].OwnKey != was && was != "" {
				buf, defs[i].OwnKey = olderKey(buf, t.Tasks[i], &defs[i], noKeys, sources[i], defs[i].OwnKey, was)
			}
			if u, ok := before[i]; ok && defs[i].OwnKey != was && was != "" {
				buf, defs[i].OwnKey = u.key(buf, t.Tasks[i], &defs[i], noKeys, sources[i], defs[i].OwnKey, was)
			}
		}
	}
	var owned sync.WaitGroup
	if len(defs) >= parallelKeys {
		owned.Go(func() { own(0, len(defs)) })
	} else {
		own(0, len(defs))
	}
	state2 := make([]uint8, len(defs)) // a byte a task: 8 were 80 KB for 10,000
	var buf []byte
	var key func(i int) string
	key = func(i int) string {
		switch state2[i] {
		case done:
			return defs[i].Key
		case busy:
			return ""
		}
		state2[i] = busy
		ctxKeys := make([]string, len(defs[i].Context))
		guess := i - 1 // as schedule.Contexts guesses
		for c, name := range defs[i].Context {
			if j, ok := index.Find(name, guess); ok {
				ctxKeys[c] = key(j)
				guess = j + 1
			}
		}
		buf = appendTaskKeyJSON(buf[:0], t.Tasks[i], &defs[i], ctxKeys, sources[i], keySettings{})
		was := known(i, defs[i].Name).Key
		defs[i].Key = hash16As(buf, was)
		if defs[i].Key != was && was != "" {
			buf, defs[i].Key = olderKey(buf, t.Tasks[i], &defs[i], ctxKeys, sources[i], defs[i].Key, was)
		}
		if u, ok := before[i]; ok && defs[i].Key != was && was != "" {
			buf, defs[i].Key = u.key(buf, t.Tasks[i], &defs[i], ctxKeys, sources[i], defs[i].Key, was)
		}
		state2[i] = done
		return defs[i].Key
	}
	for i := range defs {
		key(i)
	}
	owned.Wait()
	return defs
}

// presetVariables are the variables that a task sets and the state gives
// a starting value (TaskDefsKnown hides them from the tasks a task that
// always runs sets them before); nil when there are none, and teams
// without them take the path they always took.
type presetVariables struct {
	reads *VariableReads
	names []string
}

// presetVariables is t's with state: nil when no task's output_variable
// has a value in state.
func (t *Team) presetVariables(state map[string]any) *presetVariables {
	var names []string
	for _, tk := range t.Tasks {
		if v := tk.OutputVariable; v != "" && !slices.Contains(names, v) {
			if _, ok := state[v]; ok {
				names = append(names, v)
			}
		}
	}
	if names == nil {
		return nil
	}
	return &presetVariables{reads: t.VariableReads(), names: names}
}

// hiddenAt appends to buf the preset variables task i finds set by a task
// before it (Overwritten), but one a foreach instance's item shadows.
func (p *presetVariables) hiddenAt(buf []string, i int) []string {
	x := p.reads.team.Tasks[i].Expanded()
	for _, n := range p.names {
		if !x.Binds(n) && p.reads.Overwritten(n, i) {
			buf = append(buf, n)
		}
	}
	return buf
}

// agentReads appends to buf those of names that agent a (nil: none) reads:
// its prompts name them, or its commands mention them (ReadsVariable).
func (t *Team) agentReads(buf []string, a *Agent, names []string) []string {
	if a == nil {
		return buf
	}
	for _, n := range names {
		if t.Reads(a.Role, n) || t.Reads(a.Goal, n) || t.Reads(a.Backstory, n) || t.Reads(a.Instructions, n) || a.MentionsVariable(n) {
			buf = append(buf, n)
		}
	}
	return buf
}

// unhidden is what a task's def had before preset variables were hidden
// from it, its description chosen by the file's input: alone
// (Task.textChosen): what a teamrun before those rules rendered and recorded.
type unhidden struct{ description, expectedOutput, agentKey string }

// key is olderKey for a def u was made from: was when a teamrun that
// rendered the hidden variables from the starting state hashed the task
// so (or, before that, as olderKey's did), else key.
func (u unhidden) key(buf []byte, tk *Task, d *TaskDef, ctxKeys []string, from []byte, key, was string) ([]byte, string) {
	old := *d
	old.Description, old.ExpectedOutput, old.AgentKey = u.description, u.expectedOutput, u.agentKey
	buf = appendTaskKeyJSON(buf[:0], tk, &old, ctxKeys, from, keySettings{})
	if hash16As(buf, was) == was {
		return buf, was
	}
	return olderKey(buf, tk, &old, ctxKeys, from, key, was)
}

// FingerprintBefore is the task-set fingerprint that a teamrun which
// rendered every placeholder from state (before TaskDefsKnown hid what a
// task always sets first) and chose a PraisonAI step's text by the file's
// input: alone (Task.textChosen) gave the team: a session it recorded
// matches under it. "" when that is the fingerprint.
func (t *Team) FingerprintBefore(state map[string]any) string {
	preset := t.presetVariables(state)
	_, written := t.Variables["input"]
	// --var input= or an output_variable: input defines it where the
	// file's input: alone did not (Task.textIn).
	if preset == nil && t.defines(state, "input") == written {
		return "" // nothing hidden, every text chosen as before
	}
	return FingerprintOf(t.taskDefs(state, nil, nil, true))
}

// variablesFrom is, by task, the "variables_from" member of its key:
// each output_variable it reads, by name, with the tasks that set it, in
// file order (VariableReads.From). A result made from one task's notes
// is then never taken over for a task whose {notes} another task sets now
// (moved, or set where nothing set it), however alike the two outputs
// come out. nil when no task sets a variable; a task that reads none has
// no member, so its key is what it was before keys had one.
func (t *Team) variablesFrom() map[int][]byte {
	reads := t.VariableReads()
	if len(reads.Outputs()) == 0 {
		return nil
	}
	out := map[int][]byte{}
	for i := range t.Tasks {
		if from := reads.From(i); from != nil {
			m := make(map[string]any, len(from))
			for v, names := range from {
				m[v] = names
			}
			out[i] = appendJSON([]byte(`,"variables_from":`), m)
		}
	}
	return out
}

// overlay is Task.Scope for one task after another without a map of each
// one's own: the state copied once, and each foreach instance's item set
// over it in turn (a 200,000-instance plan copied the state 200,000 times).
type overlay struct {
	state, over map[string]any
	set         []string // the names the last instance set in over
}

// scope is tk.Scope(o.state), valid until the next call.
func (o *overlay) scope(tk *Task) map[string]any {
	for _, n := range o.set {
		if v, ok := o.state[n]; ok {
			o.over[n] = v
		} else {
			delete(o.over, n)
		}
	}
	o.set = o.set[:0]
	bind := tk.Expanded()
	if bind.As == "" {
		return o.state
	}
	if o.over == nil {
		o.over = make(map[string]any, len(o.state)+2)
		maps.Copy(o.over, o.state)
	}
	o.over[bind.As] = bind.Item
	o.set = append(o.set, bind.As)
	if bind.IndexAs != "" {
		o.over[bind.IndexAs] = bind.Index
		o.set = append(o.set, bind.IndexAs)
	}
	return o.over
}

// parallelKeys is the team size from which TaskDefs hashes the own keys
// on a goroutine of their own: below it, starting one costs more than
// the hashing it takes off.
const parallelKeys = 256

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// AgentKey hashes the full definition of the agent named name as it would
// run with state: kind, prompts (rendered), llm settings (the name of the
// key's variable, never a key), memory, command, timeout and dir: as
// written, the values of the variables its command reads (readValues),
// and the full definition of its tools and max_turns.
func (t *Team) AgentKey(name string, state map[string]any) string {
	return t.agentKey(name, state)
}

func (t *Team) agentKey(name string, state map[string]any) string {
	return agentKeyOf(name, t.Agent(name), state, t.syntax(), nil)
}

// agentKeyOf is the key of agent a, named name, with the variables hidden
// (nil: none) rendered as names with no value (TaskDefsKnown).
func agentKeyOf(name string, a *Agent, state map[string]any, syn syntax, hidden []string) string {
	if name == HumanAgent {
		return hash16(canonicalJSON(map[string]any{"kind": Human.String()}))
	}
	if a == nil {
		return hash16(canonicalJSON(map[string]any{"kind": "unknown", "name": name}))
	}
	def := map[string]any{
		"kind":         a.Kind.String(),
		"role":         renderHiding(a.Role, state, syn, hidden),
		"goal":         renderHiding(a.Goal, state, syn, hidden),
		"backstory":    renderHiding(a.Backstory, state, syn, hidden),
		"instructions": renderHiding(a.Instructions, state, syn, hidden),
		"memory":       a.Memory,
		"shell":        a.Shell,
		"command":      anyStrings(a.Command),
		"timeout":      durationText(a.Timeout),
	}
	if a.dir != "" {
		// Only when given: the keys of agents without dir: stay as they were.
		def["dir"] = a.dir
	}
	if vars := readValues(a, state, hidden); len(vars) > 0 {
		// What a command reads of the state through its environment is
		// what it runs with, as the placeholders rendered into an LLM
		// agent's prompts are: another --var gives another key. Only when
		// it reads some, so that the other agents' keys stay as they were.
		def["vars"] = vars
	}
	if a.LLM != nil {
		l := map[string]any{
			"model":       a.LLM.Model,
			"base_url":    a.LLM.BaseURL,
			"api_key_env": a.LLM.APIKeyEnv,
			"max_tokens":  a.LLM.MaxTokens,
			"timeout":     durationText(time.Duration(a.LLM.Timeout)),
		}
		if a.LLM.Temperature != nil {
			l["temperature"] = *a.LLM.Temperature
		}
		def["llm"] = l
	}
	// Only when set, so that the keys of agents without tools stay those
	// earlier versions stored.
	if len(a.Tools) > 0 {
		tools := make([]any, len(a.Tools))
		for i, t := range a.Tools {
			tools[i] = toolKeyDef(t)
		}
		def["tools"] = tools
	}
	if a.MaxTurns > 0 {
		def["max_turns"] = a.MaxTurns
	}
	if a.MaxToolCalls > 0 {
		def["max_tool_calls"] = a.MaxToolCalls
	}
	if len(a.MCP) > 0 {
		servers := make([]any, len(a.MCP))
		for i, m := range a.MCP {
			servers[i] = mcpKeyDef(m)
		}
		def["mcp"] = servers
	}
	return hash16(canonicalJSON(def))
}

// readValues are the values of the variables of state that a's commands
// (its own, its tools', its MCP servers') mention (Agent.MentionsVariable),
// as TEAMRUN_VAR_<NAME> carries them: a string as it is, anything else as
// JSON. nil when they mention none. One of hidden is left out, as if the
// state had none.
func readValues(a *Agent, state map[string]any, hidden []string) map[string]any {
	var out map[string]any
	for k, v := range state {
		if !a.MentionsVariable(k) || slices.Contains(hidden, k) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = ""
		default:
			out[k] = string(canonicalJSON(x))
		}
	}
	return out
}

// CanonicalTasks is the JSON array DESIGN §4 hashes: per task, in file
// order, {"agent","description","expected_output","id","name"}.
func CanonicalTasks(defs []TaskDef) []byte {
	var b bytes.Buffer
	writeCanonicalTasks(&b, defs)
	return b.Bytes()
}

// writeCanonicalTasks writes CanonicalTasks to w a task at a time, so that
// the fingerprint of a large spec is hashed without a copy of every task
// text in memory.
func writeCanonicalTasks(w io.Writer, defs []TaskDef) {
	// canonicalJSON of a list of maps with these keys, written directly:
	// the keys in sorted order (fingerprint_fast_test.go checks the bytes).
	b := make([]byte, 0, 256)
	b = append(b, '[')
	for i := range defs {
		d := &defs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"agent":`...)
		b = appendJSONString(b, d.Agent)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, d.Description)
		b = append(b, `,"expected_output":`...)
		b = appendJSONString(b, d.ExpectedOutput)
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, int64(d.ID), 10)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, d.Name)
		b = append(b, '}')
		w.Write(b)
		b = b[:0]
	}
	w.Write(append(b, ']'))
}

// SettingAdded is, for defs (t's TaskDefs), what names the setting its
// own key holds that task i did not have when a session recorded own as
// its own key: the one of condition, options, output_schema,
// output_variable, route_on and until that, left out, gives own again.
// "" when none does (one changed or went, or more than one came: the
// session keeps their digest, not what they were). A diff asks it for a
// task whose own key changed where none of the fields it compares did.
func (t *Team) SettingAdded(defs []TaskDef) func(i int, own string) string {
	var sources map[int][]byte
	asked := false
	return func(i int, own string) string {
		if i < 0 || i >= len(t.Tasks) || i >= len(defs) || own == "" {
			return ""
		}
		if !asked {
			sources, asked = t.variablesFrom(), true
		}
		tk, d := t.Tasks[i], &defs[i]
		noKeys := make([]string, len(d.Context))
		var buf []byte
		for _, w := range withoutSettings(tk) {
			buf = appendTaskKeyJSON(buf[:0], w.task, d, noKeys, sources[i], keySettings{})
			key := hash16(buf)
			if key != own {
				buf, key = olderKey(buf, w.task, d, noKeys, sources[i], key, own)
			}
			if key == own {
				return w.name
			}
		}
		return ""
	}
}

// without is a copy of a task without one of its settings (name).
type without struct {
	name string
	task *Task
}

// withoutSettings are copies of tk, each without one of the settings of
// its own key that it has (SettingAdded), named as in the spec.
func withoutSettings(tk *Task) []without {
	var out []without
	add := func(name string, unset func(*Task)) {
		c := *tk
		unset(&c)
		out = append(out, without{name, &c})
	}
	if len(tk.Condition()) > 0 {
		add("condition", func(c *Task) { c.SetCondition(nil) })
	}
	if len(tk.Options()) > 0 {
		add("options", func(c *Task) { c.SetOptions(nil) })
	}
	if tk.OutputSchema() != nil {
		add("output_schema", func(c *Task) { c.setMore(func(m *taskMore) { m.outputSchema = nil }) })
	}
	if tk.OutputVariable != "" {
		add("output_variable", func(c *Task) { c.OutputVariable = "" })
	}
	if tk.RouteOn() != "" {
		add("route_on", func(c *Task) { c.setMore(func(m *taskMore) { m.routeOn = "" }) })
	}
	if tk.Expanded().Until != "" {
		add("until", func(c *Task) {
			x := *c.Expansion
			x.Until = ""
			c.Expansion = &x
		})
	}
	return out
}

// keySettings are the settings a key hashed before keys left them out:
// max_retries and timeout. The zero keySettings is what a key hashes now.
type keySettings struct {
	maxRetries int
	timeout    time.Duration
}

// olderKey is was, the key a session recorded for task tk whose key today
// is key, when it is the key a teamrun before keys left out max_retries
// and timeout hashed for tk as it is now, or before either was added to
// it (their defaults then); else key. It appends the JSON to buf[:0] and
// returns buf, to use again.
func olderKey(buf []byte, tk *Task, d *TaskDef, ctxKeys []string, from []byte, key, was string) ([]byte, string) {
	sets := [...]keySettings{{}, {tk.MaxRetries, tk.Timeout}, {0, tk.Timeout}, {tk.MaxRetries, 0}}
	for n := 1; n < len(sets); n++ {
		if slices.Contains(sets[:n], sets[n]) {
			continue // today's key, or one tried before
		}
		buf = appendTaskKeyJSON(buf[:0], tk, d, ctxKeys, from, sets[n])
		if hash16As(buf, was) == was {
			return buf, was
		}
	}
	return buf, key
}

// appendTaskKeyJSON appends the canonical JSON a task's key hashes:
// canonicalJSON of {"agent", "agent_key", "condition": [{"next", "value"}],
// "context": [{"key", "name"}], "description", "expected_output",
// "item" (a foreach instance's bound item, when its texts do not name it),
// "max_retries" (set's), "name", "options", "output_schema" (when set),
// "output_variable", "route_on" (when set), "timeout" (set's), "until"
// (when set), "variables_from" (when it reads one: from, as variablesFrom wrote
// it)}, written directly in sorted key order (fingerprint_fast_test.go
// checks the bytes).
//
// max_retries and timeout change no result (a timeout fails an attempt,
// it completes none), so a result is reused whatever they are now: set
// (keySettings{}) writes their defaults, so that the key of a task
// without them is the one sessions recorded before; olderKey gives set
// the task's values, as those teamruns hashed them.
func appendTaskKeyJSON(b []byte, tk *Task, d *TaskDef, ctxKeys []string, from []byte, set keySettings) []byte {
	b = append(b, `{"agent":`...)
	b = appendJSONString(b, d.Agent)
	b = append(b, `,"agent_key":`...)
	b = appendJSONString(b, d.AgentKey)
	b = append(b, `,"condition":[`...)
	for i, r := range tk.Condition() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"next":`...)
		b = appendStringList(b, r.Next)
		b = append(b, `,"value":`...)
		b = appendJSONString(b, r.Value)
		b = append(b, '}')
	}
	b = append(b, `],"context":[`...)
	if len(d.Context) > 64 {
		// A foreach's join reads every instance: room for them at once,
		// not by doubling (a 200,000-item join's key copied ~60 MB).
		n := 0
		for i, name := range d.Context {
			n += len(`{"key":"","name":""},`) + len(ctxKeys[i]) + len(name)
		}
		b = slices.Grow(b, n)
	}
	for i, name := range d.Context {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendJSONString(b, ctxKeys[i])
		b = append(b, `,"name":`...)
		b = appendJSONString(b, name)
		b = append(b, '}')
	}
	b = append(b, `],"description":`...)
	b = appendJSONString(b, d.Description)
	b = append(b, `,"expected_output":`...)
	b = appendJSONString(b, d.ExpectedOutput)
	if x := tk.Expansion; x != nil && x.BindInKey {
		// Only on a foreach instance whose texts do not name its item.
		b = append(b, `,"item":`...)
		b = appendJSON(b, x.Bind())
	}
	b = append(b, `,"max_retries":`...)
	b = strconv.AppendInt(b, int64(set.maxRetries), 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, d.Name)
	b = append(b, `,"options":`...)
	b = appendStringList(b, tk.Options())
	if s := tk.OutputSchema(); s != nil {
		// Only when present, so that the keys of tasks without one, and
		// the sessions that recorded them, stay as they were.
		b = append(b, `,"output_schema":`...)
		b = appendJSON(b, s)
	}
	b = append(b, `,"output_variable":`...)
	b = appendJSONString(b, tk.OutputVariable)
	if on := tk.RouteOn(); on != "" {
		b = append(b, `,"route_on":`...)
		b = appendJSONString(b, on)
	}
	b = append(b, `,"timeout":`...)
	b = appendJSONString(b, durationText(set.timeout))
	if until := tk.Expanded().Until; until != "" {
		// Only on repeat iterations: other keys stay as they were.
		b = append(b, `,"until":`...)
		b = appendJSONString(b, until)
	}
	b = append(b, from...)
	return append(b, '}')
}

func appendStringList(b []byte, l []string) []byte {
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// FingerprintOf is the task-set fingerprint of defs: the first 16 hex
// digits of the SHA-256 of CanonicalTasks. A checkpoint recomputes it from
// its stored defs.
func FingerprintOf(defs []TaskDef) string {
	h := sha256.New()
	writeCanonicalTasks(h, defs)
	return hex.EncodeToString(h.Sum(nil)[:8]) // hash16 of CanonicalTasks
}

// Fingerprint is the task-set fingerprint of the team as it runs with state.
func (t *Team) Fingerprint(state map[string]any) string {
	return FingerprintOf(t.TaskDefs(state))
}
