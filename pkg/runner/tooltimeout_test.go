package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// A tool its own timeout stopped tells the model that what it did is
// unknown: killed mid-way, it may have taken effect.
func TestToolTimeoutSaysUnknown(t *testing.T) {
	tool := &spec.Tool{Name: "slow", Shell: "sleep 5", Timeout: 100 * time.Millisecond}
	set := &tools.Set{Tools: []*spec.Tool{tool}, Run: toolRunner(nil, nil, nil, ""), CommandDir: t.TempDir()}
	res, err := set.Execute(context.Background(), tool, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"timed out after 100ms", "what it did is unknown"} {
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("result %q (error %v) lacks %q", res.Content, res.IsError, want)
		}
	}
}
