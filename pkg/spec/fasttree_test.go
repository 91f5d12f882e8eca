package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// specCorpus is every YAML file of the repository's specs and examples.
func specCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, glob := range []string{"../../testdata/spec/*/*.yaml", "../../examples/*.yaml", "../../examples/*/*.yaml", "../../testdata/*/*.yaml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = data
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d spec files found", len(out))
	}
	return out
}

// benchSpec is the shape of bench/compare.sh's teams.
func benchSpec(n int) []byte {
	var b strings.Builder
	b.WriteString("name: bench\nprocess: sequential\nagents:\n  t:\n    command: [\"true\"]\ntasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  t%d:\n    description: task %d\n    agent: t\n", i, i)
	}
	return []byte(b.String())
}

// shapes is a spec-like file with every shape fastTree reads.
const shapes = `# a comment
name: "quoted # not a comment"
version: 1
process: sequential   # a comment
tags: [a, "b c", 'it''s', 12, true, null, ~, 1.5]
empty: []
none: {}
vars: {topic: Go, n: 1, q: 'x', r: "y", l: [a, {b: c}], e: {}, f: [], t: true}
agents: {w: {shell: cat, timeout: 10s}}
flags:
  on: yes
  off: False
  num: -12
  hex: 0x1F
  float: 1e3
  date: 2001-12-14
  tilde: ~
  url: http://example.com/a#b
  colon: a:b
  dash: -x
list:
- one
- two: 2
  three: 3
-   four
`

// fastTree makes the tree yaml.v3's path makes, wherever it takes a file;
// it takes the plain specs, and leaves a file with any problem to yaml.v3.
func TestFastTreeMatchesYAML(t *testing.T) {
	files := specCorpus(t)
	files["bench"] = benchSpec(20)
	files["shapes"] = []byte(shapes)
	files["compact"] = []byte("tasks:\n  - name: a\n    description: x\n  - name: b\n    agent: w\n")
	var taken int
	for name, data := range files {
		slow, sdiags := parseTreeYAML(name, data)
		fast, ok := fastTree(name, data)
		if !ok {
			continue
		}
		taken++
		if len(sdiags) > 0 {
			t.Errorf("%s: fastTree took a file yaml.v3's path reports: %v", name, sdiags)
			continue
		}
		if !reflect.DeepEqual(slow, fast) {
			t.Errorf("%s: trees differ:\n yaml.v3 %s\n fast    %s", name, dumpTree(slow), dumpTree(fast))
		}
	}
	t.Logf("fastTree took %d of %d files", taken, len(files))
	if taken < len(files)/2 {
		t.Errorf("fastTree took only %d of %d files", taken, len(files))
	}
	for _, name := range []string{"bench", "compact", "shapes"} {
		if _, ok := fastTree(name, files[name]); !ok {
			t.Errorf("fastTree did not take %s", name)
		}
	}
}

// Whatever a spec is changed into, fastTree either leaves it to yaml.v3 or
// makes the tree yaml.v3's path makes without a diagnostic.
func TestFastTreeNeverDisagrees(t *testing.T) {
	bases := []string{string(benchSpec(2)) + "    tags: [x, 'y', \"z\"]\nlist:\n- a: 1\n  b: two # c\n- 'q'\n", shapes}
	repl := []string{"", " ", "  ", "\n", ":", "-", "#", "'", `"`, "[", "]", ",", "{", "}", "&", "*", "!", "|", "0", "a", "\t", "~", "%", "\\"}
	var taken int
	for _, base := range bases {
		for i := 0; i <= len(base); i++ {
			for _, r := range repl {
				data := base[:i] + r
				if i < len(base) {
					data += base[i+1:]
				}
				fast, ok := fastTree("m", []byte(data))
				if !ok {
					continue
				}
				taken++
				slow, sdiags := parseTreeYAML("m", []byte(data))
				if len(sdiags) > 0 {
					t.Fatalf("byte %d → %q: fastTree took a file yaml.v3's path reports: %v\n%s", i, r, sdiags, data)
				}
				if !reflect.DeepEqual(slow, fast) {
					t.Fatalf("byte %d → %q: trees differ:\n yaml.v3 %s\n fast    %s\n%s", i, r, dumpTree(slow), dumpTree(fast), data)
				}
			}
		}
	}
	t.Logf("%d variants taken and equal", taken)
	if taken == 0 {
		t.Error("no variant taken: the comparison tests nothing")
	}
}

func dumpTree(t *tree) string {
	if t == nil {
		return "nil"
	}
	var b strings.Builder
	var walk func(t *tree, indent string)
	walk = func(t *tree, indent string) {
		fmt.Fprintf(&b, "%skind=%d value=%#v isText=%v text=%q pos=%v kpos=%v path=%q\n", indent, t.kind, t.val(), t.isText, t.text, t.pos(), t.kpos(), t.path)
		for i, k := range t.keys() {
			fmt.Fprintf(&b, "%s key %q:\n", indent, k)
			walk(t.vals()[i], indent+"   ")
		}
		for _, it := range t.items() {
			walk(it, indent+"  - ")
		}
	}
	walk(t, "\n")
	return b.String()
}

// FuzzFastTree: whatever fastTree takes, yaml.v3's path takes without a
// diagnostic and makes the same tree of.
//
//	go test -run '^$' -fuzz FuzzFastTree ./pkg/spec
func FuzzFastTree(f *testing.F) {
	f.Add([]byte(shapes))
	f.Add(benchSpec(3))
	f.Add([]byte("tasks:\n  - name: a\n    description: x\n  - name: b\n    agent: w\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := fastTree("f", data)
		if !ok {
			return
		}
		slow, diags := parseTreeYAML("f", data)
		if len(diags) > 0 {
			t.Fatalf("fastTree took a file yaml.v3's path reports: %v\n%q", diags, data)
		}
		if !reflect.DeepEqual(slow, fast) {
			t.Fatalf("trees differ:\n yaml.v3 %s\n fast    %s\n%q", dumpTree(slow), dumpTree(fast), data)
		}
	})
}

// plainWord may only say !!str where yaml.v3's resolver says it: every
// first byte, with the endings that make its special words.
func TestPlainWordAgreesWithYAML(t *testing.T) {
	ends := []string{"", "rue", "RUE", "alse", "ALSE", "ull", "ULL", "es", "n", "ff", "x", "0", ".5", "e3", " word", "nf", "an"}
	var words int
	for c := 0x20; c < 0x100; c++ {
		for _, end := range ends {
			v := string([]byte{byte(c)}) + end
			if c >= 0x80 {
				v = "é" + end
			}
			got := plainWord([]byte(v))
			want := (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag() == "!!str"
			if got && !want {
				t.Errorf("plainWord(%q) = true; yaml.v3 resolves it to %s", v, (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag())
			}
			if got {
				words++
			}
		}
	}
	for _, v := range []string{"task 0", "yes", "on", "Null value", "tRUE", "Writer", "nil"} {
		if !plainWord([]byte(v)) {
			t.Errorf("plainWord(%q) = false: yaml.v3 reads it as a string by its first byte", v)
		}
	}
	for _, v := range []string{"true", "False", "NULL", "~", "12", "-1", ".inf", "+3", ""} {
		if plainWord([]byte(v)) {
			t.Errorf("plainWord(%q) = true: yaml.v3 does not read it as a string", v)
		}
	}
	t.Logf("%d plain words typed without the resolver", words)
}

// A repeated key is left to yaml.v3's path, which says where the first one
// is, in a mapping of a few keys (checked as they come) and of many
// (checked once all are read).
func TestFastTreeLeavesRepeatedKeys(t *testing.T) {
	for _, n := range []int{3, 8, 9, 40} {
		data := string(benchSpec(n)) + "  t1:\n    description: again\n    agent: t\n"
		if _, ok := fastTree("m", []byte(data)); ok {
			t.Errorf("%d tasks: fastTree took a repeated task name", n)
		}
		_, err := Parse("m.yaml", []byte(data))
		if err == nil || !strings.Contains(err.Error(), `duplicate task name "t1" (first at line 10)`) {
			t.Errorf("%d tasks: got %v", n, err)
		}
		if _, ok := fastTree("m", benchSpec(n)); !ok {
			t.Errorf("%d distinct tasks: fastTree did not take them", n)
		}
	}
}

// A line, or an indentation, longer than a fastLine holds (65,535 bytes)
// is left to yaml.v3, which reads it whole.
func TestFastTreeLeavesLongLines(t *testing.T) {
	long := strings.Repeat("x", 70_000)
	for name, data := range map[string]string{
		"a long value":      "name: n\nagents:\n  w:\n    command: [\"true\"]\ntasks:\n  a:\n    description: " + long + "\n    agent: w\n",
		"a long item":       "name: n\nagents:\n  w:\n    command: [\"true\"]\ntasks:\n  a:\n    description: d\n    agent: w\n    context:\n      - " + long + "\n",
		"a value just fits": "name: n\nagents:\n  w:\n    command: [\"true\"]\ntasks:\n  a:\n    description: " + long[:65_535-len("description: ")] + "\n    agent: w\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, fast := fastTree("m", []byte(data))
			if want := name == "a value just fits"; fast != want {
				t.Errorf("fastTree took it: %v, want %v", fast, want)
			}
			team, err := Parse("m.yaml", []byte(data))
			if name == "a long item" {
				if err == nil || !strings.Contains(err.Error(), "tasks.a.context[0]") {
					t.Errorf("a context naming no task: %v", err)
				}
				return
			}
			if err != nil || len(team.Tasks) != 1 || !strings.HasPrefix(team.Tasks[0].Description, "xxx") {
				t.Fatalf("%v", err)
			}
		})
	}
}
