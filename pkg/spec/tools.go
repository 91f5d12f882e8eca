package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// DefaultMaxTurns bounds an agent's tool loop when it sets no max_turns:
// model requests per attempt, the last one included.
const DefaultMaxTurns = 10

// DefaultMaxToolCalls bounds the tool calls of an agent's loop in one
// attempt when it sets no max_tool_calls: a model that answers with
// 10,000 calls in one turn must not run them all (README: Tools).
const DefaultMaxToolCalls = 100

// ExecuteCommand is the built-in tool that runs any shell line the model
// writes: only with allow: [execute_command].
const ExecuteCommand = "execute_command"

// Tool is a function an LLM agent may call: a command declared under the
// top-level tools:, or one of teamrun's built-ins (Builtin set).
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments as written; Schema is
	// it compiled, which validates a model's arguments before the tool runs.
	Parameters map[string]any
	Schema     *jsonschema.Schema `json:"-"`
	Shell      string             // run by /bin/sh -c
	Command    []string           // argv
	Timeout    time.Duration
	// Idempotent: running it again is safe when a crash hid whether it ran.
	Idempotent bool
	// Builtin names the built-in that runs the tool (read_file, ...); "" for
	// a command tool.
	Builtin string
	// MCP names the server of a tool an MCP server listed.
	MCP string `json:",omitempty"`
	// Workdir is the team's workdir for a built-in (its key covers it).
	Workdir string `json:",omitempty"`
	Pos     Pos
}

// builtin is one of the tools teamrun runs itself.
type builtin struct {
	name, description, params string
	idempotent                bool
}

// builtinTools are the tools teamrun runs itself, under the names
// PraisonAI files use. Their parameters are the schemas the model sees.
func builtinTools() []builtin {
	return []builtin{
		{"read_file", "Read a text file of the project folder.",
			`{"type":"object","properties":{"path":{"type":"string","description":"the file's path, relative to the project folder"}},"required":["path"]}`, true},
		{"write_file", "Write a text file in the project folder, replacing it if it exists.",
			`{"type":"object","properties":{"path":{"type":"string","description":"the file's path, relative to the project folder"},"content":{"type":"string"}},"required":["path","content"]}`, true},
		{"list_files", "List the files of a folder of the project (default: the project folder itself).",
			`{"type":"object","properties":{"path":{"type":"string","description":"a folder, relative to the project folder"}}}`, true},
		{ExecuteCommand, "Run a shell command in the project folder; the result is its standard output.",
			`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`, false},
	}
}

// BuiltinTool returns the built-in tool of that name, or nil.
func BuiltinTool(name string) *Tool {
	for _, b := range builtinTools() {
		if b.name != name {
			continue
		}
		var params map[string]any
		_ = json.Unmarshal([]byte(b.params), &params)
		s, err := compileParameters(params)
		if err != nil {
			return nil // a build defect: tools_test.go compiles every built-in
		}
		return &Tool{Name: b.name, Description: b.description, Parameters: params, Schema: s, Idempotent: b.idempotent, Builtin: b.name}
	}
	return nil
}

func builtinNames() []string {
	table := builtinTools()
	out := make([]string, len(table))
	for i, b := range table {
		out[i] = b.name
	}
	return out
}

// CompileParameters compiles a tool's parameters (an MCP server's tools
// are compiled when the server lists them).
func CompileParameters(params map[string]any) (*jsonschema.Schema, error) {
	return compileParameters(params)
}

// compileParameters compiles a tool's parameters. A reference can name
// only the schema itself: nothing is read from files or the network.
func compileParameters(params map[string]any) (*jsonschema.Schema, error) {
	data, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	const url = "urn:teamrun:tool-parameters.json"
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("%s: a tool's parameters cannot refer to other documents", s)
	}
	if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// tools reads the native top-level tools mapping.
func (b *builder) tools(v *tree) {
	if !v.isMap() {
		return
	}
	for i, name := range v.keys() {
		tv := v.vals()[i]
		if !tv.isMap() {
			continue // the schema reports it
		}
		t := &Tool{Name: name, Pos: tv.kpos()}
		if slices.Contains(builtinNames(), name) {
			b.warnf(tv, tv.kpos(), "declares a tool named like teamrun's built-in %s, which it replaces for every agent that lists %s: rename it to keep the built-in", name, name)
		}
		t.Description, _ = tv.get("description").str()
		if s := tv.get("shell"); s != nil {
			t.Shell, _ = s.str()
		}
		if c := tv.get("command"); c.isSeq() {
			for _, it := range c.items() {
				s, _ := it.str()
				t.Command = append(t.Command, s)
			}
			if len(c.items()) > 0 {
				if s, ok := c.items()[0].str(); ok && strings.TrimSpace(s) == "" {
					b.errorf(c.items()[0], c.items()[0].pos(), "the program to run (the first item) is empty: name it, e.g. [date, -u]")
				}
			}
		}
		switch {
		case tv.get("shell") != nil && tv.get("command") != nil:
			b.errorf(tv, tv.kpos(), "has shell and command: a tool runs exactly one of them, so keep one")
		case tv.get("shell") == nil && tv.get("command") == nil:
			b.errorf(tv, tv.kpos(), "says nothing to run: give it shell (a line for /bin/sh) or command (an argv)")
		}
		t.Timeout = b.duration(tv.get("timeout"))
		if idem, ok := tv.get("idempotent").val().(bool); ok {
			t.Idempotent = idem
		}
		t.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
		if p := tv.get("parameters"); p.isMap() {
			params, _ := p.json().(map[string]any)
			if typ, ok := params["type"]; ok && typ != "object" {
				b.errorf(p, p.pos(), "a tool's parameters describe an object (type: object), whose properties are the arguments; got type %v", typ)
			} else {
				t.Parameters = params
			}
		}
		if props, ok := t.Parameters["properties"].(map[string]any); ok {
			if x, y, clash := EnvClash(slices.Collect(maps.Keys(props))); clash {
				at := tv.get("parameters")
				if pp := at.get("properties"); pp != nil {
					at = pp
				}
				b.errorf(at, at.pos(), "parameters %q and %q both reach the tool as TEAMRUN_ARG_%s, so it would see only one of them: rename one", x, y, EnvName(x))
			}
		}
		s, err := compileParameters(t.Parameters)
		if err != nil {
			at := tv.get("parameters")
			if at == nil {
				at = tv
			}
			b.errorf(at, at.pos(), "not a valid JSON Schema: %s", schemaErrorText(err))
		}
		t.Schema = s
		b.team.Tools = append(b.team.Tools, t)
	}
}

// schemaErrorText is a compile error in the user's terms: where in the
// parameters, and what is wrong, without the meta-schema's URLs.
func schemaErrorText(err error) string {
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		var parts []string
		for _, l := range leaves(ve) {
			at := l.InstanceLocation
			if at == "" {
				at = "/"
			}
			parts = append(parts, fmt.Sprintf("at %s: %s", at, l.Message))
		}
		return strings.Join(parts, "; ")
	}
	msg := strings.ReplaceAll(err.Error(), "urn:teamrun:tool-parameters.json#", "")
	return strings.Join(strings.Fields(msg), " ")
}

// agentTools resolves the native tools list of an agent: declared tools,
// then built-ins. An unknown name is an error with a did-you-mean.
func (b *builder) agentTools(a *Agent, v *tree) {
	tl := v.get("tools")
	if tl == nil {
		return
	}
	if a.Kind != LLMAgent {
		b.errorf(tl, tl.kpos(), "only an LLM agent calls tools: a command agent runs its own command")
		return
	}
	known := make([]string, 0, len(b.team.Tools)+4)
	for _, t := range b.team.Tools {
		known = append(known, t.Name)
	}
	for _, n := range builtinNames() {
		if !slices.Contains(known, n) {
			known = append(known, n)
		}
	}
	for _, m := range b.team.MCP {
		known = append(known, m.Name)
	}
	for _, it := range tl.itemsOrNil() {
		name, ok := it.str()
		if !ok {
			continue
		}
		if t := b.team.Tool(name); t != nil {
			a.Tools = append(a.Tools, t)
			continue
		}
		if m := b.team.MCPServer(name); m != nil {
			a.MCP = append(a.MCP, m)
			continue
		}
		t := BuiltinTool(name)
		if t == nil {
			if ToolNameOK(name) { // else the schema says what is wrong with it
				b.errorf(it, it.pos(), "%s", unknownRef("tool", name, known, "declare it under the top-level tools"))
			}
			continue
		}
		t.Workdir = b.team.Workdir
		if t.Builtin == ExecuteCommand && !b.team.Allows(ExecuteCommand) {
			b.errorf(it, it.pos(), "execute_command runs any command the model writes: allow it with the top-level `allow: [execute_command]`, or declare a command tool for what the agent needs")
			continue
		}
		a.Tools = append(a.Tools, t)
	}
}

// Tool returns the top-level tool named name, or nil.
func (t *Team) Tool(name string) *Tool {
	for _, tl := range t.Tools {
		if tl.Name == name {
			return tl
		}
	}
	return nil
}

// Allows reports whether the spec opts in to a dangerous built-in.
func (t *Team) Allows(name string) bool { return slices.Contains(t.Allow, name) }

// toolKeyDef is what an agent's key hashes of one tool: its whole
// definition, so that editing a tool re-runs the tasks of its agents.
func toolKeyDef(t *Tool) map[string]any {
	def := map[string]any{
		"name":        t.Name,
		"description": t.Description,
		"parameters":  t.Parameters,
		"shell":       t.Shell,
		"command":     anyStrings(t.Command),
		"timeout":     durationText(t.Timeout),
		"idempotent":  t.Idempotent,
		"builtin":     t.Builtin,
	}
	if t.Workdir != "" {
		def["workdir"] = t.Workdir
	}
	return def
}

// praisonTools gives a PraisonAI agent (a task's or step's tools go to its
// agent) the built-ins its tools list names: read_file, write_file and
// list_files, and execute_command when the file allows it. Any other name
// (a Python function, a CrewAI class) is a warning naming the tool and the
// native declaration that would provide it.
func (b *builder) praisonTools(a *Agent, v *tree) {
	if !hasTools(v) {
		return
	}
	items := v.itemsOrNil()
	if !v.isSeq() {
		items = []*tree{v}
	}
	for _, it := range items {
		name, ok := it.str()
		if !ok || name == "" {
			if !ok && !it.isNull() {
				b.warnf(it, it.pos(), "not supported, ignored: a tool is named by a string")
			}
			continue
		}
		t := BuiltinTool(name)
		switch {
		case t != nil && t.Builtin == ExecuteCommand && !b.team.Allows(ExecuteCommand):
			b.warnf(it, it.pos(), "tool %q is not given to the agent: it runs any command the model writes; allow it with the top-level `approve: [execute_command]` (or `allow:`), or declare a command tool in the native format", name)
		case t != nil && a != nil:
			t.Workdir = b.team.Workdir
			if !slices.ContainsFunc(a.Tools, func(x *Tool) bool { return x.Name == name }) {
				a.Tools = append(a.Tools, t)
			}
		case t != nil:
			b.warnf(it, it.pos(), "tool %q is ignored: its task's agent is not declared", name)
		default:
			id := toolIdentifier(name)
			b.warnf(it, it.pos(), "tool %q is not available in teamrun, ignored: the agent runs without it; in the native format a command tool provides it: `tools: {%s: {description: ..., parameters: {type: object, properties: {query: {type: string}}}, command: [./%s]}}` and the agent's `tools: [%s]`", name, id, id, id)
		}
	}
}

// ToolNameRule is ToolNameOK's rule, as messages say it.
const ToolNameRule = "Chat Completions takes a tool name of 1 to 64 letters, digits, _ and -"

// ToolNameOK reports a tool name the schema takes: 1 to 64 of
// [A-Za-z0-9_-], what the OpenAI API takes as a function's name.
func ToolNameOK(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	})
}

// toolIdentifier is name as a native tool name: snake case, [A-Za-z0-9_-].
func toolIdentifier(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			if i > 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
			b.WriteRune(r - 'A' + 'a')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	if b.Len() == 0 {
		return "my_tool"
	}
	return strings.Trim(b.String(), "_")
}

// ToolKeys is a key per tool of the named agent (and "mcp:SERVER" per MCP
// server it uses): what a checkpoint keeps so that plan can say which tool
// changed when the agent's key did. nil for an agent without tools.
func (t *Team) ToolKeys(agent string) map[string]string {
	a := t.Agent(agent)
	if a == nil || len(a.Tools)+len(a.MCP) == 0 {
		return nil
	}
	keys := make(map[string]string, len(a.Tools)+len(a.MCP))
	for _, tl := range a.Tools {
		keys[tl.Name] = hash16(canonicalJSON(toolKeyDef(tl)))
	}
	for _, m := range a.MCP {
		keys["mcp:"+m.Name] = hash16(canonicalJSON(mcpKeyDef(m)))
	}
	return keys
}

// ToolChanges words how an agent's tools differ from the keys a checkpoint
// kept: "tool get_time changed", "tool x added", "MCP server s removed";
// "" when they do not (or the checkpoint kept none).
func ToolChanges(old, now map[string]string) string {
	var out []string
	word := func(name string) string {
		if s, ok := strings.CutPrefix(name, "mcp:"); ok {
			return "MCP server " + s
		}
		return "tool " + name
	}
	names := make([]string, 0, len(old)+len(now))
	for n := range old {
		names = append(names, n)
	}
	for n := range now {
		if _, ok := old[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		o, inOld := old[n]
		k, inNow := now[n]
		switch {
		case inOld && !inNow:
			out = append(out, word(n)+" removed")
		case !inOld && inNow:
			out = append(out, word(n)+" added")
		case o != k:
			out = append(out, word(n)+" changed")
		}
	}
	return strings.Join(out, ", ")
}

// workdir reads the folder of the built-in file tools: relative, and
// inside the spec's folder, so that the spec alone says what they reach.
func (b *builder) workdir(v *tree) {
	s, ok := v.str()
	if !ok || s == "" {
		return
	}
	if c := filepath.Clean(s); !filepath.IsLocal(c) {
		b.errorf(v, v.pos(), "workdir %q leaves the spec's folder: give a folder inside it, relative to it", s)
		return
	}
	b.team.Workdir = filepath.Clean(s)
}

// ToolDir is the folder the built-in file tools of a team from specPath
// work in.
func (t *Team) ToolDir(specPath string) string {
	return filepath.Join(filepath.Dir(specPath), t.Workdir)
}

// RunsToolLoop says whether the agent's attempts run a tool loop: an LLM
// agent with tools or MCP servers. Nil: no agent, none.
func (a *Agent) RunsToolLoop() bool {
	return a != nil && a.Kind == LLMAgent && (len(a.Tools) > 0 || len(a.MCP) > 0)
}

// ToolLimits are the agent's max_turns and max_tool_calls as its tool loop
// holds them, the defaults filled in.
func (a *Agent) ToolLimits() (turns, calls int) {
	turns, calls = a.MaxTurns, a.MaxToolCalls
	if turns <= 0 {
		turns = DefaultMaxTurns
	}
	if calls <= 0 {
		calls = DefaultMaxToolCalls
	}
	return turns, calls
}
