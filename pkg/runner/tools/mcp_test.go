package tools_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// A stdio "server" that never answers fails the attempt after the
// handshake timeout, naming the server, and its process is ended.
func TestMCPHandshakeTimeout(t *testing.T) {
	var pid int
	_, _, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "mute", Command: []string{"sleep", "30"}}}, tools.MCPOptions{
		HandshakeTimeout: 200 * time.Millisecond,
		Prepare:          func(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} },
		Started:          func(p int) { pid = p },
		Ended:            func(p int) { _ = syscall.Kill(-p, syscall.SIGKILL) },
	})
	if err == nil || !strings.Contains(err.Error(), "MCP server mute: no answer to the MCP handshake within 200ms") {
		t.Fatalf("err %v", err)
	}
	if pid == 0 {
		t.Fatal("the server never started")
	}
	for i := 0; ; i++ {
		p, _ := os.FindProcess(pid)
		if p.Signal(syscall.Signal(0)) != nil {
			break
		}
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(b), ") Z ") {
			break // a zombie: dead, waiting for its reaper
		}
		if i > 400 {
			t.Fatalf("the server process %d outlived the failed handshake", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// silentLister serves an MCP server over HTTP that finishes its handshake
// but never answers tools/list (until the test ends); listing tells when
// that request arrived.
func silentLister(t *testing.T) (url string, listing <-chan struct{}) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "silent", Version: "1"}, nil)
	asked := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				once.Do(func() { close(asked) })
				select {
				case <-ctx.Done():
				case <-release:
				}
				return nil, errors.New("too late")
			}
			return next(ctx, method, req)
		}
	})
	// Stateless: closing a session would wait for the silent handler.
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	// Cleanups run last first: the handler lets go before the server closes.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL, asked
}

// A server that answers its handshake but not the listing of its tools
// is told so, in the words of that step, with the limit that ran out
// (the handshake's, which covers the listing).
func TestMCPListingTimeout(t *testing.T) {
	url, _ := silentLister(t)
	_, _, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "slow", URL: url}}, tools.MCPOptions{HandshakeTimeout: time.Second})
	want := "MCP server slow: listing its tools: no answer within the 1s its MCP handshake and tool list may take"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
}

// The attempt's end (its timeout, an interrupt) while a server lists its
// tools is told as that step's, and errors.Is still sees why it ended.
func TestMCPListingStopped(t *testing.T) {
	url, listing := silentLister(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-listing
		cancel()
	}()
	_, _, err := tools.ConnectMCP(ctx, []*spec.MCPServer{{Name: "slow", URL: url}}, tools.MCPOptions{})
	want := "MCP server slow: listing its tools: stopped before it answered"
	if err == nil || err.Error() != want || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want %q (context.Canceled)", err, want)
	}
}

// A stdio server teamrun cannot give a pipe for its stderr (no file
// descriptor is left) is not started, and the error says why in the
// user's words. The descriptors run out in a child (this test binary run
// again), so that no other test lacks them.
func TestMCPStderrPipeFails(t *testing.T) {
	const marker = "connect error: "
	if os.Getenv("TEAMRUN_TEST_NOFILE") == "1" {
		// Lower the limit, then take every descriptor below it.
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Open(os.DevNull); err != nil {
				break
			}
		}
		_, _, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "fd", Command: []string{"mcp-server"}}}, tools.MCPOptions{})
		fmt.Println(marker + fmt.Sprint(err))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPStderrPipeFails$")
	cmd.Env = append(os.Environ(), "TEAMRUN_TEST_NOFILE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := marker + "MCP server fd: cannot start mcp-server: a pipe for its stderr: too many open files\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("got\n%s\nwant %q", out, want)
	}
}

// An HTTP server that never answers its handshake is not asked whether
// it speaks on stdin and stdout: the hint is its url's. (It takes the
// notices it is sent, such as the SDK's that the handshake was given up,
// whose delivery the SDK waits for up to 5s.)
func TestMCPHandshakeTimeoutHTTP(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"notifications/`)) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	_, _, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "mute", URL: srv.URL}}, tools.MCPOptions{HandshakeTimeout: 200 * time.Millisecond})
	want := "MCP server mute: no answer to the MCP handshake within 200ms (is its url a streamable HTTP MCP endpoint?)"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
}

// A stdio server that writes a line that is not JSON-RPC on its stdout
// (a banner, a log line: the commonest MCP server mistake) is told so,
// the line quoted (cut, its control characters made spaces), with what to
// do: not as a server that ended, nor as a JSON syntax error.
func TestMCPNotJSONLine(t *testing.T) {
	const what = ": an MCP stdio server must write only protocol messages there; log to stderr"
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name, script, line string
	}{
		{"banner", `echo 'hello I am not json'`, "hello I am not json"},
		{"after a blank line", `echo; echo '  server ready'`, "  server ready"},
		{"broken JSON", `echo '{"jsonrpc": oops}'`, `{"jsonrpc": oops}`},
		{"JSON, not JSON-RPC", `echo '"hello"'`, `"hello"`},
		{"colored and long", `printf '\033[32mINFO\033[0m ` + long + `\n'`, " [32mINFO [0m " + long[:200-len("\033[32mINFO\033[0m ")] + "…"},
		{"longer than the line buffer", `head -c 100000 /dev/zero | tr '\0' y; echo`, strings.Repeat("y", 200) + "…"},
		// Its stdout ends on the line: the line, not the end, is told.
		{"no newline", `printf 'Listening'; exec 1>&-`, "Listening"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The server reads on after its line, as a live one would, and
			// ends with its stdin.
			_, _, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "noisy", Command: []string{"sh", "-c", tc.script + "; while read -r l; do :; done"}}}, tools.MCPOptions{})
			want := "MCP server noisy: it wrote a line that is not JSON-RPC on its stdout (`" + tc.line + "`)" + what
			if err == nil || err.Error() != want {
				t.Fatalf("err %v\nwant %q", err, want)
			}
			var nj *tools.NotJSONError
			if !errors.As(err, &nj) {
				t.Errorf("errors.As finds no NotJSONError in %v", err)
			}
		})
	}
}

// Names a server's tools: allow-list or idempotent: list give that the
// server does not list are said: a typo there would hide a tool, or make
// it not idempotent, silently.
func TestMCPUnlistedNames(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "two", Version: "1"}, nil)
	for _, name := range []string{"echo", "mcharge"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	m, listed, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "py", URL: srv.URL,
		Allow: []string{"echo", "ghost", "mcharge"}, Idempotent: []string{"mcharge", "phantom"}}}, tools.MCPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(listed) != 2 {
		t.Errorf("listed %d tools, want 2", len(listed))
	}
	want := []string{
		"MCP server py lists no tool ghost, which its tools: allow-list names: no tool of that name is offered",
		"MCP server py lists no tool phantom, which its idempotent: list names",
	}
	if fmt.Sprint(m.Warnings) != fmt.Sprint(want) {
		t.Errorf("Warnings %q, want %q", m.Warnings, want)
	}
}

// A tool a server lists under a name Chat Completions refuses (MCP allows
// "files.read") is not offered, with a warning naming the server, the tool
// and the allow-list that leaves it out: offered, every request would be a
// 400 naming neither. One the allow-list names fails the attempt, saying
// so, and no retry can help.
func TestMCPToolNameNotOffered(t *testing.T) {
	long := strings.Repeat("x", 65)
	s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	for _, name := range []string{"echo", "files.read", "bad name!/x", strings.Repeat("y", 64), long} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	warning := func(name string) string {
		return fmt.Sprintf("MCP server py lists a tool named %q, which no model can be offered (Chat Completions takes a tool name of 1 to 64 letters, digits, _ and -): it is left out: to call it, the server must list it under a name that fits; to leave it out without this warning, name the tools to offer in mcp_servers.py.tools", name)
	}
	tests := []struct {
		name     string
		allow    []string
		offered  []string
		warnings []string
		err      string
	}{
		{"every tool", nil, []string{"echo", strings.Repeat("y", 64)}, []string{warning("bad name!/x"), warning("files.read"), warning(long)}, ""},
		{"an allow-list that leaves them out", []string{"echo"}, []string{"echo"}, nil, ""},
		{"an allow-list that names one", []string{"echo", "files.read"}, nil, nil,
			`MCP server py lists the tool "files.read" that mcp_servers.py.tools names, but no model can be offered that name (Chat Completions takes a tool name of 1 to 64 letters, digits, _ and -): take it out of mcp_servers.py.tools, or have the server list it under a name that fits — not retried`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, listed, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "py", URL: srv.URL, Allow: tc.allow, Path: "mcp_servers.py"}}, tools.MCPOptions{})
			if tc.err != "" {
				var ends interface{ EndsAttempts() bool }
				if err == nil || err.Error() != tc.err || !errors.As(err, &ends) || !ends.EndsAttempts() {
					t.Fatalf("err %v, want %q, ending the attempts", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var offered []string
			for _, tl := range listed {
				offered = append(offered, tl.Name)
			}
			if fmt.Sprint(offered) != fmt.Sprint(tc.offered) {
				t.Errorf("offered %q, want %q", offered, tc.offered)
			}
			if fmt.Sprint(m.Warnings) != fmt.Sprint(tc.warnings) {
				t.Errorf("warnings %q\nwant %q", m.Warnings, tc.warnings)
			}
		})
	}
}

// An HTTP server that cannot be reached, or refuses the handshake, is
// told as the LLM client tells its base_url's failures: what is at the
// other end and what to check, naming the server's url (or headers: for
// a 401 or 403, by their variables, never their values), not the SDK's
// and Go's error chain.
func TestMCPHTTPUnreachableOrRefused(t *testing.T) {
	closed := func(t *testing.T) string { // a port nothing listens on
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		return srv.URL + "/mcp"
	}
	// status answers every request of method (every one when ""), and
	// the handshake as an MCP server would otherwise.
	status := func(code int, method, body string) func(t *testing.T) string {
		return func(t *testing.T) string {
			s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.Method == http.MethodPost && bytes.Contains(b, []byte(`"method":"`+method)) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(code)
					_, _ = io.WriteString(w, body)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			return srv.URL + "/mcp"
		}
	}
	const secret = "Bearer sk-mcp-secret-123456"
	token := map[string]string{"Authorization": "MCP_TOKEN"}
	for _, tc := range []struct {
		name    string
		url     func(t *testing.T) string
		headers map[string]string
		want    []string // all of them
	}{
		{"connection refused", closed, nil, []string{
			"MCP server r: nothing listens there (connection refused): is the server running, and is that its port? (the URL comes from mcp.servers.r.url: check it)"}},
		// A real lookup: .invalid is never a host. A machine without DNS
		// fails it otherwise, still naming the url.
		{"no such host", func(*testing.T) string { return "http://nosuchhost.invalid/mcp" }, nil, []string{
			`MCP server r: `, `"nosuchhost.invalid"`, "mcp.servers.r.url"}},
		{"401, no headers", status(http.StatusUnauthorized, "", ""), nil, []string{
			"MCP server r: the server answered HTTP 401 Unauthorized: no headers are sent (mcp.servers.r.headers is not set): if the server wants a token, set it to name the variable that holds it, such as {Authorization: TOKEN_VAR}"}},
		{"401, the url's credentials", func(t *testing.T) string {
			return strings.Replace(status(http.StatusUnauthorized, "", "")(t), "://", "://bob:url-pw-98765@", 1) + "?token=url-tok-54321"
		}, nil, []string{
			"MCP server r: the server answered HTTP 401 Unauthorized: the credentials mcp.servers.r.url carries (its user name and password, a token as its user name or one in its query; not shown) were sent and refused: check them, or send a token in mcp.servers.r.headers instead"}},
		// A token as the user name alone is sent too (Basic auth).
		{"403, a token as the url's user name", func(t *testing.T) string {
			return strings.Replace(status(http.StatusForbidden, "", "")(t), "://", "://url-tok-54321@", 1)
		}, nil, []string{
			"MCP server r: the server answered HTTP 403 Forbidden: the credentials mcp.servers.r.url carries (its user name and password, a token as its user name or one in its query; not shown) were sent and refused"}},
		{"401, a header", status(http.StatusUnauthorized, "", `{"error":"bad token"}`), token, []string{
			"MCP server r: the server answered HTTP 401 Unauthorized: check mcp.servers.r.headers (Authorization from $MCP_TOKEN) and that variable's value"}},
		{"403, the server's words", status(http.StatusForbidden, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"token lacks\nthe mcp scope"}}`),
			map[string]string{"Authorization": "MCP_TOKEN", "X-Tenant": "MCP_TENANT"}, []string{
				"MCP server r: the server answered HTTP 403 Forbidden (`token lacks the mcp scope`): check mcp.servers.r.headers (Authorization from $MCP_TOKEN, X-Tenant from $MCP_TENANT) and those variables' values"}},
		{"404", status(http.StatusNotFound, "", ""), nil, []string{
			"MCP server r: the server answered HTTP 404 Not Found: check the path in mcp.servers.r.url: it must be the server's MCP endpoint (often /mcp)"}},
		{"500", status(http.StatusInternalServerError, "", ""), nil, []string{
			"MCP server r: the server answered HTTP 500 Internal Server Error: the server (or a proxy on the way) failed or is busy: check its log, and that mcp.servers.r.url is its URL"}},
		{"405", status(http.StatusMethodNotAllowed, "", ""), nil, []string{
			"MCP server r: the server answered HTTP 405 Method Not Allowed: is mcp.servers.r.url a streamable HTTP MCP endpoint?"}},
		{"401 to the tool list", status(http.StatusUnauthorized, "tools/list", ""), token, []string{
			"MCP server r: listing its tools: the server answered HTTP 401 Unauthorized: check mcp.servers.r.headers (Authorization from $MCP_TOKEN) and that variable's value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := tools.ConnectMCP(context.Background(), []*spec.MCPServer{{Name: "r", URL: tc.url(t), Headers: tc.headers}}, tools.MCPOptions{
				Getenv: func(string) string { return secret }, HandshakeTimeout: 20 * time.Second,
			})
			if err == nil {
				m.Close()
				t.Fatal("ConnectMCP succeeded")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("got  %q\nwant %q", msg, w)
				}
			}
			for _, goText := range []string{"dial tcp", "lookup ", "rejected by transport", "Post ", `calling "initialize"`, "sk-mcp", "url-pw", "url-tok"} {
				if strings.Contains(msg, goText) {
					t.Errorf("%q says %q", msg, goText)
				}
			}
		})
	}
}
