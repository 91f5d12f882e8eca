package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/testenv"
	"github.com/teamrun/teamrun/pkg/runner/tools"
	"github.com/teamrun/teamrun/pkg/spec"
)

// A tool's output with the session's scratch folder on a full disk: the
// model gets all of it, as on any disk, up to the cut (tools.MaxOutput),
// for every tool whose output teamrun reads (a command tool, the built-in
// execute_command). What the model reads of a tool is 32 KiB at most, so
// it is kept in memory, and no file is written for it: the tool wrote into
// a file in the scratch folder, and got "no space left on device" (most
// tools then fail; one that does not check its writes gave the model a
// part of its output as if whole).
func TestToolOutputOnFullDisk(t *testing.T) {
	scratch := testenv.SmallDisk(t, "16k")
	testenv.FillDisk(t, scratch)
	short := `printf 'line %s\n' $(seq 2000)` // 19 KB, more than the disk has
	long := `yes 0123456789 | head -c 200000` // cut at MaxOutput
	for _, tt := range []struct {
		name, shell string
		builtin     bool
		want        string
	}{
		{"command tool", short, false, ""},
		{"execute_command", short, true, ""},
		{"command tool, cut", long, false, "\n[teamrun: the output was cut at 32768 bytes]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool := &spec.Tool{Name: "dump", Shell: tt.shell}
			args := map[string]any{}
			if tt.builtin {
				tool = &spec.Tool{Name: spec.ExecuteCommand, Builtin: spec.ExecuteCommand}
				args["command"] = tt.shell
			}
			dir := t.TempDir()
			set := &tools.Set{Tools: []*spec.Tool{tool}, Run: toolRunner(nil, nil, nil, scratch), Dir: dir, CommandDir: dir,
				Allow: []string{spec.ExecuteCommand}}
			res, err := set.Execute(context.Background(), tool, args)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				for i := 1; i <= 2000; i++ {
					want += fmt.Sprintf("line %d\n", i)
				}
			} else {
				want = strings.Repeat("0123456789\n", 32768/11+1)[:32768] + want
			}
			if res.IsError || res.Content != want {
				t.Errorf("result (error %v) of %d bytes: %.200q…, want the tool's whole output, %d bytes", res.IsError, len(res.Content), res.Content, len(want))
			}
		})
	}
}
