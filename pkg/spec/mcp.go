package spec

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// MCPServer is a Model Context Protocol server whose tools LLM agents may
// call: a stdio server (Command, Env) or a streamable HTTP one (URL,
// Headers). An agent gets a server's tools by listing its name in tools.
type MCPServer struct {
	Name    string
	Command []string          // argv of a stdio server
	Env     map[string]string // added to a stdio server's environment
	URL     string            // a streamable HTTP server
	// Headers maps a header to the environment variable holding its value,
	// so that a token is never written in the spec.
	Headers map[string]string
	// Allow is the allow-list of tool names; empty: every tool the server
	// lists. Idempotent names the tools safe to run again after a crash.
	Allow      []string
	Idempotent []string
	// Timeout bounds one call of its tools, as a command tool's timeout
	// does; 0: none.
	Timeout time.Duration
	Pos     Pos
	// Path is where it is written, as messages name its keys:
	// mcp.servers.NAME, or DESIGN's mcp_servers.NAME.
	Path string
}

// Key is the path of its key k (url, headers) as messages name it.
func (m *MCPServer) Key(k string) string {
	if m.Path == "" {
		return "mcp.servers." + m.Name + "." + k // one made in code, not read
	}
	return m.Path + "." + k
}

// Allows reports whether an agent may call the server's tool.
func (m *MCPServer) Allows(tool string) bool {
	return len(m.Allow) == 0 || slices.Contains(m.Allow, tool)
}

// IsIdempotent reports whether the server's tool is declared idempotent.
func (m *MCPServer) IsIdempotent(tool string) bool { return slices.Contains(m.Idempotent, tool) }

// MCPServer returns the server named name, or nil.
func (t *Team) MCPServer(name string) *MCPServer {
	for _, m := range t.MCP {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// mcpServers reads mcp: {servers: {NAME: {...}}}, native and PraisonAI
// alike: command as an argv or as a program with args:, env, url, headers
// (header: VARIABLE), tools (the allow-list) and idempotent. A PraisonAI
// server may also say enabled: false (it is not started) and describe
// itself; any other key of one is said to be ignored, as the schema says
// it of a native one.
func (b *builder) mcpServers(v *tree, praison bool) {
	b.mcpServerMap(v.get("servers"), praison)
}

// mcpServerMap reads a mapping of MCP servers by name: mcp.servers, or
// DESIGN's top-level mcp_servers.
func (b *builder) mcpServerMap(servers *tree, praison bool) {
	if !servers.isMap() {
		return // the schema (native) reports it; PraisonAI: nothing to load
	}
	for i, name := range servers.keys() {
		sv := servers.vals()[i]
		if !sv.isMap() {
			continue
		}
		if praison {
			for j, k := range sv.keys() {
				if !slices.Contains(mcpServerKeys, k) {
					b.praisonIgnored(sv.vals()[j])
				}
			}
			if e := sv.get("enabled"); e != nil && !e.isNull() {
				if on, _ := b.praisonBool(e); !on {
					continue
				}
			}
		}
		m := &MCPServer{Name: name, Pos: sv.kpos(), Path: sv.path}
		switch c := sv.get("command"); {
		case c.isSeq():
			for _, it := range c.items() {
				s, _ := it.str()
				m.Command = append(m.Command, s)
			}
		case c != nil:
			if s, ok := c.str(); ok && s != "" {
				m.Command = []string{s}
			}
		}
		for _, it := range sv.get("args").itemsOrNil() {
			if s, ok := it.str(); ok {
				m.Command = append(m.Command, s)
			}
		}
		if u := sv.get("url"); u != nil {
			m.URL, _ = u.str()
			if _, err := ParseMCPURL(m.URL); m.URL != "" && err != nil {
				b.errorf(u, u.pos(), "%v", err)
			}
		}
		m.Env = stringMap(sv.get("env"))
		m.Headers = stringMap(sv.get("headers"))
		for _, h := range sv.get("headers").vals() {
			b.checkKeyName(h, praison)
		}
		for _, it := range sv.get("tools").itemsOrNil() {
			if s, ok := it.str(); ok {
				m.Allow = append(m.Allow, s)
				// The schema holds a native file's names to it.
				if praison && !ToolNameOK(s) {
					b.errorf(it, it.pos(), "%q can never be offered to a model (%s): take it out of the list", s, ToolNameRule)
				}
			}
		}
		for _, it := range sv.get("idempotent").itemsOrNil() {
			if s, ok := it.str(); ok {
				m.Idempotent = append(m.Idempotent, s)
			}
		}
		if !praison { // not a key of PraisonAI's servers: warned as ignored there
			m.Timeout = b.duration(sv.get("timeout"))
		}
		switch {
		case len(m.Command) > 0 && m.URL != "":
			b.errorf(sv, sv.kpos(), "has command and url: an MCP server is either a stdio server (command) or a streamable HTTP one (url), so keep one")
		case len(m.Command) == 0 && m.URL == "":
			b.errorf(sv, sv.kpos(), "says neither how to start it (command: [argv]) nor where it is (url:)")
		case len(m.Command) > 0 && strings.TrimSpace(m.Command[0]) == "":
			b.errorf(sv, sv.kpos(), "the program to run (the first item of command) is empty")
		}
		if b.team.Tool(name) != nil {
			b.errorf(sv, sv.kpos(), "%q names both a tool and an MCP server: an agent's tools list could not tell them apart; rename one", name)
		}
		b.team.MCP = append(b.team.MCP, m)
	}
}

// mcpServerKeys are the keys of a PraisonAI MCP server that teamrun reads
// (description only documents it).
var mcpServerKeys = []string{"command", "args", "env", "url", "headers", "tools", "idempotent", "enabled", "description"}

func stringMap(v *tree) map[string]string {
	if !v.isMap() {
		return nil
	}
	out := make(map[string]string, len(v.keys()))
	for i, k := range v.keys() {
		if s, ok := v.vals()[i].str(); ok {
			out[k] = s
		}
	}
	return out
}

// mcpKeyDef is what an agent's key hashes of one server: its definition
// as written (the names of header variables, never their values).
func mcpKeyDef(m *MCPServer) map[string]any {
	env := map[string]any{}
	for k, v := range m.Env {
		env[k] = v
	}
	headers := map[string]any{}
	for k, v := range m.Headers {
		headers[k] = v
	}
	allow := append([]string(nil), m.Allow...)
	sort.Strings(allow)
	idem := append([]string(nil), m.Idempotent...)
	sort.Strings(idem)
	def := map[string]any{"name": m.Name, "command": anyStrings(m.Command), "env": env, "url": m.URL,
		"headers": headers, "tools": anyStrings(allow), "idempotent": anyStrings(idem)}
	// Only when set: the keys of the agents of a spec without it stay.
	if m.Timeout > 0 {
		def["timeout"] = durationText(m.Timeout)
	}
	return def
}
