package pgstore

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The store's credentials, which a run redacts from what tasks print,
// are every password it may connect with: the URL's or its password=,
// sslpassword=, the one pgx resolves from PGPASSWORD or a passfile, and
// PGPASSWORD also when the URL's takes its place. No server is reached.
func TestCredentials(t *testing.T) {
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("db:5432:app:u:file-Pa55word\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, raw, env, passfile string
		want                     []string
	}{
		{"the URL's password", "postgres://u:url-Pa55word@db/app", "", "", []string{"url-Pa55word"}},
		{"password= and sslpassword=", "postgres://u@db/app?password=param-Pa55word&sslpassword=key-Pa55word", "", "", []string{"param-Pa55word", "key-Pa55word"}},
		{"PGPASSWORD", "postgres://u@db/app", "env-Pa55word", "", []string{"env-Pa55word"}},
		{"PGPASSWORD beside the URL's", "postgres://u:url-Pa55word@db/app", "env-Pa55word", "", []string{"url-Pa55word", "env-Pa55word"}},
		{"a passfile", "postgres://u@db/app", "", passfile, []string{"file-Pa55word"}},
		{"none", "postgres://u@db/app", "", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGPASSWORD", tc.env)
			t.Setenv("PGPASSFILE", cmp.Or(tc.passfile, filepath.Join(t.TempDir(), "none")))
			t.Setenv("PGSERVICEFILE", filepath.Join(t.TempDir(), "none"))
			c, err := parseURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			got := c.credentials()
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("credentials %q, want %q", got, want)
			}
		})
	}
}
