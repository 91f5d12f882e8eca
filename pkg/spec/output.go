package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ErrOutputSchema is a result that does not fit its task's output_schema.
var ErrOutputSchema = errors.New("the result does not fit output_schema")

// compileOutputSchema compiles a task's output_schema (draft 2020-12 unless
// it says otherwise). References may only point inside the schema: a spec
// must not make teamrun read files or the network to check a result.
func compileOutputSchema(task string, schema any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	url := "urn:teamrun:output_schema:" + task
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, errRemoteRef{s}
	}
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, schemaProblem(err)
	}
	return s, nil
}

// outputSchema gives tk the JSON Schema sv (a mapping, or true or false)
// that its result is asked for in and checked against: the native
// output_schema, or a PraisonAI step's output_json.
func (b *builder) outputSchema(sv *tree, tk *Task) {
	v := sv.json()
	s, err := compileOutputSchema(tk.Name, v)
	if err != nil {
		b.errorf(sv, sv.pos(), "not a JSON Schema teamrun can check results with: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	tk.setMore(func(m *taskMore) { m.outputSchema, m.schema = v, s })
}

type errRemoteRef struct{ url string }

func (e errRemoteRef) Error() string {
	return fmt.Sprintf("$ref %q points outside the schema: only references within the schema itself are followed (move the definition under $defs)", e.url)
}

// schemaProblem words a compile error without the library's URLs: where
// in the schema, and what is wrong.
func schemaProblem(err error) error {
	var rr errRemoteRef
	if errors.As(err, &rr) {
		return rr
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		first := leaves(ve)[0]
		at := first.InstanceLocation
		if at == "" {
			at = "the top"
		}
		return fmt.Errorf("at %s: %s", at, first.Message)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "compilation failed: "); i >= 0 {
		msg = msg[i+len("compilation failed: "):]
	}
	return errors.New(msg)
}

// CheckOutput checks a result against the task's output_schema and returns
// the parsed value; without a schema it returns nil, nil. The error, which
// wraps ErrOutputSchema, names the first problem and where it is, so a
// retry (or a person) can act on it.
func (tk *Task) CheckOutput(result string) (any, error) {
	schema := tk.schema()
	if schema == nil {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(result))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrOutputSchema, whyNotJSON(result, err), preview(result))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: text follows the JSON value, which must be all of the answer: %s", ErrOutputSchema, preview(result))
	}
	err := schema.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		first := leaves(ve)[0]
		at := first.InstanceLocation
		if at == "" {
			at = "the top"
		}
		return nil, fmt.Errorf("%w: at %s: %s", ErrOutputSchema, at, first.Message)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOutputSchema, err)
	}
	return plainJSON(v), nil
}

// whyNotJSON says, in the words a retry prompt can act on, why result did
// not decode (err): the decoder's own text speaks of literals and
// characters the answer never meant.
func whyNotJSON(result string, err error) string {
	t := strings.TrimSpace(result)
	var se *json.SyntaxError
	switch {
	case t == "":
		return "it is empty, where JSON was wanted"
	case strings.HasPrefix(t, "```"):
		return "it is JSON in a ``` fence: the answer must be the JSON alone, without the fence"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "its JSON is cut short"
	case errors.As(err, &se):
		return fmt.Sprintf("it is not JSON (from byte %d on)", se.Offset)
	}
	return "it is not JSON"
}

// PlainNumber is a decoded JSON number as the shared state holds numbers:
// int64 when integral, an integer no int64 holds as its digits (BigInt),
// else float64 (its text when it fits none).
func PlainNumber(n json.Number) any {
	if i, err := n.Int64(); err == nil {
		return i
	}
	if b, ok := BigInt(string(n)); ok {
		return b
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return n.String()
}

// BigInt reads text, a YAML or JSON number, when it writes an integer no
// int64 holds, as the shared state keeps one: its decimal digits, a
// json.Number, which placeholders, TEAMRUN_VAR_<NAME> and the session's
// JSON all give as written, and a restore reads back the same. A float64
// would round a 20-digit id (YAML and JSON read such a number as one).
func BigInt(text string) (json.Number, bool) {
	plain := strings.ReplaceAll(text, "_", "") // YAML's digit separators
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "", false
	}
	if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return json.Number(strconv.FormatUint(u, 10)), true // 0x…, 0o…, 0b… too, as YAML reads them
	}
	// Beyond uint64 YAML reads only decimal digits as a number (a float).
	neg := strings.HasPrefix(plain, "-")
	digits := strings.TrimLeft(strings.TrimLeft(plain, "+-"), "0")
	if len(plain)-len(strings.TrimLeft(plain, "+-")) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	if neg {
		return json.Number("-" + digits), true
	}
	return json.Number(digits), true
}

// plainJSON turns the json.Numbers of a decoded value into int64 or
// float64, as every other value of the shared state holds numbers.
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		return PlainNumber(x)
	case []any:
		for i, e := range x {
			x[i] = plainJSON(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = plainJSON(e)
		}
	}
	return v
}

// preview is the start of a result on one line, for an error.
func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return fmt.Sprintf("%q", s)
}

// RouteKey is what the task's condition compares with its values: the
// trimmed result, or with route_on the value at that JSON pointer of the
// result (a string as it is, anything else as FormatValue prints it). The
// error says why a result has no such value.
func (tk *Task) RouteKey(raw string) (string, error) {
	on := tk.RouteOn()
	if on == "" {
		return strings.TrimSpace(raw), nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("route_on %s: the result is not JSON: %s", on, preview(raw))
	}
	v = plainJSON(v)
	for _, seg := range strings.Split(on, "/")[1:] {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		switch c := v.(type) {
		case map[string]any:
			x, ok := c[seg]
			if !ok {
				return "", fmt.Errorf("route_on %s: the result has no %q", on, seg)
			}
			v = x
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return "", fmt.Errorf("route_on %s: the result's list has no item %q", on, seg)
			}
			v = c[n]
		default:
			return "", fmt.Errorf("route_on %s: the result has no %q (it is not an object or a list there)", on, seg)
		}
	}
	return FormatValue(v), nil
}

// OutputPath is where task tk's output_file goes when it runs with state:
// relative to the spec's folder, as every path in a spec is. In a
// PraisonAI steps: file its {{NAME}}s are filled from state first, as
// PraisonAI's workflow fills them before it writes; elsewhere it is used
// as written. A path that is empty or a folder once filled, holds a NUL,
// or that a filled-in value takes out of the folder its written part
// names is an error: the value would pick the file, not the spec.
func (t *Team) OutputPath(tk *Task, state map[string]any) (string, error) {
	p := tk.OutputFile()
	if t.PraisonSteps {
		if p = t.RenderTask(tk, OutputFileText, state); p != tk.OutputFile() {
			if err := filledPath(tk.OutputFile(), p, t.syntax()); err != nil {
				return "", err
			}
		}
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	return filepath.Join(filepath.Dir(t.File), p), nil
}

// filledPath checks p, what the output_file path written became once
// its placeholders were filled.
func filledPath(written, p string, syn syntax) error {
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("output_file %q holds a NUL byte once its placeholders are filled", written)
	}
	// The folder written names before its first placeholder, which the
	// filled-in values may only go deeper into.
	first := len(written)
	eachPlaceholder(written, syn, func(_ string, start, _ int) { first = min(first, start) })
	base := filepath.Dir(written[:first] + "x")
	rel, err := filepath.Rel(base, filepath.Clean(p))
	switch {
	case strings.TrimSpace(p) == "" || err == nil && rel == ".":
		return fmt.Errorf("output_file %q names no file once its placeholders are filled (%q): give them values (variables:, --var)", written, p)
	case err != nil || !filepath.IsLocal(rel):
		return fmt.Errorf("output_file %q is %q once its placeholders are filled, outside %s, where its written part puts it: a filled-in value may not take the file out of that folder", written, p, base)
	}
	return nil
}

// Sets is what a result of tk (its text, as the engine reads it) puts in
// the shared state: its output_variable (name "" when it has none) and the
// value, with an output_schema the parsed JSON value (when the result
// fits it), else the result without its trailing newlines, as $(...)
// would take a command's output. The one rule for a result that
// completes, that the early cut-off reuses and that a restore takes over
// (DESIGN §4: a restored result is rebuilt as if just produced).
func (tk *Task) Sets(result string) (name string, value any) {
	if tk.OutputVariable == "" {
		return "", nil
	}
	if tk.OutputSchema() != nil {
		if v, err := tk.CheckOutput(result); err == nil {
			return tk.OutputVariable, v
		}
	}
	return tk.OutputVariable, strings.TrimRight(result, "\r\n")
}
