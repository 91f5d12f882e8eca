package spec

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The fast schema check may only ever say "valid" when jsonschema agrees:
// it is checked here on every spec of the test data and on many mutations
// of each (every value replaced by values of other types and shapes,
// unknown and extension keys added).

func fastCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var globs []string
	for _, dir := range []string{"valid", "invalid"} {
		globs = append(globs, filepath.Join(specDir, dir, "*.yaml"), filepath.Join(specDir, dir, "*.yml"))
	}
	globs = append(globs, filepath.Join("..", "..", "examples", "*.yaml"), filepath.Join("testdata", "fuzz", "FuzzParse", "*"))
	for _, g := range globs {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(f, "FuzzParse") {
				// go test fuzz v1 files: the input is a Go quoted []byte.
				data = fuzzInput(data)
				if data == nil {
					continue
				}
			}
			out[f] = data
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d specs found", len(out))
	}
	return out
}

func fuzzInput(data []byte) []byte {
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "[]byte("); ok {
			var s string
			if _, err := fmt.Sscanf(strings.TrimSuffix(rest, ")"), "%q", &s); err == nil {
				return []byte(s)
			}
		}
	}
	return nil
}

func cloneTree(t *tree) *tree {
	c := *t
	if t.br != nil {
		b := *t.br
		b.keys = append([]string(nil), t.br.keys...)
		b.kids = make([]*tree, len(t.br.kids))
		for i, v := range t.br.kids {
			b.kids[i] = cloneTree(v)
		}
		c.br = &b
	}
	return &c
}

func nodes(t *tree) []*tree {
	var out []*tree
	t.walk(func(n *tree) { out = append(out, n) })
	return out
}

func scalarTree(v any) *tree {
	t := &tree{kind: yaml.ScalarNode, text: fmt.Sprint(v)}
	if s, ok := v.(string); ok {
		t.text = s
		t.isText = true
	} else {
		t.setVal(v)
	}
	return t
}

// replacements are the values a node is swapped for.
func replacements() []*tree {
	str := func(s string) *tree { return scalarTree(s) }
	seq := func(items ...*tree) *tree { return &tree{kind: yaml.SequenceNode, br: &branch{kids: items}} }
	mapping := func(kv ...any) *tree {
		m := &tree{kind: yaml.MappingNode}
		for i := 0; i+1 < len(kv); i += 2 {
			m.add(kv[i].(string), kv[i+1].(*tree))
		}
		return m
	}
	return []*tree{
		str(""), str("x"), str(" x"), str(".x"), str("a/b"), str("1x"), str("30s"), str("5"), str("sequential"),
		str("workflow"), str("human"), str(strings.Repeat("é", 129)), str("gpt-4o"),
		scalarTree(int64(0)), scalarTree(int64(-1)), scalarTree(int64(1)), scalarTree(int64(3)), scalarTree(int64(1) << 60),
		scalarTree(2.5), scalarTree(3.0), scalarTree(-0.5), scalarTree(math.NaN()), scalarTree(math.Inf(1)),
		scalarTree(true), scalarTree(nil),
		seq(), seq(str("a")), seq(str("a"), str("a")), seq(str("a"), str("b")), seq(scalarTree(int64(1))), seq(str("")),
		mapping(), mapping("model", str("m")), mapping("x", str("y")), mapping("a", seq(str("b"))),
		mapping("description", str("d"), "agent", str("human")),
	}
}

func TestFastSchemaNeverAcceptsWhatJSONSchemaRejects(t *testing.T) {
	fs := loadFastSchema()
	if fs == nil {
		t.Fatal("the fast schema check does not understand the embedded schema")
	}
	cs, err := loadSchema()
	if err != nil {
		t.Fatal(err)
	}
	slow := func(root *tree) bool { return cs.schema.Validate(root.json()) == nil }
	reps := replacements()
	checked, accepted := 0, 0
	for name, data := range fastCorpus(t) {
		root, _ := parseTree(name, data)
		if root == nil || isPraison(root) {
			continue
		}
		base := fs.valid(root)
		if base && !slow(root) {
			t.Errorf("%s: fast check accepts what jsonschema rejects", name)
		}
		if !base && slow(root) && !strings.Contains(name, "invalid") && !strings.Contains(name, "FuzzParse") {
			t.Errorf("%s: a valid spec misses the fast path", name)
		}
		n := len(nodes(root))
		if n > 400 {
			n = 400
		}
		for i := 0; i < n; i++ {
			variants := make([]*tree, 0, len(reps)+3)
			for _, r := range reps {
				c := cloneTree(root)
				target := nodes(c)[i]
				r := cloneTree(r)
				r.path, r.at, r.kat = target.path, target.at, target.kat
				*target = *r
				variants = append(variants, c)
			}
			if at := nodes(root)[i]; at.isMap() {
				for _, key := range []string{"zzz", "x-ext", "name", "model", "tasks", "context", "bad/key", ".dot", "1abc", "_ok"} {
					for _, r := range []*tree{scalarTree("v"), scalarTree(int64(1)), &tree{kind: yaml.SequenceNode}} {
						c := cloneTree(root)
						target := nodes(c)[i]
						if target.get(key) != nil {
							continue
						}
						target.add(key, cloneTree(r))
						variants = append(variants, c)
					}
				}
				if len(at.keys()) > 0 {
					for k := range at.keys() {
						c := cloneTree(root)
						target := nodes(c)[i]
						target.br.keys = append(target.keys()[:k:k], target.keys()[k+1:]...)
						target.br.kids = append(target.vals()[:k:k], target.vals()[k+1:]...)
						variants = append(variants, c)
					}
				}
			}
			for _, v := range variants {
				checked++
				if fs.valid(v) {
					accepted++
					if !slow(v) {
						t.Fatalf("%s: node %d mutated: fast check accepts what jsonschema rejects: %v", name, i, v.json())
					}
				}
			}
		}
	}
	t.Logf("%d mutations checked, %d accepted by the fast check", checked, accepted)
	if accepted == 0 {
		t.Error("no mutation was accepted: the test checks nothing")
	}
}

// TestFastSchemaAgreesOnMessages: on an invalid spec, the messages come from
// the full validator exactly as before.
func TestFastSchemaKeepsMessages(t *testing.T) {
	_, err := Parse("t.yaml", []byte("tasks:\n  a:\n    description: d\n    agent: x\n    max_retries: -1\n    zzz: 1\n"))
	if err == nil {
		t.Fatal("invalid spec accepted")
	}
	for _, want := range []string{"t.yaml:5:18", "expected at least 0, got integer -1", "t.yaml:6:5", `unknown key "zzz"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// A pattern is compiled when a value reaches it: one that does not compile
// makes the fast check doubt only the specs that reach it (the full
// validator then judges), not refuse the fast path for every spec.
func TestFastSchemaPatternsOnUse(t *testing.T) {
	doc := map[string]any{"type": "object", "properties": map[string]any{
		"name": map[string]any{"type": "string", "pattern": "^[a-z]+$"},
		"bad":  map[string]any{"type": "string", "pattern": "("},
	}, "patternProperties": map[string]any{"^x-": true}}
	b := &fastBuilder{doc: doc, byPtr: map[string]*fastSchema{}}
	fs := b.build(doc)
	if b.failed || fs == nil {
		t.Fatal("the schema was refused")
	}
	for _, tt := range []struct {
		yaml string
		want bool
	}{
		{"name: abc\n", true},
		{"name: ABC\n", false},
		{"x-anchor: 1\nname: abc\n", true},
		{"bad: anything\n", false}, // reaches the pattern that does not compile
	} {
		root, diags := parseTree("a.yaml", []byte(tt.yaml))
		if len(diags) > 0 {
			t.Fatal(diags)
		}
		if got := fs.valid(root); got != tt.want {
			t.Errorf("%q: valid = %v, want %v", tt.yaml, got, tt.want)
		}
	}
}
