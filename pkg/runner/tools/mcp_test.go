package tools_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
