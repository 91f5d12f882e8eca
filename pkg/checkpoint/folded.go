package checkpoint

import (
	"fmt"
	"sync"
)

// FoldedView is what a store's journal holds of its session in memory: the
// snapshot plus every acknowledged record, and what degraded since it was
// last asked. Each store's journal embeds it, and it answers the Journal's
// Session, Task and Warnings for them all.
type FoldedView struct {
	// Mu guards Sess and the warnings, and whatever else of its journal
	// the store guards with it (one lock, so that a record is applied and
	// the journal's own counters move together).
	Mu sync.Mutex
	// Sess is the folded session, the journal's own: only copies of it
	// leave (Session).
	Sess     *Session
	warnings []string
}

// Session is a copy of the folded view: the snapshot plus every
// acknowledged record. It costs O(tasks); use Task for one task.
func (v *FoldedView) Session() *Session {
	v.Mu.Lock()
	defer v.Mu.Unlock()
	return v.Sess.Clone()
}

// Task is the current record of one task.
func (v *FoldedView) Task(name string) (TaskRecord, bool) {
	v.Mu.Lock()
	defer v.Mu.Unlock()
	t, ok := v.Sess.Task(name)
	if !ok {
		return TaskRecord{}, false
	}
	return *t, true
}

// Warnings returns, and forgets, what degraded since the last call: fields
// stored as {} because JSON cannot hold them, a postponed compaction,
// results left in place.
func (v *FoldedView) Warnings() []string {
	v.Mu.Lock()
	defer v.Mu.Unlock()
	w := v.warnings
	v.warnings = nil
	return w
}

// Warn adds to what Warnings returns next; Mu is held.
func (v *FoldedView) Warn(w ...string) {
	v.warnings = append(v.warnings, w...)
}

// Prepare makes rs ready for the store to write (GroupCommit.Commit): each
// as PrepareRecord stores it, and its payload (EncodeRecord, its texts
// redacted by the session's Redact). It is all of
// rs or, on an error (which names the session), none. The warnings of the
// records are the batch's: they are added (Warn) once it is written, so a
// refused batch leaves no warning about a record that never was. Mu is
// held.
func (v *FoldedView) Prepare(rs []Record) (*Batch, error) {
	b := &Batch{Records: make([]Record, len(rs)), Payloads: make([][]byte, len(rs))}
	for i, r := range rs {
		r, w, err := PrepareRecord(r)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: session %s: %w", v.Sess.ID, err)
		}
		payload, err := EncodeRecord(r.redacted(v.Sess.Redact))
		if err != nil {
			return nil, fmt.Errorf("checkpoint: session %s: %w", v.Sess.ID, err)
		}
		b.Records[i], b.Payloads[i] = r, payload
		b.warnings = append(b.warnings, w...)
	}
	return b, nil
}
