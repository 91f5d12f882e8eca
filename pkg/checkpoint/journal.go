package checkpoint

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"sync"
	"time"
)

// RecordKind is the kind of a journal record.
type RecordKind string

const (
	TaskStarted      RecordKind = "started"           // Task, Attempt (0: one more than before)
	TaskCompleted    RecordKind = "completed"         // Task, Result, Variables, Usage
	TaskFailed       RecordKind = "failed"            // Task, Error, RetryCount
	TaskSkipped      RecordKind = "skipped"           // Task
	StateChanged     RecordKind = "state"             // State (keys set)
	CurrentTask      RecordKind = "current"           // Task
	DecisionRecorded RecordKind = "decision"          // Task, Value
	DecisionConsumed RecordKind = "decision_consumed" // Task
	MemoryAppended   RecordKind = "memory"            // Agent, Messages
)

// Record is one transition. State and Agent+Messages may accompany any
// kind: they are applied in the same durable step, so a completion, its
// output_variable and the agent's new turns land together.
type Record struct {
	Kind       RecordKind
	Task       string
	Attempt    int
	Result     string
	Variables  map[string]any
	Usage      *Usage
	Error      string
	RetryCount int
	State      map[string]any
	Value      string
	Agent      string
	Messages   []Message
	At         time.Time // zero: now
}

type recordWire struct {
	Kind       RecordKind     `json:"k"`
	Task       string         `json:"task,omitempty"`
	Attempt    int            `json:"attempt,omitempty"`
	Result     *text          `json:"result,omitempty"`
	Variables  map[string]any `json:"variables"` // {} and absent differ
	Usage      *Usage         `json:"usage,omitempty"`
	Error      *text          `json:"error,omitempty"`
	RetryCount int            `json:"retry_count,omitempty"`
	State      map[string]any `json:"state,omitempty"`
	Value      *text          `json:"value,omitempty"`
	Agent      string         `json:"agent,omitempty"`
	Messages   []Message      `json:"messages,omitempty"`
	At         time.Time      `json:"at"`
}

func optText(s string) *text {
	if s == "" {
		return nil
	}
	t := text(s)
	return &t
}

func (t *text) str() string {
	if t == nil {
		return ""
	}
	return string(*t)
}

func (r Record) wire() recordWire {
	return recordWire{Kind: r.Kind, Task: r.Task, Attempt: r.Attempt, Result: optText(r.Result),
		Variables: wireMap(r.Variables), Usage: r.Usage, Error: optText(r.Error), RetryCount: r.RetryCount,
		State: wireMap(r.State), Value: optText(r.Value), Agent: r.Agent, Messages: r.Messages, At: r.At}
}

func (w recordWire) record() Record {
	r := Record{Kind: w.Kind, Task: w.Task, Attempt: w.Attempt, Result: w.Result.str(),
		Variables: w.Variables, Usage: w.Usage, Error: w.Error.str(), RetryCount: w.RetryCount,
		State: w.State, Value: w.Value.str(), Agent: w.Agent, Messages: w.Messages, At: w.At}
	if r.Variables != nil {
		plainMap(r.Variables)
	}
	if r.State != nil {
		plainMap(r.State)
	}
	return r
}

func (r *Record) validate() error {
	switch r.Kind {
	case TaskStarted, TaskCompleted, TaskFailed, TaskSkipped, CurrentTask, DecisionRecorded, DecisionConsumed:
		if r.Task == "" {
			return fmt.Errorf("%s record without a task", r.Kind)
		}
	case StateChanged:
	case MemoryAppended:
		if r.Agent == "" {
			return errors.New("memory record without an agent")
		}
	default:
		return fmt.Errorf("unknown record kind %q", r.Kind)
	}
	if len(r.Messages) > 0 && r.Agent == "" {
		return fmt.Errorf("%s record with messages but no agent", r.Kind)
	}
	if r.Attempt < 0 || r.RetryCount < 0 {
		return fmt.Errorf("%s record of task %q: negative count", r.Kind, r.Task)
	}
	return nil
}

// apply folds one validated record into s; O(size of the record).
func (s *Session) apply(r Record) {
	at := r.At.UTC()
	s.UpdatedAt, s.Checkpoint.Timestamp = at, at
	if len(r.State) > 0 {
		if s.Team.State == nil {
			s.Team.State = map[string]any{}
		}
		for k, v := range r.State {
			s.Team.State[k] = v
		}
	}
	var t *TaskRecord
	switch r.Kind {
	case TaskStarted, TaskCompleted, TaskFailed, TaskSkipped:
		var ok bool
		if t, ok = s.Task(r.Task); !ok {
			// A transition of a task the snapshot did not list: keep it
			// rather than lose an acknowledged record.
			s.Team.Tasks = append(s.Team.Tasks, TaskRecord{ID: len(s.Team.Tasks), Name: r.Task, Status: StatusPending})
			s.index[r.Task] = len(s.Team.Tasks) - 1
			s.indexed = len(s.Team.Tasks)
			t = &s.Team.Tasks[len(s.Team.Tasks)-1]
		}
	}
	switch r.Kind {
	case TaskStarted:
		if r.Attempt > 0 {
			t.Attempts = r.Attempt
		} else {
			t.Attempts++
		}
		t.Status, t.Error, t.StartedAt, t.FinishedAt = StatusRunning, "", &at, nil
		s.Checkpoint.CurrentTask = r.Task
	case TaskCompleted:
		t.Status, t.Result, t.Variables, t.Usage, t.Error, t.FinishedAt = StatusCompleted, r.Result, r.Variables, r.Usage, "", &at
		if r.RetryCount > 0 {
			t.RetryCount = r.RetryCount
		}
	case TaskFailed:
		t.Status, t.Error, t.RetryCount, t.FinishedAt = StatusFailed, r.Error, r.RetryCount, &at
		if r.Usage != nil {
			t.Usage = r.Usage
		}
	case TaskSkipped:
		t.Status, t.FinishedAt = StatusSkipped, &at
	case CurrentTask:
		s.Checkpoint.CurrentTask = r.Task
	case DecisionRecorded:
		if s.Checkpoint.Decisions == nil {
			s.Checkpoint.Decisions = map[string]string{}
		}
		s.Checkpoint.Decisions[r.Task] = r.Value
	case DecisionConsumed:
		delete(s.Checkpoint.Decisions, r.Task)
	}
	// Messages may ride on any record (a completion and the turns that
	// produced it land together); append-only, so O(size of the record).
	if r.Agent != "" && len(r.Messages) > 0 {
		if s.Memory == nil {
			s.Memory = map[string][]Message{}
		}
		s.Memory[r.Agent] = append(s.Memory[r.Agent], r.Messages...)
		if s.Checkpoint.MemorySummary == nil {
			s.Checkpoint.MemorySummary = map[string]int{}
		}
		s.Checkpoint.MemorySummary[r.Agent] = len(s.Memory[r.Agent])
	}
}

// ---- the journal file ----
//
// One record per line: 8 hex digits of the CRC-32C of the JSON, a space, the
// JSON, a newline. The first line is a header naming the epoch of the
// snapshot it belongs to. A line that is incomplete or fails its checksum is
// a torn write when no valid line follows it, and is ignored; anywhere else
// it is corruption.

const journalMagic = "teamrun-journal"

// errForeignJournal: the journal beside a snapshot belongs to neither it nor
// the journal it absorbed. Folding or ignoring it could restart acknowledged
// work, so it is damage to look at, never a silent restart.
var errForeignJournal = errors.New("it does not belong to the session's snapshot")

type journalHeader struct {
	Magic   string `json:"journal"`
	Version int    `json:"format_version"`
	Epoch   string `json:"epoch"`
}

func frame(payload []byte) []byte {
	line := make([]byte, 0, len(payload)+10)
	line = fmt.Appendf(line, "%08x ", Checksum(payload))
	line = append(line, payload...)
	return append(line, '\n')
}

func headerLine(epoch string) []byte {
	b, _ := json.Marshal(journalHeader{Magic: journalMagic, Version: FormatVersion, Epoch: epoch})
	return frame(b)
}

// unframe returns a line's payload, or ok=false when the line is damaged.
func unframe(line []byte) ([]byte, bool) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return nil, false
	}
	payload := line[9:]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	return payload, Checksum(payload) == want
}

// journalLines splits data into valid payloads. Only the last line may be
// incomplete, and only by a write cut short (it has no newline yet): such a
// tail is a torn write and ignored, unless it is a whole record that lost
// only its newline, which is kept (its bytes are on disk). A complete line
// that fails its checksum is damage wherever it is: a crash cannot make one.
// valid is the length of the prefix the payloads came from.
func journalLines(data []byte) (payloads [][]byte, valid int, err error) {
	off := 0
	for off < len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			tail := data[off:]
			if payload, ok := unframe(tail); ok {
				payloads = append(payloads, payload)
				off = len(data)
			} else if _, ok := unframe(tail[:len(tail)-1]); ok && len(tail) > 1 {
				return nil, 0, fmt.Errorf("damaged record at byte %d (a whole record whose newline was changed)", off)
			}
			break
		}
		payload, ok := unframe(data[off : off+nl])
		if !ok {
			return nil, 0, fmt.Errorf("damaged record at byte %d (it fails its checksum)", off)
		}
		payloads = append(payloads, payload)
		off += nl + 1
	}
	return payloads, off, nil
}

// foldJournal applies the journal's records to sess when the journal
// belongs to sess's snapshot; a stale journal (another epoch, or no
// complete header) was already folded in and is ignored.
func foldJournal(sess *Session, data []byte) (int, error) {
	payloads, _, err := journalLines(data)
	if err != nil {
		return 0, err
	}
	if len(payloads) == 0 {
		return 0, nil
	}
	var h journalHeader
	if err := json.Unmarshal(payloads[0], &h); err != nil || h.Magic != journalMagic {
		return 0, errors.New("not a teamrun journal: bad header")
	}
	if err := checkVersion(h.Version); err != nil {
		return 0, err
	}
	if h.Epoch == "" || h.Epoch != sess.Epoch {
		if sess.FormatVersion >= 2 && h.Epoch != sess.FoldedEpoch {
			return 0, fmt.Errorf("%w (journal epoch %q; the snapshot is at %q after %q)", errForeignJournal, h.Epoch, sess.Epoch, sess.FoldedEpoch)
		}
		return 0, nil // already folded into the snapshot
	}
	for i, p := range payloads[1:] {
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.UseNumber()
		var w recordWire
		if err := dec.Decode(&w); err != nil {
			return 0, fmt.Errorf("record %d: %w", i+1, problem(p, err, reflect.TypeFor[recordWire](), "not a journal record"))
		}
		r := w.record()
		if err := r.validate(); err != nil {
			return 0, fmt.Errorf("record %d: %w", i+1, err)
		}
		sess.apply(r)
	}
	return len(payloads) - 1, nil
}

// ---- writing ----

// FileJournal appends a session's transitions. It is safe for concurrent use.
type FileJournal struct {
	mu       sync.Mutex
	store    *Store
	lock     *FileLock
	sess     *Session
	f        *os.File
	path     string
	size     int64 // bytes of valid journal on disk
	snapSize int64
	warnings []string
	err      error // set when the journal's state on disk is unknown
	closed   bool
}

// minCompact keeps small sessions from compacting on every few records.
const minCompact = 256 << 10

// Begin makes sess the session's snapshot (atomically) and opens its journal
// for appends. l must hold sess's lock. The journal owns sess from now on:
// read it through Session.
func (s *Store) Begin(l *FileLock, sess *Session) (*FileJournal, error) {
	if sess == nil {
		return nil, errors.New("checkpoint: Begin without a session")
	}
	if err := ValidateID(sess.ID); err != nil {
		return nil, err
	}
	if l == nil || !l.held() || l.id != sess.ID || l.store.dir != s.dir {
		return nil, fmt.Errorf("checkpoint: Begin on session %s without holding its lock", sess.ID)
	}
	// A session that was not loaded from the store (no epoch) must not
	// replace a file that is there: it may be another run's, or corrupt.
	if sess.Epoch == "" {
		if _, err := os.Lstat(s.Path(sess.ID)); err == nil {
			return nil, fmt.Errorf("%w: session %s is already in %s; nothing was overwritten (load it and continue it instead)", ErrExists, sess.ID, s.dir)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, storeErr("read", s.Path(sess.ID), err)
		}
	}
	// Temp files of snapshots a killed run never renamed: garbage, and ours
	// to remove since we hold the lock.
	for _, p := range s.tempFiles(sess.ID) {
		_ = os.Remove(p)
	}
	j := &FileJournal{store: s, lock: l, sess: sess, path: s.journalPath(sess.ID)}
	j.warnings = append(j.warnings, sess.sanitize()...)
	sess.normalize()
	size, _, err := s.writeSnapshot(sess)
	if err != nil {
		return nil, err
	}
	j.snapSize = size
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, storeErr("create", j.path, err)
	}
	j.f = f
	if err := j.restart(); err != nil {
		f.Close()
		return nil, err
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// restart empties the journal and writes the header of the current epoch.
func (j *FileJournal) restart() error {
	if err := j.f.Truncate(0); err != nil {
		return storeErr("write", j.path, err)
	}
	h := headerLine(j.sess.Epoch)
	if _, err := j.f.Write(h); err != nil {
		return storeErr("write", j.path, err)
	}
	if err := fdatasync(j.f); err != nil {
		return storeErr("sync", j.path, err)
	}
	j.size = int64(len(h))
	return nil
}

// Record appends one transition and returns once it is on disk
// (fdatasync). Its cost does not depend on the records before it, except
// for an occasional compaction when the journal outgrows the snapshot.
func (j *FileJournal) Record(r Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return fmt.Errorf("checkpoint: session %s: Record after Close", j.sess.ID)
	}
	if j.err != nil {
		return j.err
	}
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	if err := r.validate(); err != nil {
		return fmt.Errorf("checkpoint: session %s: %w", j.sess.ID, err)
	}
	if r.Variables != nil {
		r.Variables = copyMap(r.Variables) // the caller may reuse its map
	}
	var w []string
	r.Variables, w = safeVariables(r.Task, r.Variables)
	j.warnings = append(j.warnings, w...)
	r.State, w = safeState(r.State)
	j.warnings = append(j.warnings, w...)
	payload, err := marshalNoEscape(r.wire())
	if err != nil {
		return fmt.Errorf("checkpoint: session %s: cannot encode a %s record: %w", j.sess.ID, r.Kind, err)
	}
	line := frame(payload)
	if _, err := j.f.Write(line); err != nil {
		// Cut a partial line so the next record does not follow garbage.
		if terr := j.f.Truncate(j.size); terr != nil {
			j.err = storeErr("write", j.path, err)
		}
		return storeErr("write", j.path, err)
	}
	if err := fdatasync(j.f); err != nil {
		// After a failed sync nothing is known about the file: stop here.
		j.err = storeErr("sync", j.path, err)
		return j.err
	}
	j.size += int64(len(line))
	j.sess.apply(r)
	if j.size > j.snapSize && j.size > j.store.compactMin {
		if err := j.compact(); err != nil {
			if j.err != nil {
				// The record is on disk, but later ones could not be.
				return j.err
			}
			j.warnings = append(j.warnings, fmt.Sprintf("compaction of session %s postponed: %v", j.sess.ID, err))
			j.snapSize = j.size * 2 // retry later, not on every record
		}
	}
	return nil
}

// compact folds the journal into the snapshot and restarts the journal.
func (j *FileJournal) compact() error {
	size, renamed, err := j.store.writeSnapshot(j.sess)
	if err != nil {
		if renamed {
			j.err = err
		}
		return err
	}
	j.snapSize = size
	if err := j.restart(); err != nil {
		// The snapshot moved to a new epoch but the journal did not follow:
		// appending now would write records no reader applies.
		j.err = err
		return err
	}
	return nil
}

// Session is a copy of the folded view: the snapshot plus every
// acknowledged record. It costs O(tasks); use Task for one task.
func (j *FileJournal) Session() *Session {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sess.clone()
}

// Task is the current record of one task.
func (j *FileJournal) Task(name string) (TaskRecord, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	t, ok := j.sess.Task(name)
	if !ok {
		return TaskRecord{}, false
	}
	return *t, true
}

// Warnings returns, and forgets, what degraded since the last call: fields
// stored as {} because JSON cannot hold them, a postponed compaction.
func (j *FileJournal) Warnings() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	w := j.warnings
	j.warnings = nil
	return w
}

// Close compacts: the folded session becomes the snapshot (temp file, fsync,
// rename, fsync of the folder) and the journal is removed. The lock stays
// held; release it separately.
func (j *FileJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	defer j.f.Close()
	// The in-memory view holds exactly the acknowledged records, so it is
	// safe to write even after a failed append.
	if _, _, err := j.store.writeSnapshot(j.sess); err != nil {
		return err
	}
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storeErr("remove", j.path, err)
	}
	return syncDir(j.store.dir)
}
