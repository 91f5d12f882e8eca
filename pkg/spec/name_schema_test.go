package spec

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// firstRefused is the name rule's first character, as the README states
// it: no dot, no slash, no control character, no space — any Unicode white
// space (Go's unicode.IsSpace), and U+FEFF, which ECMA-262's \s counts too.
func firstRefused(r rune) bool {
	return r == '.' || r == '/' || unicode.IsControl(r) || unicode.IsSpace(r) || r == '\uFEFF'
}

// laterRefused is the rule for a name's other characters: no slash, no
// control character (C0, DEL, C1: the terminal runs a C1 CSI) and no line
// separator, which prints as a line break.
func laterRefused(r rune) bool {
	return r == '/' || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// The binary takes its name rule from the schema it ships (teamrun
// schema), and the schema writes the rule in a pattern every regex engine
// reads alike: an editor's ECMA-262 read \s as any Unicode space, Go's as
// ASCII ones only, so a name starting with U+00A0, U+2028 or U+3000 passed
// validate and failed in the editor.
func TestNameRuleIsTheSchemas(t *testing.T) {
	p := schemaDefPattern("name")
	if p == "" || nameRE().String() != p {
		t.Fatalf("nameRE %q, the schema's $defs.name.pattern %q", nameRE(), p)
	}
	// Escapes whose meaning differs between RE2 and ECMA-262 (or that one
	// of them lacks).
	for _, esc := range []string{`\s`, `\S`, `\d`, `\D`, `\w`, `\W`, `\b`, `\B`, `\p`, `\P`, `\u`, `\x{`, `\z`, `\A`, `(?`} {
		if strings.Contains(p, esc) {
			t.Errorf("the name pattern %q uses %s, which regex engines read differently", p, esc)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		name := string(r) + "x"
		if got := !nameRE().MatchString(name); got != firstRefused(r) {
			t.Errorf("a name starting with %U: refused %v, want %v", r, got, firstRefused(r))
		}
		if got := !nameRE().MatchString("x" + string(r)); got != laterRefused(r) {
			t.Errorf("a name holding %U: refused %v, want %v", r, got, laterRefused(r))
		}
	}
}

// A name starting with a Unicode space is refused in every place a name is
// given, with the key it is at.
func TestNamesStartingWithUnicodeSpace(t *testing.T) {
	for _, sp := range []string{`\u00a0`, `\u2028`, `\u3000`, `\ufeff`, `\u0085`} {
		for _, tc := range []struct{ name, yaml, want string }{
			{"task", "agents: {w: {shell: cat}}\ntasks:\n  \"" + sp + "a\": {description: d, agent: w}\n", `tasks.\` + sp[1:] + `a": expected a name`},
			{"agent", "agents: {\"" + sp + "w\": {shell: cat}}\ntasks:\n  a: {description: d, agent: w}\n", `agents.\` + sp[1:] + `w": expected a name`},
			{"list task", "agents: {w: {shell: cat}}\ntasks:\n  - {name: \"" + sp + "a\", description: d, agent: w}\n", `tasks[0].name: expected a name`},
			{"PraisonAI role", "framework: praisonai\nroles:\n  \"" + sp + "r\":\n    role: R\n    tasks:\n      t: {description: d}\n", `expected a name without slashes`},
		} {
			t.Run(tc.name+"/"+sp, func(t *testing.T) {
				_, err := Parse("n.yaml", []byte(tc.yaml))
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want it to say %s", err, strconv.Quote(tc.want))
				}
			})
		}
	}
}

// The pattern read by an ECMA-262 engine (node, where there is one) refuses
// the same first characters as teamrun does.
func TestNamePatternInECMA262(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node to read the pattern as an editor does")
	}
	script := `const re = new RegExp(process.argv[1]); const out = [];
for (let c = 0; c <= 0x10ffff; c++) { if (c >= 0xd800 && c <= 0xdfff) continue;
  if (!re.test(String.fromCodePoint(c) + "x")) out.push(c);
  if (!re.test("x" + String.fromCodePoint(c))) out.push(-c - 1); }
console.log(out.join(","));`
	out, err := exec.Command(node, "-e", script, schemaDefPattern("name")).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	refused := map[rune]bool{}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("node said %q", out)
		}
		refused[rune(n)] = true // -c-1: refused after the first character
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) && refused[r] != firstRefused(r) {
			t.Errorf("ECMA-262 reads a name starting with %U: refused %v, want %v", r, refused[r], firstRefused(r))
		}
		if utf8.ValidRune(r) && refused[-r-1] != laterRefused(r) {
			t.Errorf("ECMA-262 reads a name holding %U: refused %v, want %v", r, refused[-r-1], laterRefused(r))
		}
	}
}
