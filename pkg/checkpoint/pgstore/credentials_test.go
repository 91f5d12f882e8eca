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

// A password percent-encoded in the URL is redacted in each spelling a
// task may print it in: as written in the user part or password=, and as
// other tools encode it (a space + or %20, hex in either case). No server
// is reached.
func TestCredentialsSpellings(t *testing.T) {
	const pw = "Ab/cd+ef@gh#ij:kl mn"
	tests := []struct {
		name, raw string
		want      []string
	}{
		{"the user part", "postgres://u:Ab%2fcd%2Bef%40gh%23ij%3Akl%20mn@db/app",
			[]string{pw, "Ab%2fcd%2Bef%40gh%23ij%3Akl%20mn", "Ab%2Fcd%2Bef%40gh%23ij%3Akl%20mn", "Ab%2fcd%2bef%40gh%23ij%3akl%20mn",
				"Ab%2Fcd%2Bef%40gh%23ij%3Akl+mn", "Ab%2Fcd+ef@gh%23ij:kl%20mn", "Ab%2Fcd+ef%40gh%23ij%3Akl%20mn"}},
		{"password=", "postgres://u@db/app?password=Ab%2Fcd%2bef%40gh%23ij%3akl%20mn",
			[]string{pw, "Ab%2Fcd%2bef%40gh%23ij%3akl%20mn", "Ab%2Fcd%2Bef%40gh%23ij%3Akl%20mn", "Ab%2Fcd%2Bef%40gh%23ij%3Akl+mn"}},
		{"sslpassword=", "postgres://u@db/app?sslpassword=Ab%2Fcd%2Bef%40gh%23ij%3Akl%20mn",
			[]string{pw, "Ab%2Fcd%2Bef%40gh%23ij%3Akl%20mn", "Ab%2fcd%2bef%40gh%23ij%3akl%20mn"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGPASSWORD", "")
			t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
			t.Setenv("PGSERVICEFILE", filepath.Join(t.TempDir(), "none"))
			c, err := parseURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			got := c.credentials()
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("credentials %q lack %q", got, w)
				}
			}
		})
	}
}
