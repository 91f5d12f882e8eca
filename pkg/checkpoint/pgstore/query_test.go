package pgstore

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/urltext"
	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// No message shows the password, whatever is wrong with the URL: the
// tester's cases, then random mutations of URLs that carry one (in the
// user part, as password= or sslpassword=), none inside the password or
// the marks that make it one. Each mutated URL is opened (parseURL: its
// error or its location), shown (Shown, for a resume line) and checked as
// a location spelt short (SchemeShort).
func TestPasswordNeverShown(t *testing.T) {
	t.Setenv("PGPASSWORD", "")
	const pw = "hunter2secret"
	check := func(t *testing.T, raw string) {
		t.Helper()
		var shown []string
		c, err := parseURL(raw)
		if err != nil {
			shown = append(shown, err.Error())
		} else {
			shown = append(shown, c.location)
		}
		if strings.Contains(raw, "://") {
			shown = append(shown, Shown(raw)) // stores.Shown's rule
		}
		if _, prefix, fixed, how := SchemeShort(raw); how != urltext.NotShort {
			shown = append(shown, prefix, fixed)
		}
		for _, s := range shown {
			if strings.Contains(s, pw) {
				t.Fatalf("the password is shown for %q:\n%s", raw, s)
			}
		}
	}
	for _, raw := range []string{
		"postgres://teamrun@127.0.0.1:abc/postgres?password=" + pw,
		"postgres://teamrun@127.0.0.1:5432/postgres?password=" + pw + ";sslmode=disable",
		"postgres://teamrun@[::1/postgres?password=" + pw,
		"postgres://teamrun@127.0.0.1:5432/postgres?password=" + pw + "\r",
		"postgres:/u:" + pw + "@127.0.0.1:1/db",
		"postgres:u:" + pw + "@127.0.0.1:1/db",
		"postgres//u:" + pw + "@127.0.0.1:1/db",
		"postgresql//u:" + pw + "@127.0.0.1:1/db",
		"postgres//u:" + pw + "/x@127.0.0.1:1/db",
		"postgres:///u:" + pw + "@127.0.0.1:1/db",
		"postgres://u:" + pw + "@h/db?application_name=a@b",
		"postgres://u@h/db?password=" + pw + "@b",
		"postgres://u@h/db?sslmode=disablepassword=" + pw,
		"postgres://u@h/db?pass%77ord=" + pw + "&x",
		"postgres://u@h/db?PASSWORD = " + pw,
	} {
		check(t, raw)
	}

	bases := []struct{ raw, mark string }{
		{"postgres://teamrun:" + pw + "@127.0.0.1:5432/postgres?sslmode=disable&schema=s1", ":" + pw + "@"},
		{"postgres://teamrun@127.0.0.1:5432/postgres?password=" + pw + "&sslmode=disable", "password=" + pw},
		{"postgresql://teamrun@db/postgres?sslmode=disable&sslpassword=" + pw + "&lease=5s", "sslpassword=" + pw},
		{"postgres://teamrun@[::1]:5432/postgres?application_name=x&password=" + pw, "password=" + pw},
	}
	const chars = "/:@?#&;=%[] \r\n\t+,'\"\\\x00aZ09"
	rng := rand.New(rand.NewPCG(35, 1))
	for _, b := range bases {
		for range 3000 {
			raw := []byte(b.raw)
			lo := strings.Index(b.raw, b.mark)
			hi := lo + len(b.mark) // raw[lo:hi] is left whole
			for range 1 + rng.IntN(3) {
				p := rng.IntN(len(raw) + 1)
				c := chars[rng.IntN(len(chars))]
				switch op := rng.IntN(3); {
				case op == 0 && (p <= lo || p >= hi): // insert
					raw = slices.Insert(raw, p, c)
					if p <= lo {
						lo, hi = lo+1, hi+1
					}
				case p < len(raw) && (p < lo || p >= hi): // delete or replace
					if op == 1 {
						raw = slices.Delete(raw, p, p+1)
						if p < lo {
							lo, hi = lo-1, hi-1
						}
					} else {
						raw[p] = c
					}
				}
			}
			check(t, string(raw))
		}
	}
}

// A location that is a postgres URL spelt short, a slash or two or the
// colon missing, is told as it should be written, without its password;
// anything else is left alone.
func TestSchemeShort(t *testing.T) {
	for _, tt := range []struct {
		loc, prefix, want string
		how               urltext.Short
	}{
		{"postgres:/u:secret@127.0.0.1:1/db", "postgres:/", "postgres://u@127.0.0.1:1/db", urltext.SlashShort},
		{"postgres:u:secret@db/app?password=secret&sslmode=disable", "postgres:", "postgres://u@db/app?sslmode=disable", urltext.SlashShort},
		{"PostgreSQL:/db/app", "PostgreSQL:/", "PostgreSQL://db/app", urltext.SlashShort},
		{"postgres//u:secret@127.0.0.1:1/db", "postgres//", "postgres://u@127.0.0.1:1/db", urltext.ColonShort},
		{"postgresql//u:secret@db/app", "postgresql//", "postgresql://u@db/app", urltext.ColonShort},
		{"POSTGRES//u:se/cret@db/app", "POSTGRES//", "POSTGRES://u@db/app", urltext.ColonShort},
		{"postgres://u:secret@db/app", "", "", urltext.NotShort},
		{"./postgres:data", "", "", urltext.NotShort},
		{"./postgres//data", "", "", urltext.NotShort},
		{"postgres/data", "", "", urltext.NotShort},
		{"postgresdata//x", "", "", urltext.NotShort},
		{"/srv/teamrun", "", "", urltext.NotShort},
	} {
		_, prefix, fixed, how := SchemeShort(tt.loc)
		if prefix != tt.prefix || fixed != tt.want || how != tt.how {
			t.Errorf("SchemeShort(%q) = %q, %q, %v; want %q, %q, %v", tt.loc, prefix, fixed, how, tt.prefix, tt.want, tt.how)
		}
	}
}

// The parameters are read as libpq reads them.
func TestQueryParams(t *testing.T) {
	for _, tt := range []struct {
		raw     string
		want    []param
		wantErr string
	}{
		{raw: "a=b&c=d&", want: []param{{"a=b", "a", "b"}, {"c=d", "c", "d"}}},
		{raw: "options=-c%20x%3D1", want: []param{{"options=-c%20x%3D1", "options", "-c x=1"}}},
		{raw: "n=a+b", want: []param{{"n=a+b", "n", "a+b"}}},
		{raw: "n= padded ", want: []param{{"n= padded ", "n", "padded"}}},
		{raw: "n=a;b", want: []param{{"n=a;b", "n", "a;b"}}},
		{raw: "n=", want: []param{{"n=", "n", ""}}},
		{raw: "n=a b", wantErr: "the value of n= in the store URL (not shown) is not valid URL text: a space inside it (write it %20)"},
		{raw: "n=%00", wantErr: "%00, which no setting may hold"},
		{raw: "n=%4", wantErr: "a % that starts no escape"},
		{raw: "a=b&&c=d", wantErr: "parameter 2 of the store URL (after the ?) has no ="},
		{raw: "=b", wantErr: "the name of parameter 1 of the store URL (after the ?, not shown) is no setting's: a name is letters"},
		{raw: "a=b&u:pw@h=c", wantErr: "the name of parameter 2 of the store URL (after the ?, not shown) is no setting's"},
		{raw: "my.setting=1", want: []param{{"my.setting=1", "my.setting", "1"}}},
		{raw: "a=b&a=c", wantErr: "a= is given twice"},
		{raw: "a%5F=b", want: []param{{"a%5F=b", "a_", "b"}}},
		{raw: "a%3D=b", wantErr: "the name of parameter 1"},
	} {
		got, err := queryParams(tt.raw)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, checkpoint.ErrBadLocation) {
				t.Errorf("queryParams(%q) = %v, %v; want an error saying %q", tt.raw, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("queryParams(%q) = %v, %v; want %v", tt.raw, got, err, tt.want)
		}
	}
}
