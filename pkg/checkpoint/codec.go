package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// The codec every backend shares: a session snapshot and a transition are
// stored as the same bytes whatever holds them, so a session moves between
// stores unchanged and one set of decoding rules (and error messages)
// applies to all.

// crcTable is made on first use: its tables cost start-up (package init)
// in every command, --version included.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Checksum is the CRC-32C backends frame their records with.
func Checksum(p []byte) uint32 { return crc32.Checksum(p, crcTable()) }

// A snapshot ends with its checksum, the last member of its JSON object:
// ,"checksum":"crc32c-XXXXXXXX"}\n over every byte before it. It is a
// fixed-size trailer, so a reader checks it without parsing, and the file
// stays one JSON object that jq reads.
const (
	checksumOpen   = `,"checksum":"crc32c-`
	checksumClose  = "\"}\n"
	checksumLength = len(checksumOpen) + 8 + len(checksumClose)
)

// EncodeSession is sess as every backend stores it: JSON without HTML
// escaping (results read as written), in the current format, its summary
// recomputed, checksummed.
func EncodeSession(sess *Session) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := WriteSession(&buf, sess); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteSession writes to w the bytes EncodeSession returns, a task record
// at a time: a 10,000-task snapshot is never whole in memory (encoding it
// at once held its 6 MB three times over, as the encoder's buffer, the
// team's nested one and the copy with the checksum). It returns the number
// of bytes written. w is written in pieces; give it a buffer of its own
// when it is a file.
func WriteSession(w io.Writer, sess *Session) (int64, error) {
	sess.FormatVersion = formatOf(sess)
	sess.Summary = sess.counts()
	// Everything but the tasks is encoded at once, the tasks' place held
	// by a marker no other value can contain (an unguessable fingerprint
	// right after an empty task list); then the tasks are written into it.
	head := *sess
	if sess.Redact != nil {
		head.redactHead(sess.Redact)
	}
	nonce := RandHex(16)
	head.Team.Tasks, head.Team.TasksFingerprint = []TaskRecord{}, nonce
	data, err := marshalNoEscape(&head)
	if err != nil {
		return 0, fmt.Errorf("session %s cannot be encoded: %w", sess.ID, err)
	}
	mark := []byte(`"tasks":[],"tasks_fingerprint":"` + nonce + `"`)
	i := bytes.Index(data, mark)
	if i < 0 || len(data) < i+len(mark)+1 {
		return 0, fmt.Errorf("session %s cannot be encoded: its task list has no place", sess.ID)
	}
	fp, err := marshalNoEscape(sess.Team.TasksFingerprint)
	if err != nil {
		return 0, fmt.Errorf("session %s cannot be encoded: %w", sess.ID, err)
	}
	cw := &checksumWriter{w: w}
	cw.write(data[:i+len(`"tasks":`)])
	if sess.Team.Tasks == nil {
		cw.write([]byte("null"))
	} else {
		// One encoder, its buffer and the task's wire form serve every
		// task: a 10,000-task snapshot allocated 9 MB a task at a time.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		var wire taskRecordWire
		cw.write([]byte("["))
		for k := range sess.Team.Tasks {
			buf.Reset()
			if k > 0 {
				buf.WriteByte(',')
			}
			wire = sess.Team.Tasks[k].encodable()
			if sess.Redact != nil {
				wire.redact(sess.Redact)
			}
			if err := enc.Encode(&wire); err != nil {
				return cw.n, fmt.Errorf("session %s cannot be encoded: task %s: %w", sess.ID, sess.Team.Tasks[k].Name, err)
			}
			cw.write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		}
		cw.write([]byte("]"))
	}
	cw.write([]byte(`,"tasks_fingerprint":`))
	cw.write(fp)
	cw.write(data[i+len(mark) : len(data)-1]) // up to the object's closing brace
	sum := cw.sum
	cw.write(fmt.Appendf([]byte(checksumOpen), "%08x"+checksumClose, sum))
	return cw.n, cw.err
}

// checksumWriter counts and checksums what it passes to w, keeping w's
// first error.
type checksumWriter struct {
	w   io.Writer
	sum uint32
	n   int64
	err error
}

func (c *checksumWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	c.sum = crc32.Update(c.sum, crcTable(), p)
	var n int
	n, c.err = c.w.Write(p)
	c.n += int64(n)
}

// DecodeSession reads what EncodeSession wrote (or an older format). id and
// where (a file, a table row) name the session in errors, which are a
// *CorruptError or a *NewerError. It folds no transitions: a backend applies
// them (Apply) and then calls Summarize.
func DecodeSession(id, where string, data []byte) (*Session, error) {
	return DecodeSessionDropping(id, where, data, nil)
}

// DecodeSessionDropping is DecodeSession that tells drop (nil: nobody),
// as it goes, that data before upto will not be read again, so that its
// holder can let that part go (a snapshot read outside the heap, whose
// pages would otherwise stay in the RSS beside what is decoded from them).
// Once it told drop, a file the fast decoder cannot read is an error (its
// holder reads it again), not left to the other decoders.
func DecodeSessionDropping(id, where string, data []byte, drop func(upto int)) (*Session, error) {
	sess, err := decodeSession(data, drop)
	if err != nil {
		return nil, Undecodable(id, where, err)
	}
	if sess.ID != id {
		return nil, &CorruptError{ID: id, Path: where, Err: fmt.Errorf("it holds session %q", sess.ID)}
	}
	return sess, nil
}

// VerifyChecksum checks a snapshot's trailer without decoding the rest:
// checked says it has one (format 1 had none; from format 2 on, a missing
// one is damage too).
func VerifyChecksum(data []byte) (checked bool, err error) {
	_, checked, err = verifyChecksum(data)
	return checked, err
}

// verifyChecksum checks a snapshot's trailer. Format 1 had none; from
// format 2 on a missing or wrong one is damage, never a good session.
func verifyChecksum(data []byte) (body []byte, checked bool, err error) {
	n := len(data)
	if n < checksumLength || !bytes.HasPrefix(data[n-checksumLength:], []byte(checksumOpen)) || !bytes.HasSuffix(data, []byte(checksumClose)) {
		// Blank lines after it (an editor's, a `>>`): the checksum is
		// there, but not last, and "missing" would send one looking for
		// a cut.
		t := bytes.TrimRight(data, " \t\r\n")
		if end := len(t) + 1; end < n && end >= checksumLength && bytes.HasSuffix(t, []byte(checksumClose[:len(checksumClose)-1])) &&
			bytes.HasPrefix(data[end-checksumLength:], []byte(checksumOpen)) {
			return nil, true, fmt.Errorf("blank space (%d bytes) follows its checksum, which teamrun writes last: it was changed", n-end)
		}
		return data, false, nil
	}
	body = data[:n-checksumLength]
	hexSum := data[n-checksumLength+len(checksumOpen) : n-len(checksumClose)]
	var want uint32
	if _, err := fmt.Sscanf(string(hexSum), "%08x", &want); err != nil || len(hexSum) != 8 {
		return nil, true, errors.New("its checksum is not readable: it was changed or damaged")
	}
	if got := Checksum(body); got != want {
		return nil, true, fmt.Errorf("its checksum does not match its content (crc32c %08x, recorded %08x): it was changed or damaged", got, want)
	}
	return body, true, nil
}

// sessionWire is a session as decoded in one pass: its tasks decode as
// taskRecordWire straight from the file's decoder (whose UseNumber they
// share), not through TaskRecord.UnmarshalJSON, which would scan each task
// twice more with a decoder of its own.
type sessionWire struct {
	sessionJSON
	Team teamStateWire `json:"team"`
	// records are the tasks as fastSession decodes them, straight into
	// TaskRecords (non-nil when it read a "tasks" list); Team.Tasks then
	// stays empty.
	records []TaskRecord
}

type sessionJSON Session

type teamStateWire struct {
	teamStateJSON
	Tasks []taskRecordWire `json:"tasks"`
}

func decodeSession(data []byte, drop func(upto int)) (*Session, error) {
	_, checked, err := verifyChecksum(data)
	if err != nil {
		return nil, err
	}
	var w sessionWire
	if err := fastSession(data, &w, drop); errors.Is(err, errDropped) {
		return nil, err
	} else if err != nil {
		// What the fast decoder filled in before it gave up is dropped:
		// decoding into it again would merge maps.
		w = sessionWire{}
		// Room for the tasks up front (a task record is the only object with
		// "expected_output"), so that decoding does not grow the slice a dozen
		// times; a wrong guess costs only capacity.
		if n := bytes.Count(data, []byte(`"expected_output":`)); n > 0 {
			w.Team.Tasks = make([]taskRecordWire, 0, n)
		}
		if streamSession(data, &w) != nil {
			// The one-pass decoder words what is wrong (where, which key).
			w = sessionWire{}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(&w); err != nil {
				return nil, decodeError(data, err)
			}
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				return nil, errors.New("not a session file: data after the JSON object")
			}
		}
	}
	if len(w.Team.Tasks) == 0 && cap(w.Team.Tasks) > 0 {
		w.Team.Tasks = nil // no "tasks" key: the guess stayed unused ([] decodes to a new empty slice)
	}
	sess := Session(w.sessionJSON)
	sess.Team = TeamState(w.Team.teamStateJSON)
	sess.Team.Tasks = w.records
	if w.records == nil && w.Team.Tasks != nil {
		sess.Team.Tasks = make([]TaskRecord, len(w.Team.Tasks))
		for i := range w.Team.Tasks {
			sess.Team.Tasks[i] = w.Team.Tasks[i].record()
		}
	}
	if err := CheckVersion(sess.FormatVersion); err != nil {
		return nil, err
	}
	if sess.FormatVersion >= 2 && !checked {
		return nil, errors.New("its checksum is missing: the file was cut or changed")
	}
	if sess.ID == "" {
		return nil, errors.New("no session_id")
	}
	sess.normalize()
	if err := checkTasks(sess.Team.Tasks); err != nil {
		return nil, err
	}
	return &sess, nil
}

// checkTasks refuses task records no teamrun writes: a status it does not
// know (read as interrupted, it was run again) or two records of one name
// (the second was never read). Only an edit makes them, whose checksum
// was made again: the file is not what a run recorded.
func checkTasks(tasks []TaskRecord) error {
	for i := range tasks {
		switch tasks[i].Status {
		case StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusSkipped:
		default:
			return fmt.Errorf("task %q has status %q, which no teamrun writes (it is one of pending, running, completed, failed, skipped): the file was changed", tasks[i].Name, tasks[i].Status)
		}
	}
	if name, ok := repeatedName(tasks); ok {
		return fmt.Errorf("task %q is recorded twice, which no teamrun writes: the file was changed", name)
	}
	return nil
}

// repeatedName is a name two of tasks share. Their names are hashed and
// the hashes sorted, 4 bytes a task, not put in a map: decoding a
// 10,000-task session keeps no index of its names (Session.distinct);
// only names of one hash are compared.
func repeatedName(tasks []TaskRecord) (string, bool) {
	if len(tasks) <= 16 {
		for i := range tasks {
			for j := range i {
				if tasks[i].Name == tasks[j].Name {
					return tasks[i].Name, true
				}
			}
		}
		return "", false
	}
	seed := maphash.MakeSeed()
	return repeatedHashed(tasks, func(name string) uint32 { return uint32(maphash.String(seed, name)) })
}

// repeatedHashed is repeatedName with the names hashed by sum.
func repeatedHashed(tasks []TaskRecord, sum func(string) uint32) (string, bool) {
	sums := make([]uint32, len(tasks))
	for i := range tasks {
		sums[i] = sum(tasks[i].Name)
	}
	slices.Sort(sums)
	for i := 1; i < len(sums); i++ {
		if sums[i] != sums[i-1] || i > 1 && sums[i-1] == sums[i-2] {
			continue // each shared hash once
		}
		var same []string
		for j := range tasks {
			if sum(tasks[j].Name) != sums[i] {
				continue
			}
			if slices.Contains(same, tasks[j].Name) {
				return tasks[j].Name, true
			}
			same = append(same, tasks[j].Name)
		}
	}
	return "", false
}

// streamSession decodes a session file as one Decode of it would, but
// task by task: a decoder holds the whole value it decodes in a buffer of
// its own, grown by doubling, which for the tasks array is most of the
// file (16 MB of copies for a 6 MB session). Every other member is decoded
// on its own, into the same structs, with the same key matching. Any
// error is left to the one-pass decoder, which words it.
func streamSession(data []byte, w *sessionWire) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := streamObject(data, dec, func(key string) error {
		if !strings.EqualFold(key, "team") || !nextIs(data, dec, '{') {
			return nil
		}
		err := streamObject(data, dec, func(key string) error {
			if !strings.EqualFold(key, "tasks") || !nextIs(data, dec, '[') {
				return nil
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			w.Team.Tasks = w.Team.Tasks[:0]
			for dec.More() {
				w.Team.Tasks = append(w.Team.Tasks, taskRecordWire{})
				if err := dec.Decode(&w.Team.Tasks[len(w.Team.Tasks)-1]); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			return errStreamed
		}, &w.Team)
		if err != nil {
			return err
		}
		return errStreamed
	}, w)
	if err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON object")
	}
	return nil
}

// errStreamed: the member was decoded by its callback.
var errStreamed = errors.New("streamed")

// streamObject walks a JSON object's members: member(key) decodes the
// value itself (and says errStreamed) or leaves it (nil), and then it is
// decoded into into as the object {key: value}, as a whole decode would.
func streamObject(data []byte, dec *json.Decoder, member func(key string) error, into any) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch err := member(key); {
		case errors.Is(err, errStreamed):
			continue
		case err != nil:
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		k, _ := json.Marshal(key)
		one := make([]byte, 0, len(k)+len(raw)+3)
		one = append(append(append(append(one, '{'), k...), ':'), raw...)
		d := json.NewDecoder(bytes.NewReader(append(one, '}')))
		d.UseNumber()
		if err := d.Decode(into); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// nextIs reports whether the next value dec reads starts with c.
func nextIs(data []byte, dec *json.Decoder, c byte) bool {
	for i := int(dec.InputOffset()); i < len(data); i++ {
		switch data[i] {
		case ' ', '\t', '\n', '\r', ':':
			continue
		}
		return data[i] == c
	}
	return false
}

// CheckVersion checks a stored format version: a newer one than this teamrun
// reads is an error saying so.
func CheckVersion(v int) error {
	if v <= 0 {
		return errors.New("no format_version: not a teamrun session file")
	}
	if v > FormatVersion {
		return &errNewer{version: v}
	}
	return nil
}

// PrepareRecord is r as a journal stores it: timestamped, validated, its
// maps copied (the caller may reuse them) and made JSON-safe. The warnings
// say what degraded (DESIGN §4: a value JSON cannot hold is stored as {}).
func PrepareRecord(r Record) (Record, []string, error) {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	if err := r.validate(); err != nil {
		return Record{}, nil, err
	}
	if r.Variables != nil {
		r.Variables = copyMap(r.Variables)
	}
	var warns, w []string
	r.Variables, w = safeVariables(r.Task, r.Variables)
	warns = append(warns, w...)
	r.State, w = safeState(r.State)
	warns = append(warns, w...)
	return r, warns, nil
}

// EncodeRecord is a transition's payload as every backend stores it.
func EncodeRecord(r Record) ([]byte, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	p, err := marshalNoEscape(r.wire())
	if err != nil {
		return nil, fmt.Errorf("cannot encode a %s record: %w", r.Kind, err)
	}
	return p, nil
}

// DecodeRecord reads a payload EncodeRecord wrote.
func DecodeRecord(p []byte) (Record, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var w recordWire
	if err := dec.Decode(&w); err != nil {
		return Record{}, DecodeProblem(p, err, reflect.TypeFor[recordWire](), "not a journal record")
	}
	r := w.record()
	if err := r.validate(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Apply folds one decoded transition into s, as every backend's Load does.
func (s *Session) Apply(r Record) { s.apply(r) }

// PrepareSnapshot makes a session JSON-safe and indexed before a backend
// makes it a snapshot; the warnings say what degraded.
func PrepareSnapshot(s *Session) []string {
	w := s.sanitize()
	s.normalize()
	return w
}

// Summarize recomputes the summary a loaded session shows.
func (s *Session) Summarize() { s.Summary = s.counts() }

// Clone is a deep copy of s, its summary up to date.
func (s *Session) Clone() *Session {
	c := s.clone()
	c.Summarize()
	return c
}
