package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/runner/iostreams"
)

// Mode picks the output format.
type Mode int

const (
	ModeAuto  Mode = iota // live on a terminal, plain lines elsewhere
	ModeJSON              // one JSON event per line
	ModeQuiet             // warnings, halts and an unsuccessful summary only
)

// Reporter is an Observer that must be closed when the run ends.
type Reporter interface {
	Observer
	// Notice prints a message for the user on stderr, on a line of its own.
	Notice(msg string)
	Close()
}

// StreamDeltas makes a --json reporter write task_delta events, the pieces
// of streamed answers; other reporters are left as they are.
func StreamDeltas(r Reporter) {
	if jr, ok := r.(*jsonReporter); ok {
		jr.deltas = true
	}
}

// NewReporter returns the reporter for a mode and what the streams can show.
func NewReporter(s *iostreams.IOStreams, mode Mode) Reporter {
	switch mode {
	case ModeJSON:
		return &jsonReporter{enc: json.NewEncoder(s.Out), errOut: s.ErrOut}
	case ModeQuiet:
		return &textReporter{io: s, quiet: true}
	}
	if s.IsTerminal() {
		return newLiveReporter(s)
	}
	return &textReporter{io: s}
}

type jsonReporter struct {
	mu     sync.Mutex
	enc    *json.Encoder
	errOut io.Writer
	deltas bool // --stream-json: task_delta events too
}

func (r *jsonReporter) Observe(ev Event) {
	if (ev.Type == TaskDelta || ev.Type == TaskStreamDiscarded) && !r.deltas {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ev.Time = ev.Time.UTC()
	if !allUTF8(&ev) {
		_ = r.enc.Encode(bytesEvent(ev))
		return
	}
	_ = r.enc.Encode(ev)
}

// allUTF8 says whether every text of ev that a task's bytes may fill is
// UTF-8, as nearly all are: encoding/json would write any other with
// U+FFFD in place of its bytes, in silence. The check allocates nothing.
func allUTF8(ev *Event) bool {
	if !utf8.ValidString(ev.Result) || !utf8.ValidString(ev.Error) || !utf8.ValidString(ev.Message) || !utf8.ValidString(ev.Delta) {
		return false
	}
	if !haltUTF8(ev.Halt) {
		return false
	}
	if s := ev.Summary; s != nil {
		for _, o := range s.Outputs {
			if !utf8.ValidString(o.Result) {
				return false
			}
		}
		for _, hs := range [][]*Halt{s.Halts, s.Unsettled} {
			for _, h := range hs {
				if !haltUTF8(h) {
					return false
				}
			}
		}
	}
	return true
}

// haltUTF8 says whether the texts of h that a task's bytes may fill (a
// human task's description, rendered from results; a tool call's
// arguments) are UTF-8.
func haltUTF8(h *Halt) bool {
	return h == nil || utf8.ValidString(h.Description) && utf8.ValidString(h.Arguments)
}

// textEvent is an Event whose texts are written as the session's JSON
// writes them (checkpoint.Text): a text that is not UTF-8 as
// {"$base64": "..."}, byte for byte, as session show --json and session
// export have it. Its fields hide the Event's of the same names.
type textEvent struct {
	Event
	Result  checkpoint.Text `json:"result,omitempty"`
	Error   checkpoint.Text `json:"error,omitempty"`
	Message checkpoint.Text `json:"message,omitempty"`
	Delta   checkpoint.Text `json:"delta,omitempty"`
	Halt    *textHalt       `json:"halt,omitempty"`
	Summary *textSummary    `json:"summary,omitempty"`
}

type textSummary struct {
	Summary
	Outputs   []textOutput `json:"outputs,omitempty"`
	Halts     []*textHalt  `json:"halts,omitempty"`
	Unsettled []*textHalt  `json:"unsettled,omitempty"`
}

type textHalt struct {
	Halt
	Description checkpoint.Text `json:"description"`
	Arguments   checkpoint.Text `json:"arguments,omitempty"`
}

func newTextHalt(h *Halt) *textHalt {
	if h == nil {
		return nil
	}
	return &textHalt{Halt: *h, Description: checkpoint.Text(h.Description), Arguments: checkpoint.Text(h.Arguments)}
}

func textHalts(hs []*Halt) []*textHalt {
	var out []*textHalt
	for _, h := range hs {
		out = append(out, newTextHalt(h))
	}
	return out
}

type textOutput struct {
	TaskOutput
	Result checkpoint.Text `json:"result"`
}

// bytesEvent is ev as a textEvent, for an event with a text that is not
// UTF-8 (allUTF8): rare, so the copies it makes cost nothing that counts.
func bytesEvent(ev Event) *textEvent {
	te := &textEvent{Event: ev, Result: checkpoint.Text(ev.Result), Error: checkpoint.Text(ev.Error),
		Message: checkpoint.Text(ev.Message), Delta: checkpoint.Text(ev.Delta), Halt: newTextHalt(ev.Halt)}
	if ev.Summary != nil {
		te.Summary = &textSummary{Summary: *ev.Summary, Halts: textHalts(ev.Summary.Halts), Unsettled: textHalts(ev.Summary.Unsettled)}
		for _, o := range ev.Summary.Outputs {
			te.Summary.Outputs = append(te.Summary.Outputs, textOutput{TaskOutput: o, Result: checkpoint.Text(o.Result)})
		}
	}
	return te
}

func (r *jsonReporter) Close() {}

func (r *jsonReporter) Notice(msg string) { fmt.Fprintln(r.errOut, msg) }

// textReporter writes plain timestamped lines, fit for cron mail and logs.
type textReporter struct {
	out   sync.Mutex // held while writing Out
	err   sync.Mutex // held while writing ErrOut, when it is not Out (errLock)
	io    *iostreams.IOStreams
	quiet bool
}

// errLock is the lock to hold while writing ErrOut: out's own when both
// are one file (2>&1), so that their lines keep their order; err when not,
// so that what goes to stderr (a warning, a failure, the notice of a
// signal) never waits behind a stdout whose reader does not read (a
// paused pager, a stalled ssh).
func (r *textReporter) errLock() *sync.Mutex {
	if r.io.ErrSameAsOut() {
		return &r.out
	}
	return &r.err
}

func (r *textReporter) Observe(ev Event) {
	// --quiet keeps stdout empty: what it prints at all is for stderr,
	// which cron mails. Without it, a failure goes to stderr as well as
	// into the log on stdout, so `run … >/dev/null` still tells of it.
	// What goes to stderr is written first: stdout may block.
	alsoErr := !r.io.ErrSameAsOut()
	errMu := r.errLock()
	switch ev.Type {
	case TaskLine:
		mu := &r.out
		if ev.Stream == "stderr" {
			mu = errMu
		}
		mu.Lock()
		defer mu.Unlock()
		writeLine(r.io, ev, style{})
		return
	case RunWarning:
		errMu.Lock()
		defer errMu.Unlock()
		fmt.Fprintln(r.io.ErrOut, WarningLine(ev.Message))
		return
	case RunHalted:
		if r.quiet || alsoErr { // what waits, and the command that settles it, as for a failure
			errMu.Lock()
			writeHalt(r.io.ErrOut, ev.Halt, "")
			errMu.Unlock()
		}
		if !r.quiet {
			r.out.Lock()
			defer r.out.Unlock()
			writeHalt(r.io.Out, ev.Halt, "")
		}
		return
	case RunFinished:
		if ev.Summary.Outcome != Succeeded && (r.quiet || alsoErr) {
			errMu.Lock()
			writeResult(r.io.ErrOut, ev.Summary, style{})
			errMu.Unlock()
		}
		if !r.quiet {
			r.out.Lock()
			defer r.out.Unlock()
			writeSummary(r.io, ev.Summary, style{})
		}
		return
	}
	if ev.Type == TaskFailed && (r.quiet || alsoErr) {
		errMu.Lock()
		fmt.Fprintf(r.io.ErrOut, "teamrun: task %s failed: %s\n", ev.Task, iostreams.Printable(ev.Error))
		if ev.Logs != "" {
			fmt.Fprintf(r.io.ErrOut, "  its output: %s\n", ev.Logs)
		}
		errMu.Unlock()
	}
	if r.quiet {
		return
	}
	line := describe(ev, style{})
	if line == "" {
		return
	}
	r.out.Lock()
	defer r.out.Unlock()
	fmt.Fprintf(r.io.Out, "%s %s\n", ev.Time.Format(time.RFC3339), line)
	if ev.Type == TaskFailed && ev.Logs != "" {
		fmt.Fprintf(r.io.Out, "  its output: %s\n", ev.Logs)
	}
}

func (r *textReporter) Close() {}

func (r *textReporter) Notice(msg string) {
	mu := r.errLock()
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintln(r.io.ErrOut, msg)
}

// WarningLine is a warning as every command prints it: the errors' prefix
// ("teamrun: "), then "warning: ". One rule, so that validate, plan, run
// and session never differ.
func WarningLine(msg string) string { return warningLine(style{}, msg) }

func warningLine(s style, msg string) string {
	return "teamrun: " + s.yellow("warning:") + " " + msg
}

// style colours text on a terminal; its zero value leaves text plain.
type style struct{ on bool }

func (s style) paint(code, text string) string {
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
func (s style) green(t string) string  { return s.paint("32", t) }
func (s style) red(t string) string    { return s.paint("31", t) }
func (s style) yellow(t string) string { return s.paint("33", t) }
func (s style) dim(t string) string    { return s.paint("2", t) }
func (s style) bold(t string) string   { return s.paint("1", t) }

// describe is one event as a line of text, without time; "" to skip it.
func describe(ev Event, s style) string {
	el := ""
	if ev.Elapsed != nil {
		el = " in " + fmtDuration(time.Duration(*ev.Elapsed))
	}
	switch ev.Type {
	case RunStarted:
		return ev.Message
	case RunInfo:
		return "note: " + ev.Message
	case TaskRestored:
		return fmt.Sprintf("%s %s", s.dim("restored "), ev.Task)
	case TaskReused:
		return fmt.Sprintf("%s %s: %s (early cut-off)", s.dim("reused   "), ev.Task, ev.Reason)
	case TaskStarted:
		if ev.Attempt > 1 {
			return fmt.Sprintf("started   %s (attempt %d)", ev.Task, ev.Attempt)
		}
		return fmt.Sprintf("started   %s", ev.Task)
	case TaskRetrying:
		return fmt.Sprintf("%s %s: attempt %d failed%s: %s; retrying in %s", s.yellow("retrying "), ev.Task, ev.Attempt, el,
			oneLine(ev.Error), fmtDuration(time.Duration(*ev.Delay)))
	case RequestRetrying:
		return fmt.Sprintf("%s %s: LLM request %d of %d failed: %s; sending it again in %s", s.yellow("retrying "), ev.Task, ev.Request, ev.MaxRequests,
			oneLine(ev.Error), fmtDuration(time.Duration(*ev.Delay)))
	case TaskCompleted:
		u := ""
		switch {
		case ev.Usage != nil && (ev.Usage.UnknownRequests > 0 || ev.Usage.UnreportedRequests > 0):
			u = " (" + UsageText(ev.Usage) + ")" // the tokens are in it: once
		case ev.Usage != nil && ev.Usage.TotalTokens > 0:
			u = fmt.Sprintf(" (%s tokens, %s)", thousands(ev.Usage.TotalTokens), CostText(ev.Usage))
		}
		return fmt.Sprintf("%s %s%s%s", s.green("completed"), ev.Task, el, u)
	case TaskFailed:
		return fmt.Sprintf("%s %s%s%s: %s", s.red("failed   "), ev.Task, el, checkpoint.AttemptNote(ev.Attempt), oneLine(ev.Error))
	case TaskSkipped:
		return fmt.Sprintf("%s %s: %s", s.dim("skipped  "), ev.Task, ev.Reason)
	case TaskInterrupted:
		u := ""
		if HasUsage(ev.Usage) {
			u = " (" + UsageText(ev.Usage) + ")"
		}
		return fmt.Sprintf("%s %s%s: not completed%s", s.yellow("stopped  "), ev.Task, el, u)
	case TaskHalted:
		return fmt.Sprintf("%s %s%s: %s", s.yellow("halted   "), ev.Task, el, strings.TrimPrefix(ev.Error, haltedPrefix))
	case ToolResult:
		if ev.Tool == nil {
			return ""
		}
		what := fmt.Sprintf("%d bytes", len(ev.Tool.Result))
		if ev.Tool.IsError {
			what = "error: " + truncate(oneLine(strings.TrimPrefix(ev.Tool.Result, "error: ")), 80)
		}
		return fmt.Sprintf("%s %s: %s (turn %d): %s", s.dim("tool     "), ev.Task, ev.Tool.Name, ev.Tool.Turn, what)
	case ToolResumed:
		if ev.Tool == nil {
			return ""
		}
		return fmt.Sprintf("%s %s: tool loop resumed after turn %d; recorded results replayed, not run again", s.dim("resumed  "), ev.Task, ev.Tool.Turn)
	}
	return ""
}

// oneLine is a message on one line, its control characters escaped
// (iostreams.Printable): it may quote a server or a task, and is printed
// on a terminal, or into a log a terminal shows later.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return iostreams.Printable(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " "))
}

// FormatDuration is how teamrun prints a duration everywhere (the run's
// lines, the summary, session show).
func FormatDuration(d time.Duration) string { return fmtDuration(d) }

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		// Whole microseconds: "219µs" beside "2ms", not "218.877µs".
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// writeLine is a line of a task's output (--verbose), prefixed with the
// task's name as docker compose does: stdout to stdout, stderr to stderr;
// on a terminal without the control sequences it may hold.
func writeLine(s *iostreams.IOStreams, ev Event, st style) {
	w, shown := s.Out, s.Shown
	if ev.Stream == "stderr" {
		w, shown = s.ErrOut, s.ErrShown
	}
	fmt.Fprintf(w, "%s %s\n", st.dim(ev.Task+" |"), shown(ev.Message))
}

func writeHalt(w io.Writer, h *Halt, _ string) {
	if h.Budget != "" {
		fmt.Fprintf(w, "halted: the session's budget is reached before task %q: %s\n", h.Task, h.Budget)
		fmt.Fprintf(w, "  session: %s\n", h.Session)
		for _, c := range h.Commands {
			fmt.Fprintf(w, "  raise:   %s (or set a larger budget in the spec)\n", c)
		}
		fmt.Fprintf(w, "  then:    %s\n", h.Command)
		return
	}
	switch {
	case h.Loop != "":
		fmt.Fprintf(w, "halted: task %q: its tool loop ended on %s and needs it raised or a decision\n", h.Task, h.Loop)
	case h.Tool != "":
		fmt.Fprintf(w, "halted: task %q: a call of tool %s needs a decision\n", h.Task, h.Tool)
	default:
		fmt.Fprintf(w, "halted: task %q needs a human decision\n", h.Task)
	}
	fmt.Fprintf(w, "  session: %s\n", h.Session)
	fmt.Fprintf(w, "  task:    %s\n", h.Task)
	desc := strings.ReplaceAll(strings.TrimSpace(h.Description), "\n", "\n           ")
	fmt.Fprintf(w, "  asks:    %s\n", desc)
	if len(h.Options) > 0 {
		fmt.Fprintf(w, "  options: %s\n", strings.Join(h.Options, ", "))
	}
	if len(h.Commands) == 0 {
		fmt.Fprintf(w, "  decide:  %s\n", h.Command)
	}
	for k, c := range h.Commands {
		if k == 0 {
			fmt.Fprintf(w, "  decide:  %s\n", c)
		} else {
			fmt.Fprintf(w, "           %s\n", c)
		}
	}
}

// haltText says what a halted run waits for: "halted for a human
// decision", for a decision on a tool call (which one, and the command),
// or for a larger budget.
func haltText(halts []*Halt) string {
	var parts []string
	add := func(p string) {
		if !slices.Contains(parts, p) { // each task a budget held back says the same
			parts = append(parts, p)
		}
	}
	for _, h := range halts {
		switch {
		case h.Budget != "":
			p := "a larger budget"
			if len(h.Commands) > 0 {
				p += " (" + h.Commands[0] + ")"
			}
			add(p)
		case h.Loop != "":
			add(fmt.Sprintf("a higher %s or a decision on task %s's tool loop (%s)", h.Loop, h.Task, h.decideText()))
		case h.Tool != "":
			add(fmt.Sprintf("a decision on task %s's call of tool %s with %s (%s)", h.Task, h.Tool, h.Arguments, h.decideText()))
		default:
			add("a human decision")
		}
	}
	if len(parts) == 0 {
		return "halted for a human decision"
	}
	return "halted for " + strings.Join(parts, " and ")
}

// writeOutputs writes the tasks' results: byte for byte to a pipe or a
// file, without the control sequences they may hold to a terminal
// (iostreams' Shown), where a model's answer must not clear the screen or
// write the clipboard.
func writeOutputs(out *iostreams.IOStreams, s *Summary, st style) {
	w := out.Out
	for _, o := range s.Outputs {
		fmt.Fprintf(w, "%s\n", st.bold("── output of "+o.Task+" ──"))
		if o.ResultBlob != nil {
			writeBlobOutput(out, o)
			continue
		}
		fmt.Fprint(w, out.Shown(o.Result))
		if !strings.HasSuffix(o.Result, "\n") {
			fmt.Fprintln(w)
		}
	}
}

// writeUsage says what this run's LLM requests cost, the session's, and
// what a resume saved; nothing for a team that used no LLM tokens.
func writeUsage(w io.Writer, s *Summary) {
	if !HasUsage(s.SessionUsage) {
		return
	}
	fmt.Fprintf(w, "tokens:  this run %s; session %s\n", UsageText(s.Usage), UsageText(s.SessionUsage))
	// All that --json's restored_usage counts, its estimates too (said
	// as such), as the other lines do.
	if r := s.RestoredUsage; HasUsage(r) && s.RestoredPaid > 0 {
		fmt.Fprintf(w, "restored %d %s whose %s were not paid again\n", s.RestoredPaid, plural(s.RestoredPaid, "task"), UsageText(r))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func writeSummary(out *iostreams.IOStreams, s *Summary, st style) {
	writeOutputs(out, s, st)
	writeResult(out.Out, s, st)
}

// writeResult is the summary without the outputs: how the run ended, the
// session and the command that resumes it.
func writeResult(w io.Writer, s *Summary, st style) {
	var head string
	switch s.Outcome {
	case Succeeded:
		head = st.green("done")
	case Failed:
		head = st.red("failed") + ": " + strings.Join(s.FailedTasks, ", ")
		if len(s.FailedTasks) == 0 {
			head = st.red("failed")
		}
	case Halted:
		head = st.yellow(haltText(s.Halts))
	case Interrupted:
		head = st.yellow("interrupted") + ": checkpoint written"
	case StoreFailed:
		head = st.red("stopped") + ": the checkpoint could not be written"
		if s.Unkept != "" {
			head = st.red("stopped") + ": could not keep " + s.Unkept + " (the checkpoint is written)"
		}
	}
	fmt.Fprintf(w, "%s %s: %d restored, %d ran", st.bold("summary"), head, s.Restored, s.Ran)
	if s.Unrecorded > 0 {
		again := "they run"
		if s.Unrecorded == 1 {
			again = "it runs"
		}
		fmt.Fprintf(w, ", %d ran but not recorded (%s: %s again on --continue)", s.Unrecorded, strings.Join(s.UnrecordedTasks, ", "), again)
	}
	if s.MaybeRecorded > 0 {
		fmt.Fprintf(w, ", %d ran and may have been recorded (%s: --continue restores what was, and runs the rest again)", s.MaybeRecorded, strings.Join(s.MaybeRecordedTasks, ", "))
	}
	fmt.Fprintf(w, ", %d failed, %d skipped", s.Failed, s.Skipped)
	if s.Pending > 0 {
		fmt.Fprintf(w, ", %d not run", s.Pending)
	}
	fmt.Fprintf(w, " of %d tasks in %s", s.Total, fmtDuration(time.Duration(s.Elapsed)))
	if s.CutOff > 0 {
		fmt.Fprintf(w, "; the early cut-off saved %d %s", s.CutOff, plural(s.CutOff, "task"))
	}
	if len(s.Kept) > 0 {
		fmt.Fprintf(w, "; kept (--keep) although changed: %s", strings.Join(s.Kept, ", "))
	}
	fmt.Fprintln(w)
	for _, h := range s.Unsettled {
		fmt.Fprintf(w, "%s task %s's call of tool %s with %s was stopped before its result was recorded, and %s is not idempotent: decide whether it took effect (%s), or --continue halts on it (exit 3)\n",
			st.yellow("unsettled:"), h.Task, h.Tool, h.Arguments, h.Tool, h.decideText())
	}
	writeUsage(w, s)
	fmt.Fprintf(w, "session: %s\n", s.Session)
	if s.Resume != "" {
		fmt.Fprintf(w, "resume:  %s\n", s.Resume)
	}
}

// writeBlobOutput copies a result stored out of line from the store to w,
// never whole in memory.
func writeBlobOutput(out *iostreams.IOStreams, o TaskOutput) {
	w := out.Out
	// The summary is printed after the run's context is done with.
	rc, err := o.out.Open(context.Background())
	if err == nil {
		last := &lastByte{w: w}
		pw := out.ShownWriter(last)
		if _, err = io.Copy(pw, rc); err == nil {
			err = pw.Close()
		}
		rc.Close()
		if err == nil && last.b != '\n' {
			fmt.Fprintln(w)
		}
	}
	if err != nil {
		fmt.Fprintf(w, "\n(the output of %s cannot be read: %v)\n", o.Task, err)
	}
}

// lastByte is a writer that remembers the last byte through it.
type lastByte struct {
	w io.Writer
	b byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.b = p[len(p)-1]
	}
	return l.w.Write(p)
}
