package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"

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

// schemaDefPattern is the pattern of the embedded schema's $defs.<def>:
// "" when it has none, which no test lets through.
func schemaDefPattern(def string) string {
	var doc struct {
		Defs map[string]struct {
			Pattern string `json:"pattern"`
		} `json:"$defs"`
	}
	if json.Unmarshal(schemas.AgentsSchema, &doc) != nil {
		return ""
	}
	return doc.Defs[def].Pattern
}

// validateSchema checks the native format against the embedded schema and
// rewrites every failure in words a person can act on, at its YAML position.
func validateSchema(file string, root *tree) ErrorList {
	// The common case, a valid spec, is settled by a direct check of the
	// tree; anything it does not accept goes to the full validator, which
	// alone words the problems (and is the judge of what it doubts).
	if fs := loadFastSchema(); fs != nil && fs.valid(root) {
		return nil
	}
	cs, err := loadSchema()
	if err != nil {
		// A broken embedded schema is a build defect, not the user's.
		return ErrorList{{File: file, Message: "internal error: " + err.Error()}}
	}
	index := map[string]*tree{}
	root.walkPointers("", func(ptr string, t *tree) { index[ptr] = t })
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
// bound is a schema's minimum or maximum as the user writes numbers:
// 2147483647, not 2.147483647e+09.
func bound(want any) string {
	if f, ok := want.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(want)
}

func (cs *compiled) lookup(ptr string) any {
	var cur any = cs.doc
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if seg == "" {
			continue
		}
		if strings.Contains(seg, "~") { // a Replacer is costly to make, and few segments need it
			seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		}
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
	ptr := leaf.InstanceLocation
	at := index[ptr]
	if at == nil {
		// jsonschema URL-escapes the pointer's tokens ("my task" is
		// "my%20task"); the index holds them as written.
		if loc, err := url.PathUnescape(ptr); err == nil {
			ptr, at = loc, index[loc]
		}
	}
	if at == nil {
		ptr, at = "", index[""]
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
	one := func(msg string) []Diagnostic { return []Diagnostic{diag(at, at.pos(), msg)} }

	switch keyword {
	case "type":
		got := at.describe()
		if slices.Contains(asList(want), any("string")) {
			// A name or text YAML read as a number, boolean or null
			// (agent: 123): say how to quote it, when quoted it fits.
			if p, _ := cs.lookup(parent + "/pattern").(string); p == "" || fits(p, at.text) {
				got += at.textHint()
			}
		}
		if w := defWords[parent]; w != "" {
			if s, ok := at.str(); ok && strings.HasSuffix(parent, "/foreach") && identRE().MatchString(s) {
				got += fmt.Sprintf(": write foreach: {over: %s, as: item} (then {item} in the texts)", s)
			}
			return one(fmt.Sprintf("expected %s, got %s", w, got))
		}
		return one(fmt.Sprintf("expected %s, got %s", typeWords(want), got))
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
		for i, k := range at.keys() {
			if contains(allowed, k) {
				continue
			}
			for p := range patterns {
				if re, err := regexp.Compile(p); err == nil && re.MatchString(k) {
					continue keys
				}
			}
			v := at.vals()[i]
			out = append(out, diag(v, v.kpos(), unknownKeyMessage(k, allowed, at.path == "")))
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
				out = append(out, diag(at, at.kpos(), fmt.Sprintf("missing required key %q", ks)))
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
			return propertyNameDiag(file, at, ptr, what)
		}
		if s, ok := at.str(); ok && namesSecret(at.path) {
			if p := KeyNameProblem(s); p != "" {
				return one(p) // never the value: it may be the key
			}
		}
		return one(fmt.Sprintf("expected %s, got %s", what, at.describe()))
	case "minLength":
		if strings.Contains(leaf.KeywordLocation, "/propertyNames/") {
			return propertyNameDiag(file, at, ptr, "a non-empty name")
		}
		return one("must not be empty")
	case "maxLength":
		if strings.Contains(leaf.KeywordLocation, "/propertyNames/") {
			return propertyNameDiag(file, at, ptr, fmt.Sprintf("a name of at most %v characters", want))
		}
		return one(fmt.Sprintf("is longer than %v characters", want))
	case "minItems", "minProperties":
		if ptr == "/tasks" {
			return one("the team has no tasks: give it at least one")
		}
		return one("must not be empty")
	case "minimum":
		return one(fmt.Sprintf("expected at least %s, got %s", bound(want), at.describe()))
	case "maximum":
		return one(fmt.Sprintf("expected at most %s, got %s", bound(want), at.describe()))
	case "uniqueItems":
		// Name the value and both places: in a long list of tools the
		// second mention is often a slip for another name.
		first := map[string]*tree{}
		for _, it := range at.items() {
			if it.kind != yaml.ScalarNode {
				continue
			}
			v := fmt.Sprintf("%T %v", it.val(), it.val()) // 1 is not "1"
			if f, dup := first[v]; dup {
				return []Diagnostic{diag(it, it.pos(), fmt.Sprintf("lists %s twice (first at line %d, column %d): name it once", quoteShort(FormatValue(it.val())), f.pos().Line, f.pos().Column))}
			}
			first[v] = it
		}
		return one("lists the same value twice")
	}
	return one("is not valid here")
}

// propertyNameDiag reports a bad mapping key. jsonschema/v5 validates the
// key at the location of its value, so that node knows where the key is.
func propertyNameDiag(file string, at *tree, ptr, what string) []Diagnostic {
	// An empty key's pointer is the mapping's own (its empty last
	// segment dropped): point at the key, not at the mapping's name.
	if i := slices.Index(at.keys(), ""); i >= 0 && at.vals() != nil {
		k := at.vals()[i].kpos()
		return []Diagnostic{{File: file, Line: k.Line, Column: k.Column, Path: at.path,
			Message: `expected a name, got an empty one (""): name it`}}
	}
	key := ptr[strings.LastIndexByte(ptr, '/')+1:]
	key = strings.NewReplacer("~1", "/", "~0", "~").Replace(key)
	return []Diagnostic{{File: file, Line: at.kpos().Line, Column: at.kpos().Column, Path: at.path,
		Message: fmt.Sprintf("expected %s, got %s", what, quoteShort(key))}}
}

// defWords says in words what the named definitions of the schema expect.
var defWords = map[string]string{
	"/$defs/duration":   "a duration such as 30s, 5m or 1h30m",
	"/$defs/identifier": "an identifier (letters, digits and _, not starting with a digit)",
	"/$defs/name":       "a name without slashes or control characters, not starting with a dot or a space",
	// A loop or a route written as a scalar (foreach: items, repeat: 3)
	// gets the shape to write, not "expected a mapping" alone.
	"/$defs/task/properties/foreach":   "a mapping such as {over: VAR, as: NAME}",
	"/$defs/task/properties/repeat":    "a mapping such as {until: TEXT, max_iterations: N}",
	"/$defs/task/properties/condition": "a mapping of results to the tasks they run, such as {approve: [publish], reject: [revise]}",
	// The schema's pattern is ^auto$ for the one text allowed beside the
	// booleans: "a value matching ^auto$" named a regex and one choice.
	"/$defs/llm/properties/stream": "true, false or auto",
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

// unknownKeyMessage words an unknown key; top: a key of the file's top
// mapping, where a key that only holds a YAML anchor (defaults: &d) has a
// home of its own.
func unknownKeyMessage(key string, allowed []string, top bool) string {
	if key == "api_key" {
		return `unknown key "api_key": a key never goes into the spec; put it in an environment variable and name that variable in api_key_env`
	}
	if key == "max_completion_tokens" && contains(allowed, "max_tokens") {
		return `unknown key "max_completion_tokens": write max_tokens, which teamrun sends as max_completion_tokens to a model that takes only that (OpenAI's reasoning models)`
	}
	msg := fmt.Sprintf("unknown key %q", key)
	switch m := closest(key, allowed); {
	case m != "":
		msg += fmt.Sprintf(" (did you mean %q?)", m)
	case praisonKey(key):
		msg += ": a PraisonAI key; to read the file as PraisonAI's, add `framework: praisonai` at the top (keys teamrun does not support then warn instead)"
	case top:
		msg += fmt.Sprintf(": a top-level key is one of %s; to keep a YAML anchor or a note at the top, name the key x-%s (top-level x-… keys are ignored)", strings.Join(allowed, ", "), key)
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

// ---- the fast path: a direct check of the tree against the schema ----
//
// fastSchema interprets the keywords the embedded schema uses, straight on
// the tree (no JSON conversion, no jsonschema compile). It is only ever
// trusted to say "valid": whenever it is not sure (a keyword it does not
// know, a float where an integer is wanted, NaN...) it says "invalid" and
// the full validator decides. schema_fast_test.go checks it against
// jsonschema on every spec of the test data and on mutations of them.

type fastSchema struct {
	always     *bool // a boolean schema
	ref        *fastSchema
	refPtr     string
	types      []string
	minLength  int // -1: none
	maxLength  int
	pattern    *lazyRE
	enum       []string
	properties map[string]*fastSchema
	patterns   []*lazyRE // patternProperties keys, parallel to patSchemas
	patSchemas []*fastSchema
	addl       *fastSchema // additionalProperties
	required   []string
	propNames  *fastSchema
	items      *fastSchema
	minItems   int
	minProps   int
	minimum    *float64
	maximum    *float64
	unique     bool
}

// loadFastSchema is nil when the embedded schema uses a keyword the fast
// path does not know: then every spec goes to the full validator.
var loadFastSchema = sync.OnceValue(func() *fastSchema {
	var doc map[string]any
	if err := json.Unmarshal(schemas.AgentsSchema, &doc); err != nil {
		return nil
	}
	b := &fastBuilder{doc: doc, byPtr: map[string]*fastSchema{}}
	s := b.build(doc)
	// Resolve the references; a target is built from the document on
	// first use, and may add references of its own.
	for len(b.refs) > 0 && !b.failed {
		r := b.refs[0]
		b.refs = b.refs[1:]
		r.ref = b.target(r.refPtr)
	}
	if b.failed || s == nil {
		return nil
	}
	return s
})

type fastBuilder struct {
	doc    map[string]any
	byPtr  map[string]*fastSchema
	refs   []*fastSchema
	failed bool
}

// stringList reads a schema keyword's list of strings; anything else marks
// the schema as one the fast path does not know.
func (b *fastBuilder) stringList(x any) []string {
	l, ok := x.([]any)
	if !ok {
		b.failed = true
		return nil
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		es, ok := e.(string)
		if !ok {
			b.failed = true
		}
		out = append(out, es)
	}
	return out
}

func (b *fastBuilder) build(v any) *fastSchema {
	if b.failed {
		return nil
	}
	if bl, ok := v.(bool); ok {
		return &fastSchema{always: &bl, minLength: -1, maxLength: -1, minItems: -1, minProps: -1}
	}
	m, ok := v.(map[string]any)
	if !ok {
		b.failed = true
		return nil
	}
	s := &fastSchema{minLength: -1, maxLength: -1, minItems: -1, minProps: -1}
	intOf := func(x any) int {
		f, ok := x.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || f > 1<<30 {
			b.failed = true
			return -1
		}
		return int(f)
	}
	for k, x := range m {
		switch k {
		case "$schema", "$id", "title", "description", "$defs", "$comment", "examples", "default":
			// annotations; $defs are reached through $ref
		case "$ref":
			ptr, ok := x.(string)
			if !ok || !strings.HasPrefix(ptr, "#") {
				b.failed = true
				break
			}
			s.refPtr = ptr[1:]
			b.refs = append(b.refs, s)
		case "type":
			for _, t := range asList(x) {
				ts, ok := t.(string)
				if !ok {
					b.failed = true
				}
				s.types = append(s.types, ts)
			}
		case "minLength":
			s.minLength = intOf(x)
		case "maxLength":
			s.maxLength = intOf(x)
		case "minItems":
			s.minItems = intOf(x)
		case "minProperties":
			s.minProps = intOf(x)
		case "pattern":
			p, ok := x.(string)
			if !ok {
				b.failed = true
				break
			}
			s.pattern = newLazyRE(p)
		case "enum":
			s.enum = b.stringList(x)
			if s.enum == nil {
				s.enum = []string{}
			}
		case "properties":
			pm, ok := x.(map[string]any)
			if !ok {
				b.failed = true
				break
			}
			s.properties = map[string]*fastSchema{}
			for name, sub := range pm {
				s.properties[name] = b.build(sub)
			}
		case "patternProperties":
			pm, ok := x.(map[string]any)
			if !ok {
				b.failed = true
				break
			}
			for p, sub := range pm {
				s.patterns = append(s.patterns, newLazyRE(p))
				s.patSchemas = append(s.patSchemas, b.build(sub))
			}
		case "additionalProperties":
			s.addl = b.build(x)
		case "required":
			s.required = b.stringList(x)
		case "propertyNames":
			s.propNames = b.build(x)
		case "items":
			s.items = b.build(x)
		case "minimum", "maximum":
			f, ok := x.(float64)
			if !ok {
				b.failed = true
				break
			}
			if k == "minimum" {
				s.minimum = &f
			} else {
				s.maximum = &f
			}
		case "uniqueItems":
			u, ok := x.(bool)
			if !ok {
				b.failed = true
			}
			s.unique = u
		default:
			b.failed = true // a keyword this check does not know
		}
	}
	if b.failed {
		return nil
	}
	return s
}

func (b *fastBuilder) target(ptr string) *fastSchema {
	if t, ok := b.byPtr[ptr]; ok {
		return t
	}
	var cur any = b.doc
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if seg == "" {
			continue
		}
		if strings.Contains(seg, "~") { // a Replacer is costly to make, and few segments need it
			seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		}
		m, ok := cur.(map[string]any)
		if !ok {
			b.failed = true
			return nil
		}
		if cur, ok = m[seg]; !ok {
			b.failed = true
			return nil
		}
	}
	if ptr == "" {
		b.failed = true // a reference to the root: not used, not supported
		return nil
	}
	t := b.build(cur)
	b.byPtr[ptr] = t
	return t
}

// fastKind is an instance's JSON type as the full validator sees it, or ""
// when the fast path should not judge it.
func fastKind(t *tree) string {
	switch t.kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	}
	if t.isText {
		return "string"
	}
	switch v := t.val().(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "" // the JSON form is the text: let the full check judge
		}
		return "number"
	}
	return ""
}

// valid reports whether t surely satisfies s; false means "not sure".
func (s *fastSchema) valid(t *tree) bool {
	return s.check(t, fastKind(t), 0)
}

func (s *fastSchema) check(t *tree, kind string, depth int) bool {
	if s == nil || kind == "" || depth > 64 {
		return false
	}
	if s.always != nil {
		return *s.always
	}
	if len(s.types) > 0 {
		ok := false
		for _, ty := range s.types {
			if ty == kind || (ty == "number" && kind == "integer") {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if s.enum != nil {
		str, isStr := t.str()
		if kind != "string" || !isStr || !contains(s.enum, str) {
			return false
		}
	}
	switch kind {
	case "object":
		if s.minProps >= 0 && len(t.keys()) < s.minProps {
			return false
		}
		for _, r := range s.required {
			if t.get(r) == nil {
				return false
			}
		}
		for i, k := range t.keys() {
			v := t.vals()[i]
			vk := fastKind(v)
			matched := false
			if p, ok := s.properties[k]; ok {
				matched = true
				if !p.check(v, vk, depth+1) {
					return false
				}
			}
			for pi, re := range s.patterns {
				m, ok := re.match(k)
				if !ok {
					return false
				}
				if m {
					matched = true
					if !s.patSchemas[pi].check(v, vk, depth+1) {
						return false
					}
				}
			}
			if s.propNames != nil && !s.propNames.checkString(k, depth+1) {
				return false
			}
			if !matched && s.addl != nil && !s.addl.check(v, vk, depth+1) {
				return false
			}
		}
	case "array":
		if s.minItems >= 0 && len(t.items()) < s.minItems {
			return false
		}
		if s.unique {
			seen := make(map[string]bool, len(t.items()))
			for _, it := range t.items() {
				str, ok := it.str()
				if !ok || fastKind(it) != "string" || seen[str] {
					return false
				}
				seen[str] = true
			}
		}
		if s.items != nil {
			for _, it := range t.items() {
				if !s.items.check(it, fastKind(it), depth+1) {
					return false
				}
			}
		}
	case "string":
		str, _ := t.str()
		if !s.stringOK(str) {
			return false
		}
	case "integer", "number":
		var f float64
		switch v := t.val().(type) {
		case int64:
			if v > 1<<53 || v < -(1<<53) {
				return false // beyond exact float64 comparison: let the full check judge
			}
			f = float64(v)
		case float64:
			f = v
		default:
			return false
		}
		if s.minimum != nil && f < *s.minimum {
			return false
		}
		if s.maximum != nil && f > *s.maximum {
			return false
		}
	}
	if s.refPtr != "" && !s.ref.check(t, kind, depth+1) {
		return false
	}
	return true
}

// checkString checks a mapping key, which the validator sees as a string.
func (s *fastSchema) checkString(str string, depth int) bool {
	if s == nil || depth > 64 {
		return false
	}
	if s.always != nil {
		return *s.always
	}
	if len(s.types) > 0 && !contains(s.types, "string") {
		return false
	}
	if s.enum != nil && !contains(s.enum, str) {
		return false
	}
	if !s.stringOK(str) {
		return false
	}
	if s.refPtr != "" && !s.ref.checkString(str, depth+1) {
		return false
	}
	return true
}

func (s *fastSchema) stringOK(str string) bool {
	if s.minLength >= 0 || s.maxLength >= 0 {
		n := utf8.RuneCountInString(str)
		if s.minLength >= 0 && n < s.minLength {
			return false
		}
		if s.maxLength >= 0 && n > s.maxLength {
			return false
		}
	}
	if s.pattern == nil {
		return true
	}
	m, ok := s.pattern.match(str)
	return ok && m
}

// lazyRE is a schema pattern compiled on first use: most specs never reach
// most patterns, and compiling them all cost every validate and run about
// 0.3 ms (a tool name's {1,64} alone 0.18 ms).
type lazyRE struct {
	re func() *regexp.Regexp // nil: the pattern does not compile
}

func newLazyRE(p string) *lazyRE {
	return &lazyRE{re: sync.OnceValue(func() *regexp.Regexp {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil
		}
		return re
	})}
}

// match reports whether s matches; ok is false for a pattern that does not
// compile, which the fast check doubts (the full validator then judges).
func (l *lazyRE) match(s string) (matched, ok bool) {
	re := l.re()
	if re == nil {
		return false, false
	}
	return re.MatchString(s), true
}
