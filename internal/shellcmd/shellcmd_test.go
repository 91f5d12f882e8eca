package shellcmd

import "testing"

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		name, cmd     string
		before, after []string
		args          []string
		want          string
	}{
		{"plain", "run", nil, []string{"--continue", "--session", "s1"}, []string{"agents.yaml"}, "teamrun run agents.yaml --continue --session s1"},
		{"a file named -dash.yaml", "run", nil, []string{"--continue", "--session", "s1"}, []string{"-dash.yaml"}, "teamrun run --continue --session s1 -- -dash.yaml"},
		{"stdin's - is an argument", "run", nil, []string{"--continue"}, []string{"-"}, "teamrun run - --continue"},
		{"quoted", "run", nil, nil, []string{"-my team.yaml"}, "teamrun run -- '-my team.yaml'"},
		{"a session named -x", "run", nil, Flag("--session", "-x"), []string{"a.yaml"}, "teamrun run a.yaml --session=-x"},
		{"a quoted value with a dash", "run", nil, Flag("--store", "-my st"), []string{"a.yaml"}, "teamrun run a.yaml --store='-my st'"},
		{"stdin's - is a value", "session export", nil, Flag("-o", "-"), []string{"s1"}, "teamrun session export s1 -o -"},
		{"flags on both sides", "session logs", []string{"--store", "st"}, []string{"--attempt", "2"}, []string{"s1", "-t"}, "teamrun session logs --store st --attempt 2 -- s1 -t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Command(tc.cmd, tc.before, tc.args, tc.after); got != tc.want {
				t.Errorf("Command = %s\nwant      %s", got, tc.want)
			}
		})
	}
}
