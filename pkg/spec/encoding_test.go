package spec

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16File is text as UTF-16 with a byte order mark, as Windows editors
// save it ("Unicode").
func utf16File(text string, order binary.ByteOrder) []byte {
	units := utf16.Encode([]rune(text))
	out := make([]byte, 2+2*len(units))
	order.PutUint16(out, 0xFEFF)
	for i, u := range units {
		order.PutUint16(out[2+2*i:], u)
	}
	return out
}

const encodingSpec = `llm: m
agents:
  a: {role: A}
steps:
  - agent: a
    action: "x {{nope}}"
`

// A spec's encoding: UTF-16 with a byte order mark reads as its text (the
// columns of messages count its characters, as in the same file in
// UTF-8); UTF-32, UTF-16 without a mark and a control character are
// refused in one line saying where and what to do, never yaml.v3's
// "control characters are not allowed" at line 1.
func TestSpecEncodings(t *testing.T) {
	bad := []struct {
		name string
		data []byte
		want string
	}{
		{"utf32", append([]byte{0xFF, 0xFE, 0, 0}, make([]byte, 8)...), "a.yaml:1:1: the file is UTF-32: save it as UTF-8"},
		{"utf16-no-mark", utf16File(encodingSpec, binary.LittleEndian)[2:], "a.yaml:1:1: the file is UTF-16 or UTF-32 without a byte order mark: save it as UTF-8"},
		{"utf16-odd", utf16File(encodingSpec, binary.LittleEndian)[:9], "a.yaml:1:1: the file starts as UTF-16 but has an odd number of bytes"},
		{"nul", []byte(strings.Replace(encodingSpec, "x {{", "x \x00 {{", 1)), `a.yaml:6:16: invalid YAML: character U+0000 here is a control character, which YAML allows nowhere in a file: remove it (in a double-quoted string, write it as \x00)`},
		{"bell-utf16", utf16File(strings.Replace(encodingSpec, "role: A", "role: A\a", 1), binary.BigEndian), `a.yaml:3:14: invalid YAML: character U+0007 here is a control character`},
		{"noncharacter", []byte(strings.Replace(encodingSpec, "x {{", "x \uFFFF {{", 1)), `a.yaml:6:16: invalid YAML: character U+FFFF here is not allowed in a YAML file: remove it (in a double-quoted string, write it as \uFFFF)`},
		// NEL, LS and PS break a line for yaml.v3 where an editor shows
		// none: named where they are, not as yaml.v3's reason on a line after.
		{"nel", []byte("agents:\n  sh: {shell: cat}\ntasks:\n  a:\n    description: Summarise this text\u0085pasted from a PDF\n    agent: sh\n"),
			`a.yaml:5:37: invalid YAML: character U+0085 here, a next line (NEL), breaks the line for the YAML parser though an editor shows none: replace it with a space (or a line break), or quote the whole text ("…")`},
		{"ls", []byte("agents:\n  sh: {shell: cat}\ntasks:\n  a:\n    description: Summarise this:\u2028second line\n    agent: sh\n"),
			`a.yaml:5:33: invalid YAML: character U+2028 here, a line separator, breaks`},
		// One in a quoted text, which loads, is not blamed for an error after it.
		{"nel-quoted", []byte("agents:\n  sh: {shell: cat}\ntasks:\n  a:\n    description: \"fine\u0085text\"\n    agent: sh\n  b: [\n"),
			`a.yaml:7:1: invalid YAML: did not find expected node content`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("a.yaml", tt.data)
			var l ErrorList
			if !errors.As(err, &l) || len(l) != 1 || !strings.HasPrefix(l[0].String(), tt.want) {
				t.Fatalf("got %v, want one error starting %q", err, tt.want)
			}
		})
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		team, err := Parse("a.yaml", utf16File(encodingSpec, order))
		if err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		want := PlaceholderUse{Name: "nope", Written: "{{nope}}", Pos: Pos{Line: 6, Column: 16}, Path: "steps[0].action"}
		if len(team.Placeholders) != 1 || team.Placeholders[0] != want {
			t.Errorf("%s: placeholders %+v, want %+v", order, team.Placeholders, want)
		}
	}
}

// A %YAML 1.x directive, which PyYAML (PraisonAI's loader) reads, loads:
// yaml.v3 takes only 1.1, so the version is read as that, every line and
// column staying where it was; another major version is refused in one
// line that says to remove the directive, at its line.
func TestYAMLVersionDirective(t *testing.T) {
	const body = "---\nagents:\n  a: {role: A, llm: m}\nsteps:\n  - {agent: a, action: \"x {{nope}}\"}\n"
	for _, tt := range []struct {
		name, head string
		warned     string // the warning about {{nope}}, whose place must not move
		err        string
	}{
		{"1.2", "%YAML 1.2\n", "d.yaml:6:27: steps[0].action", ""},
		{"1.1", "%YAML 1.1\n", "d.yaml:6:27: steps[0].action", ""},
		{"1.10 with a comment and a tag", "%YAML 1.10 # new\n%TAG !e! tag:example.com,2000:\n", "d.yaml:7:27: steps[0].action", ""},
		{"after a comment", "# spec\n%YAML 1.2\n", "d.yaml:7:27: steps[0].action", ""},
		{"after a byte order mark", "\uFEFF%YAML 1.2\n", "d.yaml:6:27: steps[0].action", ""},
		{"2.0", "# spec\n%YAML 2.0\n", "", "d.yaml:2:1: invalid YAML: the %YAML directive names a version other than 1.x, which teamrun (and PyYAML) cannot read: remove the %YAML line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("d.yaml", []byte(tt.head+body))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var at []string
			for _, d := range team.UndefinedPlaceholders(nil) {
				at = append(at, d.String()[:len(tt.warned)])
			}
			if len(at) != 1 || at[0] != tt.warned {
				t.Errorf("the placeholder is said at %q, want %s", at, tt.warned)
			}
		})
	}
	// A directive-like line inside the document is the document's.
	if got := yamlVersionRead([]byte("a: 1\n%YAML 1.2\n")); string(got) != "a: 1\n%YAML 1.2\n" {
		t.Errorf("a line after the document starts was changed: %q", got)
	}
}
