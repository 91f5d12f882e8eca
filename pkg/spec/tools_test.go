package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const toolsSpec = `
tools:
  get_time:
    description: Current time in an IANA time zone
    parameters: {type: object, properties: {zone: {type: string}}, required: [zone]}
    shell: 'TZ="$TEAMRUN_ARG_ZONE" date +%H:%M'
    timeout: 10s
    idempotent: true
  charge:
    command: [./charge.sh]
agents:
  clock: {role: Timekeeper, llm: tiny-tools, tools: [get_time, read_file], max_turns: 8}
tasks:
  now: {description: "What time is it?", agent: clock}
`

func TestToolsLoad(t *testing.T) {
	team, err := Parse("agents.yaml", []byte(toolsSpec))
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Tools) != 2 || team.Tools[0].Name != "get_time" || team.Tools[1].Name != "charge" {
		t.Fatalf("tools: %+v", team.Tools)
	}
	gt := team.Tools[0]
	if gt.Shell == "" || gt.Timeout.String() != "10s" || !gt.Idempotent || gt.Schema == nil || gt.Description == "" {
		t.Errorf("get_time: %+v", gt)
	}
	if team.Tools[1].Idempotent || len(team.Tools[1].Command) != 1 {
		t.Errorf("charge: %+v", team.Tools[1])
	}
	a := team.Agent("clock")
	if a.MaxTurns != 8 || len(a.Tools) != 2 || a.Tools[0] != gt || a.Tools[1].Builtin != "read_file" {
		t.Fatalf("agent: max_turns %d, tools %+v", a.MaxTurns, a.Tools)
	}
	if err := gt.Schema.Validate(map[string]any{"zone": "UTC"}); err != nil {
		t.Errorf("valid arguments refused: %v", err)
	}
	if err := gt.Schema.Validate(map[string]any{}); err == nil {
		t.Error("arguments without the required zone accepted")
	}
}

func TestBuiltinToolsCompile(t *testing.T) {
	for _, n := range builtinNames() {
		if BuiltinTool(n) == nil || BuiltinTool(n).Schema == nil {
			t.Errorf("built-in %s does not compile", n)
		}
	}
	if BuiltinTool("nope") != nil {
		t.Error("an unknown built-in")
	}
}

func TestToolsInvalid(t *testing.T) {
	tests := []struct {
		name, spec string
		want       []string
	}{
		{"unknown tool", `
tools:
  get_time: {shell: date}
agents:
  a: {llm: m, tools: [get_tme]}
tasks:
  t: {description: d, agent: a}
`, []string{`agents.yaml:5:23: agents.a.tools[0]: unknown tool "get_tme" (did you mean "get_time"?)`}},
		{"bad schema", `
tools:
  x:
    shell: date
    parameters: {type: object, properties: {n: {type: 12}}}
agents:
  a: {llm: m, tools: [x]}
tasks:
  t: {description: d, agent: a}
`, []string{`agents.yaml:5:17: tools.x.parameters: not a valid JSON Schema`}},
		{"parameters not an object", `
tools:
  x: {shell: date, parameters: {type: string}}
agents:
  a: {llm: m, tools: [x]}
tasks:
  t: {description: d, agent: a}
`, []string{`tools.x.parameters: a tool's parameters describe an object (type: object)`}},
		{"shell and command", `
tools:
  x: {shell: date, command: [date]}
tasks:
  t: {description: d, agent: a}
agents:
  a: {llm: m}
`, []string{`agents.yaml:3:3: tools.x: has shell and command`}},
		{"nothing to run", `
tools:
  x: {description: nothing}
agents:
  a: {llm: m}
tasks:
  t: {description: d, agent: a}
`, []string{`tools.x: says nothing to run`}},
		{"command agent with tools", `
tools:
  x: {shell: date}
agents:
  a: {shell: cat, tools: [x]}
tasks:
  t: {description: d, agent: a}
`, []string{`agents.a.tools: only an LLM agent calls tools`}},
		{"execute_command not allowed", `
agents:
  a: {llm: m, tools: [execute_command]}
tasks:
  t: {description: d, agent: a}
`, []string{"agents.a.tools[0]: execute_command runs any command the model writes: allow it with the top-level `allow: [execute_command]`"}},
		{"bad tool name", `
tools:
  "get time": {shell: date}
agents:
  a: {llm: m}
tasks:
  t: {description: d, agent: a}
`, []string{`tools.get time: expected`}},
		{"max_turns zero", `
agents:
  a: {llm: m, max_turns: 0}
tasks:
  t: {description: d, agent: a}
`, []string{`agents.a.max_turns: expected at least 1, got integer 0`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("agents.yaml", []byte(tc.spec))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestExecuteCommandAllowed(t *testing.T) {
	team, err := Parse("agents.yaml", []byte(`
allow: [execute_command]
agents:
  a: {llm: m, tools: [execute_command]}
tasks:
  t: {description: d, agent: a}
`))
	if err != nil {
		t.Fatal(err)
	}
	if tl := team.Agent("a").Tools; len(tl) != 1 || tl[0].Builtin != ExecuteCommand || tl[0].Idempotent {
		t.Fatalf("tools %+v", tl)
	}
}

// A tool's definition and max_turns are part of the agent's key (so
// --reuse unchanged re-runs its tasks), never of the task-set fingerprint.
func TestToolsInAgentKeyNotFingerprint(t *testing.T) {
	base, err := Parse("agents.yaml", []byte(toolsSpec))
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]string{
		"tool shell":      strings.Replace(toolsSpec, "+%H:%M", "+%H", 1),
		"tool timeout":    strings.Replace(toolsSpec, "timeout: 10s", "timeout: 20s", 1),
		"tool idempotent": strings.Replace(toolsSpec, "idempotent: true", "idempotent: false", 1),
		"tool parameters": strings.Replace(toolsSpec, "required: [zone]", "required: []", 1),
		"tool list":       strings.Replace(toolsSpec, "tools: [get_time, read_file]", "tools: [get_time]", 1),
		"max_turns":       strings.Replace(toolsSpec, "max_turns: 8", "max_turns: 9", 1),
	}
	for name, src := range edits {
		if src == toolsSpec {
			t.Fatalf("%s: the edit did not apply", name)
		}
		edited, err := Parse("agents.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if edited.AgentKey("clock", nil) == base.AgentKey("clock", nil) {
			t.Errorf("%s: the agent key did not change", name)
		}
		if edited.Fingerprint(nil) != base.Fingerprint(nil) {
			t.Errorf("%s: the task-set fingerprint changed", name)
		}
	}
	// An unused tool's edit changes nothing.
	other, err := Parse("agents.yaml", []byte(strings.Replace(toolsSpec, "./charge.sh", "./charge2.sh", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if other.AgentKey("clock", nil) != base.AgentKey("clock", nil) {
		t.Error("editing a tool the agent does not use changed its key")
	}
}

// An agent without tools keeps the key earlier versions computed.
func TestAgentKeyWithoutToolsUnchanged(t *testing.T) {
	team, err := Parse("agents.yaml", []byte("agents:\n  a: {llm: m}\ntasks:\n  t: {description: d, agent: a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	def := map[string]any{"kind": "llm", "role": "", "goal": "", "backstory": "", "instructions": "", "memory": false,
		"shell": "", "command": []any{}, "timeout": "",
		"llm": map[string]any{"model": "m", "base_url": "", "api_key_env": "", "max_tokens": 0, "timeout": ""}}
	if got, want := team.AgentKey("a", nil), hash16(canonicalJSON(def)); got != want {
		t.Errorf("agent key %s, want %s", got, want)
	}
}

func TestMCPServersLoad(t *testing.T) {
	team, err := Parse("agents.yaml", []byte(`
mcp:
  servers:
    files:
      command: [mcp-files, --root, .]
      env: {LEVEL: debug}
      tools: [read, list]
      idempotent: [read, list]
    search:
      url: http://127.0.0.1:9000/mcp
      headers: {Authorization: SEARCH_TOKEN}
agents:
  a: {llm: m, tools: [files, search]}
tasks:
  t: {description: d, agent: a}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := team.Agent("a")
	if len(a.MCP) != 2 || len(a.Tools) != 0 {
		t.Fatalf("agent MCP %+v, tools %+v", a.MCP, a.Tools)
	}
	files, search := a.MCP[0], a.MCP[1]
	if strings.Join(files.Command, " ") != "mcp-files --root ." || files.Env["LEVEL"] != "debug" || !files.Allows("read") || files.Allows("write") || !files.IsIdempotent("list") {
		t.Errorf("files %+v", files)
	}
	if search.URL == "" || search.Headers["Authorization"] != "SEARCH_TOKEN" || !search.Allows("anything") || search.IsIdempotent("anything") {
		t.Errorf("search %+v", search)
	}
	edited, err := Parse("agents.yaml", []byte(strings.Replace(`
mcp: {servers: {files: {command: [mcp-files], idempotent: [read]}}}
agents:
  a: {llm: m, tools: [files]}
tasks:
  t: {description: d, agent: a}
`, "idempotent: [read]", "idempotent: []", 1)))
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := Parse("agents.yaml", []byte(`
mcp: {servers: {files: {command: [mcp-files], idempotent: [read]}}}
agents:
  a: {llm: m, tools: [files]}
tasks:
  t: {description: d, agent: a}
`))
	if edited.AgentKey("a", nil) == orig.AgentKey("a", nil) || edited.Fingerprint(nil) != orig.Fingerprint(nil) {
		t.Error("an MCP server's definition belongs to the agent's key, not the fingerprint")
	}
}

func TestMCPServersInvalid(t *testing.T) {
	tests := []struct{ name, spec, want string }{
		{"command and url", `mcp: {servers: {s: {command: [x], url: "http://h"}}}`, "mcp.servers.s: has command and url"},
		{"neither", `mcp: {servers: {s: {tools: [a]}}}`, "mcp.servers.s: says neither how to start it"},
		{"misspelt server", `mcp: {servers: {files: {command: [x]}}}`, `unknown tool "flies" (did you mean "files"?)`},
		{"header value written down", `mcp: {servers: {s: {url: "http://h", headers: {Authorization: "Bearer abc"}}}}`, "mcp.servers.s.headers.Authorization: is no environment variable name (the value is not shown)"},
		// A url is held to base_url's rule, shown without its credentials.
		{"ftp url", `mcp: {servers: {s: {url: "ftp://u:PWSECRET-1234@h/mcp"}}}`, `mcp.servers.s.url: "ftp://h/mcp" is not an http or https URL such as http://mcp.example/mcp`},
		{"no scheme", `mcp: {servers: {s: {url: "127.0.0.1/mcp?api_key=QSECRET-9876"}}}`, `mcp.servers.s.url: "127.0.0.1/mcp" has no scheme: write http://127.0.0.1/mcp (or https://)`},
		{"port out of range", `mcp: {servers: {s: {url: "http://h:99999/mcp"}}}`, `mcp.servers.s.url: "http://h:99999/mcp" has the port 99999`},
		{"bad escape in the password", `mcp: {servers: {s: {url: "http://u:PWSEC%zzRET-abcdefgh1234@h/mcp"}}}`, `mcp.servers.s.url: "http://h/mcp" has a user or password part (up to the last @, not shown)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("agents.yaml", []byte(tc.spec+"\nagents:\n  a: {llm: m, tools: [flies]}\ntasks:\n  t: {description: d, agent: a}\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %v shows a credential", err)
			}
		})
	}
}

// PraisonAI's mcp: {servers: {NAME: {command, args, env}}} serves every agent.
func TestPraisonAIMCP(t *testing.T) {
	team, err := Parse("agents.yaml", []byte(`
framework: praisonai
topic: files
mcp:
  servers:
    fs:
      command: npx
      args: [-y, "@modelcontextprotocol/server-filesystem", /tmp]
      env: {DEBUG: "1"}
      enabled: true
      description: Files
    time:
      command: npx
      enabled: false
roles:
  reader:
    role: Reader
    goal: Read
    backstory: Reads.
    tasks:
      read: {description: Read the files, expected_output: a list}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := team.Agent("reader")
	if len(a.MCP) != 1 || strings.Join(a.MCP[0].Command, " ") != "npx -y @modelcontextprotocol/server-filesystem /tmp" || a.MCP[0].Env["DEBUG"] != "1" {
		t.Fatalf("agent MCP %+v (the disabled server must not be there)", a.MCP)
	}
	if team.MCPServer("time") != nil {
		t.Error("a server with enabled: false is loaded")
	}
	for _, w := range team.Warnings {
		if strings.Contains(w.Path, "mcp") {
			t.Errorf("mcp warned: %s", w)
		}
	}
}

// A PraisonAI MCP server's key that teamrun does not read is said, never
// dropped in silence; enabled: must be true or false.
func TestPraisonAIMCPKeys(t *testing.T) {
	src := "steps:\n  - {agent: a, action: hi}\nagents:\n  a: {role: A, llm: m}\nmcp:\n  servers:\n    fs: {command: npx, timeout_s: 5%s}\n"
	team, err := Parse("p.yaml", []byte(fmt.Sprintf(src, "")))
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, w := range team.Warnings {
		said = append(said, w.String())
	}
	if want := "p.yaml:7:24: mcp.servers.fs.timeout_s: not supported by teamrun, ignored"; !strings.Contains(strings.Join(said, "\n"), want) {
		t.Errorf("warnings %q, want one starting %q", said, want)
	}
	if _, err := Parse("p.yaml", []byte(fmt.Sprintf(src, ", enabled: nope"))); err == nil || !strings.Contains(err.Error(), `mcp.servers.fs.enabled: expected true or false, got string "nope"`) {
		t.Errorf("err %v", err)
	}
}

func TestWorkdir(t *testing.T) {
	src := "workdir: data\nagents:\n  a: {llm: m, tools: [read_file]}\ntasks:\n  t: {description: d, agent: a}\n"
	team, err := Parse("agents.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := team.ToolDir("/p/agents.yaml"); got != "/p/data" {
		t.Errorf("ToolDir %q", got)
	}
	other, _ := Parse("agents.yaml", []byte(strings.Replace(src, "workdir: data", "workdir: out", 1)))
	if other.AgentKey("a", nil) == team.AgentKey("a", nil) {
		t.Error("the workdir of an agent's file tools is not in its key")
	}
	if _, err := Parse("agents.yaml", []byte(strings.Replace(src, "workdir: data", "workdir: ../elsewhere", 1))); err == nil ||
		!strings.Contains(err.Error(), `agents.yaml:1:10: workdir: workdir "../elsewhere" leaves the spec's folder`) {
		t.Errorf("err %v", err)
	}
}

// An MCP server's timeout bounds one call; it is part of the agent's key
// only when set, so that the keys of specs without it stay as they were.
func TestMCPServerTimeout(t *testing.T) {
	const src = `
mcp: {servers: {files: {command: [mcp-files]TIMEOUT}}}
agents:
  a: {llm: m, tools: [files]}
tasks:
  t: {description: d, agent: a}
`
	parse := func(timeout string) *Team {
		t.Helper()
		team, err := Parse("agents.yaml", []byte(strings.Replace(src, "TIMEOUT", timeout, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return team
	}
	without, with := parse(""), parse(", timeout: 2s")
	if got := with.MCPServer("files").Timeout; got != 2*time.Second {
		t.Errorf("timeout %v, want 2s", got)
	}
	old := map[string]any{"name": "files", "command": []any{"mcp-files"}, "env": map[string]any{}, "url": "",
		"headers": map[string]any{}, "tools": []any{}, "idempotent": []any{}}
	if got, want := without.ToolKeys("a")["mcp:files"], hash16(canonicalJSON(old)); got != want {
		t.Errorf("key of a server without timeout %s, want %s (as before timeout: existed)", got, want)
	}
	if with.ToolKeys("a")["mcp:files"] == without.ToolKeys("a")["mcp:files"] || with.AgentKey("a", nil) == without.AgentKey("a", nil) {
		t.Error("the timeout is not part of the agent's key")
	}
	if _, err := Parse("agents.yaml", []byte(strings.Replace(src, "TIMEOUT", ", timeout: soon", 1))); err == nil || !strings.Contains(err.Error(), "mcp.servers.files.timeout") {
		t.Errorf("a timeout that is no duration: %v", err)
	}
}
