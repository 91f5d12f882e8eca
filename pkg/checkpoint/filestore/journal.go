package filestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/teamrun/teamrun/internal/regfile"
	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/atomicfile"
)

// ---- the journal file ----
//
// One record per line: 8 hex digits of the CRC-32C of the JSON, a space, the
// JSON, a newline. The first line is a header naming the epoch of the
// snapshot it belongs to. Only an unterminated last line can be a torn
// write (see journalLines).
//
// Each line's checksum finds a changed line, not a removed one: the
// header's first_seq numbers the records, each of which carries its number
// as its JSON's first member ("seq"), so that a record missing between two
// others is damage too (checkOrder), not a task silently forgotten and
// paid for again. A journal an older teamrun wrote has no first_seq and
// is read unnumbered; an older teamrun reads a numbered one, ignoring the
// numbers. A missing last line cannot be told from a write a crash cut
// short before its bytes reached the disk, and loads as one: the run went
// no further than that record, which is acknowledged only once synced.

const journalMagic = "teamrun-journal"

// errForeignJournal: the journal beside a snapshot belongs to neither it nor
// the journal it absorbed. Folding or ignoring it could restart acknowledged
// work, so it is damage to look at, never a silent restart.
var errForeignJournal = errors.New("it does not belong to the session's snapshot")

type journalHeader struct {
	Magic   string `json:"journal"`
	Version int    `json:"format_version"`
	Epoch   string `json:"epoch"`
	// First is the number of the journal's first record; 0 (absent): its
	// records are not numbered (an older teamrun's journal).
	First int64 `json:"first_seq,omitempty"`
}

// framing is a line's bytes besides its payload: checksum, space, newline.
const framing = 10

func frame(payload []byte) []byte {
	line := make([]byte, 0, len(payload)+framing)
	line = fmt.Appendf(line, "%08x ", checkpoint.Checksum(payload))
	line = append(line, payload...)
	return append(line, '\n')
}

// seqMember opens a numbered record's JSON: {"seq":N, and then the
// record's own members.
const seqMember = `{"seq":`

// appendNumbered appends to buf the line of record number seq, whose
// encoding is payload (a JSON object, never empty: a record has its "k"):
// its number goes in as the object's first member, under the line's
// checksum.
func appendNumbered(buf []byte, seq int64, payload []byte) []byte {
	start := len(buf)
	buf = append(buf, "00000000 "...)
	body := len(buf)
	buf = append(buf, seqMember...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, ',')
	buf = append(buf, payload[1:]...)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], checkpoint.Checksum(buf[body:]))
	hex.Encode(buf[start:start+8], sum[:])
	return append(buf, '\n')
}

// recordSeq is the number a record's payload carries, and ok=false when it
// carries none.
func recordSeq(payload []byte) (int64, bool) {
	if rest, ok := bytes.CutPrefix(payload, []byte(seqMember)); ok {
		// Digits read here, not by strconv: no copy of them per record.
		n, i := int64(0), 0
		for ; i < len(rest) && i < 18 && '0' <= rest[i] && rest[i] <= '9'; i++ {
			n = n*10 + int64(rest[i]-'0')
		}
		if i > 0 && i < len(rest) && rest[i] == ',' {
			return n, true
		}
	}
	// Not where this teamrun puts it: a record rewritten by some tool.
	var r struct {
		Seq *int64 `json:"seq"`
	}
	if json.Unmarshal(payload, &r) != nil || r.Seq == nil {
		return 0, false
	}
	return *r.Seq, true
}

// headerLine is the header of a journal of epoch whose first record is
// number first (0: its records are not numbered).
func headerLine(epoch string, first int64) []byte {
	// Version 2: the journal's own format, which format 3 did not change,
	// nor did the records' numbers, which older readers ignore.
	b, _ := json.Marshal(journalHeader{Magic: journalMagic, Version: 2, Epoch: epoch, First: first})
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
	return payload, checkpoint.Checksum(payload) == want
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

// journalRecords is the journal in data: its header, and the payloads of
// its header and records (journalLines), checked in order (checkOrder).
// No header at all (an empty journal, or one cut inside its first line) is
// a zero header and no payloads.
func journalRecords(data []byte) (journalHeader, [][]byte, error) {
	var h journalHeader
	payloads, _, err := journalLines(data)
	if err != nil || len(payloads) == 0 {
		return h, nil, err
	}
	if err := json.Unmarshal(payloads[0], &h); err != nil || h.Magic != journalMagic {
		return h, nil, errors.New("not a teamrun journal: bad header")
	}
	if err := checkpoint.CheckVersion(h.Version); err != nil {
		return h, nil, err
	}
	return h, payloads, checkOrder(h.First, payloads)
}

// checkOrder checks that the records after the header (payloads[0]) are
// numbered first, first+1, …: a record missing between two others was
// removed, which its neighbours' checksums cannot tell. first 0: an older
// teamrun's journal, unnumbered.
func checkOrder(first int64, payloads [][]byte) error {
	if first == 0 {
		return nil
	}
	off := len(payloads[0]) + framing
	for k, p := range payloads[1:] {
		want := first + int64(k)
		got, ok := recordSeq(p)
		switch {
		case !ok:
			return fmt.Errorf("record at byte %d has no number, where every record of this journal has one (it was changed)", off)
		case got == want+1:
			return fmt.Errorf("record at byte %d is number %d, where %d was expected: record %d is missing (a line was removed)", off, got, want, want)
		case got > want:
			return fmt.Errorf("record at byte %d is number %d, where %d was expected: records %d to %d are missing (lines were removed)", off, got, want, want, got-1)
		case got != want:
			return fmt.Errorf("record at byte %d is number %d, where %d was expected: a line was repeated or moved", off, got, want)
		}
		off += len(p) + framing
	}
	return nil
}

// errNoHeader: a journal with no header beside a snapshot that says the
// run records on in it. A run puts its journal in place with its header
// (switchTo), so this is damage, never a session with nothing recorded.
var errNoHeader = errors.New("the journal has no header")

// foldJournal applies the journal's records to sess when the journal
// belongs to sess's snapshot; a stale journal (another epoch, or no
// header beside a snapshot that records in no journal) was already folded
// in and is ignored.
func foldJournal(sess *checkpoint.Session, data []byte) (int, error) {
	h, payloads, err := journalRecords(data)
	if err != nil {
		return 0, err
	}
	if len(payloads) == 0 {
		if sess.JournalOpen {
			return 0, errNoHeader
		}
		return 0, nil
	}
	skip, err := foldedPart(sess, h.Epoch, len(payloads)-1)
	if err != nil || skip < 0 {
		return 0, err
	}
	for i, p := range payloads[1+skip:] {
		r, err := checkpoint.DecodeRecord(p)
		if err != nil {
			return 0, fmt.Errorf("record %d: %w", skip+i+1, err)
		}
		sess.Apply(r)
	}
	return len(payloads) - 1 - skip, nil
}

// foldedPart is how many of the n records of a journal of epoch are in
// sess's snapshot already: 0 for the snapshot's own journal, -1 for one it
// absorbed whole, its FoldedRecords for one a compaction absorbed while the
// run went on recording (a crash between the snapshot's rename and the
// journal's leaves it; the rest of its records are still to apply).
func foldedPart(sess *checkpoint.Session, epoch string, n int) (int, error) {
	if epoch != "" && epoch == sess.Epoch {
		return 0, nil
	}
	if sess.FormatVersion >= 2 && epoch != sess.FoldedEpoch {
		// The journal of a run that began after this snapshot, killed
		// before its own snapshot was in place (switchTo puts the journal
		// first only beside a snapshot that records in no journal): it
		// holds nothing.
		if n == 0 && !sess.JournalOpen {
			return -1, nil
		}
		return 0, fmt.Errorf("%w (journal epoch %q; the snapshot is at %q after %q)", errForeignJournal, epoch, sess.Epoch, sess.FoldedEpoch)
	}
	if epoch == "" || sess.FoldedRecords == 0 {
		return -1, nil // already folded into the snapshot
	}
	if n < sess.FoldedRecords {
		return 0, fmt.Errorf("it has %d records where its snapshot absorbed %d: records were lost", n, sess.FoldedRecords)
	}
	return sess.FoldedRecords, nil
}

// ---- writing ----

// FileJournal appends a session's transitions. It is safe for concurrent use.
type FileJournal struct {
	checkpoint.FoldedView
	store    *Store
	lock     *FileLock
	f        *os.File
	path     string
	size     int64 // bytes of valid journal on disk
	records  int   // records in the journal after its header
	first    int64 // the number of its first record (its header's first_seq)
	snapSize int64
	err      error // set when the journal's state on disk is unknown
	closed   bool

	// Group commit: batches that arrive while a sync is in flight share
	// the next write and sync (writeGroup); its slot is the sync slot.
	commit checkpoint.GroupCommit

	// Compaction runs beside the records (compactBehind), and takes the
	// sync slot (commit.Hold) only for the switch to the new journal.
	compacting bool
}

// minCompact keeps small sessions from compacting on every few records.
const minCompact = 256 << 10

// Begin makes sess the session's snapshot (atomically) and opens its journal
// for appends. l must hold sess's lock. The journal owns sess from now on:
// read it through Session.
//
// The snapshot it writes says the run records on in its journal
// (journal_open), so a journal is only ever put in place whole, its header
// synced, by a rename (switchTo): no crash leaves one without a header,
// and a header-less journal beside such a snapshot is damage (Load).
func (s *Store) Begin(_ context.Context, cl checkpoint.Lock, sess *checkpoint.Session) (checkpoint.Journal, error) {
	l, _ := cl.(*FileLock)
	if sess == nil {
		return nil, errors.New("checkpoint: Begin without a session")
	}
	if err := checkpoint.ValidateID(sess.ID); err != nil {
		return nil, err
	}
	if l == nil || !l.held() || l.id != sess.ID || l.store.dir != s.dir {
		return nil, fmt.Errorf("checkpoint: Begin on session %s without holding its lock", sess.ID)
	}
	// A snapshot is written: only under the lock file at the path.
	if err := l.check(); err != nil {
		return nil, err
	}
	// A session that was not loaded from the store (no epoch) must not
	// replace a file that is there: it may be another run's, or corrupt.
	if sess.Epoch == "" {
		if _, err := os.Lstat(s.Path(sess.ID)); err == nil {
			return nil, fmt.Errorf("%w: session %s is already in %s; nothing was overwritten (load it and continue it instead)", checkpoint.ErrExists, sess.ID, s.dir)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, storeErr("read", s.Path(sess.ID), err)
		}
	}
	// Temp files of snapshots a killed run never renamed: garbage, and ours
	// to remove since we hold the lock.
	for _, p := range s.tempFiles(sess.ID) {
		_ = os.Remove(p)
	}
	j := &FileJournal{FoldedView: checkpoint.FoldedView{Sess: sess}, store: s, lock: l, path: s.journalPath(sess.ID)}
	j.commit.Init(&j.FoldedView, j.writeGroup, j.maybeCompact)
	j.Warn(checkpoint.PrepareSnapshot(sess)...)
	keep, existed, err := s.readyJournal(sess)
	if err != nil {
		return nil, err
	}
	f, size, err := s.switchTo(sess, keep, existed)
	if err != nil {
		return nil, err
	}
	j.f, j.snapSize = f, size
	j.size, j.records, j.first = int64(len(headerLine(sess.Epoch, 1))), 0, 1
	s.step("begun")
	// The snapshot is written: a blob it does not name is no task's result.
	// One left behind costs only space: say so and go on.
	if err := s.sweepBlobs(sess.ID, sess.Blobs()); err != nil {
		j.Warn(fmt.Sprintf("results no task names were left in place: %v", err))
	}
	return j, nil
}

// readyJournal readies the journal beside sess's snapshot for the switch
// to a new epoch, and says whether it must stay in place until the new
// snapshot is (keep: it holds records of sess's snapshot, which the new
// one absorbs by name) and whether there was one. A journal that holds
// nothing sess's snapshot needs may go first (switchTo).
func (s *Store) readyJournal(sess *checkpoint.Session) (keep, existed bool, err error) {
	path := s.journalPath(sess.ID)
	// Opened to be written, as the journal is: a pipe, a folder, a link or
	// an immutable file there is refused now, with nothing changed.
	f, _, err := regfile.OpenFile(path, os.O_RDWR|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, storeErr("write", path, err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.ReadAt(head, 0)
	nl := bytes.IndexByte(head[:n], '\n')
	if nl < 0 {
		return false, true, nil // no header: nothing recorded in it
	}
	payload, ok := unframe(head[:nl])
	var h journalHeader
	if !ok || json.Unmarshal(payload, &h) != nil || h.Epoch == "" {
		return false, true, nil
	}
	switch {
	case h.Epoch == sess.Epoch:
		return true, true, nil
	case h.Epoch != sess.FoldedEpoch:
		return false, true, nil // absorbed before, or a begin cut short
	case sess.FoldedRecords > 0:
		return true, true, s.finishSwitch(sess, path)
	}
	// Absorbed whole by sess's snapshot, which may still say the run
	// records on (a run killed between its renames): that snapshot's own
	// journal, still empty, takes its place, so that either snapshot
	// reads it at any instant of the switch.
	_, err = writeAtomic(path, headerLine(sess.Epoch, 1))
	return true, true, err
}

// finishSwitch ends a compaction a crash cut short between the renames:
// the old journal's records after the snapshot's FoldedRecords move into
// a journal of the snapshot's epoch, replacing the old one atomically.
// Emptying it instead would lose them if the next snapshot never lands.
func (s *Store) finishSwitch(sess *checkpoint.Session, path string) error {
	data, _, _, err := readWithInfo(path, sessionFiles, false)
	if err != nil {
		return storeErr("read", path, err)
	}
	h, payloads, err := journalRecords(data)
	if err == nil && len(payloads)-1 < sess.FoldedRecords {
		err = fmt.Errorf("it has %d records where its snapshot absorbed %d: records were lost", max(len(payloads)-1, 0), sess.FoldedRecords)
	}
	if err != nil {
		return &checkpoint.CorruptError{ID: sess.ID, Path: path, Err: err}
	}
	// The records keep their numbers, and the header follows them.
	first := int64(0)
	if h.First > 0 {
		first = h.First + int64(sess.FoldedRecords)
	}
	buf := headerLine(sess.Epoch, first)
	for _, p := range payloads[1+sess.FoldedRecords:] {
		buf = append(buf, frame(p)...)
	}
	_, err = writeAtomic(path, buf)
	return err
}

// switchTo writes sess under a new epoch, with journal_open, and a
// journal of that epoch holding only its header, each staged (temp file,
// fsync) and renamed into place, and returns that journal opened for
// appends and the snapshot's size.
//
// Which goes first is what a crash between the two leaves readable. A
// journal sess's snapshot needs (keep) stays until the new snapshot, which
// absorbs it by name (folded_epoch), is in place: the new journal goes
// second. Any other journal goes first: the old snapshot, which does not
// say the run records on (Load checked it), ignores a journal with no
// records, and so does a session with no snapshot yet. The folder is
// synced after each rename, so that a power cut cannot keep the second
// and lose the first, and before a record is appended.
func (s *Store) switchTo(sess *checkpoint.Session, keep, existed bool) (f *os.File, size int64, err error) {
	jpath := s.journalPath(sess.ID)
	snap, size, undo, err := s.stageSnapshot(sess, true)
	if err != nil {
		return nil, 0, err
	}
	renamed := false // the snapshot: sess keeps its new epoch from then on
	defer func() {
		if err != nil && !renamed {
			snap.Remove()
			undo()
		}
	}()
	jst, err := atomicfile.Stage(jpath, headerLine(sess.Epoch, 1), 0o600)
	if err != nil {
		return nil, 0, atomicErr(err)
	}
	f, err = os.OpenFile(jst.Temp(), os.O_RDWR|os.O_APPEND|noFollow, 0)
	if err != nil {
		jst.Remove()
		return nil, 0, storeErr("create", jpath, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			jst.Remove() // gone already once renamed
		}
	}()
	s.step("begin staged")
	renameSnap := func() error {
		if err := snap.Rename(); err != nil {
			return atomicErr(err)
		}
		renamed = true
		return syncDir(s.dir)
	}
	renameJournal := func() error {
		if err := jst.Rename(); err != nil {
			return atomicErr(err)
		}
		return syncDir(s.dir)
	}
	first, second := renameJournal, renameSnap
	if keep {
		first, second = renameSnap, renameJournal
	}
	if err := first(); err != nil {
		return nil, 0, err
	}
	s.step("begin renamed")
	if err := second(); err != nil {
		if !keep && !existed && !renamed {
			_ = os.Remove(jpath) // ours, and holding nothing
		}
		return nil, 0, err
	}
	return f, size, nil
}

// Record appends one transition and returns once it is on disk
// (fdatasync). Its cost does not depend on the records before it, except
// for an occasional compaction when the journal outgrows the snapshot.
func (j *FileJournal) Record(r checkpoint.Record) error {
	return j.RecordBatch([]checkpoint.Record{r})
}

// RecordBatch appends rs in one write and returns once they are on disk:
// one fdatasync for all of them. Batches of concurrent callers that arrive
// while a sync is in flight share the next one (group commit); none
// returns before its records are durable.
func (j *FileJournal) RecordBatch(rs []checkpoint.Record) error {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed {
		return checkpoint.JournalClosed(j.Sess.ID)
	}
	if j.err != nil {
		return j.err
	}
	b, err := j.Prepare(rs)
	if err != nil {
		return err
	}
	// A compaction runs beside the records, but the journal may not run
	// away from it: past twice the snapshot, a batch waits for it (only
	// records large next to the whole session ever get here).
	size := int64(0)
	for _, p := range b.Payloads {
		size += int64(framing + len(seqMember) + 20 + len(p)) // 20: the number's digits, at most
	}
	for j.compacting && j.err == nil && j.size+size > 2*j.snapSize+j.store.compactMin {
		j.commit.Wait()
	}
	if j.closed {
		return checkpoint.JournalClosed(j.Sess.ID)
	}
	if j.err != nil {
		return j.err
	}
	return j.commit.Commit(b)
}

// writeGroup appends records (payloads framed) in one write and syncs
// them, for commit, which holds the sync slot for it: Mu is held, and
// released during the I/O. A journal whose lock was released writes
// nothing more: another run may have begun the session anew, and its
// journal may be this very file.
func (j *FileJournal) writeGroup(records []checkpoint.Record, payloads [][]byte) error {
	if j.err != nil {
		return j.err
	}
	if err := j.lock.ours(); err != nil {
		return err
	}
	f, size, seq := j.f, j.size, j.first+int64(j.records)
	j.Mu.Unlock()
	n := 0
	for _, p := range payloads {
		n += framing + len(seqMember) + 20 + len(p)
	}
	buf := make([]byte, 0, n)
	for i, p := range payloads {
		buf = appendNumbered(buf, seq+int64(i), p)
	}
	unknown, err := j.write(f, size, buf)
	j.Mu.Lock()
	if unknown {
		j.err = err
	}
	if err != nil {
		return err
	}
	j.size += int64(len(buf))
	j.records += len(records)
	return nil
}

// write appends buf to f, a journal of size bytes, and syncs it; Mu is not
// held, only the holder of the sync slot writes. unknown: the journal's
// state on disk is unknown from now on.
func (j *FileJournal) write(f *os.File, size int64, buf []byte) (unknown bool, err error) {
	if _, err := f.Write(buf); err != nil {
		// Cut a partial line so the next record does not follow garbage.
		terr := f.Truncate(size)
		return terr != nil, storeErr("write", j.path, err)
	}
	if err := j.store.datasync(f); err != nil {
		// After a failed sync nothing is known about the file: stop here.
		return true, storeErr("sync", j.path, err)
	}
	return false, nil
}

// maybeCompact starts a compaction (Mu held) when the journal outgrew the
// snapshot. The snapshot is encoded and written beside the records, from
// a copy of the session as it stands: Record never waits for it, nor
// fails for it.
func (j *FileJournal) maybeCompact() error {
	if j.compacting || j.size <= j.snapSize || j.size <= j.store.compactMin {
		return nil
	}
	c := &compaction{snap: j.Sess.Clone(), records: j.records, offset: j.size}
	j.compacting = true
	go j.compactBehind(c)
	return nil
}

func (s *Store) step(name string) {
	if s.testStep != nil {
		s.testStep(name)
	}
}

// compaction is a snapshot of the session after the journal's first
// records (offset bytes into it), on its way to replace the old one.
type compaction struct {
	snap    *checkpoint.Session
	records int
	offset  int64
}

// compactBehind runs a compaction and records how it ended: a failure
// before the snapshot's rename only postpones the next one.
func (j *FileJournal) compactBehind(c *compaction) {
	err := j.compactSwitch(c)
	j.Mu.Lock()
	defer j.Mu.Unlock()
	j.compacting = false
	if errors.Is(err, checkpoint.ErrLost) && j.err == nil {
		j.err = err // no compaction to postpone: the journal writes no more
	} else if err != nil && j.err == nil {
		j.Warn(fmt.Sprintf("compaction of session %s postponed: %v", j.Sess.ID, err))
		j.snapSize = j.size * 2 // retry later, not on every record
	}
	j.commit.Wake()
}

// compactSwitch writes c's snapshot under a new epoch that absorbs the
// journal's first c.records records, then, holding the sync slot so no
// record is written meanwhile, moves the records after them into a journal
// of the new epoch: snapshot renamed first, journal second, folder synced,
// all before the next record is acknowledged. A crash between the renames
// leaves the new snapshot beside the old journal, whose later records it
// names (FoldedRecords) for Load to apply; nothing is lost at any instant.
func (j *FileJournal) compactSwitch(c *compaction) (err error) {
	s, id := j.store, c.snap.ID
	oldEpoch := c.snap.Epoch
	c.snap.Epoch, c.snap.FoldedEpoch, c.snap.FoldedRecords = checkpoint.RandHex(8), oldEpoch, c.records
	c.snap.JournalOpen = true // the run records on, in the new journal
	// The records moved keep their numbers: the new journal starts at the
	// first of them.
	j.Mu.Lock()
	first := j.first + int64(c.records)
	j.Mu.Unlock()
	head := headerLine(c.snap.Epoch, first)
	var size int64
	snap, err := atomicfile.StageWith(s.Path(id), func(w io.Writer) error {
		size, err = checkpoint.WriteSession(w, c.snap)
		return err
	}, 0o600)
	if err != nil {
		return atomicErr(err)
	}
	defer func() {
		if err != nil {
			snap.Remove()
		}
	}()
	// Most of the tail is copied before taking the slot; the rest after.
	j.Mu.Lock()
	upto := j.size
	j.Mu.Unlock()
	tail := make([]byte, upto-c.offset)
	if _, err := j.f.ReadAt(tail, c.offset); err != nil {
		return storeErr("read", j.path, err)
	}
	jst, err := atomicfile.Stage(j.path, append(head, tail...), 0o600)
	if err != nil {
		return atomicErr(err)
	}
	defer func() {
		if err != nil {
			jst.Remove()
		}
	}()
	nf, err := os.OpenFile(jst.Temp(), os.O_RDWR|os.O_APPEND|noFollow, 0)
	if err != nil {
		return storeErr("create", j.path, err)
	}
	defer func() {
		if err != nil {
			nf.Close()
		}
	}()

	s.step("staged")
	// The switch, holding the sync slot.
	j.Mu.Lock()
	j.commit.Hold()
	end, records, failed := j.size, j.records, j.err
	j.Mu.Unlock()
	renamed := false
	defer func() {
		j.Mu.Lock()
		if err != nil && renamed {
			// The snapshot moved on but the journal did not follow:
			// appending now would write records no reader applies.
			j.err = err
		}
		if err == nil {
			j.f.Close()
			j.f, j.size, j.records, j.first = nf, int64(len(head))+end-c.offset, records-c.records, first
			j.snapSize = size
			j.Sess.Epoch, j.Sess.FoldedEpoch, j.Sess.FoldedRecords = c.snap.Epoch, oldEpoch, c.records
		}
		j.commit.Release()
		j.Mu.Unlock()
	}()
	if failed != nil {
		return failed
	}
	// The snapshot replaces the session's: only under the lock file at
	// the path.
	if err := j.lock.check(); err != nil {
		return err
	}
	if end > upto {
		rest := make([]byte, end-upto)
		if _, err := j.f.ReadAt(rest, upto); err != nil {
			return storeErr("read", j.path, err)
		}
		if _, err := nf.Write(rest); err != nil {
			return storeErr("write", j.path, err)
		}
		if err := s.datasync(nf); err != nil {
			return storeErr("sync", j.path, err)
		}
	}
	if err := snap.Rename(); err != nil {
		return atomicErr(err)
	}
	renamed = true
	s.step("renamed")
	if err := jst.Rename(); err != nil {
		return atomicErr(err)
	}
	return syncDir(s.dir)
}

// Close compacts: the folded session becomes the snapshot (temp file, fsync,
// rename, fsync of the folder) and the journal is removed. The removal is
// not synced: a journal a crash brings back is of the epoch the snapshot
// absorbed whole (FoldedRecords 0), which Load ignores and Begin replaces.
// The lock stays held; release it separately.
func (j *FileJournal) Close() error {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	if j.closed {
		return nil
	}
	for j.commit.Busy() || j.compacting {
		j.commit.Wait()
	}
	j.closed = true
	defer j.f.Close()
	// The last snapshot replaces the session's: not once another run may
	// hold it (the lock file at the path is not ours).
	if err := j.lock.check(); err != nil {
		return err
	}
	// The in-memory view holds exactly the acknowledged records, so it is
	// safe to write even after a failed append.
	if _, _, err := j.store.writeSnapshot(j.Sess, false); err != nil {
		return err
	}
	j.store.step("folded")
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storeErr("remove", j.path, err)
	}
	return nil
}
