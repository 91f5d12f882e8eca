package checkpoint

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamrun/teamrun/pkg/spec"
)

// NewerError is a session file written by a newer teamrun, in a format this
// one cannot read. It is not corrupt: an upgrade reads it. Like a corrupt
// file it is never overwritten.
type NewerError struct {
	ID      string
	Path    string
	Version int // the file's format_version
	// Kind, when set, is a journal record's kind this teamrun does not
	// know (Version is then 0): a newer teamrun's record, in a format
	// this one reads otherwise (a journal written since request_paid, read
	// by a teamrun from before it, would be one).
	Kind RecordKind
}

func (e *NewerError) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("session %s: %s holds a %q record, which this teamrun does not know: a newer teamrun wrote it; upgrade teamrun to read the session (the file was left untouched: do not delete it)",
			e.ID, e.Path, e.Kind)
	}
	return fmt.Sprintf("session %s: %s was written by a newer teamrun (format %d; this one reads up to %d): upgrade teamrun; the file was left untouched",
		e.ID, e.Path, e.Version, FormatVersion)
}

// unknownKind is a record of a kind this teamrun does not know.
type unknownKind struct{ kind RecordKind }

func (e *unknownKind) Error() string { return fmt.Sprintf("unknown record kind %q", e.kind) }

// Undecodable is err, which keeps session id's record at where (a file, a
// table row) from being decoded, as a *NewerError when a newer teamrun
// wrote it (a newer format, a record kind this one does not know) and as a
// *CorruptError otherwise: "upgrade", not "corrupt: delete the session".
func Undecodable(id, where string, err error) error {
	if n, ok := errors.AsType[*errNewer](err); ok {
		return &NewerError{ID: id, Path: where, Version: n.version}
	}
	if u, ok := errors.AsType[*unknownKind](err); ok {
		return &NewerError{ID: id, Path: where, Kind: u.kind}
	}
	return &CorruptError{ID: id, Path: where, Err: err}
}

// Unwrap: the session cannot be read, so it is a store error (exit 5).
func (e *NewerError) Unwrap() error { return ErrStore }

// errNewer is what decodeSession returns for a newer format; decodeFiles,
// which knows the session and the file, turns it into a *NewerError.
type errNewer struct{ version int }

func (e *errNewer) Error() string {
	return fmt.Sprintf("format_version %d is newer than this teamrun reads (%d): upgrade teamrun", e.version, FormatVersion)
}

// shapeError is a session file that is JSON but not of a session's shape,
// worded for a user: the key path, what belongs there and what is there.
type shapeError struct {
	Path string // e.g. "team.tasks[2].result"; "" for the whole file
	Want string
	Got  string
}

func (e *shapeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("expected %s, got %s", e.Want, e.Got)
	}
	return fmt.Sprintf("%s: expected %s, got %s", e.Path, e.Want, e.Got)
}

// decodeError explains why data did not decode as a session. The json
// package's own messages name Go types and struct fields, which mean nothing
// to a user, so a file that is JSON is walked again against the session's
// shape to find the first value out of place. This runs only when decoding
// has already failed, so the common path pays nothing for it.
func decodeError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		// A newer format may well have another shape: say "upgrade", not
		// "corrupt".
		var head struct {
			Version json.Number `json:"format_version"`
		}
		if json.Unmarshal(data, &head) == nil {
			if v, perr := head.Version.Int64(); perr == nil && v > FormatVersion {
				return &errNewer{version: int(v)}
			}
		}
	}
	if p := jsonProblem(data, err, reflect.TypeFor[sessionWire]()); p != nil {
		return fmt.Errorf("not a session file: %w", p)
	}
	return errors.New("not a session file: it is JSON, but not of a session's shape")
}

// jsonProblem says in user terms why data did not decode into a value of
// type t (err is what the json package said): where the JSON is broken, or
// the key path of the first value out of place. nil: it cannot tell.
func jsonProblem(data []byte, err error, t reflect.Type) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// json.Unmarshal's "unexpected end of JSON input" is a syntax
		// error too; a decoder tells it apart.
		var v any
		if derr := json.NewDecoder(bytes.NewReader(data)).Decode(&v); errors.Is(derr, io.EOF) || errors.Is(derr, io.ErrUnexpectedEOF) {
			err = derr
		}
	}
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		line, col := lineCol(data, max(se.Offset-1, 0))
		return fmt.Errorf("not valid JSON at line %d, column %d", line, col)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if len(bytes.TrimSpace(data)) == 0 {
			return errors.New("it is empty")
		}
		return errors.New("the JSON ends early (the file is cut short)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) == nil {
		if serr := shapeOf(tree, t, ""); serr != nil {
			return serr
		}
	}
	// The walk found nothing: fall back to what the json package knows,
	// without its Go type names.
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &shapeError{Path: te.Field, Want: wantOf(te.Type), Got: "a " + te.Value}
	}
	return nil
}

// lineCol is the 1-based line and column of byte offset off in data.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, 1 + utf8.RuneCount(before)
}

// shapeOf checks a decoded JSON value v against the Go type t the session
// decodes into, following encoding/json's rules (null fits anything, object
// keys match field names case-insensitively, unknown keys are ignored), and
// returns the first value that does not fit, with its path.
func shapeOf(v any, t reflect.Type, path string) *shapeError {
	if v == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t { // types whose UnmarshalJSON reads another shape
	case reflect.TypeFor[Message]():
		t = reflect.TypeFor[messageWire]()
	case reflect.TypeFor[TaskRecord]():
		t = reflect.TypeFor[taskRecordWire]()
	}
	bad := func() *shapeError { return &shapeError{Path: path, Want: wantOf(t), Got: gotOf(v)} }
	switch t {
	case reflect.TypeFor[time.Time]():
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return bad()
		}
		return nil
	case reflect.TypeFor[text]():
		switch x := v.(type) {
		case string:
			return nil
		case map[string]any:
			if s, ok := x[b64Key].(string); ok && len(x) == 1 {
				if _, err := base64.StdEncoding.DecodeString(s); err == nil {
					return nil
				}
			}
		}
		return bad()
	case reflect.TypeFor[result]():
		if m, ok := v.(map[string]any); ok && m[blobKey] != nil {
			var r result
			if b, err := json.Marshal(m); err != nil || r.UnmarshalJSON(b) != nil {
				return bad()
			}
			return nil
		}
		return shapeOf(v, reflect.TypeFor[text](), path)
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			return bad()
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		if _, err := strconv.ParseUint(n.String(), 10, t.Bits()); err != nil {
			return bad()
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return bad()
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, e := range list {
			if err := shapeOf(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := shapeOf(m[k], t.Elem(), spec.JoinKey(path, k)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ft, ok := fields[k]
			if !ok {
				for name, f := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = f, true
						break
					}
				}
			}
			if !ok {
				continue // encoding/json ignores unknown keys
			}
			if err := shapeOf(m[k], ft, spec.JoinKey(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of struct t's fields to their types, with
// fields of embedded structs promoted unless an outer field has the name,
// as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			embedded = append(embedded, f.Type)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for _, e := range embedded {
		for name, ft := range jsonFields(e) {
			if _, ok := out[name]; !ok {
				out[name] = ft
			}
		}
	}
	return out
}

// wantOf says what JSON value type t takes, in user terms.
func wantOf(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[time.Time]():
		return "a time such as 2026-03-01T10:15:00Z"
	case reflect.TypeFor[text]():
		return fmt.Sprintf("a text (or {%q: ...} for bytes that are not UTF-8)", b64Key)
	case reflect.TypeFor[result]():
		return fmt.Sprintf("a text (or {%q: ...} for bytes that are not UTF-8, or {%q: \"sha256:...\", \"size\": N} for a result stored out of line)", b64Key, blobKey)
	}
	switch t.Kind() {
	case reflect.String:
		return "a text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// gotOf describes a decoded JSON value, quoting short scalars.
func gotOf(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a text"
		}
		return "the text " + strconv.Quote(x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// DecodeProblem says what is wrong with data, which failed to decode into a
// t with err, in user terms (a key path, what was expected); fallback when
// it cannot tell.
func DecodeProblem(data []byte, err error, t reflect.Type, fallback string) error {
	if p := jsonProblem(data, err, t); p != nil {
		return p
	}
	return errors.New(fallback)
}
