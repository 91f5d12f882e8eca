package spec

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Render replaces each identifier-shaped {name} in text with the value of
// name in state. Unknown names and anything else in braces (JSON, say) stay
// as written. Strings go in as they are, numbers as YAML prints them, maps
// and lists as JSON, null as the empty string.
func Render(text string, state map[string]any) string { return render(text, state, braces) }

// Render is Render as the team's texts mean it (syntax): a PraisonAI
// file's {{a.b}} reads field b of mapping a, as PraisonAI's
// substitute_variables does, and in a steps: file only {{name}} is a
// placeholder.
func (t *Team) Render(text string, state map[string]any) string {
	return render(text, state, t.syntax())
}

// syntax is how a team's texts write a placeholder.
type syntax uint8

const (
	// braces is the native format's {name}.
	braces syntax = iota
	// praisonRoles is a PraisonAI roles: or tasks: file's: {topic}, as
	// its agents_generator formats those texts, and {{name}}, as its
	// workflows do; either may be dotted ({{a.b}} reads field b of a).
	praisonRoles
	// praisonSteps is a PraisonAI steps: file's: only {{name}} (or
	// {{a.b}}), as its workflow substitutes step texts; {name} and
	// ${name} are text (a shell line, a Python f-string).
	praisonSteps
)

// syntax is the placeholder syntax of t's texts.
func (t *Team) syntax() syntax {
	switch {
	case t.PraisonSteps:
		return praisonSteps
	case t.PraisonTemplates:
		return praisonRoles
	}
	return braces
}

// spell is how a text of syntax syn writes the placeholder of name.
func (syn syntax) spell(name string) string {
	if syn == praisonSteps {
		return "{{" + name + "}}"
	}
	return "{" + name + "}"
}

// RenderTask is Render of tk's text w as the task runs: a
// placeholder teamrun made read a variable of its own (the binding of a
// steps file's {{repeat_iterations}}, {{loop_outputs}}, {{NAME_output}}, …)
// that has no value then stays as the file writes it, as any placeholder
// that does not resolve does, not as teamrun's name for it. The task's
// key is over the texts as bound (TaskDefs): sessions keep theirs.
func (t *Team) RenderTask(tk *Task, w TaskText, state map[string]any) string {
	text, sp := tk.textIn(t, w, state), tk.spellingsOf(w)
	if sp == nil {
		return t.Render(text, state)
	}
	n := map[string]int{} // the placeholders read so far, by variable
	return replacePlaceholders(text, t.syntax(), func(name string) (string, bool) {
		root, _, _ := strings.Cut(name, ".")
		k := n[root]
		n[root]++
		if v, ok := lookup(state, name); ok {
			return FormatValue(v), true
		}
		if k < len(sp[root]) && sp[root][k] != "" {
			return sp[root][k], true
		}
		return "", false
	})
}

func render(text string, state map[string]any, syn syntax) string {
	return replacePlaceholders(text, syn, func(name string) (string, bool) {
		v, ok := lookup(state, name)
		return FormatValue(v), ok
	})
}

// renderHiding is render with the variables hidden (nil: none) left as
// names with no value: their placeholders stay as written.
func renderHiding(text string, state map[string]any, syn syntax, hidden []string) string {
	if len(hidden) == 0 {
		return render(text, state, syn)
	}
	return replacePlaceholders(text, syn, func(name string) (string, bool) {
		if root, _, _ := strings.Cut(name, "."); slices.Contains(hidden, root) {
			return "", false
		}
		v, ok := lookup(state, name)
		return FormatValue(v), ok
	})
}

// replacePlaceholders returns text with each placeholder (as syn reads
// them) that repl gives a replacement replaced by it; the others, and
// every other byte, stay as written.
func replacePlaceholders(text string, syn syntax, repl func(name string) (string, bool)) string {
	var b strings.Builder
	last := 0
	eachPlaceholder(text, syn, func(name string, start, end int) {
		if r, ok := repl(name); ok {
			if last == 0 {
				b.Grow(len(text))
			}
			b.WriteString(text[last:start])
			b.WriteString(r)
			last = end
		}
	})
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// eachPlaceholder calls f with each placeholder of text, as syn reads
// them: its name and where it is written, text[start:end]. Render, the
// placeholder check and the steps' bindings all read texts through it, so
// they agree on what a placeholder is.
func eachPlaceholder(text string, syn syntax, f func(name string, start, end int)) {
	for i := strings.IndexByte(text, '{'); i >= 0; {
		name, end := placeholderAt(text, i, syn)
		if end > 0 {
			f(name, i, end)
		} else {
			end = i + 1
		}
		k := strings.IndexByte(text[end:], '{')
		if k < 0 {
			return
		}
		i = end + k
	}
}

// lookup finds name in state; a dotted name (a.b.c) walks the fields of
// mappings, a JSON object's text (an output_variable) read as one.
func lookup(state map[string]any, name string) (any, bool) {
	root, path, dotted := strings.Cut(name, ".")
	v, ok := state[root]
	if !ok || !dotted {
		return v, ok
	}
	for _, f := range strings.Split(path, ".") {
		m, isMap := asMapping(v)
		if !isMap {
			return nil, false
		}
		if v, ok = m[f]; !ok {
			return nil, false
		}
	}
	return v, true
}

// asMapping is v as a mapping: a map, or the text of a JSON object (an
// output_variable holds an answer's text).
func asMapping(v any) (map[string]any, bool) {
	m, isMap := v.(map[string]any)
	if s, isText := v.(string); isText && strings.HasPrefix(strings.TrimSpace(s), "{") {
		isMap = json.Unmarshal([]byte(strings.TrimSpace(s)), &m) == nil && m != nil
	}
	return m, isMap
}

// placeholderAt reads the placeholder starting at text[i] (a '{'), as
// syn writes them: its name and the index just past it, or end 0 when
// there is none. A PraisonAI {{ name }} may have spaces inside the
// braces; a PraisonAI name may be dotted (a.b).
func placeholderAt(text string, i int, syn syntax) (name string, end int) {
	if syn != braces && strings.HasPrefix(text[i:], "{{") {
		j := skipSpace(text, i+2)
		if n := nameAt(text, j, true); n > j {
			if k := skipSpace(text, n); strings.HasPrefix(text[k:], "}}") {
				return text[j:n], k + 2
			}
		}
	}
	if syn == praisonSteps {
		return "", 0
	}
	if n := nameAt(text, i+1, syn != braces); n > i+1 && n < len(text) && text[n] == '}' {
		return text[i+1 : n], n + 1
	}
	return "", 0
}

// nameAt is the end of the identifier (with dotted, of the dotted
// identifiers a.b.c) at text[j]; j when there is none.
func nameAt(text string, j int, dotted bool) int {
	for {
		start := j
		for j < len(text) && isIdentByte(text[j], j == start) {
			j++
		}
		if j == start {
			return start
		}
		if !dotted || j+1 >= len(text) || text[j] != '.' || !isIdentByte(text[j+1], true) {
			return j
		}
		j++
	}
}

func skipSpace(text string, j int) int {
	for j < len(text) && strings.IndexByte(" \t\n\r\f\v", text[j]) >= 0 {
		j++
	}
	return j
}

// readsVar reports whether text has a placeholder (as syn reads them) of
// the variable name or of a field of it.
func readsVar(text, name string, syn syntax) bool {
	found := false
	eachPlaceholder(text, syn, func(n string, _, _ int) {
		root, _, _ := strings.Cut(n, ".")
		found = found || root == name
	})
	return found
}

// Reads reports whether text, a text of t, reads the variable name (or a
// field of it) when it renders.
func (t *Team) Reads(text, name string) bool { return readsVar(text, name, t.syntax()) }

// placeholderNames lists the names of the placeholders of text in order,
// each once.
func placeholderNames(text string, syn syntax) []string {
	var names []string
	for _, w := range placeholdersIn(text, syn) {
		names = append(names, w.name)
	}
	return names
}

// written is a placeholder's name and how a text first writes it.
type written struct{ name, as string }

// placeholdersIn lists the placeholders of text in order, each name once,
// as first written.
func placeholdersIn(text string, syn syntax) []written {
	var out []written
	seen := map[string]bool{} // not a scan of out: a text may hold thousands
	eachPlaceholder(text, syn, func(name string, start, end int) {
		if !seen[name] {
			seen[name] = true
			out = append(out, written{name, text[start:end]})
		}
	})
	return out
}

// IsIdentifier reports whether s is a variable name, as a {placeholder}
// and --var take it: ASCII letters, digits and _, not starting with a digit.
func IsIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

// FormatValue formats a shared-state value the way Render inserts it.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case json.Number: // an integer no int64 holds (BigInt): its digits
		return string(x)
	case float64:
		return yamlFloat(x, 64)
	case float32:
		return yamlFloat(float64(x), 32)
	case map[string]any, []any, []string:
		return string(canonicalJSON(x))
	}
	return fmt.Sprint(v)
}

// yamlFloat prints f as gopkg.in/yaml.v3 does.
func yamlFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// InitialState is the shared state a run starts from: the team's variables
// with the --var overrides applied, as a copy the caller may change. In a
// PraisonAI file it holds the built-in variables its texts use ({today},
// …), and the variables' {{today}}s are filled, from the clock now: the
// session keeps this state, so a resumed run renders the same texts.
func (t *Team) InitialState(overrides map[string]string) map[string]any {
	return t.initialStateAt(overrides, time.Now())
}

func (t *Team) initialStateAt(overrides map[string]string, now time.Time) map[string]any {
	state := make(map[string]any, len(t.Variables)+len(overrides))
	for k, v := range t.Variables {
		state[k] = deepCopy(v)
	}
	if t.PraisonTemplates {
		clock := map[string]any{}
		for k, v := range state {
			if s, ok := v.(string); ok && strings.Contains(s, "{{") {
				state[k] = t.fillBuiltins(s, k, overrides, now, map[string]bool{k: true}, clock)
			}
		}
		// The built-ins the values read from the clock are kept as the
		// texts' are, so that a session's --continue makes the values it
		// started with again, on any day (BuiltinsIn).
		for n, v := range clock {
			if _, set := state[n]; !set {
				state[n] = v
			}
		}
		for _, u := range t.Placeholders {
			if _, set := state[u.Name]; !set {
				if d, ok := praisonBuiltin(u.Name, now); ok {
					state[u.Name] = d
				}
			}
		}
	}
	for k, v := range overrides {
		state[k] = v
	}
	if _, forced := overrides["topic"]; t.FillTopic && !forced {
		state["topic"] = t.filledTopic(state)
	}
	return state
}

// filledTopic is the variable topic of a steps: file whose topic: holds
// a {{NAME}}, as PraisonAI fills it when it loads the file
// (yaml_parser.py): from the variables and --var, state holding them
// (its {{input}} too, which PraisonAI fills last in a step's text).
func (t *Team) filledTopic(state map[string]any) any {
	s, ok := state["topic"].(string)
	if !ok {
		return state["topic"]
	}
	return replacePlaceholders(s, praisonSteps, func(name string) (string, bool) {
		if root, _, _ := strings.Cut(name, "."); root == "topic" {
			return "", false
		}
		v, ok := lookup(state, name)
		return FormatValue(v), ok
	})
}

// fillBuiltins fills the {{NAME}}s of built-in names in the value s of
// variable self with what a text's {NAME} reads: --var NAME, else the
// file's variable NAME (its own built-ins filled so), else the built-in
// at now; in NAME's own value, the built-in. filling holds the variables
// being filled, so that two that name each other end with the built-in.
// clock gets the built-ins read at now, and gives them again: one
// {{uuid}} is one value in every variable.
func (t *Team) fillBuiltins(s, self string, overrides map[string]string, now time.Time, filling map[string]bool, clock map[string]any) string {
	return replacePlaceholders(s, praisonSteps, func(name string) (string, bool) {
		d, ok := praisonBuiltin(name, now)
		if !ok {
			return "", false
		}
		if o, forced := overrides[name]; forced && name != self {
			return o, true
		}
		if v, isVar := t.Variables[name]; isVar && !filling[name] {
			if vs, isText := v.(string); isText {
				filling[name] = true
				defer delete(filling, name)
				return t.fillBuiltins(vs, name, overrides, now, filling, clock), true
			}
			return FormatValue(v), true
		}
		if was, read := clock[name]; read {
			d = was
		} else {
			clock[name] = d
		}
		return FormatValue(d), true
	})
}

// BuiltinsIn is what state (a session's initial state) holds of the
// built-in variables, as --var would give them: InitialState with them
// makes the variables' values that session started with, on any day.
func (t *Team) BuiltinsIn(state map[string]any) map[string]string {
	if !t.PraisonTemplates {
		return nil
	}
	var out map[string]string
	for _, n := range praisonBuiltinNames() {
		if v, ok := state[n]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[n] = FormatValue(v)
		}
	}
	return out
}

// praisonBuiltinNames lists PraisonAI's built-in variables
// (utils/variables.py): the one list of what is built in.
func praisonBuiltinNames() []string {
	return []string{"date", "month", "now", "timestamp", "today", "uuid", "year"}
}

// praisonBuiltin is the value of PraisonAI's built-in variable name
// (utils/variables.py) at now, formatted as Python formats it.
func praisonBuiltin(name string, now time.Time) (any, bool) {
	if !slices.Contains(praisonBuiltinNames(), name) {
		return nil, false
	}
	switch name {
	case "now":
		return now.Format("2006-01-02T15:04:05.000000"), true
	case "today":
		return now.Format("January 02, 2006"), true
	case "date":
		return now.Format("2006-01-02"), true
	case "timestamp":
		return now.Unix(), true
	case "year":
		return int64(now.Year()), true
	case "month":
		return now.Format("January"), true
	case "uuid":
		var u [16]byte
		_, _ = rand.Read(u[:]) // crypto/rand: never fails on supported systems
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:]), true
	}
	return nil, false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// canonicalJSON encodes v with sorted keys, no spaces, no HTML escaping and
// non-ASCII as UTF-8: the form DESIGN §4 hashes (Python's
// json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)).
func canonicalJSON(v any) []byte {
	var b []byte
	return appendJSON(b, v)
}

func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendJSONString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case json.Number:
		return append(b, x...)
	case float32:
		return appendJSONFloat(b, float64(x))
	case float64:
		return appendJSONFloat(b, x)
	case []string:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e)
		}
		return append(b, ']')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortStrings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x[k])
		}
		return append(b, '}')
	}
	return appendJSONString(b, fmt.Sprint(v))
}

func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		// A run of bytes that need no escaping is copied at once.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				if c < 0x20 {
					b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
