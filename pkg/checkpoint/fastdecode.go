package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// fastSession decodes a session file as streamSession does, into the same
// structs, but reads the task records (most of the file) with a scanner of
// its own instead of reflection: the canonical form EncodeSession writes,
// field by field. Whatever it does not know in a task (a key it does not
// expect, an escape in a string, a number that is not a plain integer, a
// usage, a blob reference) is decoded by encoding/json, the value alone or
// the whole task; every other member of the session is decoded as
// streamSession decodes it. It accepts no file that streamSession rejects:
// anything it cannot place is an error, and then decodeSession falls back
// to the decoders that word it.
func fastSession(data []byte, w *sessionWire, drop func(upto int)) error {
	_, err := fastDecodeDropping(data, w, drop)
	return err
}

// fastDecode is fastSession, and its scanner, which tests ask how many
// tasks it decoded whole with encoding/json.
func fastDecode(data []byte, w *sessionWire) (*scanner, error) {
	return fastDecodeDropping(data, w, nil)
}

// dropStep is how much of the tasks fastDecodeDropping reads before it
// tells drop: a huge page.
const dropStep = 2 << 20

// fastDecodeDropping is fastDecode that tells drop (nil: nobody), every
// dropStep bytes of the tasks, that data before upto will not be read
// again: what it keeps of a task is a copy, and a task is read from its
// start at most twice (scanner.task). Once it told drop, it gives up on
// an error (errDropped) rather than leave data to the other decoders.
func fastDecodeDropping(data []byte, w *sessionWire, drop func(upto int)) (*scanner, error) {
	s := &scanner{data: data}
	dropped := 0
	var sawTeam bool
	err := s.object(func(key []byte) error {
		if string(key) != "team" {
			if bytes.EqualFold(key, []byte("team")) {
				return errFastGiveUp // another spelling: leave the key matching to encoding/json
			}
			return s.member(key, w)
		}
		if sawTeam || s.peek() != '{' {
			return errFastGiveUp
		}
		sawTeam = true
		var sawTasks bool
		return s.object(func(key []byte) error {
			if string(key) != "tasks" {
				if bytes.EqualFold(key, []byte("tasks")) {
					return errFastGiveUp
				}
				return s.member(key, &w.Team)
			}
			if sawTasks || s.peek() != '[' {
				return errFastGiveUp
			}
			sawTasks = true
			start := 0
			w.records = []TaskRecord{} // as encoding/json decodes []
			var tw taskRecordWire
			in := interner{}
			return s.array(func() error {
				if n := len(w.records); n > 0 && n == cap(w.records) {
					// Room for the rest, guessed from the size of the
					// tasks read so far, and again, with a quarter more,
					// if that fell short (the first task may be far from
					// the others): the list is not grown by a quarter at
					// a time, each copy kept where a restore collects
					// nothing.
					more := (len(data)-s.i)/max((s.i-start)/n, 64) + 1
					if n > 1 {
						more += more / 4
					}
					grown := make([]TaskRecord, n, n+more)
					copy(grown, w.records)
					w.records = grown
				}
				if len(w.records) == 0 {
					start = s.i
				}
				if drop != nil && s.i-dropped >= dropStep {
					dropped = s.i
					drop(dropped)
				}
				tw = taskRecordWire{}
				if err := s.task(&tw, in); err != nil {
					return err
				}
				w.records = append(w.records, tw.record())
				s.lastName = w.records[len(w.records)-1].Name
				return nil
			})
		})
	})
	if err == nil {
		if s.ws(); s.i != len(data) {
			err = errors.New("data after the JSON object")
		}
	}
	if err != nil && dropped > 0 {
		return s, fmt.Errorf("%w: %w", errDropped, err)
	}
	return s, err
}

// errDropped: the fast decoder gave up on data it had let go of part of.
var errDropped = errors.New("the file was let go of as it was decoded")

// errFastGiveUp: the fast decoder leaves the file to the others.
var errFastGiveUp = errors.New("not in the canonical form")

// interner shares the copies of the strings many tasks repeat (agent,
// status, outcome), so that 10,000 tasks do not hold 10,000 copies.
type interner map[string]string

func (in interner) of(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

type scanner struct {
	data   []byte
	i      int
	whole  int // tasks decoded whole by encoding/json
	fields int // values decoded by encoding/json
	// noVariables is the one empty map the tasks' "variables": {} share
	// (nothing writes to a record's variables: a completion replaces
	// them), 48 bytes a task.
	noVariables map[string]any
	// cur and curEnd are the attempt history is reading and its end: kept
	// here, not in history's frame, from which they would escape (96 and
	// 32 bytes a task).
	cur    Attempt
	curEnd pendingTime
	// lastDigest is the last digest that digest gave a string of its own.
	lastDigest string
	// lastName is the name of the task read last: a sequential team's
	// task reads the one before it, whose name its context shares
	// (strings), not a string of its own.
	lastName string
}

func (s *scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return errFastGiveUp
	}
	s.i++
	return nil
}

// object walks an object's members: member(key) reads the value.
func (s *scanner) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, ok := s.plainString()
		if !ok {
			return errFastGiveUp
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errFastGiveUp
		}
	}
}

// array walks an array's items: item reads one.
func (s *scanner) array(item func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := item(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errFastGiveUp
		}
	}
}

// plainString reads a string without escapes, control characters or
// bytes that are not UTF-8 (which encoding/json would change), at s.i
// after white space; ok is false, s.i unchanged, for any other value.
func (s *scanner) plainString() (b []byte, ok bool) {
	s.ws()
	d := s.data
	if s.i >= len(d) || d[s.i] != '"' {
		return nil, false
	}
	ascii := true
	for j := s.i + 1; j < len(d); j++ {
		c := d[j]
		switch {
		case c == '"':
			b = d[s.i+1 : j]
			if !ascii && !utf8.Valid(b) {
				return nil, false
			}
			s.i = j + 1
			return b, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// stringValue reads a string at s.i after white space: a plain one as
// plainString does (interned when in is not nil), one with the escapes
// encoding/json writes for text (\n \t \r \b \f \" \\ \/) unescaped as it
// would. A \u escape, a control character or a byte that is not UTF-8 is
// ok false, s.i unchanged: encoding/json reads those.
func (s *scanner) stringValue(in interner) (string, bool) {
	if b, ok := s.plainString(); ok {
		if in != nil {
			return in.of(b), true
		}
		return string(b), true
	}
	d := s.data
	if s.i >= len(d) || d[s.i] != '"' {
		return "", false
	}
	var out strings.Builder
	ascii := true
	from := s.i + 1 // the plain bytes not yet copied
	for j := s.i + 1; j < len(d); j++ {
		c := d[j]
		switch {
		case c == '"':
			out.Write(d[from:j])
			str := out.String()
			if !ascii && !utf8.ValidString(str) {
				return "", false
			}
			s.i = j + 1
			return str, true
		case c == '\\':
			if j+1 >= len(d) {
				return "", false
			}
			if out.Len() == 0 {
				out.Grow(j - s.i + 64)
			}
			out.Write(d[from:j])
			j++
			switch d[j] {
			case '"', '\\', '/':
				out.WriteByte(d[j])
			case 'n':
				out.WriteByte('\n')
			case 't':
				out.WriteByte('\t')
			case 'r':
				out.WriteByte('\r')
			case 'b':
				out.WriteByte('\b')
			case 'f':
				out.WriteByte('\f')
			default:
				return "", false
			}
			from = j + 1
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// skip passes over one value, returning its bytes. It only finds where
// the value ends: encoding/json reads (and so checks) what it returns.
func (s *scanner) skip() ([]byte, error) {
	s.ws()
	d, start, depth := s.data, s.i, 0
	for s.i < len(d) {
		c := d[s.i]
		switch {
		case c == '"':
			s.i++
			for s.i < len(d) && d[s.i] != '"' {
				if d[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			if s.i >= len(d) {
				return nil, errFastGiveUp
			}
			s.i++
		case c == '{' || c == '[':
			depth++
			s.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return nil, errFastGiveUp
			}
			depth--
			s.i++
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return nil, errFastGiveUp
		default:
			s.i++
			// A literal (number, true, false, null) ends where a
			// delimiter starts.
			if depth == 0 && (s.i == len(d) || bytes.IndexByte([]byte(",}] \t\n\r"), d[s.i]) >= 0) {
				return d[start:s.i], nil
			}
			continue
		}
		if depth == 0 {
			return d[start:s.i], nil
		}
	}
	return nil, errFastGiveUp
}

// member decodes the member key of the value at s.i into into as the
// object {key: value}, as streamObject does.
func (s *scanner) member(key []byte, into any) error {
	raw, err := s.skip()
	if err != nil {
		return err
	}
	one := make([]byte, 0, len(key)+len(raw)+5)
	one = append(append(append(append(append(one, '{', '"'), key...), '"', ':'), raw...), '}')
	return decodeNumbers(one, into)
}

// decodeNumbers is one value decoded by encoding/json as the session's
// decoder does it (numbers kept as json.Number), and nothing after it.
func decodeNumbers(raw []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(into); err != nil {
		return err
	}
	if d.More() {
		return errFastGiveUp
	}
	return nil
}

// literal reports whether the bytes at s.i are word, a whole literal.
func (s *scanner) literal(word string) bool {
	d := s.data
	if !bytes.HasPrefix(d[s.i:], []byte(word)) {
		return false
	}
	if j := s.i + len(word); j < len(d) {
		switch d[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	s.i += len(word)
	return true
}

// str reads a string field: a plain string or null (which leaves it, as
// encoding/json does), else encoding/json decodes it.
func (s *scanner) str(p *string, in interner) error {
	if v, ok := s.stringValue(in); ok {
		*p = v
		return nil
	}
	if s.literal("null") {
		return nil
	}
	return s.generic(p)
}

// integer reads an int field: a plain integer or null, else encoding/json
// decodes it (and refuses what it refuses).
func (s *scanner) integer(p *int) error {
	d, j := s.data, s.i
	if s.literal("null") {
		return nil
	}
	if j < len(d) && d[j] == '-' {
		j++
	}
	digits := j
	for j < len(d) && d[j] >= '0' && d[j] <= '9' {
		j++
	}
	if j == digits || j-digits > 18 || (d[digits] == '0' && j-digits > 1) {
		return s.generic(p)
	}
	if j < len(d) {
		switch d[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
		default:
			return s.generic(p)
		}
	}
	n, err := strconv.ParseInt(string(d[s.i:j]), 10, 64)
	if err != nil {
		return s.generic(p)
	}
	*p, s.i = int(n), j
	return nil
}

// when reads a time: a plain string goes to time.Time's own UnmarshalJSON,
// as encoding/json would hand it over.
func (s *scanner) when(p *time.Time) error {
	start := s.i
	if _, ok := s.plainString(); ok {
		return p.UnmarshalJSON(s.data[start:s.i])
	}
	return s.generic(p)
}

// pendingTime is a *time.Time's value as read, before it has a place.
type pendingTime struct {
	at  time.Time
	set bool
}

// whenValue reads a *time.Time: a plain string into pt, given its place
// later (place); null is nil; anything else goes to encoding/json.
func (s *scanner) whenValue(p **time.Time, pt *pendingTime) error {
	if s.literal("null") {
		*p = nil
		return nil
	}
	start := s.i
	if _, ok := s.plainString(); ok {
		pt.set = true
		return pt.at.UnmarshalJSON(s.data[start:s.i])
	}
	return s.generic(p)
}

// place is where pt's time is kept: same when that is the same time (its
// instant and location, so it encodes the same; nothing writes through a
// record's times, and apply shares them alike), else a time of its own.
func (pt *pendingTime) place(same *time.Time) *time.Time {
	if same != nil && *same == pt.at {
		return same
	}
	at := pt.at
	return &at
}

// generic decodes the value at s.i with encoding/json.
func (s *scanner) generic(into any) error {
	s.fields++
	raw, err := s.skip()
	if err != nil {
		return err
	}
	return decodeNumbers(raw, into)
}

// field bits: a key seen twice is left to encoding/json (which merges).
const (
	fID = 1 << iota
	fName
	fAgent
	fDescription
	fExpected
	fKey
	fAgentKey
	fOwnKey
	fContext
	fStatus
	fResult
	fRetry
	fAttempts
	fVariables
	fError
	fStarted
	fFinished
	fUsage
	fHistory
	fPrevious
	fPreviousKey
	fHost
	fPGID
)

// task reads one task record; one it cannot read field by field is decoded
// whole by encoding/json, as streamSession decodes it.
func (s *scanner) task(t *taskRecordWire, in interner) error {
	start := s.i
	if err := s.taskFields(t, in); err == nil {
		return nil
	}
	*t = taskRecordWire{}
	s.i = start
	s.whole++
	return s.generic(t)
}

func (s *scanner) taskFields(t *taskRecordWire, in interner) error {
	var seen uint32
	once := func(bit uint32) error {
		if seen&bit != 0 {
			return errFastGiveUp
		}
		seen |= bit
		return nil
	}
	// The times are placed once the history is read: a task's started_at
	// and finished_at are its last attempt's start and end (24 bytes each
	// a task where a fully restored rerun collects nothing).
	var started, finished pendingTime
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "id":
			if err = once(fID); err == nil {
				err = s.integer(&t.ID)
			}
		case "name":
			if err = once(fName); err == nil {
				err = s.str(&t.Name, nil)
			}
		case "agent":
			if err = once(fAgent); err == nil {
				err = s.str(&t.Agent, in)
			}
		case "description":
			if err = once(fDescription); err == nil {
				err = s.str(&t.Description, nil)
			}
		case "expected_output":
			if err = once(fExpected); err == nil {
				err = s.str(&t.ExpectedOutput, in)
			}
		case "key":
			if err = once(fKey); err == nil {
				err = s.str(&t.Key, nil)
			}
		case "agent_key":
			if err = once(fAgentKey); err == nil {
				err = s.str(&t.AgentKey, in)
			}
		case "own_key":
			if err = once(fOwnKey); err == nil {
				err = s.str(&t.OwnKey, nil)
			}
		case "context":
			if err = once(fContext); err == nil {
				err = s.strings(&t.Context, in)
			}
		case "status":
			if err = once(fStatus); err == nil {
				err = s.str((*string)(&t.Status), in)
			}
		case "result":
			if err = once(fResult); err == nil {
				err = s.text(&t.Result)
			}
		case "retry_count":
			if err = once(fRetry); err == nil {
				err = s.integer(&t.RetryCount)
			}
		case "attempts":
			if err = once(fAttempts); err == nil {
				err = s.integer(&t.Attempts)
			}
		case "variables":
			if err = once(fVariables); err == nil {
				err = s.variables(&t.Variables)
			}
		case "error":
			if err = once(fError); err == nil {
				err = s.textOnly(&t.Error)
			}
		case "started_at":
			if err = once(fStarted); err == nil {
				err = s.whenValue(&t.StartedAt, &started)
			}
		case "finished_at":
			if err = once(fFinished); err == nil {
				err = s.whenValue(&t.FinishedAt, &finished)
			}
		case "usage":
			if err = once(fUsage); err == nil {
				err = s.generic(&t.Usage)
			}
		case "history":
			if err = once(fHistory); err == nil {
				err = s.history(&t.History, in)
			}
		case "previous_result":
			if err = once(fPrevious); err == nil {
				err = s.generic(&t.Previous)
			}
		case "previous_key":
			if err = once(fPreviousKey); err == nil {
				err = s.str(&t.PreviousKey, nil)
			}
		case "host":
			if err = once(fHost); err == nil {
				err = s.str(&t.Host, in)
			}
		case "pgid":
			if err = once(fPGID); err == nil {
				err = s.integer(&t.PGID)
			}
		default:
			err = errFastGiveUp // unknown, or another spelling of a known key
		}
		return err
	})
	if err != nil {
		return err
	}
	var start, end *time.Time
	if n := len(t.History); n > 0 {
		start, end = &t.History[n-1].Start, t.History[n-1].End
	}
	if started.set {
		t.StartedAt = started.place(start)
	}
	if finished.set {
		t.FinishedAt = finished.place(end)
	}
	return nil
}

// strings reads a list of strings: null is nil, [] an empty list.
func (s *scanner) strings(p *[]string, in interner) error {
	if s.literal("null") {
		*p = nil
		return nil
	}
	if s.peek() != '[' {
		return s.generic(p)
	}
	start := s.i
	l := []string{}
	err := s.array(func() error {
		b, ok := s.plainString()
		switch {
		case ok && string(b) == s.lastName:
			l = append(l, s.lastName)
		case ok:
			l = append(l, string(b))
		default:
			v, ok := s.stringValue(nil)
			if !ok {
				return errFastGiveUp
			}
			l = append(l, v)
		}
		return nil
	})
	if err != nil {
		s.i = start
		return s.generic(p)
	}
	*p = l
	return nil
}

// text reads a result: a plain string, else result's own decoding (a
// blob reference, a base64 text, escapes).
func (s *scanner) text(p *result) error {
	if v, ok := s.stringValue(nil); ok {
		p.text = text(v)
		return nil
	}
	return s.generic(p)
}

// textOnly reads an error text.
func (s *scanner) textOnly(p *text) error {
	if v, ok := s.stringValue(nil); ok {
		*p = text(v)
		return nil
	}
	return s.generic(p)
}

// variables reads a task's variables: {} (the common case) or null here,
// anything else by encoding/json.
func (s *scanner) variables(p *map[string]any) error {
	if s.literal("null") {
		*p = nil
		return nil
	}
	if s.peek() == '{' {
		j := s.i + 1
		for j < len(s.data) && (s.data[j] == ' ' || s.data[j] == '\n' || s.data[j] == '\t' || s.data[j] == '\r') {
			j++
		}
		if j < len(s.data) && s.data[j] == '}' {
			s.i = j + 1
			if *p == nil {
				if s.noVariables == nil {
					s.noVariables = map[string]any{}
				}
				*p = s.noVariables
			}
			return nil
		}
	}
	return s.generic(p)
}

// history reads a task's attempts; a list it cannot read attempt by
// attempt is decoded whole by encoding/json. An attempt's end is placed
// once the list is read: most tasks ran once, and a list of one attempt
// is kept with its end in one attemptBlock.
func (s *scanner) history(p *[]Attempt, in interner) error {
	if s.literal("null") {
		*p = nil
		return nil
	}
	start := s.i
	l := []Attempt{}
	n := 0
	err := s.array(func() error {
		if n > 0 {
			l = append(l, s.cur.ending(s.curEnd))
		}
		n++
		s.cur, s.curEnd = Attempt{}, pendingTime{}
		return s.attempt(&s.cur, &s.curEnd, in)
	})
	if err != nil {
		s.i = start
		*p = nil
		return s.generic(p)
	}
	switch n {
	case 0:
		*p = l
	case 1:
		b := &attemptBlock{a: [1]Attempt{s.cur}}
		if s.curEnd.set {
			b.end = s.curEnd.at
			b.a[0].End = &b.end
		}
		*p = b.a[:]
	default:
		*p = append(l, s.cur.ending(s.curEnd))
	}
	return nil
}

// attemptBlock is a history of one attempt and its end, in one allocation
// of 112 bytes where the attempt and its end took 96 and 24 (and the
// task's started_at and finished_at, now these, 24 each).
type attemptBlock struct {
	a   [1]Attempt
	end time.Time
}

// ending is a with end, read as a value, given a place of its own.
func (a Attempt) ending(end pendingTime) Attempt {
	if end.set {
		at := end.at
		a.End = &at
	}
	return a
}

// digest reads an attempt's result digest. The empty result's is
// emptyDigest, and one the same as the last digest read shares its
// string; any other has a string of its own. The interner kept a map of
// them: a session's results mostly differ, and at 10,000 tasks their
// digests' map allocated 1.3 MB beyond their strings' 0.8.
func (s *scanner) digest(p *string) error {
	b, ok := s.plainString()
	if !ok {
		return s.str(p, nil)
	}
	switch {
	case string(b) == emptyDigest:
		*p = emptyDigest
	case string(b) == s.lastDigest:
		*p = s.lastDigest
	default:
		*p = string(b)
		s.lastDigest = *p
	}
	return nil
}

func (s *scanner) attempt(a *Attempt, end *pendingTime, in interner) error {
	var seen uint32
	return s.object(func(key []byte) error {
		bit := uint32(0)
		var err error
		switch string(key) {
		case "n":
			bit, err = 1, s.integer(&a.N)
		case "start":
			bit, err = 2, s.when(&a.Start)
		case "end":
			bit, err = 4, s.whenValue(&a.End, end)
		case "outcome":
			bit, err = 8, s.str((*string)(&a.Outcome), in)
		case "result_digest":
			bit, err = 16, s.digest(&a.Digest)
		case "error":
			bit, err = 32, s.str(&a.Error, nil)
		default:
			return errFastGiveUp
		}
		if seen&bit != 0 {
			return errFastGiveUp
		}
		seen |= bit
		return err
	})
}
