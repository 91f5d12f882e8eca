package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

	"github.com/teamrun/teamrun/schemas"
)

// The validator interprets the embedded schema itself, so that the binary
// does not carry (and initialise) a JSON Schema library. It is checked here
// against santhosh-tekuri/jsonschema/v5 on every spec of the test data and
// on many mutations of each (every value replaced by values of other types
// and shapes, keys added and removed): the same failed keywords, located
// the same way, and a quick check that never says "valid" wrongly.

var referenceSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(schemaURL, bytes.NewReader(schemas.AgentsSchema)); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

func referenceLeaves(t *testing.T, root *tree) []schemaLeaf {
	t.Helper()
	s, err := referenceSchema()
	if err != nil {
		t.Fatalf("the embedded schema does not compile: %v", err)
	}
	err = s.Validate(root.json())
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("validation: %v", err)
	}
	var out []schemaLeaf
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, schemaLeaf{e.InstanceLocation, e.AbsoluteKeywordLocation, e.KeywordLocation})
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return sortedLeaves(out)
}

func ourLeaves(t *testing.T, root *tree) []schemaLeaf {
	t.Helper()
	cs, err := loadSchema()
	if err != nil {
		t.Fatal(err)
	}
	var out []schemaLeaf
	cs.schema.collect(root, jsonKind(root), jsonStr(root), root.ptr, "", &out)
	return sortedLeaves(out)
}

func sortedLeaves(l []schemaLeaf) []schemaLeaf {
	slices.SortFunc(l, func(a, b schemaLeaf) int {
		return strings.Compare(a.InstanceLocation+"\x00"+a.AbsoluteKeywordLocation+"\x00"+a.KeywordLocation,
			b.InstanceLocation+"\x00"+b.AbsoluteKeywordLocation+"\x00"+b.KeywordLocation)
	})
	return slices.Compact(l)
}

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
	c.keys = append([]string(nil), t.keys...)
	c.vals = make([]*tree, len(t.vals))
	for i, v := range t.vals {
		c.vals[i] = cloneTree(v)
	}
	c.items = make([]*tree, len(t.items))
	for i, it := range t.items {
		c.items[i] = cloneTree(it)
	}
	return &c
}

func nodes(t *tree) []*tree {
	var out []*tree
	t.walk(func(n *tree) { out = append(out, n) })
	return out
}

func scalarTree(v any) *tree {
	t := &tree{kind: yaml.ScalarNode, value: v, text: fmt.Sprint(v)}
	return t
}

// replacements are the values a node is swapped for.
func replacements() []*tree {
	str := func(s string) *tree { return scalarTree(s) }
	seq := func(items ...*tree) *tree { return &tree{kind: yaml.SequenceNode, items: items} }
	mapping := func(kv ...any) *tree {
		m := &tree{kind: yaml.MappingNode}
		for i := 0; i+1 < len(kv); i += 2 {
			m.keys = append(m.keys, kv[i].(string))
			m.vals = append(m.vals, kv[i+1].(*tree))
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

func TestSchemaValidatorMatchesJSONSchema(t *testing.T) {
	cs, err := loadSchema()
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, root *tree) (quick bool) {
		want := referenceLeaves(t, root)
		got := ourLeaves(t, root)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: failed keywords differ\n got %v\nwant %v\nfor %v", what, got, want, root.json())
		}
		quick = cs.schema.valid(root)
		if quick && len(want) > 0 {
			t.Fatalf("%s: the quick check accepts what fails %v: %v", what, want, root.json())
		}
		return quick
	}
	reps := replacements()
	checked, accepted, failing := 0, 0, 0
	for name, data := range fastCorpus(t) {
		root, _ := parseTree(name, data)
		if root == nil || isPraison(root) {
			continue
		}
		base := check(name, root)
		if !base && len(referenceLeaves(t, root)) == 0 && !strings.Contains(name, "invalid") && !strings.Contains(name, "FuzzParse") {
			t.Errorf("%s: a valid spec misses the quick check", name)
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
				r.path, r.ptr, r.pos, r.kpos = target.path, target.ptr, target.pos, target.kpos
				fixPtrs(r)
				*target = *r
				variants = append(variants, c)
			}
			if at := nodes(root)[i]; at.isMap() {
				for _, key := range []string{"zzz", "x-ext", "name", "model", "tasks", "context", "bad/key", "a~b", ".dot", "1abc", "_ok", "condition", "options"} {
					for _, r := range []*tree{scalarTree("v"), scalarTree(int64(1)), &tree{kind: yaml.SequenceNode}} {
						c := cloneTree(root)
						target := nodes(c)[i]
						if target.get(key) != nil {
							continue
						}
						v := cloneTree(r)
						v.ptr = target.ptr + "/" + ptrEscaper.Replace(key)
						target.keys = append(target.keys, key)
						target.vals = append(target.vals, v)
						variants = append(variants, c)
					}
				}
				for k := range at.keys {
					c := cloneTree(root)
					target := nodes(c)[i]
					target.keys = append(target.keys[:k:k], target.keys[k+1:]...)
					target.vals = append(target.vals[:k:k], target.vals[k+1:]...)
					variants = append(variants, c)
				}
			}
			for j, v := range variants {
				checked++
				if check(fmt.Sprintf("%s: node %d, variant %d", name, i, j), v) {
					accepted++
				} else if len(referenceLeaves(t, v)) > 0 {
					failing++
				}
			}
		}
	}
	t.Logf("%d mutations checked: %d pass the quick check, %d fail with the same keywords as jsonschema", checked, accepted, failing)
	if accepted == 0 || failing == 0 {
		t.Error("the mutations do not exercise both outcomes")
	}
}

// fixPtrs gives a replacement's children the JSON pointers under its own.
func fixPtrs(t *tree) {
	for i, v := range t.vals {
		v.ptr = t.ptr + "/" + ptrEscaper.Replace(t.keys[i])
		fixPtrs(v)
	}
	for i, it := range t.items {
		it.ptr = fmt.Sprintf("%s/%d", t.ptr, i)
		fixPtrs(it)
	}
}

func TestEmbeddedSchemaIsSupported(t *testing.T) {
	if _, err := loadSchema(); err != nil {
		t.Fatal(err)
	}
	if _, err := referenceSchema(); err != nil {
		t.Fatalf("the embedded schema is not a valid draft 2020-12 schema: %v", err)
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
