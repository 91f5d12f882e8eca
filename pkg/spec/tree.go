package spec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// tree is one YAML value with its place in the source, converted once from
// yaml.Node so that the schema check, the model builder and the error
// messages all see the same keys in the same order.
type tree struct {
	text string // a scalar's source text
	// br holds a mapping's keys and values, a sequence's items; nil on a
	// scalar. Apart, so that a scalar, two of a spec's three nodes, does
	// not carry two empty lists: a node is 72 bytes, not 120 (a
	// 10,000-task spec's tree has ~30,000 of them while it loads, and a
	// restore collects nothing then).
	br *branch
	// path is the display path, e.g. tasks.count.max_retries. The JSON
	// pointer is made only for a spec the schema check refuses
	// (walkPointers): with it a node was 192 bytes, not 160.
	path string
	// num is a scalar's value when it is no text (not isText), of the
	// type vt says: an int64, a float64's bits, a bool as 0 or 1. In an
	// `any` it was 16 bytes a node, and an allocation of its own.
	num  uint64
	at   place     // where the value starts (pos)
	kat  place     // where its key starts, a sequence item: the item itself (kpos)
	kind yaml.Kind // MappingNode, SequenceNode or ScalarNode
	vt   numType
	// isText: a scalar whose value is a string, its text.
	isText bool
}

// branch is what a mapping or a sequence holds (tree.br).
type branch struct {
	keys []string // a mapping's keys, in file order
	// kids are a mapping's values, parallel to keys (vals), or a
	// sequence's items (items).
	kids  []*tree
	typed *typedKeys // rare: behind a pointer, a branch is 56 bytes, not 72
}

// numType is what a scalar's num holds; noNum when nothing (a null, or
// any node that is no scalar).
type numType uint8

const (
	noNum numType = iota
	numBool
	numInt
	numFloat
)

// place is a Pos in half the bytes: a spec is at most MaxSpecBytes.
type place struct{ line, col int32 }

func placeOf(p Pos) place { return place{int32(p.Line), int32(p.Column)} }

func (t *tree) pos() Pos  { return Pos{Line: int(t.at.line), Column: int(t.at.col)} }
func (t *tree) kpos() Pos { return Pos{Line: int(t.kat.line), Column: int(t.kat.col)} }

// keys are a mapping's keys, in file order; nil on anything else.
func (t *tree) keys() []string {
	if t == nil || t.br == nil {
		return nil
	}
	return t.br.keys
}

// vals are a mapping's values, parallel to its keys; nil on anything else.
func (t *tree) vals() []*tree {
	if t == nil || t.kind != yaml.MappingNode || t.br == nil {
		return nil
	}
	return t.br.kids
}

// items are a sequence's items; nil on anything else.
func (t *tree) items() []*tree {
	if t == nil || t.kind != yaml.SequenceNode || t.br == nil {
		return nil
	}
	return t.br.kids
}

// branch is t's branch, made when t has none.
func (t *tree) branch() *branch {
	if t.br == nil {
		t.br = &branch{}
	}
	return t.br
}

// add appends key and its value v to the mapping t.
func (t *tree) add(key string, v *tree) {
	b := t.branch()
	b.keys, b.kids = append(b.keys, key), append(b.kids, v)
}

// addItem appends v to the sequence t.
func (t *tree) addItem(v *tree) {
	b := t.branch()
	b.kids = append(b.kids, v)
}

// typedKeys are a mapping's keys YAML reads as no string (1, true): JSON
// cannot hold them (a variable so keyed is degraded, DESIGN §4). Rare.
type typedKeys []string

// typed returns the mapping's typedKeys.
func (t *tree) typed() typedKeys {
	if t.br == nil || t.br.typed == nil {
		return nil
	}
	return *t.br.typed
}

// get returns the value of a mapping key, or nil.
func (t *tree) get(key string) *tree {
	if t == nil || t.kind != yaml.MappingNode {
		return nil
	}
	for i, k := range t.keys() {
		if k == key {
			return t.vals()[i]
		}
	}
	return nil
}

// val returns a scalar's value, or nil for a missing or non-scalar node.
func (t *tree) val() any {
	if t == nil || t.kind != yaml.ScalarNode {
		return nil
	}
	if t.isText {
		return t.text
	}
	switch t.vt {
	case numBool:
		return t.num != 0
	case numInt:
		return int64(t.num)
	case numFloat:
		return math.Float64frombits(t.num)
	}
	return nil
}

// float is a scalar's value when it is a float64.
func (t *tree) float() (float64, bool) {
	if t == nil || t.kind != yaml.ScalarNode || t.isText || t.vt != numFloat {
		return 0, false
	}
	return math.Float64frombits(t.num), true
}

// setVal makes v, a bool, int64 or float64, the scalar's value.
func (t *tree) setVal(v any) {
	switch x := v.(type) {
	case bool:
		t.vt, t.num = numBool, 0
		if x {
			t.num = 1
		}
	case int64:
		t.vt, t.num = numInt, uint64(x)
	case float64:
		t.vt, t.num = numFloat, math.Float64bits(x)
	}
}

func (t *tree) isMap() bool { return t != nil && t.kind == yaml.MappingNode }
func (t *tree) isSeq() bool { return t != nil && t.kind == yaml.SequenceNode }
func (t *tree) isNull() bool {
	return t == nil || (t.kind == yaml.ScalarNode && t.vt == noNum && !t.isText)
}

// str returns a scalar's string value.
func (t *tree) str() (string, bool) {
	if t == nil || t.kind != yaml.ScalarNode || !t.isText {
		return "", false
	}
	return t.text, true
}

// describe names a value's type and shows it briefly, for "got ..." messages.
func (t *tree) describe() string {
	if t == nil {
		return "nothing"
	}
	switch t.kind {
	case yaml.MappingNode:
		if len(t.keys()) == 0 {
			return "an empty mapping" // "expected a mapping of …, got a mapping" would puzzle
		}
		return "a mapping"
	case yaml.SequenceNode:
		if len(t.items()) == 0 {
			return "an empty list"
		}
		return "a list"
	}
	switch v := t.val().(type) {
	case nil:
		return "null"
	case string:
		if LooksLikeKey(v) {
			return keyShown
		}
		return "string " + quoteShort(v)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case int64:
		return "integer " + strconv.FormatInt(v, 10)
	case float64:
		return "number " + t.text
	}
	return t.text
}

// keyShown is what a "got ..." message says of a text that looks like a
// key, in place of it.
const keyShown = "what looks like an API key (not shown): a key never goes in a file; put it in an environment variable (export MY_KEY=…) and name that variable in api_key_env"

func quoteShort(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return strconv.Quote(s)
}

// json converts the tree to the values encoding/json would produce, which is
// what the schema validator accepts.
func (t *tree) json() any { return t.values(true) }

// plain converts the tree to plain Go values for variables: like json, but
// NaN and infinities stay numbers.
func (t *tree) plain() any { return t.values(false) }

func (t *tree) values(finiteOnly bool) any {
	switch t.kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(t.keys()))
		for i, k := range t.keys() {
			m[k] = t.vals()[i].values(finiteOnly)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(t.items()))
		for i, it := range t.items() {
			l[i] = it.values(finiteOnly)
		}
		return l
	}
	if f, ok := t.float(); finiteOnly && ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		// JSON has no NaN or infinity; the text keeps the type error readable.
		return t.text
	}
	if t.vt == numFloat && !finiteOnly {
		// A variable's 20-digit id keeps its digits; the schema and the
		// other fields read the float.
		if b, ok := BigInt(t.text); ok {
			return b
		}
	}
	return t.val()
}

// walk visits every node of the tree, parents first.
func (t *tree) walk(f func(*tree)) {
	f(t)
	for _, v := range t.vals() {
		v.walk(f)
	}
	for _, it := range t.items() {
		it.walk(f)
	}
}

// walkPointers visits every node of the tree, parents first, with its JSON
// pointer (t's is ptr). The nodes do not keep their pointers: only a spec
// the schema check refuses needs them.
func (t *tree) walkPointers(ptr string, f func(string, *tree)) {
	f(ptr, t)
	for i, v := range t.vals() {
		v.walkPointers(ptr+"/"+ptrEscaper.Replace(t.keys()[i]), f)
	}
	for i, it := range t.items() {
		it.walkPointers(ptr+"/"+strconv.Itoa(i), f)
	}
}

// Alias expansion ("billion laughs") is bounded: a document may hold at most
// baseNodes values plus two per byte of source. No real spec comes near.
const baseNodes = 100_000

// MaxDepth is how deeply values may nest in a spec (the top-level mapping
// is level 1). A session stores variables a few levels deeper than the spec
// has them, and Go's JSON reader stops at 10,000 levels: a spec deeper
// than this would run, then leave a session no later command can read.
const MaxDepth = 256

type converter struct {
	diags    ErrorList
	file     string
	nodes    int
	maxNodes int
	depth    int    // of the value being converted
	outer    string // the path of its ancestor at level 3, for messages
	outerPos Pos    // where that ancestor's key is
	// bigPath and bigAt are the value, at most level 3, whose aliases
	// passed maxNodes (errTooBig): where to cut them down.
	bigPath string
	bigAt   Pos
}

// tooBig records where the alias budget ran out, the value at level 3 or
// above being converted (path, at kpos, when it is one), and says so.
func (c *converter) tooBig(path string, kpos Pos) error {
	c.bigPath, c.bigAt = c.outer, c.outerPos
	if c.depth < 3 {
		c.bigPath, c.bigAt = path, kpos
	}
	return errTooBig
}

var (
	errTooBig  = errors.New("too big")
	errTooDeep = errors.New("too deep")
)

func (c *converter) errorf(p Pos, path, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{File: c.file, Line: p.Line, Column: p.Column, Path: path, Message: fmt.Sprintf(format, args...)})
}

func posOf(n *yaml.Node) Pos { return Pos{Line: n.Line, Column: n.Column} }

// parseTree reads data as one YAML document. It returns a nil tree for an
// empty document.
func parseTree(file string, data []byte) (*tree, ErrorList) {
	if d, bad := notUTF8(file, data); bad {
		return nil, ErrorList{d}
	}
	if t, ok := fastTree(file, data); ok {
		return t, nil
	}
	return parseTreeYAML(file, data)
}

// parseTreeYAML is parseTree through yaml.v3's node tree.
func parseTreeYAML(file string, data []byte) (*tree, ErrorList) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(yamlVersionRead(data)))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, ErrorList{valueHint(ctrlHint(colonHint(longKeyHint(tabHint(breakHint(syntaxError(file, err, data), data), data), data), data), data), data)}
	}
	// A second document would be silently ignored: say so instead.
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		at := Pos{Line: next.Line, Column: next.Column}
		if len(next.Content) > 0 {
			at = posOf(next.Content[0])
		}
		return nil, ErrorList{{File: file, Line: at.Line, Column: at.Column,
			Message: "a second YAML document starts here: a spec is one document (remove the --- before it)"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, ErrorList{syntaxError(file, err, data)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	c := &converter{file: file, maxNodes: baseNodes + 2*len(data)}
	root := doc.Content[0]
	t, err := c.convert(root, "", posOf(root), map[*yaml.Node]bool{})
	if errors.Is(err, errTooDeep) {
		return nil, c.diags
	}
	if err != nil {
		// Aliases of aliases multiply ("billion laughs"): say which value
		// passed the budget, and how to keep within it.
		return nil, ErrorList{{File: file, Line: c.bigAt.Line, Column: c.bigAt.Column, Path: c.bigPath,
			Message: fmt.Sprintf("expanding this value's aliases takes the document past %d values, teamrun's limit: aliases of a list or mapping that itself holds aliases multiply (too many values through aliases); alias fewer times, or write the values out", c.maxNodes)}}
	}
	return t, c.diags
}

// yamlVersionRead is data with a %YAML 1.x directive before its document
// written as %YAML 1.1, the one version yaml.v3 takes: PyYAML, which
// PraisonAI loads files with, reads any 1.x (a %YAML 1.2 line is common),
// and yaml.v3 reads such a document alike. The version keeps its length
// (padded with spaces), so every line and column stays where it was. A
// %YAML 2 directive is left for yaml.v3 to refuse (syntaxError).
func yamlVersionRead(data []byte) []byte {
	out, cloned := data, false
	for rest, at := data, 0; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		text := bytes.TrimRight(line, " \t\r\n")
		if at == 0 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		switch {
		case bytes.HasPrefix(text, []byte("%YAML")) && len(text) > len("%YAML") && (text[5] == ' ' || text[5] == '\t'):
			f := bytes.Fields(text[5:])
			if len(f) > 0 && bytes.HasPrefix(f[0], []byte("1.")) && len(f[0]) > 2 && !bytes.Equal(f[0], []byte("1.1")) &&
				len(bytes.Trim(f[0][2:], "0123456789")) == 0 {
				if !cloned {
					out, cloned = bytes.Clone(data), true
				}
				v := at + bytes.Index(line, f[0])
				copy(out[v:], "1.1")
				for k := v + 3; k < v+len(f[0]); k++ {
					out[k] = ' '
				}
			}
		case len(text) > 0 && text[0] != '%' && text[0] != '#':
			return out // the document starts: no directive after it
		}
		at += len(line)
		rest = rest[len(line):]
	}
	return out
}

// specText is data as UTF-8, which the rest of the loader reads: a file
// saved as UTF-16 with a byte order mark (as some Windows editors save
// one) is decoded, so that the columns of messages, which count
// characters, and the hints that read the file's lines see its text, not
// its bytes. UTF-32, and UTF-16 without a byte order mark, are refused in
// one line that says so, where yaml.v3 would say "control characters
// are not allowed" at line 1.
func specText(file string, data []byte) ([]byte, *Diagnostic) {
	refuse := func(enc string) ([]byte, *Diagnostic) {
		return nil, &Diagnostic{File: file, Line: 1, Column: 1,
			Message: "the file is " + enc + ": save it as UTF-8 (or UTF-16 with a byte order mark)"}
	}
	switch {
	case bytes.HasPrefix(data, []byte{0, 0, 0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0, 0}):
		return refuse("UTF-32")
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return utf16Text(file, data[2:], binary.LittleEndian)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return utf16Text(file, data[2:], binary.BigEndian)
	case len(data) >= 4 && (data[0] == 0 || data[1] == 0) && (data[2] == 0 || data[3] == 0):
		// An ASCII character in UTF-16 or UTF-32 has a zero byte beside
		// it; in a UTF-8 file a zero byte is an error anyway.
		return refuse("UTF-16 or UTF-32 without a byte order mark")
	}
	return data, nil
}

// utf16Text is UTF-16 data (after its byte order mark) as UTF-8.
func utf16Text(file string, data []byte, order binary.ByteOrder) ([]byte, *Diagnostic) {
	if len(data)%2 != 0 {
		return nil, &Diagnostic{File: file, Line: 1, Column: 1,
			Message: "the file starts as UTF-16 but has an odd number of bytes: it is cut or not UTF-16; save it as UTF-8"}
	}
	units := make([]uint16, len(data)/2)
	for i := range units {
		units[i] = order.Uint16(data[2*i:])
	}
	return []byte(string(utf16.Decode(units))), nil
}

// notUTF8 reports the first byte that is not UTF-8, where yaml.v3 would say
// "invalid trailing UTF-8 octet" at line 1.
func notUTF8(file string, data []byte) (Diagnostic, bool) {
	if utf8.Valid(data) {
		return Diagnostic{}, false
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return Diagnostic{File: file, Line: line, Column: col,
				Message: fmt.Sprintf("the file is not UTF-8: byte 0x%02X here is not part of a UTF-8 character (save the file as UTF-8)", data[i])}, true
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return Diagnostic{}, false
}

// ctrlHint points at the character yaml.v3 stops at with "control
// characters are not allowed", which it names at line 1: the first one
// YAML does not allow in a file (it allows tab, line breaks, NEL and the
// printable ones), and says how to keep it.
func ctrlHint(d Diagnostic, data []byte) Diagnostic {
	if !strings.Contains(d.Message, "control characters are not allowed") {
		return d
	}
	line, col := 1, 1
	for i, r := range string(data) {
		switch {
		case r == '\t', r == '\r', r == 0x85, r >= 0x20 && r <= 0x7E, r >= 0xA0 && r <= 0xFFFD, r >= 0x10000:
		case r == '\n':
			line, col = line+1, 0
		default:
			if r == 0xFEFF && i == 0 {
				break // a byte order mark
			}
			d.Line, d.Column = line, col
			d.Message = fmt.Sprintf("invalid YAML: character %U here is a control character, which YAML allows nowhere in a file: remove it (in a double-quoted string, write it as \\x%02X)", r, r)
			if r > 0xFF {
				d.Message = fmt.Sprintf("invalid YAML: character %U here is not allowed in a YAML file: remove it (in a double-quoted string, write it as \\u%04X)", r, r)
			}
			return d
		}
		col++
	}
	return d
}

// breakHint points at a NEL, LS or PS (U+0085, U+2028, U+2029) on the
// line yaml.v3 stops at, or the one before: it breaks the line for
// yaml.v3 (as YAML 1.1 has it), though an editor shows none, so the error
// names a line after it and a reason that is not there (text pasted from
// a PDF or a web page carries them). yaml.v3 counts each as a line, so
// the line it names is found by counting them too.
func breakHint(d Diagnostic, data []byte) Diagnostic {
	line, col, yline := 1, 1, 1 // yline: the line as yaml.v3 counts it
	var at Pos
	var found rune
	for _, r := range string(data) {
		if yline > d.Line {
			break
		}
		switch r {
		case '\n':
			line, col, yline = line+1, 0, yline+1
		case 0x85, 0x2028, 0x2029:
			if yline >= d.Line-1 {
				at, found = Pos{Line: line, Column: col}, r
			}
			yline++
		}
		col++
	}
	if found == 0 {
		return d
	}
	name := map[rune]string{0x85: "next line (NEL)", 0x2028: "line separator", 0x2029: "paragraph separator"}[found]
	d.Line, d.Column = at.Line, at.Column
	d.Message = fmt.Sprintf("invalid YAML: character %U here, a %s, breaks the line for the YAML parser though an editor shows none: replace it with a space (or a line break), or quote the whole text (\"…\")", found, name)
	return d
}

// tabHint points at the tab when yaml.v3 stops at one in a line's
// indentation: YAML indents with spaces only. For "violates indentation"
// yaml.v3 names the line before the tab's.
func tabHint(d Diagnostic, data []byte) Diagnostic {
	look, hint := 0, ": a tab in the indentation (YAML indents with spaces only)"
	switch {
	case strings.Contains(d.Message, "found character that cannot start any token"):
	case strings.Contains(d.Message, "found a tab character that violates indentation"):
		look, hint = 1, " (YAML indents with spaces only)"
	default:
		return d
	}
	lines := bytes.Split(data, []byte("\n"))
	for n := d.Line; n <= d.Line+look && n >= 1 && n <= len(lines); n++ {
		l := lines[n-1]
		indent := len(l) - len(bytes.TrimLeft(l, " \t"))
		if i := bytes.IndexByte(l[:indent], '\t'); i >= 0 {
			d.Line, d.Column = n, i+1
			d.Message += hint
			return d
		}
	}
	return d
}

// colonHint points at the ": " yaml.v3 stops at with "mapping values are
// not allowed": an unquoted value that holds one, which YAML reads as the
// start of a key (a description such as "Respond with one word: yes",
// or the continuation lines of one). The column is that of the first ": "
// after the line's own key, if it has one.
func colonHint(d Diagnostic, data []byte) Diagnostic {
	if !strings.HasPrefix(d.Message, "invalid YAML: mapping values are not allowed") {
		return d
	}
	lines := bytes.Split(data, []byte("\n"))
	if d.Line < 1 || d.Line > len(lines) {
		return d
	}
	l := string(bytes.TrimRight(lines[d.Line-1], "\r"))
	start := len(l) - len(strings.TrimLeft(l, " "))
	if strings.HasPrefix(l[start:], "- ") {
		start += 2
	}
	if m := plainKeyRE().FindStringIndex(l[start:]); m != nil {
		start += m[1]
	}
	i := strings.Index(l[start:]+" ", ": ")
	if i < 0 {
		return d
	}
	d.Column = utf8.RuneCountInString(l[:start+i]) + 1
	d.Message += ` (an unquoted value holds ": " here: quote the value, or make it a block: key: | with the text on the lines below)`
	return d
}

// plainKeyRE is a key at the start of a line's content, and the ": " after it.
var plainKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+:(?: +|$)`) })

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`) })

// syntaxError turns a yaml.v3 error into file:line:col form. yaml.v3 gives
// the line but not the column, so the column is 1.
func syntaxError(file string, err error, data []byte) Diagnostic {
	line, msg := YAMLError(err, data)
	if strings.HasPrefix(msg, "found incompatible YAML document") {
		// A %YAML directive of another major version (yamlVersionRead
		// takes every 1.x): say which line to remove.
		msg = "the %YAML directive names a version other than 1.x, which teamrun (and PyYAML) cannot read: remove the %YAML line"
		if i := bytes.Index(data, []byte("%YAML")); i >= 0 {
			line = 1 + bytes.Count(data[:i], []byte("\n"))
		}
	}
	return Diagnostic{File: file, Line: line, Column: 1, Message: "invalid YAML: " + msg}
}

// YAMLError is the 1-based line (1 when yaml.v3 names none, never past
// data's last line) and the message, without yaml.v3's "yaml: line N:"
// prefix, of an error of yaml.v3's parser on data; config.yml's errors go
// through it too.
func YAMLError(err error, data []byte) (line int, msg string) {
	defer func() {
		// An error at the end of the input is on its last line, not on the
		// empty one after its final newline.
		last := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			last++
		}
		line = max(min(line, last), 1)
	}()
	msg = err.Error()
	line = 1
	if m := yamlLineRE().FindStringSubmatch(strings.SplitN(msg, "\n", 2)[0]); m != nil {
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
		}
		msg = m[2]
	}
	// yaml.v3 numbers parser errors from the 0-based line of their context
	// (scanner errors it corrects itself), so those are one line short.
	for _, p := range parserProblems {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
		if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
			msg = m[2]
		}
	}
	return line, msg
}

var parserProblems = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected key",
	"did not find expected '-' indicator",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
	"found undefined tag handle",
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

var ptrEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func (c *converter) convert(n *yaml.Node, path string, kpos Pos, active map[*yaml.Node]bool) (*tree, error) {
	c.nodes++
	if c.nodes > c.maxNodes {
		return nil, c.tooBig(path, kpos)
	}
	pos := posOf(n)
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil || active[n.Alias] {
			c.errorf(pos, path, "alias refers to itself")
			return &tree{kind: yaml.ScalarNode, at: placeOf(pos), kat: placeOf(kpos), path: path}, nil
		}
		n = n.Alias
	}
	if n.Kind != yaml.DocumentNode {
		c.depth++
		defer func() { c.depth-- }()
		switch {
		case c.depth <= 3:
			c.outer, c.outerPos = path, kpos
		case c.depth > MaxDepth:
			// The full path would be MaxDepth segments long: name the key
			// the user wrote near the top, and the line where it gets too deep.
			c.errorf(c.outerPos, c.outer, "nests more than %d levels deep (level %d starts at line %d, column %d): that is teamrun's limit, so that its session can always be read back; flatten the value",
				MaxDepth, c.depth, pos.Line, pos.Column)
			return nil, errTooDeep
		}
	}
	// Only an anchored node can be an alias's target, so only those can
	// close a cycle: the others need no bookkeeping.
	if n.Anchor != "" {
		active[n] = true
		defer delete(active, n)
	}
	t := &tree{kind: n.Kind, at: placeOf(pos), kat: placeOf(kpos), path: path}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			t.kind = yaml.ScalarNode // null
			return t, nil
		}
		return c.convert(n.Content[0], path, kpos, active)
	case yaml.MappingNode:
		if err := c.mapping(t, n, active); err != nil {
			return nil, err
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			ip := fmt.Sprintf("%s[%d]", path, i)
			it, err := c.convert(item, ip, posOf(item), active)
			if err != nil {
				return nil, err
			}
			t.addItem(it)
		}
	case yaml.ScalarNode:
		c.scalar(t, n)
	default:
		t.kind = yaml.ScalarNode // null
	}
	return t, nil
}

// entry is one key of a mapping and its value, merge keys resolved.
type entry struct {
	key   string
	kpos  Pos
	val   *yaml.Node
	typed bool // YAML reads the key as no string
}

func (c *converter) mapping(t *tree, n *yaml.Node, active map[*yaml.Node]bool) error {
	entries, err := c.entries(n, t.path, nil, true, active)
	if err != nil {
		return err
	}
	for _, e := range entries {
		v, err := c.convert(e.val, joinPath(t.path, e.key), e.kpos, active)
		if err != nil {
			return err
		}
		t.add(e.key, v)
		if e.typed && isVariables(t.path) { // only there does it matter (fastTree agrees)
			if t.br.typed == nil {
				t.br.typed = new(typedKeys)
			}
			*t.br.typed = append(*t.br.typed, e.key)
		}
	}
	return nil
}

// entries are the mapping n's keys and values in file order, its merge
// keys ("<<") resolved as the YAML merge key spec says, and as yaml.v3
// and PyYAML do: a mapping's own keys win over merged ones, of
// `<<: [*a, *b]` the earlier source wins, and a source's own "<<"
// resolves the same way. Merged keys go where the "<<" was, at its
// position (at, once inside a source): a message about one points at the
// line that brought it in. report is false inside a source reached
// through an alias, whose problems its anchor's own line reports.
func (c *converter) entries(n *yaml.Node, path string, at *Pos, report bool, active map[*yaml.Node]bool) ([]entry, error) {
	errorf := func(p Pos, path, format string, args ...any) {
		if report {
			c.errorf(p, path, format, args...)
		}
	}
	var seen posSet
	explicit := make([]entry, 0, len(n.Content)/2)
	var merged []entry
	var mergeAt []int // index in explicit before which merged entries go
	var mergeKey *Pos // the first "<<"
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		kp, ek := posOf(kn), posOf(kn) // where the key is, where its entry says it is
		if at != nil {
			ek = *at
		}
		for kn.Kind == yaml.AliasNode && kn.Alias != nil {
			kn = kn.Alias
		}
		if kn.Kind != yaml.ScalarNode {
			if name, ok := placeholderKey(kn); ok && len(n.Content) == 2 {
				// {{input}} unquoted: a mapping whose key is a mapping.
				errorf(kp, path, "a mapping key must be a plain value, not %s (if that is meant as a text, quote it: \"{{%s}}\")", kindName(kn.Kind), name)
				continue
			}
			errorf(kp, path, "a mapping key must be a plain value, not %s", kindName(kn.Kind))
			continue
		}
		if kn.ShortTag() == "!!merge" {
			if mergeKey != nil {
				// The loaders disagree on a second one (yaml.v3 refuses
				// it, PyYAML takes the last): refuse it as any key twice.
				errorf(kp, joinPath(path, "<<"), "duplicate key \"<<\" (first at line %d): keep one; to merge several mappings, list them in one: <<: [*a, *b] (the first listed wins)", mergeKey.Line)
				continue
			}
			mergeKey = &kp
			for _, s := range c.mergeSources(vn, path, report) {
				if active[s.node] {
					// Merging a mapping into itself would expand without
					// end (until the node budget, slowly: paths grow too).
					errorf(kp, path, "alias refers to itself")
					continue
				}
				// Counted, so that sources merging sources many times over
				// meet the alias budget as a value expanding so does.
				if c.nodes += len(s.node.Content) / 2; c.nodes > c.maxNodes {
					return nil, c.tooBig(joinPath(path, "<<"), kp)
				}
				active[s.node] = true
				subAt := at
				if subAt == nil {
					subAt = &kp
				}
				sub, err := c.entries(s.node, path, subAt, report && !s.viaAlias, active)
				delete(active, s.node)
				if err != nil {
					return nil, err
				}
				for _, e := range sub {
					merged = append(merged, e)
					mergeAt = append(mergeAt, len(explicit))
				}
			}
			continue
		}
		key := kn.Value
		if first, dup := seen.get(key); dup {
			msg := fmt.Sprintf("duplicate key %q (first at line %d): keep one", key, first.Line)
			switch path {
			case "tasks":
				msg = duplicateName("task", key, first.Line)
			case "agents", "roles":
				msg = duplicateName("agent", key, first.Line)
			}
			errorf(kp, joinPath(path, key), "%s", msg)
			continue
		}
		seen.set(key, kp)
		explicit = append(explicit, entry{key, ek, vn, kn.ShortTag() != "!!str"})
	}
	if len(merged) == 0 {
		return explicit, nil
	}
	out := make([]entry, 0, len(explicit)+len(merged))
	mi := 0
	for i := 0; i <= len(explicit); i++ {
		for ; mi < len(merged) && mergeAt[mi] == i; mi++ {
			e := merged[mi]
			if _, ok := seen.get(e.key); ok {
				continue // an own key, or an earlier source's
			}
			seen.set(e.key, e.kpos)
			out = append(out, e)
		}
		if i < len(explicit) {
			out = append(out, explicit[i])
		}
	}
	return out, nil
}

// posSet is the keys of one mapping seen so far: kept inline while there
// are a few (most mappings), in a map beyond.
type posSet struct {
	n     int
	small [8]struct {
		k string
		p Pos
	}
	m map[string]Pos
}

func (s *posSet) get(k string) (Pos, bool) {
	if s.m != nil {
		p, ok := s.m[k]
		return p, ok
	}
	for i := range s.n {
		if s.small[i].k == k {
			return s.small[i].p, true
		}
	}
	return Pos{}, false
}

// set records a key that get did not find.
func (s *posSet) set(k string, p Pos) {
	if s.m == nil && s.n < len(s.small) {
		s.small[s.n].k, s.small[s.n].p = k, p
		s.n++
		return
	}
	if s.m == nil {
		s.m = make(map[string]Pos, 4*len(s.small))
		for _, e := range s.small[:s.n] {
			s.m[e.k] = e.p
		}
	}
	s.m[k] = p
}

// mergeSource is a mapping a "<<" merges in, and whether an alias names
// it (its problems are reported at its anchor).
type mergeSource struct {
	node     *yaml.Node
	viaAlias bool
}

// mergeSources resolves the value of a "<<" key in the mapping at path: a
// mapping or a list of them. Anything else is reported (when report), not
// dropped: yaml.v3 and PyYAML refuse it.
func (c *converter) mergeSources(v *yaml.Node, path string, report bool) []mergeSource {
	at := posOf(v)
	v, alias := unalias(v)
	switch v.Kind {
	case yaml.MappingNode:
		return []mergeSource{{v, alias}}
	case yaml.SequenceNode:
		var out []mergeSource
		for _, it := range v.Content {
			itAt := posOf(it)
			it, itAlias := unalias(it)
			if it.Kind == yaml.MappingNode {
				out = append(out, mergeSource{it, alias || itAlias})
			} else if report {
				if alias {
					itAt = at // the list is elsewhere: point at the "<<" that reads it
				}
				c.badMerge(itAt, path, it)
			}
		}
		return out
	}
	if report {
		c.badMerge(at, path, v)
	}
	return nil
}

// unalias is the node an alias names (n itself if it is none), and
// whether n was an alias.
func unalias(n *yaml.Node) (*yaml.Node, bool) {
	alias := false
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n, alias = n.Alias, true
	}
	return n, alias
}

// badMerge reports a "<<" value, or an item of its list, that is no mapping.
func (c *converter) badMerge(at Pos, path string, n *yaml.Node) {
	got := kindName(n.Kind)
	if n.Kind == yaml.ScalarNode {
		s := &tree{kind: yaml.ScalarNode}
		(&converter{}).scalar(s, n)
		got = s.describe()
	}
	c.errorf(at, joinPath(path, "<<"), "a merge key (<<) takes a mapping or a list of mappings, got %s: write <<: *name to merge the mapping anchored &name, or <<: [*a, *b] for several", got)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a value"
}

func (c *converter) scalar(t *tree, n *yaml.Node) {
	t.text = n.Value
	tag := n.ShortTag()
	switch tag {
	case "!!str", "!!binary", "!!timestamp":
		t.isText = true
		return
	case "!!null":
		return
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			c.errorf(t.pos(), t.path, "cannot read %q as %s", n.Value, strings.TrimPrefix(tag, "!!"))
			t.isText = true
			return
		}
		switch x := v.(type) {
		case bool, int64, float64:
			t.setVal(x)
		case int:
			t.setVal(int64(x))
		case uint64:
			t.setVal(float64(x))
		default:
			t.isText = true
		}
		return
	}
	// A custom tag such as !foo: keep the text.
	t.isText = true
}

// placeholderKey reports a flow mapping of one plain key to nothing, as
// YAML reads {name}, and the name.
func placeholderKey(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return "", false
	}
	k, v := n.Content[0], n.Content[1]
	if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || v.Tag != "!!null" || v.Value != "" || !identRE().MatchString(k.Value) {
		return "", false
	}
	return k.Value, true
}
