package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teamrun/teamrun/internal/wireerr"
	"github.com/teamrun/teamrun/pkg/runner/llm"
	"github.com/teamrun/teamrun/pkg/spec"
)

// HandshakeTimeout bounds starting or reaching a server and listing its
// tools.
const HandshakeTimeout = 30 * time.Second

// stderrTail is how much of a stdio server's stderr an error quotes.
const stderrTail = 2048

// stderrSettle bounds the wait, once a server's connection has ended, for
// the rest of its stderr: all of it, unless the server closed its stdout
// but lives on (or a child of it holds its stderr).
const stderrSettle = 5 * time.Second

// phase is the step of reaching a server that failed: its MCP handshake
// (starting or reaching it first), or the listing of its tools that
// follows, under the same limit.
type phase int

const (
	handshake phase = iota
	listing
)

// handshakeErr says why server s could not be reached or listed, in the
// user's words (the SDK's "client is closing: EOF" says nothing of a
// server that died at start, its "rejected by transport: Post …: dial
// tcp …" nothing of the url to check), with the end of a stdio server's
// stderr: where a server says what it lacks.
// ctx is the attempt's, hctx the handshake's (ctx with the limit).
func (m *MCP) handshakeErr(ctx, hctx context.Context, limit time.Duration, err error, s *spec.MCPServer, p phase) error {
	stderr, out, web := m.stderr[s.Name], m.stdout[s.Name], m.web[s.Name]
	// What each phase says when the attempt ended (cut), when its limit
	// passed (silent), when the server ended (gone).
	step, cut, gone := "", "stopped before it answered its MCP handshake", "it ended before its MCP handshake"
	// stderr is nil for an HTTP server: it has no stdin and stdout.
	hint := "is it an MCP server on stdin and stdout?"
	if stderr == nil {
		hint = "is its url a streamable HTTP MCP endpoint?"
	}
	silent := fmt.Sprintf("no answer to the MCP handshake within %s (%s)", limit, hint)
	if p == listing {
		step, cut, gone = "listing its tools: ", "stopped before it answered", "it ended before it answered"
		silent = fmt.Sprintf("no answer within the %s its MCP handshake and tool list may take", limit)
	}
	var ee *exec.Error
	var pe *fs.PathError
	switch bad := out.notJSON(); {
	case bad != nil:
		// The server did not end, nor is a JSON syntax error the user's
		// to read: the line is the mistake, which its stderr does not tell.
		return fmt.Errorf("%s%w", step, bad)
	case ctx.Err() != nil:
		// The attempt's end (its timeout, an interrupt), which the
		// caller names, not the handshake's limit.
		err = stopped{ctx.Err(), cut}
	case errors.Is(hctx.Err(), context.DeadlineExceeded):
		err = errors.New(silent)
	case errors.As(err, &ee):
		return fmt.Errorf("cannot start %s: %w", ee.Name, ee.Err)
	case errors.As(err, &pe):
		return fmt.Errorf("cannot start %s: %w", pe.Path, pe.Err)
	case web != nil && web.refused() != 0:
		return fmt.Errorf("%s%s", step, statusWords(s, web.refused(), err))
	case web != nil && errors.As(err, new(*url.Error)):
		return fmt.Errorf("%s%s", step, wireWords(s, err))
	case stderr != nil && ended(err):
		stderr.settle(ctx)
		err = errors.New(gone)
	}
	return fmt.Errorf("%s%w%s", step, err, stderr.text())
}

// stopped is a handshake or listing the attempt's end cut short:
// errors.Is sees the context's error; the text is the user's words, not
// Go's.
type stopped struct {
	err  error
	text string
}

func (e stopped) Error() string { return e.text }
func (e stopped) Unwrap() error { return e.err }

// ended tells a connection the server closed (it exited, or closed its
// stdout) from other failures.
func ended(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed)
}

// serverStderr is a stdio server's stderr, read through a pipe of
// teamrun's own into a Tail. Were the Tail the command's Stderr, os/exec
// would copy it in a goroutine only Wait waits for, and Wait comes when
// the session closes: a failure seen on stdout (its end) could be told
// before the server's last words on stderr were read, or not, as the
// machine's load decides.
type serverStderr struct {
	tail Tail
	r    *os.File
	done chan struct{} // closed once r is read to its end
}

// startStderr gives cmd a new pipe as its stderr and starts reading it;
// the caller closes w once cmd has started (or failed to), so that the
// pipe ends with the server.
func startStderr(cmd *exec.Cmd) (*serverStderr, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	s := &serverStderr{tail: Tail{Max: stderrTail}, r: r, done: make(chan struct{})}
	cmd.Stderr = w
	go func() {
		defer close(s.done)
		_, _ = io.Copy(&s.tail, r)
	}()
	return s, w, nil
}

// settle waits until the server's stderr is read to its end (the server
// and its children are gone), for stderrSettle at most, or until ctx ends.
func (s *serverStderr) settle(ctx context.Context) {
	t := time.NewTimer(stderrSettle)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// close stops reading: a child the server left that holds its stderr
// keeps no goroutine of teamrun's.
func (s *serverStderr) close() { _ = s.r.Close() }

// text is what a failure adds of a stdio server's stderr; "" for an HTTP
// server (nil).
func (s *serverStderr) text() string {
	if s == nil {
		return ""
	}
	if t := strings.TrimSpace(s.tail.String()); t != "" {
		return "; its stderr ends: " + t
	}
	return "; it wrote nothing on stderr"
}

// MCPOptions say how an attempt reaches its MCP servers.
type MCPOptions struct {
	// Prepare readies a stdio server's command before it starts (its own
	// process group, as command agents get); Started learns its pid, Ended
	// that it was closed.
	Prepare func(cmd *exec.Cmd)
	Started func(pid int)
	Ended   func(pid int)
	Getenv  func(string) string // header values; nil: os.Getenv
	Env     []string            // the task's TEAMRUN_* environment, for stdio servers
	HTTP    *http.Client
	// HandshakeTimeout: 0 means the package's HandshakeTimeout.
	HandshakeTimeout time.Duration
}

// MCP is the open sessions of one attempt's MCP servers.
type MCP struct {
	sessions map[string]*mcp.ClientSession
	servers  map[string]*spec.MCPServer  // by name: a call's timeout
	stderr   map[string]*serverStderr    // each stdio server's
	stdout   map[string]*jsonLines       // each stdio server's
	web      map[string]*headerTransport // each HTTP server's
	opts     MCPOptions
	pids     []int
	// Digests holds, per server, the SHA-256 (16 hex digits) of the tool
	// list the model is offered: names, descriptions and schemas.
	Digests map[string]string
	// Warnings say, per name a server's tools: or idempotent: gives that
	// the server does not list, what that name does (a typo there hides
	// a tool, or makes it not idempotent, unsaid otherwise); and per tool
	// the server lists under a name no model can be offered, that it is
	// left out.
	Warnings []string
}

// ConnectMCP starts (stdio) or reaches (HTTP) each server and lists its
// tools: those its allow-list keeps, with the server's schemas compiled
// and the idempotent ones marked. Close the MCP when the attempt ends.
func ConnectMCP(ctx context.Context, servers []*spec.MCPServer, opts MCPOptions) (*MCP, []*spec.Tool, error) {
	m := &MCP{sessions: map[string]*mcp.ClientSession{}, servers: map[string]*spec.MCPServer{}, stderr: map[string]*serverStderr{}, stdout: map[string]*jsonLines{}, web: map[string]*headerTransport{}, opts: opts, Digests: map[string]string{}}
	var out []*spec.Tool
	for _, s := range servers {
		// A server that never finishes its handshake must not hang the
		// attempt: the session itself outlives this context.
		limit := opts.HandshakeTimeout
		if limit <= 0 {
			limit = HandshakeTimeout
		}
		hctx, cancel := context.WithTimeout(ctx, limit)
		cs, err := m.connect(hctx, s)
		if err != nil {
			// Told before Close, which stops reading the server's stderr.
			err = m.handshakeErr(ctx, hctx, limit, err, s, handshake)
			cancel()
			m.Close()
			return nil, nil, fmt.Errorf("MCP server %s: %w", s.Name, err)
		}
		m.sessions[s.Name] = cs
		m.servers[s.Name] = s
		res, err := cs.ListTools(hctx, &mcp.ListToolsParams{})
		if err != nil {
			err = m.handshakeErr(ctx, hctx, limit, err, s, listing)
			cancel()
			m.Close()
			return nil, nil, fmt.Errorf("MCP server %s: %w", s.Name, err)
		}
		cancel()
		h := sha256.New()
		for _, t := range res.Tools {
			if !s.Allows(t.Name) {
				continue
			}
			if !spec.ToolNameOK(t.Name) {
				// Offered, it would make every request of the attempt a 400
				// that names neither the server nor the tool.
				if slices.Contains(s.Allow, t.Name) {
					m.Close()
					return nil, nil, &ToolNameError{Server: s.Name, Tool: t.Name, Allow: s.Key("tools")}
				}
				m.Warnings = append(m.Warnings, fmt.Sprintf("MCP server %s lists a tool named %q, which no model can be offered (%s): it is left out: to call it, the server must list it under a name that fits; to leave it out without this warning, name the tools to offer in %s", s.Name, t.Name, spec.ToolNameRule, s.Key("tools")))
				continue
			}
			if b, err := json.Marshal(struct {
				Name, Description string
				Schema            any
			}{t.Name, t.Description, t.InputSchema}); err == nil {
				h.Write(b)
				h.Write([]byte{'\n'})
			}
			st := &spec.Tool{Name: t.Name, Description: t.Description, MCP: s.Name, Idempotent: s.IsIdempotent(t.Name)}
			if b, err := json.Marshal(t.InputSchema); err == nil {
				_ = json.Unmarshal(b, &st.Parameters)
			}
			if st.Parameters == nil {
				st.Parameters = map[string]any{"type": "object"}
			}
			// A schema teamrun cannot compile leaves the checking to the server.
			st.Schema, _ = spec.CompileParameters(st.Parameters)
			out = append(out, st)
		}
		m.Digests[s.Name] = hex.EncodeToString(h.Sum(nil)[:8])
		m.Warnings = append(m.Warnings, unlisted(s, res.Tools)...)
	}
	return m, out, nil
}

// ToolNameError is a tool a server's allow-list names that no model can
// be offered under the name the server lists it by. Every attempt would
// list it so: it ends the task's attempts (EndsAttempts), as two tools of
// one name do.
type ToolNameError struct{ Server, Tool, Allow string }

func (e *ToolNameError) Error() string {
	return fmt.Sprintf("MCP server %s lists the tool %q that %s names, but no model can be offered that name (%s): take it out of %s, or have the server list it under a name that fits — not retried",
		e.Server, e.Tool, e.Allow, spec.ToolNameRule, e.Allow)
}

// EndsAttempts says no new attempt can help.
func (e *ToolNameError) EndsAttempts() bool { return true }

// unlisted are the messages for the names s's tools: and idempotent:
// give that the server's list lacks.
func unlisted(s *spec.MCPServer, listed []*mcp.Tool) []string {
	has := func(name string) bool {
		return slices.ContainsFunc(listed, func(t *mcp.Tool) bool { return t.Name == name })
	}
	var out []string
	for _, n := range s.Allow {
		if !has(n) {
			out = append(out, fmt.Sprintf("MCP server %s lists no tool %s, which its tools: allow-list names: no tool of that name is offered", s.Name, n))
		}
	}
	for _, n := range s.Idempotent {
		if !has(n) {
			out = append(out, fmt.Sprintf("MCP server %s lists no tool %s, which its idempotent: list names", s.Name, n))
		}
	}
	return out
}

func (m *MCP) connect(ctx context.Context, s *spec.MCPServer) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "teamrun", Version: "1"}, nil)
	if s.URL != "" {
		hc := m.opts.HTTP
		if hc == nil {
			hc = &http.Client{}
		}
		getenv := orEnviron(m.opts.Getenv)
		headers := http.Header{}
		for h, env := range s.Headers {
			v := getenv(env)
			if v == "" {
				if !spec.ShowsVarName(env) {
					return nil, fmt.Errorf("header %s comes from the environment variable its headers entry names (not shown: it reads as a key rather than a name), which is not set", h)
				}
				return nil, fmt.Errorf("header %s comes from $%s, which is not set", h, env)
			}
			headers.Set(h, v)
		}
		c := *hc
		t := &headerTransport{base: hc.Transport, headers: headers}
		m.web[s.Name] = t
		c.Transport = t
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &c}, nil)
	}
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	env := append(os.Environ(), m.opts.Env...)
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	cmd.Env = env
	stderr, w, err := startStderr(cmd)
	if err != nil {
		// The errno ("too many open files"), not the system call's name.
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se.Err
		}
		return nil, fmt.Errorf("cannot start %s: a pipe for its stderr: %w", s.Command[0], err)
	}
	m.stderr[s.Name] = stderr
	if m.opts.Prepare != nil {
		m.opts.Prepare(cmd)
	}
	out := &jsonLines{}
	m.stdout[s.Name] = out
	cs, err := client.Connect(ctx, &stdioTransport{cmd: cmd, terminate: 2 * time.Second, out: out}, nil)
	// The server holds its own end now (or never started): teamrun's
	// would keep the pipe open past the server's end.
	_ = w.Close()
	if cmd.Process != nil {
		m.pids = append(m.pids, cmd.Process.Pid)
		if m.opts.Started != nil {
			m.opts.Started(cmd.Process.Pid)
		}
	}
	return cs, err
}

// orEnviron is getenv, or os.Getenv when it is nil.
func orEnviron(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}

// HeaderValues are the values the servers' headers take from the
// environment (getenv; nil: os.Getenv), as a connection sends them:
// secrets, like an API key, that what teamrun records and shows has
// redacted (a server or a gateway may echo them).
func HeaderValues(servers []*spec.MCPServer, getenv func(string) string) []string {
	getenv = orEnviron(getenv)
	var out []string
	for _, s := range servers {
		for _, env := range s.Headers {
			if v := getenv(env); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// Call runs a tool of a server. Only a stopped ctx is an error; a tool
// that fails, or a server that cannot answer, is an error result.
func (m *MCP) Call(ctx context.Context, server, tool string, args map[string]any) ([]byte, bool, error) {
	cs := m.sessions[server]
	if cs == nil {
		return nil, false, fmt.Errorf("MCP server %s is not connected", server)
	}
	stdout := m.stdout[server]
	before := stdout.notJSON()
	callCtx, limit := ctx, time.Duration(0)
	if s := m.servers[server]; s != nil && s.Timeout > 0 {
		var cancel context.CancelFunc
		limit = s.Timeout
		callCtx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			// The server may still be at it: as for a command tool.
			return nil, false, Unfinished(fmt.Errorf("MCP server %s: timed out after %s (%s)", server, limit, m.servers[server].Key("timeout")))
		}
		if bad := stdout.notJSON(); bad != nil {
			// A line read while the call ran may have come from it (or
			// be a log line it wrote): teamrun no longer hears the
			// server, whatever the call did.
			when := "during this call, so what the call did is unknown"
			if before != nil {
				when = "before this call, which never reached it"
			}
			return nil, false, fmt.Errorf("MCP server %s: %w; teamrun closed its connection %s", server, bad, when)
		}
		if stderr := m.stderr[server]; stderr != nil && ended(err) {
			// What the call did before the server went is unknown; a
			// later call never reached it.
			stderr.settle(ctx)
			return nil, false, fmt.Errorf("MCP server %s ended or closed its connection: if it did during this call, what the call did is unknown%s", server, stderr.text())
		}
		return nil, false, fmt.Errorf("MCP server %s: %w", server, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			b.WriteString(x.Text)
		default:
			if j, err := json.Marshal(c); err == nil {
				b.Write(j)
			}
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	out, cut := cutOutput([]byte(b.String()))
	if res.IsError {
		return out, cut, errors.New("the MCP tool reported an error")
	}
	return out, cut, nil
}

// Close ends every session: a stdio server gets its stdin closed, then
// SIGTERM; what is left of its process group goes with Ended.
func (m *MCP) Close() {
	if m == nil {
		return
	}
	for _, cs := range m.sessions {
		_ = cs.Close()
	}
	if m.opts.Ended != nil {
		for _, pid := range m.pids {
			m.opts.Ended(pid)
		}
	}
	for _, s := range m.stderr {
		s.close()
	}
}

// headerTransport adds the server's headers to every request, and notes
// the status of the last POST's answer: the SDK's error for a status it
// refuses has only the status's text ("Unauthorized"), too little to say
// what to check.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	status  atomic.Int32 // 0 while a POST has no answer
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	// Only POSTs: they carry the requests that fail (a GET for the
	// server's own stream may be refused, as the SDK expects).
	post := r.Method == http.MethodPost
	if post {
		t.status.Store(0)
	}
	resp, err := base.RoundTrip(r)
	if post && resp != nil {
		t.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// refused is the error status (4xx, 5xx) of the last POST's answer; 0
// when it had none, or a success.
func (t *headerTransport) refused() int {
	if code := int(t.status.Load()); code >= 400 {
		return code
	}
	return 0
}

// sdkRejected is the code of the SDK's own error for a request that
// failed ("rejected by transport"), which no server wrote: the server's
// error, when its answer held one, comes before it in the chain.
const sdkRejected = -32005

// statusWords says an HTTP server's refusal (code) of a request of the
// handshake or listing, err the SDK's, with what to check: the headers
// for a 401 or 403 (their variables named, never their values), the
// url's path for a 404.
func statusWords(s *spec.MCPServer, code int, err error) string {
	said := fmt.Sprintf("the server answered HTTP %d %s", code, http.StatusText(code))
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != sdkRejected && strings.TrimSpace(we.Message) != "" {
		said += " (`" + quoteLine([]byte(we.Message)) + "`)"
	}
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		if len(s.Headers) == 0 && len(llm.URLSecrets(s.URL)) > 0 {
			return fmt.Sprintf("%s: %s: check them, or send a token in %s instead", said, wireerr.CredentialsRefused(s.Key("url")), s.Key("headers"))
		}
		if len(s.Headers) == 0 {
			return fmt.Sprintf("%s: no headers are sent (%s is not set): if the server wants a token, set it to name the variable that holds it, such as {Authorization: TOKEN_VAR}", said, s.Key("headers"))
		}
		vals := "that variable's value"
		if len(s.Headers) > 1 {
			vals = "those variables' values"
		}
		return fmt.Sprintf("%s: check %s (%s) and %s", said, s.Key("headers"), headerVars(s), vals)
	case code == http.StatusNotFound:
		return fmt.Sprintf("%s: check the path in %s: it must be the server's MCP endpoint (often /mcp)", said, s.Key("url"))
	case code == http.StatusTooManyRequests || code >= 500:
		return fmt.Sprintf("%s: the server (or a proxy on the way) failed or is busy: check its log, and that %s is its URL", said, s.Key("url"))
	}
	return fmt.Sprintf("%s: is %s a streamable HTTP MCP endpoint?", said, s.Key("url"))
}

// headerVars lists s's headers with the variables they come from, in
// name order: "Authorization from $TOKEN".
func headerVars(s *spec.MCPServer) string {
	names := make([]string, 0, len(s.Headers))
	for h := range s.Headers {
		names = append(names, h)
	}
	sort.Strings(names)
	for i, h := range names {
		v := "a variable not shown (its name reads as a key)"
		if spec.ShowsVarName(s.Headers[h]) {
			v = "$" + s.Headers[h]
		}
		names[i] = h + " from " + v
	}
	return strings.Join(names, ", ")
}

// wireWords says an HTTP server's request that got no answer (err
// holds a *url.Error) as the LLM client says one: naming s's url, which
// a final failure's words do already.
func wireWords(s *spec.MCPServer, err error) string {
	msg, final := wireerr.Words(err, wireerr.URL{Key: s.Key("url")})
	if !final {
		msg += " (" + wireerr.From(s.Key("url")) + ")"
	}
	return msg
}
