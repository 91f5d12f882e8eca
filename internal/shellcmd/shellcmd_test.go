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
		{"flags on both sides", "session logs", []string{"--store", "st"}, []string{"--attempt", "2"}, []string{"s1", "-t"}, "teamrun session logs --store st --attempt 2 -- s1 -t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Command(tc.cmd, tc.before, tc.args, tc.after); got != tc.want {
				t.Errorf("Command = %s\nwant      %s", got, tc.want)
			}
		})
	}
}
