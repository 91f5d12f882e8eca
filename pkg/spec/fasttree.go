package spec

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"gopkg.in/yaml.v3"
)

// fastTree reads the plain block YAML most specs are written in (block
// mappings and sequences of one-line scalars, quoted or not, and one-line
// flow lists) straight into the tree that parseTree makes through
// yaml.v3's node tree: a 10,000-task spec is parsed in a fraction of the
// time and memory. Scalars are typed by converter.scalar, through yaml.v3's
// own resolution. It takes only a document it reads to the end without
// doubt: anything else (a tab, a comment after a value it cannot place, a
// block scalar, an anchor, an alias, a tag, a merge key, a multi-line
// scalar, a key it would report as a duplicate, a deeper nesting than
// fastDepth, a second document) is ok false, and parseTree reads the file
// with yaml.v3 as before, which also words every error.
func fastTree(file string, data []byte) (*tree, bool) {
	p := fastParser{c: &converter{file: file}}
	if len(data) > MaxSpecBytes || !printable(data) || !p.split(data) || len(p.lines) == 0 || p.lines[0].indent != 0 {
		return nil, false
	}
	root, ok := p.block(0, "", Pos{Line: int(p.lines[0].num), Column: 1}, 1)
	if !ok || p.li != len(p.lines) || len(p.c.diags) > 0 || root.kind != yaml.MappingNode {
		return nil, false
	}
	return root, true
}

// printable reports whether data is UTF-8 of only the characters fastTree
// reads as yaml.v3 does: no control characters (an error to yaml.v3), no
// line breaks but \n.
func printable(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		// NEL, LS and PS break lines in YAML; a BOM inside is an error.
		if !(r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000) || r == 0xFEFF || r == 0x2028 || r == 0x2029 {
			return false
		}
		i += n
	}
	return true
}

// fastDepth bounds the nesting fastTree reads (far below MaxDepth, whose
// message parseTree words).
const fastDepth = 64

// fastLine is 12 bytes, not the 40 of ints and a slice: a 10,000-task
// spec has 30,000 of them (a spec is at most MaxSpecBytes, so int32 holds
// any of its offsets; a line of more than 65,535 bytes, or indented as
// much, is left to yaml.v3).
type fastLine struct {
	num int32 // 1-based line number
	// from and from+n delimit in the file the line after its indentation,
	// not empty, not a comment (fastParser.text).
	from   int32
	n      uint16
	indent uint16 // spaces before text
}

// to is where l's text ends in the file.
func (l fastLine) to() int32 { return l.from + int32(l.n) }

type fastParser struct {
	c     *converter
	data  []byte
	lines []fastLine
	li    int       // the line being read
	node  yaml.Node // the scalar being typed, one for all: a node each would be garbage
	// free are the nodes of the block being handed out (newNode), and
	// freeBr its branches (newBranch).
	free   []tree
	freeBr []branch
	// paths is the block the nodes' paths are written in (pathOf), add
	// a path's last part as pathOf builds it.
	paths, add []byte
}

// pathBlock is the most a block of paths takes: a size class of Go's
// allocator, as nodeBlock.
const pathBlock = 32 << 10

// pathOf returns path followed by add, written in a block of paths: a
// 10,000-task spec's 30,000 paths were as many strings, each rounded up
// to a size class. A mapping's path is the last one written when its
// first key's is made, which then takes its bytes rather than a copy
// ("tasks.t1" and "tasks.t1.description" share theirs). Only the parse
// writes the block, and never over the bytes of a path it returned.
func (p *fastParser) pathOf(path string, add []byte) string {
	n := len(path) + len(add)
	if len(path) > 0 && len(path) <= len(p.paths) && cap(p.paths)-len(p.paths) >= len(add) &&
		unsafe.StringData(path) == &p.paths[len(p.paths)-len(path)] {
		p.paths = append(p.paths, add...)
		return unsafe.String(unsafe.StringData(path), n)
	}
	if cap(p.paths)-len(p.paths) < n {
		// About as many bytes of paths as the rest of the spec has: no
		// block much larger than a small spec.
		rest := len(p.data)
		if p.li < len(p.lines) {
			rest -= int(p.lines[p.li].from)
		}
		p.paths = make([]byte, 0, max(n, min(max(rest, 256), pathBlock)))
	}
	at := len(p.paths)
	p.paths = append(append(p.paths, path...), add...)
	return unsafe.String(&p.paths[at], n)
}

// keyPath is joinPath(path, k) by pathOf.
func (p *fastParser) keyPath(path string, k []byte) string {
	if path == "" {
		return p.pathOf("", k)
	}
	p.add = append(append(p.add[:0], '.'), k...)
	return p.pathOf(path, p.add)
}

// itemPath is the path of a sequence's item i, path[i], by pathOf.
func (p *fastParser) itemPath(path string, i int) string {
	p.add = append(strconv.AppendInt(append(p.add[:0], '['), int64(i), 10), ']')
	return p.pathOf(path, p.add)
}

// nodeBlock is as many nodes as fill 32 KiB, a size class of Go's
// allocator: 256 of them (30 KiB) took 32 KiB, 8 bytes a node again.
const nodeBlock = 32 << 10 / int(unsafe.Sizeof(tree{}))

// newNode places t in a block of nodes: alone, a node of 120 bytes takes
// 128 (a size class of Go's allocator), and a 10,000-task spec has ~30,000
// of them. Only the parse holds them, so a block outlives none of its own.
func (p *fastParser) newNode(t tree) *tree {
	if len(p.free) == 0 {
		// About a node a line: no block much larger than the spec.
		p.free = make([]tree, min(max(len(p.lines)-p.li, 16), nodeBlock))
	}
	n := &p.free[0]
	p.free = p.free[1:]
	*n = t
	return n
}

// newBranch is newNode's for a mapping's or a sequence's branch: a
// 10,000-task spec has ~10,000 of them.
func (p *fastParser) newBranch() *branch {
	if len(p.freeBr) == 0 {
		p.freeBr = make([]branch, min(max((len(p.lines)-p.li)/2, 16), branchBlock))
	}
	b := &p.freeBr[0]
	p.freeBr = p.freeBr[1:]
	return b
}

// branchBlock is nodeBlock's for branches.
const branchBlock = 32 << 10 / int(unsafe.Sizeof(branch{}))

// split cuts data into its lines with content; it refuses what it does not
// read: tabs, carriage returns, directives and document markers.
func (p *fastParser) split(data []byte) bool {
	if bytes.IndexByte(data, '\t') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		return false
	}
	p.data = data
	p.lines = make([]fastLine, 0, bytes.Count(data, []byte{'\n'})+1)
	for num, at := 1, 0; at < len(data); num++ {
		start := at
		line := data[at:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, at = line[:i], at+i+1
		} else {
			at = len(data)
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		text := line[indent:]
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		if indent == 0 && (text[0] == '%' || bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("..."))) {
			return false
		}
		from, n := start+indent, len(bytes.TrimRight(text, " "))
		if indent > math.MaxUint16 || n > math.MaxUint16 {
			return false
		}
		p.lines = append(p.lines, fastLine{num: int32(num), indent: uint16(indent), from: int32(from), n: uint16(n)})
	}
	return true
}

// text is line l's text after its indentation.
func (p *fastParser) text(l fastLine) []byte { return p.data[l.from:l.to()] }

// seqEntry reports whether text starts a block sequence entry.
func seqEntry(text []byte) bool {
	return text[0] == '-' && (len(text) == 1 || text[1] == ' ')
}

// block reads the mapping or sequence whose first line is p.li, at indent.
func (p *fastParser) block(indent int, path string, kpos Pos, depth int) (*tree, bool) {
	if depth > fastDepth {
		return nil, false
	}
	if seqEntry(p.text(p.lines[p.li])) {
		return p.sequence(indent, path, kpos, depth)
	}
	return p.mapping(indent, path, kpos, depth)
}

// key splits "key: rest" (or "key:"); the key is a plain word of letters,
// digits and _ - . / that yaml.v3 reads as it is written.
func key(text []byte) (k, rest []byte, restAt int, ok bool) {
	i := 0
	for i < len(text) {
		c := text[i]
		if c == ':' {
			break
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/') {
			return nil, nil, 0, false
		}
		i++
	}
	// A plain key longer than 1,024 characters is an error to YAML: such
	// keys are left to yaml.v3, which says so.
	if i == 0 || i > 512 || i == len(text) || text[0] == '-' || text[0] == '.' || (i+1 < len(text) && text[i+1] != ' ') {
		return nil, nil, 0, false
	}
	j := i + 1
	for j < len(text) && text[j] == ' ' {
		j++
	}
	return text[:i], text[j:], j, true
}

func (p *fastParser) mapping(indent int, path string, kpos Pos, depth int) (*tree, bool) {
	first := p.lines[p.li]
	t := p.newNode(tree{kind: yaml.MappingNode, at: place{first.num, int32(indent + 1)}, kat: placeOf(kpos), path: path})
	// Room for every key up front (the lines at this indent before one
	// further out): the tasks of a 10,000-task spec are one mapping, grown
	// a key at a time it copies its keys, values and key set over and over.
	n := 0
	for j := p.li; j < len(p.lines) && int(p.lines[j].indent) >= indent; j++ {
		if int(p.lines[j].indent) == indent {
			n++
		}
	}
	t.br = p.newBranch()
	t.br.keys, t.br.kids = make([]string, 0, n), make([]*tree, 0, n)
	// A few keys are checked for repeats as they come (posSet holds them
	// inline); more, once all are read (distinctKeys): a key set of the
	// 10,000 tasks of a spec was a map of 0.64 MB.
	var seen posSet
	few := n <= len(seen.small)
	for p.li < len(p.lines) && int(p.lines[p.li].indent) == indent {
		ln := p.lines[p.li]
		k, rest, restAt, ok := key(p.text(ln))
		if !ok {
			return nil, false
		}
		// The key is the end of its value's path, not a string of its own:
		// 0.3 MB of a 10,000-task spec's 30,000 keys.
		cpath := p.keyPath(path, k)
		name := cpath[len(cpath)-len(k):]
		if !plainWord(k) && isVariables(path) {
			return nil, false // a key such as 1 or true: yaml.v3 tags it (tree.typed)
		}
		kp := Pos{Line: int(ln.num), Column: indent + 1}
		if few {
			if _, dup := seen.get(name); dup {
				return nil, false // parseTree says where the first one is
			}
			seen.set(name, kp)
		}
		var v *tree
		if len(rest) == 0 || rest[0] == '#' {
			p.li++
			switch {
			case p.li < len(p.lines) && int(p.lines[p.li].indent) > indent:
				v, ok = p.block(int(p.lines[p.li].indent), cpath, kp, depth+1)
			case p.li < len(p.lines) && int(p.lines[p.li].indent) == indent && seqEntry(p.text(p.lines[p.li])):
				v, ok = p.sequence(indent, cpath, kp, depth+1)
			default:
				return nil, false // a null value: left to yaml.v3, which places it
			}
		} else {
			v, ok = p.inline(rest, int(ln.num), indent+1+restAt, cpath, kp, depth+1)
			p.li++
			if ok && p.li < len(p.lines) && int(p.lines[p.li].indent) > indent {
				return nil, false // a scalar that goes on, or an error
			}
		}
		if !ok {
			return nil, false
		}
		t.add(name, v)
	}
	if !few && !distinctKeys(t.keys()) {
		return nil, false // parseTree says where the first one is
	}
	return t, true
}

// distinctKeys reports whether no key repeats, from the keys' order
// sorted: a list of int32, not a set of the strings.
func distinctKeys(keys []string) bool {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(keys[a], keys[b]) })
	for i := 1; i < len(order); i++ {
		if keys[order[i]] == keys[order[i-1]] {
			return false
		}
	}
	return true
}

func (p *fastParser) sequence(indent int, path string, kpos Pos, depth int) (*tree, bool) {
	first := p.lines[p.li]
	t := p.newNode(tree{kind: yaml.SequenceNode, at: place{first.num, int32(indent + 1)}, kat: placeOf(kpos), path: path})
	for i := 0; p.li < len(p.lines) && int(p.lines[p.li].indent) == indent && seqEntry(p.text(p.lines[p.li])); i++ {
		ln := &p.lines[p.li]
		ipath := p.itemPath(path, i)
		rest := p.text(*ln)[1:]
		s := 0
		for s < len(rest) && rest[s] == ' ' {
			s++
		}
		rest = rest[s:]
		var (
			v  *tree
			ok bool
		)
		at := Pos{Line: int(ln.num), Column: indent + 2 + s}
		switch {
		case len(rest) == 0 || rest[0] == '#':
			return nil, false // the item is on the next lines, or null: left to yaml.v3
		case seqEntry(rest):
			return nil, false
		default:
			if _, _, _, isKey := key(rest); isKey {
				// "- key: value": a mapping whose keys line up with this one.
				if indent+1+s > math.MaxUint16 {
					return nil, false
				}
				ln.indent, ln.from, ln.n = uint16(indent+1+s), ln.to()-int32(len(rest)), uint16(len(rest))
				v, ok = p.mapping(int(ln.indent), ipath, at, depth+1)
				if ok && p.li < len(p.lines) && int(p.lines[p.li].indent) > indent && p.lines[p.li].indent != ln.indent {
					return nil, false
				}
			} else {
				v, ok = p.inline(rest, int(ln.num), at.Column, ipath, at, depth+1)
				p.li++
				if ok && p.li < len(p.lines) && int(p.lines[p.li].indent) > indent {
					return nil, false
				}
			}
		}
		if !ok {
			return nil, false
		}
		v.kat = v.at
		t.addItem(v)
	}
	return t, true
}

// inline reads a value written on its key's line: a scalar, [] or {}, or
// a flow list of scalars.
func (p *fastParser) inline(text []byte, line, col int, path string, kpos Pos, depth int) (*tree, bool) {
	var (
		t  *tree
		n  int
		ok bool
	)
	if text[0] == '[' || text[0] == '{' {
		t, n, ok = p.flow(text, 0, line, col, path, kpos, depth)
	} else {
		t, n, ok = p.scalar(text, line, col, path, kpos, false)
	}
	if !ok || !onlyComment(text[n:]) {
		return nil, false
	}
	return t, true
}

// onlyComment reports whether text is empty, or white space and a comment.
func onlyComment(text []byte) bool {
	t := bytes.TrimLeft(text, " ")
	return len(t) == 0 || (t[0] == '#' && len(t) < len(text))
}

// scalar reads one scalar at the start of text, returning how many bytes
// it took. In a flow list (flow) a plain scalar ends at , or ].
func (p *fastParser) scalar(text []byte, line, col int, path string, kpos Pos, flow bool) (*tree, int, bool) {
	n := &p.node
	*n = yaml.Node{Kind: yaml.ScalarNode}
	var used int
	switch c := text[0]; {
	case c == '"':
		end := bytes.IndexByte(text[1:], '"')
		if end < 0 || bytes.IndexByte(text[1:1+end], '\\') >= 0 {
			return nil, 0, false
		}
		n.Style, n.Value, used = yaml.DoubleQuotedStyle, string(text[1:1+end]), end+2
	case c == '\'':
		var b []byte
		i := 1
		for {
			j := bytes.IndexByte(text[i:], '\'')
			if j < 0 {
				return nil, 0, false
			}
			b = append(b, text[i:i+j]...)
			i += j + 1
			if i < len(text) && text[i] == '\'' {
				b = append(b, '\'')
				i++
				continue
			}
			break
		}
		n.Style, n.Value, used = yaml.SingleQuotedStyle, string(b), i
	case bytes.IndexByte([]byte("[]{},#&*!|>%@`\"'"), c) >= 0,
		(c == '-' || c == '?' || c == ':') && (len(text) == 1 || text[1] == ' ' || (flow && bytes.IndexByte([]byte(",[]{}"), text[1]) >= 0)):
		return nil, 0, false
	default:
		end := len(text)
		for i := 0; i < len(text); i++ {
			switch text[i] {
			case ':':
				if flow || i+1 == len(text) || text[i+1] == ' ' {
					return nil, 0, false
				}
			case '?':
				if flow { // libyaml ends a flow plain scalar there
					return nil, 0, false
				}
			case '#':
				if text[i-1] == ' ' {
					end = i
				}
			case ',', '[', ']', '{', '}':
				if flow {
					end = i
				}
			}
			if end != len(text) {
				break
			}
		}
		v := bytes.TrimRight(text[:end], " ")
		if len(v) == 0 || string(v) == "<<" { // yaml.v3 tags a plain << as a merge key
			return nil, 0, false
		}
		n.Value, used = string(v), len(v)
		if plainWord(v) {
			n.Tag = "!!str" // as yaml.v3's parser tags it, without its resolver's call
		}
	}
	if n.Style != 0 && used < len(text) && text[used] != ' ' && !(flow && (text[used] == ',' || text[used] == ']' || text[used] == '}')) {
		return nil, 0, false
	}
	t := p.newNode(tree{kind: yaml.ScalarNode, at: placeOf(Pos{Line: line, Column: col}), kat: placeOf(kpos), path: path})
	p.c.scalar(t, n)
	return t, used, true
}

// flow reads a flow list or mapping that starts at text[i] and ends on
// the same line ([a, "b"], {k: v, l: [x]}), returning where it ends;
// text[0] is at column col.
func (p *fastParser) flow(text []byte, i, line, col int, path string, kpos Pos, depth int) (*tree, int, bool) {
	if depth > fastDepth {
		return nil, 0, false
	}
	open := text[i]
	kind, end := yaml.SequenceNode, byte(']')
	if open == '{' {
		kind, end = yaml.MappingNode, '}'
	}
	t := p.newNode(tree{kind: kind, at: placeOf(Pos{Line: line, Column: col + i}), kat: placeOf(kpos), path: path})
	i++
	skip := func() {
		for i < len(text) && text[i] == ' ' {
			i++
		}
	}
	skip()
	if i < len(text) && text[i] == end {
		return t, i + 1, true
	}
	var seen posSet
	for n := 0; ; n++ {
		skip()
		if i >= len(text) {
			return nil, 0, false
		}
		var (
			it        *tree
			ok        bool
			cpath     string
			name      string
			itemStart = Pos{Line: line, Column: col + i}
		)
		if kind == yaml.MappingNode {
			k, _, restAt, isKey := key(text[i:])
			if !isKey || restAt <= len(k) {
				return nil, 0, false // not "key: value": left to yaml.v3
			}
			if !plainWord(k) && isVariables(path) {
				return nil, 0, false // a key such as 1 or true: yaml.v3 tags it (tree.typed)
			}
			cpath = p.keyPath(path, k)
			name = cpath[len(cpath)-len(k):]
			if _, dup := seen.get(name); dup {
				return nil, 0, false
			}
			seen.set(name, itemStart)
			i += restAt
		} else {
			cpath = p.itemPath(path, n)
		}
		if i >= len(text) {
			return nil, 0, false
		}
		kp := itemStart
		if text[i] == '[' || text[i] == '{' {
			var next int
			it, next, ok = p.flow(text, i, line, col, cpath, kp, depth+1)
			i = next
		} else {
			var used int
			it, used, ok = p.scalar(text[i:], line, col+i, cpath, kp, true)
			i += used
		}
		if !ok {
			return nil, 0, false
		}
		if kind == yaml.MappingNode {
			t.add(name, it)
		} else {
			it.kat = it.at
			t.addItem(it)
		}
		skip()
		if i >= len(text) {
			return nil, 0, false
		}
		switch text[i] {
		case ',':
			i++
		case end:
			return t, i + 1, true
		default:
			return nil, 0, false
		}
	}
}

// plainWord reports whether yaml.v3 resolves the plain scalar v to !!str
// by its first byte alone: one its resolver gives no hint for, or one of
// yYnNtTfFoO that does not spell true, false or null (the words its
// resolver looks up; "yes", "on" and the like are strings to yaml.v3).
// Anything else (a digit, a sign, a dot, ~) is left to the resolver.
// isVariables reports whether path is in the top-level variables, whose
// keys must be known as strings or not (tree.typed).
func isVariables(path string) bool {
	return path == "variables" || strings.HasPrefix(path, "variables.") || strings.HasPrefix(path, "variables[")
}

func plainWord(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch c := v[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == '~':
		return false
	case bytes.IndexByte([]byte("yYnNtTfFoO"), c) < 0:
		return true
	}
	switch string(v) {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return false
	}
	return true
}
