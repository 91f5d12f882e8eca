// Package tools runs the tools an LLM agent calls: command tools declared
// in agents.yaml and teamrun's built-ins. A call that cannot succeed (an
// unknown tool, arguments that fail the schema, a non-zero exit, a
// timeout) is an error result the model reads, never a failed task; only
// the run being stopped is an error.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/teamrun/teamrun/internal/ownfiles"
	"github.com/teamrun/teamrun/pkg/spec"
)

// MaxOutput is how much of a tool's output goes back to the model; more is
// cut, and the result says so.
const MaxOutput = 32 << 10

// Call is one tool call of a model turn.
type Call struct {
	ID        string
	Name      string
	Arguments string // JSON text, as the model wrote it
}

// Result is what the model reads back for a call.
type Result struct {
	Content string
	IsError bool
	// NotUTF8 counts the bytes of the output that were part of no UTF-8
	// character, each U+FFFD in Content: the caller warns, naming the tool.
	NotUTF8 int
}

// Proc is one run of a command tool. The runner's RunCommand runs it, in
// its own process group with the timeout and interrupt rules of command
// agents.
type Proc struct {
	Shell       string
	Argv        []string
	Stdin       string
	Env         []string
	Dir         string
	Timeout     time.Duration
	StdoutLimit int
}

// Runner runs a Proc and returns its stdout; a non-zero exit, a timeout or
// a failed start is an error whose text the model may read.
type Runner func(ctx context.Context, p Proc) ([]byte, error)

// Set is the tools of one attempt of one task.
type Set struct {
	Tools []*spec.Tool
	Run   Runner
	// Env is the task's TEAMRUN_* environment; each call adds its
	// TEAMRUN_ARG_<NAME>, as far as FitArgs lets them through: it leaves
	// out what an environment cannot carry (and says so), since the tool
	// reads every argument on stdin anyway; nil passes them all.
	Env     []string
	FitArgs func(tool string, entries []string) []string
	// Dir is the folder the built-ins work in (the spec's): the file tools
	// are confined to it.
	Dir string
	// CommandDir is where command tools run: where the agent's commands
	// would (its dir:, else the team's, else the spec's folder).
	CommandDir string
	// Allow lists dangerous built-ins the spec opted in to.
	Allow []string
	// Guarded are teamrun's own files and folders (the spec being run,
	// the session store's folders), which the file tools never write, nor
	// anything in a .teamrun folder: a model that could would rewrite what
	// the next run does (its commands, the URL its key is sent to).
	Guarded []Guard
	// MCP is the attempt's MCP sessions, for tools whose MCP is set.
	MCP *MCP
}

// Guard is a file or folder the file tools do not write: its absolute
// path, and what it is in the words of the error the model reads.
type Guard = ownfiles.Guard

// Tool returns the tool named name, or nil.
func (s *Set) Tool(name string) *spec.Tool {
	for _, t := range s.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Check validates a call before anything runs: the tool exists and its
// arguments satisfy its parameters. The error is the result to give the
// model instead; args are the decoded arguments.
func (s *Set) Check(c Call) (t *spec.Tool, args map[string]any, bad *Result) {
	t = s.Tool(c.Name)
	if t == nil {
		names := make([]string, len(s.Tools))
		for i, t := range s.Tools {
			names[i] = t.Name
		}
		return nil, nil, &Result{IsError: true, Content: fmt.Sprintf("error: there is no tool %q; the tools are: %s", c.Name, strings.Join(names, ", "))}
	}
	text := strings.TrimSpace(c.Arguments)
	if text == "" {
		text = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber() // exact integers for the schema's integer checks
	var v any
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		return t, nil, &Result{IsError: true, Content: fmt.Sprintf("error: the arguments of %s are not JSON (%v); call it again with a JSON object", c.Name, err)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return t, nil, &Result{IsError: true, Content: fmt.Sprintf("error: the arguments of %s must be a JSON object", c.Name)}
	}
	if t.MCP == "" && t.Builtin == "" {
		// A command tool reads each as TEAMRUN_ARG_<NAME>: two that make
		// one name would let the one the schema did not check win.
		if a, b, clash := spec.EnvClash(slices.Collect(maps.Keys(obj))); clash {
			return t, nil, &Result{IsError: true, Content: fmt.Sprintf("error: the arguments %q and %q of %s both reach it as TEAMRUN_ARG_%s, so it would see only one of them: call it again with only %q", a, b, c.Name, spec.EnvName(a), declaredOf(t, a, b))}
		}
	}
	if t.Schema != nil {
		if err := t.Schema.Validate(obj); err != nil {
			return t, nil, &Result{IsError: true, Content: fmt.Sprintf("error: the arguments of %s do not match its parameters: %s; call it again with valid arguments", c.Name, validationText(err))}
		}
	}
	return t, obj, nil
}

// declaredOf is whichever of a and b the tool's parameters declare (a
// when both or neither).
func declaredOf(t *spec.Tool, a, b string) string {
	props, _ := t.Parameters["properties"].(map[string]any)
	if _, ok := props[a]; !ok {
		if _, ok := props[b]; ok {
			return b
		}
	}
	return a
}

// StoppedError is a call that the run's end or the task's timeout
// stopped while it ran: its outcome is unknown. errors.Is sees the
// context's error; the text is the user's words, not Go's.
type StoppedError struct {
	Tool string
	Err  error
}

func (e *StoppedError) Error() string { return "tool " + e.Tool + " was still running" }
func (e *StoppedError) Unwrap() error { return e.Err }

// Unfinished is err, a call its own timeout stopped, with what the model
// must know before it calls again: stopped mid-way, the call may have
// taken effect. A model told only "timed out" calls it again.
func Unfinished(err error) error {
	return fmt.Errorf("%w (it was stopped before it ended: what it did is unknown; check its effect before you call it again)", err)
}

// Execute runs a call that Check accepted. The error is non-nil only when
// ctx ended (the run is stopping): then nothing is known of the outcome.
func (s *Set) Execute(ctx context.Context, t *spec.Tool, args map[string]any) (Result, error) {
	var out []byte
	var cut bool
	var err error
	switch {
	case t.MCP != "":
		out, cut, err = s.MCP.Call(ctx, t.MCP, t.Name, args)
	case t.Builtin != "":
		out, cut, err = s.builtin(ctx, t, args)
	default:
		out, cut, err = s.command(ctx, t, args)
	}
	if ctx.Err() != nil {
		return Result{}, &StoppedError{Tool: t.Name, Err: ctx.Err()}
	}
	content, bad := validText(out)
	if cut {
		content += fmt.Sprintf("\n[teamrun: the output was cut at %d bytes]", MaxOutput)
	}
	if err != nil {
		msg := "error: " + err.Error()
		if strings.TrimSpace(content) != "" {
			msg += "\noutput:\n" + content
		}
		return Result{IsError: true, Content: msg, NotUTF8: bad}, nil
	}
	return Result{Content: content, NotUTF8: bad}, nil
}

// validText is out as text, as an answer is recorded: each byte that can
// be part of no UTF-8 character becomes U+FFFD, which a "?" in the data
// could not be told from; bad counts them.
func validText(out []byte) (text string, bad int) {
	if utf8.Valid(out) {
		return string(out), 0
	}
	var b strings.Builder
	b.Grow(len(out) + 8)
	for len(out) > 0 {
		r, n := utf8.DecodeRune(out)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
			bad++
		} else {
			b.Write(out[:n])
		}
		out = out[n:]
	}
	return b.String(), bad
}

// cutOutput is out cut to MaxOutput bytes, and whether it was. The cut
// never falls inside a UTF-8 character: its first bytes alone would read
// as bytes that are not UTF-8.
func cutOutput(out []byte) ([]byte, bool) {
	if len(out) <= MaxOutput {
		return out, false
	}
	out = out[:MaxOutput]
	// A character cut short starts in the last UTFMax-1 bytes; FullRune
	// is true of one whole, and of bytes no character starts with.
	for i := len(out) - 1; i >= 0 && i >= len(out)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(out[i]) {
			if !utf8.FullRune(out[i:]) {
				out = out[:i]
			}
			break
		}
	}
	return out, true
}

func (s *Set) command(ctx context.Context, t *spec.Tool, args map[string]any) ([]byte, bool, error) {
	stdin, err := json.Marshal(args)
	if err != nil {
		return nil, false, err
	}
	argEnv := ArgEnv(args)
	if s.FitArgs != nil {
		argEnv = s.FitArgs(t.Name, argEnv)
	}
	env := append(append([]string(nil), s.Env...), argEnv...)
	out, err := s.Run(ctx, Proc{Shell: t.Shell, Argv: t.Command, Stdin: string(stdin), Env: env,
		Dir: s.CommandDir, Timeout: t.Timeout, StdoutLimit: MaxOutput + 1})
	out, cut := cutOutput(out)
	return out, cut, err
}

// ArgEnv is TEAMRUN_ARG_<NAME>=value for each top-level scalar argument,
// in name order: strings as they are (a NUL byte or an over-long value
// included: Set.FitArgs decides), numbers and booleans as JSON.
func ArgEnv(args map[string]any) []string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var env []string
	for _, k := range keys {
		var v string
		switch x := args[k].(type) {
		case string:
			v = x
		case json.Number:
			v = x.String()
		case bool:
			v = strconv.FormatBool(x)
		case float64:
			v = strconv.FormatFloat(x, 'g', -1, 64)
		case int64:
			v = strconv.FormatInt(x, 10)
		default:
			continue // lists, objects and null: on stdin only
		}
		env = append(env, "TEAMRUN_ARG_"+spec.EnvName(k)+"="+v)
	}
	return env
}

// validationText is a validation failure as the model reads it: each
// problem with where it is in the arguments.
func validationText(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	var walk func(v *jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			at := v.InstanceLocation
			if at == "" {
				at = "/"
			}
			parts = append(parts, fmt.Sprintf("at %s: %s", at, v.Message))
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(parts, "; ")
}
