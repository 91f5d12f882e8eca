package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/teamrun/teamrun/schemas"
)

const schemaURL = "urn:teamrun:agents.schema.json"

// compiled is the embedded schema, compiled once: both the validator and
// the raw document, which the error messages read expected values from.
type compiled struct {
	schema *jsonschema.Schema
	doc    map[string]any
}

var loadSchema = sync.OnceValues(func() (*compiled, error) {
	var doc map[string]any
	if err := json.Unmarshal(schemas.AgentsSchema, &doc); err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(schemaURL, bytes.NewReader(schemas.AgentsSchema)); err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	return &compiled{schema: s, doc: doc}, nil
})

// validateSchema checks the native format against the embedded schema and
// rewrites every failure in words a person can act on, at its YAML position.
func validateSchema(file string, root *tree) ErrorList {
	cs, err := loadSchema()
	if err != nil {
		// A broken embedded schema is a build defect, not the user's.
		return ErrorList{{File: file, Message: "internal error: " + err.Error()}}
	}
	index := map[string]*tree{}
	root.walk(func(t *tree) { index[t.ptr] = t })
	err = cs.schema.Validate(root.json())
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		if err != nil {
			return ErrorList{{File: file, Message: "internal error: schema validation failed"}}
		}
		return nil
	}
	var out ErrorList
	seen := map[string]bool{}
	for _, leaf := range leaves(ve) {
		for _, d := range cs.explain(file, leaf, index) {
			if k := d.String(); !seen[k] {
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	return out
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// lookup resolves a JSON pointer inside the schema document.
func (cs *compiled) lookup(ptr string) any {
	var cur any = cs.doc
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// allowedKeys lists the properties a schema object permits, following $ref.
func (cs *compiled) allowedKeys(ptr string) []string {
	var keys []string
	for depth := 0; depth < 8; depth++ {
		obj, _ := cs.lookup(ptr).(map[string]any)
		if obj == nil {
			break
		}
		if props, ok := obj["properties"].(map[string]any); ok {
			for k := range props {
				keys = append(keys, k)
			}
		}
		ref, _ := obj["$ref"].(string)
		if !strings.HasPrefix(ref, "#/") {
			break
		}
		ptr = ref[1:]
	}
	sort.Strings(keys)
	return keys
}

// explain turns one failed keyword into diagnostics.
func (cs *compiled) explain(file string, leaf *jsonschema.ValidationError, index map[string]*tree) []Diagnostic {
	at := index[leaf.InstanceLocation]
	if at == nil {
		at = index[""]
	}
	abs := leaf.AbsoluteKeywordLocation
	if i := strings.IndexByte(abs, '#'); i >= 0 {
		abs = abs[i+1:]
	}
	keyword := abs[strings.LastIndexByte(abs, '/')+1:]
	parent := abs[:max(strings.LastIndexByte(abs, '/'), 0)]
	want := cs.lookup(abs)
	diag := func(t *tree, p Pos, msg string) Diagnostic {
		return Diagnostic{File: file, Line: p.Line, Column: p.Column, Path: t.path, Message: msg}
	}
	one := func(msg string) []Diagnostic { return []Diagnostic{diag(at, at.pos, msg)} }

	switch keyword {
	case "type":
		if w := defWords[parent]; w != "" {
			return one(fmt.Sprintf("expected %s, got %s", w, at.describe()))
		}
		return one(fmt.Sprintf("expected %s, got %s", typeWords(want), at.describe()))
	case "enum":
		var opts []string
		for _, v := range asList(want) {
			opts = append(opts, fmt.Sprint(v))
		}
		msg := fmt.Sprintf("expected one of %s, got %s", strings.Join(opts, ", "), at.describe())
		if s, ok := at.str(); ok {
			if m := closest(s, opts); m != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", m)
			}
		}
		return one(msg)
	case "additionalProperties", "unevaluatedProperties":
		allowed := cs.allowedKeys(parent)
		patterns, _ := cs.lookup(parent + "/patternProperties").(map[string]any)
		var out []Diagnostic
	keys:
		for i, k := range at.keys {
			if contains(allowed, k) {
				continue
			}
			for p := range patterns {
				if re, err := regexp.Compile(p); err == nil && re.MatchString(k) {
					continue keys
				}
			}
			v := at.vals[i]
			out = append(out, diag(v, v.kpos, unknownKeyMessage(k, allowed)))
		}
		if len(out) == 0 {
			return one("unexpected key")
		}
		return out
	case "required":
		var out []Diagnostic
		for _, k := range asList(want) {
			ks := fmt.Sprint(k)
			if at.get(ks) == nil {
				out = append(out, diag(at, at.kpos, fmt.Sprintf("missing required key %q", ks)))
			}
		}
		return out
	case "pattern":
		what := defWords[parent]
		if what == "" {
			what = "a value matching " + fmt.Sprint(want)
		}
		if strings.Contains(leaf.KeywordLocation, "/propertyNames/") {
			// The instance is the offending key itself: point at it.
			return propertyNameDiag(file, at, what)
		}
		return one(fmt.Sprintf("expected %s, got %s", what, at.describe()))
	case "minLength":
		if strings.Contains(leaf.KeywordLocation, "/propertyNames/") {
			return propertyNameDiag(file, at, "a non-empty name")
		}
		return one("must not be empty")
	case "maxLength":
		if strings.Contains(leaf.KeywordLocation, "/propertyNames/") {
			return propertyNameDiag(file, at, fmt.Sprintf("a name of at most %v characters", want))
		}
		return one(fmt.Sprintf("is longer than %v characters", want))
	case "minItems", "minProperties":
		if at.ptr == "/tasks" {
			return one("the team has no tasks: give it at least one")
		}
		return one("must not be empty")
	case "minimum":
		return one(fmt.Sprintf("expected at least %v, got %s", want, at.describe()))
	case "maximum":
		return one(fmt.Sprintf("expected at most %v, got %s", want, at.describe()))
	case "uniqueItems":
		return one("lists the same value twice")
	}
	return one("is not valid here")
}

// propertyNameDiag reports a bad mapping key. jsonschema/v5 validates the
// key at the location of its value, so that node knows where the key is.
func propertyNameDiag(file string, at *tree, what string) []Diagnostic {
	key := at.ptr[strings.LastIndexByte(at.ptr, '/')+1:]
	key = strings.NewReplacer("~1", "/", "~0", "~").Replace(key)
	return []Diagnostic{{File: file, Line: at.kpos.Line, Column: at.kpos.Column, Path: at.path,
		Message: fmt.Sprintf("expected %s, got %s", what, quoteShort(key))}}
}

// defWords says in words what the named definitions of the schema expect.
var defWords = map[string]string{
	"/$defs/duration":   "a duration such as 30s, 5m or 1h30m",
	"/$defs/identifier": "an identifier (letters, digits and _, not starting with a digit)",
	"/$defs/name":       "a name without slashes or control characters, not starting with a dot or a space",
}

func typeWords(v any) string {
	var words []string
	for _, t := range asList(v) {
		switch t {
		case "object":
			words = append(words, "a mapping")
		case "array":
			words = append(words, "a list")
		case "integer":
			words = append(words, "integer")
		case "number":
			words = append(words, "number")
		case "string":
			words = append(words, "string")
		case "boolean":
			words = append(words, "boolean (true or false)")
		default:
			words = append(words, fmt.Sprint(t))
		}
	}
	return strings.Join(words, " or ")
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func unknownKeyMessage(key string, allowed []string) string {
	if key == "api_key" {
		return `unknown key "api_key": a key never goes into the spec; put it in an environment variable and name that variable in api_key_env`
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if m := closest(key, allowed); m != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", m)
	}
	return msg
}

// closest returns the candidate nearest to s when it is near enough to be
// a likely typo, else "".
func closest(s string, candidates []string) string {
	const maxLen = 64 // typos are in short names; long ones would cost O(n*m)
	if len(s) > maxLen || len(candidates) > 1000 {
		return ""
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if len(c) > maxLen || len(c)-len(s) > 3 || len(s)-len(c) > 3 {
			continue
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) > 8 {
		limit = 3
	}
	if bestD <= limit && bestD < len(s) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	// Optimal string alignment: insertions, deletions, substitutions and
	// swaps of two neighbours each cost one.
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
