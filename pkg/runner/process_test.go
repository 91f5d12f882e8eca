package runner

import (
	"slices"
	"strings"
	"testing"
)

// commandEnv must give a command the environment exec.Cmd gave it: the
// inherited one, each name once, the added entries winning.
func TestCommandEnv(t *testing.T) {
	for _, tc := range []struct {
		name             string
		inherited, extra []string
		dir              string
		want             []string
	}{
		{"nothing added", []string{"A=1", "B=2"}, nil, "", []string{"A=1", "B=2"}},
		{"added after", []string{"A=1"}, []string{"TEAMRUN_TASK=t"}, "", []string{"A=1", "TEAMRUN_TASK=t"}},
		{"an added entry replaces an inherited one", []string{"TEAMRUN_TASK=outer", "A=1"}, []string{"TEAMRUN_TASK=inner"}, "", []string{"A=1", "TEAMRUN_TASK=inner"}},
		{"the last of a name wins", nil, []string{"X=1", "Y=2", "X=3"}, "", []string{"Y=2", "X=3"}},
		{"a name is not a prefix", []string{"AB=1", "A=2"}, []string{"A=3"}, "", []string{"AB=1", "A=3"}},
		{"an empty value", []string{"A=1"}, []string{"A="}, "", []string{"A="}},
		{"a folder is PWD", []string{"PWD=/elsewhere", "A=1"}, []string{"B=2"}, "/tmp", []string{"A=1", "B=2", "PWD=/tmp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inherited := tc.inherited
			if inherited == nil {
				inherited = []string{}
			}
			extra := slices.Clone(tc.extra)
			got, err := commandEnv(inherited, extra, tc.dir)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("commandEnv(%q, %q, %q) = %q, %v; want %q", tc.inherited, tc.extra, tc.dir, got, err, tc.want)
			}
			if !slices.Equal(extra, tc.extra) {
				t.Errorf("commandEnv changed its extra entries: %q, was %q", extra, tc.extra)
			}
		})
	}
}

func TestCommandEnvNUL(t *testing.T) {
	_, err := commandEnv([]string{"A=1"}, []string{"TEAMRUN_TASK=a\x00b"}, "")
	if err == nil || !strings.Contains(err.Error(), "TEAMRUN_TASK cannot be passed: its value contains a NUL byte") {
		t.Fatalf("err = %v, want one naming TEAMRUN_TASK and its NUL byte", err)
	}
}

func TestLastOfEach(t *testing.T) {
	for _, tc := range []struct{ env, want []string }{
		{[]string{}, []string{}},
		{[]string{"A=1", "B=2"}, []string{"A=1", "B=2"}},
		{[]string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3"}},
		{[]string{"A=1", "A=2", "A=3"}, []string{"A=3"}},
	} {
		if got := lastOfEach(tc.env); !slices.Equal(got, tc.want) {
			t.Errorf("lastOfEach(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
