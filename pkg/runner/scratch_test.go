package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/memstore"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
)

// A store that is no local folder keeps its sessions' scratch below the
// user's cache folder, one folder per store; the next run's sweep and
// RemoveScratch remove one session's and nothing else.
func TestLocalScratch(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	ctx := context.Background()
	a, b := memstore.New(), memstore.New()
	sa, sb := scratchOf(a, noWarn(t)), scratchOf(b, noWarn(t))
	if sa == nil || sb == nil {
		t.Fatal("no local scratch for a memory store")
	}
	root := filepath.Join(cache, "teamrun", "scratch")
	da, db := scratchDir(sa, "s1"), scratchDir(sb, "s1")
	if filepath.Dir(filepath.Dir(da)) != root || filepath.Base(da) != "s1.scratch" || da == db {
		t.Fatalf("scratch folders %s and %s: want two stores' own below %s", da, db, root)
	}
	if fi, err := os.Stat(filepath.Dir(da)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the store's scratch root: %v, %v; want a 0700 folder", fi, err)
	}
	if _, err := os.Stat(da); err == nil {
		t.Fatal("the session's folder is made before a run needs it")
	}
	if procsRecord(sa, "s1") != filepath.Join(da, "procs") {
		t.Errorf("procs record %s, want it in %s", procsRecord(sa, "s1"), da)
	}
	for _, d := range []string{da, db, scratchDir(sa, "s2")} {
		if err := os.MkdirAll(filepath.Join(d, "teamrun-context-1"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l, err := a.Lock(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	sweepScratch(sa, l, func(msg string) { t.Errorf("warning: %s", msg) }, "")
	l.Release()
	if _, err := os.Stat(da); !os.IsNotExist(err) {
		t.Errorf("%s after the sweep: %v", da, err)
	}
	for _, d := range []string{db, scratchDir(sa, "s2")} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("another session's scratch %s: %v", d, err)
		}
	}
	if err := RemoveScratch(a, "s2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scratchDir(sa, "s2")); !os.IsNotExist(err) {
		t.Errorf("s2's scratch after RemoveScratch: %v", err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the other store's scratch: %v", err)
	}
}

// The file store's scratch is its own, beside its session files; nothing
// of it goes to the cache folder.
func TestFileStoreScratch(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := t.TempDir()
	s, err := stores.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := scratchDir(scratchOf(s, noWarn(t)), "s1"); !strings.HasPrefix(d, dir) {
		t.Errorf("scratch %s, want it in %s", d, dir)
	}
	if err := RemoveScratch(s, "s1"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("the cache folder has %v", entries)
	}
}

// The key of a store's local scratch is its own: another schema or server
// is another folder, and a password never names one.
func TestLocalScratchKey(t *testing.T) {
	roots := map[string]bool{}
	for _, loc := range []string{"postgres://u@h:5432/db?schema=a", "postgres://u@h:5432/db?schema=b", "postgres://u@other:5432/db?schema=a"} {
		r := checkpoint.LocalScratch("/c", loc).Root
		if roots[r] {
			t.Errorf("%s shares its scratch root %s", loc, r)
		}
		roots[r] = true
		if strings.Contains(r, "u@") || strings.Contains(r, "schema") {
			t.Errorf("the root %s shows the location", r)
		}
	}
}

func noWarn(t *testing.T) func(string) {
	return func(msg string) { t.Errorf("warning: %s", msg) }
}

// Without a cache folder to use (no HOME, a home that is not there — a
// service account's /nonexistent under cron —, a cache folder that is a
// file), the scratch is in this user's own folder in the system's
// temporary folder, swept as the cache folder's is, with no warning, and no
// home folder is made: root made /nonexistent/.cache/…, and every other
// user got a warning at every run, which cron mailed.
func TestLocalScratchWithoutHome(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "nonexistent")
	for _, tt := range []struct{ name, cache, home string }{
		{"home not there", "", gone},
		{"no HOME", "", ""},
		{"cache is a file", file, gone},
		{"relative XDG_CACHE_HOME", "cache", gone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Setenv("XDG_CACHE_HOME", tt.cache)
			t.Setenv("HOME", tt.home)
			store := memstore.New()
			s := scratchOf(store, noWarn(t))
			own := filepath.Join(tmp, tempName())
			d := scratchDir(s, "s1")
			if !strings.HasPrefix(d, own+string(filepath.Separator)) || procsRecord(s, "s1") != filepath.Join(d, "procs") {
				t.Fatalf("scratch %q, want one in %s", d, own)
			}
			if fi, err := os.Lstat(own); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v, %v; want a 0700 folder", own, fi, err)
			}
			if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the home folder %s was made: %v", gone, err)
			}
			// The next run finds it again, and session delete removes it.
			if again := scratchDir(scratchOf(store, noWarn(t)), "s1"); again != d {
				t.Errorf("the next run's scratch %s, want %s", again, d)
			}
			if err := os.MkdirAll(filepath.Join(d, "teamrun-context-1"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := RemoveScratch(store, "s1"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s after RemoveScratch: %v", d, err)
			}
		})
	}
}

// This user's folder in the temporary folder must be its alone: one
// another user could have put there (a link, one open to others) is not
// used, and with no cache folder either, the scratch is os.TempDir() again
// (no record, no sweep), and the run is told so.
func TestLocalScratchUnavailable(t *testing.T) {
	for name, setup := range map[string]func(own string) error{
		"a link in its place": func(own string) error { return os.Symlink(filepath.Dir(own), own) },
		"open to others":      func(own string) error { return os.Mkdir(own, 0o777) },
		"a file in its place": func(own string) error { return os.WriteFile(own, nil, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("HOME", "")
			own := filepath.Join(tmp, tempName())
			if err := setup(own); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(own, 0o777); err != nil && name == "open to others" {
				t.Fatal(err) // past the umask
			}
			var warnings []string
			store := memstore.New()
			s := scratchOf(store, func(m string) { warnings = append(warnings, m) })
			if s != nil || scratchDir(s, "s1") != "" || procsRecord(s, "s1") != "" {
				t.Errorf("scratch %v, want none", s)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], own+" is not a folder of this user's alone") || !strings.Contains(warnings[0], "XDG_CACHE_HOME") {
				t.Errorf("warnings %q", warnings)
			}
			if err := RemoveScratch(store, "s1"); err != nil {
				t.Errorf("RemoveScratch: %v", err)
			}
		})
	}
}

// failingSweep is a scratch store whose sweep always fails, as in a
// sessions folder made read-only.
type failingSweep struct{ localScratch }

func (failingSweep) SweepScratch(checkpoint.Lock) error {
	return errors.New("cannot remove s2.scratch: permission denied")
}

// A run sweeps its session's scratch at its start and at its end: one that
// fails both times for the same reason warns once, not twice; another
// reason at the end is said too.
func TestSweepScratchWarnsOnce(t *testing.T) {
	var warned []string
	warn := func(msg string) { warned = append(warned, msg) }
	s := failingSweep{}
	said := sweepScratch(s, nil, warn, "")
	sweepScratch(s, nil, warn, said)
	if len(warned) != 1 || warned[0] != "cannot remove s2.scratch: permission denied" {
		t.Errorf("warnings %q; want the one, once", warned)
	}
	sweepScratch(s, nil, warn, "another")
	if len(warned) != 2 {
		t.Errorf("warnings %q; want a second for another reason before", warned)
	}
}
