package cmdline

import "testing"

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name, store, session, task, value, want string
	}{
		{"no store", "", "s1", "review", "", "teamrun session decide s1 review VALUE"},
		{"a value", "", "s1", "review", "approve", "teamrun session decide s1 review approve"},
		{"quoted", "", "s1", "ok it", "it's fine", `teamrun session decide s1 'ok it' 'it'\''s fine'`},
		{"a folder", "/srv/my store", "s1", "review", "", "teamrun session decide --store '/srv/my store' s1 review VALUE"},
		{"a URL without its password", "postgres://u:hunter2@db/app", "s1", "review", "",
			"teamrun session decide --store postgres://u@db/app s1 review VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.store, tc.session, tc.task, tc.value); got != tc.want {
				t.Errorf("Decide = %s\nwant     %s", got, tc.want)
			}
		})
	}
}

func TestOneOf(t *testing.T) {
	for _, tc := range []struct {
		command string
		options []string
		want    string
	}{
		{"teamrun session decide s1 t VALUE", []string{"rerun", "fail"}, "teamrun session decide s1 t rerun|fail"},
		{"teamrun session decide s1 t VALUE", nil, "teamrun session decide s1 t VALUE"},
		{"teamrun session decide s1 t yes", []string{"rerun"}, "teamrun session decide s1 t yes"},
	} {
		if got := OneOf(tc.command, tc.options); got != tc.want {
			t.Errorf("OneOf(%q, %q) = %q, want %q", tc.command, tc.options, got, tc.want)
		}
	}
}
