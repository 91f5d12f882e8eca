package checkpoint

import (
	"bytes"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// A new session's records share their definitions' context lists rather
// than copy them, and write them as before: a list as a list, an empty
// one as null.
func TestNewTaskSharesContext(t *testing.T) {
	defs := []spec.TaskDef{
		{ID: 0, Name: "a", Agent: "sh", Key: "k1"},
		{ID: 1, Name: "b", Agent: "sh", Key: "k2", Context: []string{"a"}},
		{ID: 2, Name: "c", Agent: "sh", Key: "k3", Context: []string{}},
	}
	s := NewSession("s1", "/x/team.yaml", "team", spec.Sequential, defs, "fp", time.Unix(0, 0))
	if got := s.Team.Tasks[1].Context; len(got) != 1 || &got[0] != &defs[1].Context[0] {
		t.Errorf("b's context %v is a copy of its definition's, not the same list", got)
	}
	data, err := EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"a","agent":"sh","description":"","expected_output":"","key":"k1","agent_key":"","context":null`,
		`"context":["a"]`, `"name":"c","agent":"sh","description":"","expected_output":"","key":"k3","agent_key":"","context":null`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the snapshot lacks %s:\n%s", want, data)
		}
	}
}
