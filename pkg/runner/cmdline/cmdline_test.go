package cmdline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/teamrun/teamrun/internal/shellcmd"
)

func TestDecide(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "here")
	if err := os.Symlink(wd, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                       string
		where                      Where
		session, task, value, want string
	}{
		{"no store", Where{}, "s1", "review", "", "teamrun session decide s1 review VALUE"},
		{"a value", Where{}, "s1", "review", "approve", "teamrun session decide s1 review approve"},
		{"quoted", Where{}, "s1", "ok it", "it's fine", `teamrun session decide s1 'ok it' 'it'\''s fine'`},
		{"a folder", Where{Store: "/srv/my store"}, "s1", "review", "", "teamrun session decide --store '/srv/my store' s1 review VALUE"},
		{"a URL without its password", Where{Store: "postgres://u:hunter2@db/app"}, "s1", "review", "",
			"teamrun session decide --store postgres://u@db/app s1 review VALUE"},
		// A word read as a flag: the flags first, "--" before the arguments.
		{"a task that starts with -", Where{}, "s1", "-ask", "yes", "teamrun session decide -- s1 -ask yes"},
		{"a session that starts with -", Where{Store: "/srv/st"}, "-x", "review", "", "teamrun session decide --store /srv/st -- -x review VALUE"},
		{"a value that starts with -", Where{}, "s1", "review", "-1", "teamrun session decide -- s1 review -1"},
		// The project: named when it is not the current folder, so that
		// the audit record lands in it wherever the command is pasted.
		{"the project is the current folder", Where{Project: wd}, "s1", "review", "", "teamrun session decide s1 review VALUE"},
		{"the current folder through a link", Where{Project: link}, "s1", "review", "", "teamrun session decide s1 review VALUE"},
		{"the project is another folder", Where{Project: "/srv/my x"}, "s1", "review", "",
			"teamrun session decide --project '/srv/my x' s1 review VALUE"},
		{"another project and a store", Where{Store: "/srv/st", Project: "/srv/x"}, "-x", "review", "",
			"teamrun session decide --store /srv/st --project /srv/x -- -x review VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.where, tc.session, tc.task, tc.value); got != tc.want {
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

func TestLogs(t *testing.T) {
	for _, tc := range []struct {
		store, session, task string
		want                 string
	}{
		{"", "s1", "fetch", "teamrun session logs s1 fetch --attempt 2"},
		{"/srv/st", "s1", "fetch", "teamrun session logs s1 fetch --attempt 2 --store /srv/st"},
		{"", "s1", "-fail", "teamrun session logs --attempt 2 -- s1 -fail"},
		{"/srv/st", "-x", "fetch", "teamrun session logs --attempt 2 --store /srv/st -- -x fetch"},
	} {
		if got := Logs(tc.store, tc.session, tc.task, 2); got != tc.want {
			t.Errorf("Logs(%q, %q, %q) = %s\nwant %s", tc.store, tc.session, tc.task, got, tc.want)
		}
	}
}

// A printed --store names a folder from the root, so that the command
// pasted in another folder reaches the same store (--project is absolute
// too); a URL, without its password, and a ~ path (teamrun's $HOME) stay.
func TestStore(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		store string
		want  []string
	}{
		{"", nil},
		{"rel-st", []string{"--store", shellcmd.Quote(filepath.Join(wd, "rel-st"))}},
		{"./alt", []string{"--store", shellcmd.Quote(filepath.Join(wd, "alt"))}},
		{"../up/st", []string{"--store", shellcmd.Quote(filepath.Join(filepath.Dir(wd), "up", "st"))}},
		{"/srv/st", []string{"--store", "/srv/st"}},
		{"~/st", []string{"--store", "'~/st'"}},
		{"postgres://u:hunter2@db/app", []string{"--store", "postgres://u@db/app"}},
		{"file:///srv/a%20b", []string{"--store", "'file:///srv/a%20b'"}},
		{"./postgres:x", []string{"--store", shellcmd.Quote(filepath.Join(wd, "postgres:x"))}},
		// A URL in any case, or file:/PATH, is a URL still, spelt as the
		// store reads it: not a folder under the current one.
		{"POSTGRES://u:hunter2@db/app", []string{"--store", "postgres://u@db/app"}},
		{"FILE:///srv/st", []string{"--store", "file:///srv/st"}},
		{"file:/srv/st", []string{"--store", "file:///srv/st"}},
		{"File:~/st", []string{"--store", "'file://~/st'"}},
	} {
		if got := Store(tc.store); !slices.Equal(got, tc.want) {
			t.Errorf("Store(%q) = %q, want %q", tc.store, got, tc.want)
		}
	}
}
