package checkpoint

import "sync"

// Batch is records made ready for a store to write (FoldedView.Prepare):
// each as it is stored, its encoding, and the warnings they bring, which
// are kept only once the batch is written (GroupCommit.Commit).
type Batch struct {
	Records  []Record
	Payloads [][]byte
	warnings []string
}

// WriteGroup is a store's own part of group commit (GroupCommit): it makes
// records (payloads are their encodings) durable after every record
// written before them, or fails, and then none of them counts as
// written. It is called with the view's Mu held, by one caller at a time
// (the holder of GroupCommit's slot); it may release Mu for its I/O and
// holds it again when it returns.
type WriteGroup func(records []Record, payloads [][]byte) error

// GroupCommit is group commit for a store's journal, the stores' one
// copy of it: batches that arrive while a write is in flight queue up and
// share the next write, which the first of them leads. None is
// acknowledged (Commit returns nil) before the write holding it returned,
// and the records are written, applied to the view and acknowledged in
// the order Commit was called. The store supplies only the write
// (WriteGroup). All of it is guarded by the view's Mu; set it up with
// Init.
type GroupCommit struct {
	view    *FoldedView
	write   WriteGroup
	written func() error
	busy    bool // the slot is taken: by a leader, or by Hold
	queue   []*queued
	wanted  chan struct{} // closed to hand the slot to a Hold waiting for it
	idle    *sync.Cond    // signalled when the slot goes free, and by Wake
}

// queued is one Commit call waiting for its write.
type queued struct {
	b    *Batch
	done chan groupDone
}

// groupDone ends a wait: the batch is written (err nil), failed, or its
// caller is to lead the next write.
type groupDone struct {
	err  error
	lead bool
}

// Init sets g up for the journal of view v, whose groups write writes.
// written, when set, follows each write that succeeded, once its records
// are applied to the view (Mu held, the slot still taken): the store's
// upkeep that reads the session as it now stands, such as a compaction.
// Its error fails the group's batches.
func (g *GroupCommit) Init(v *FoldedView, write WriteGroup, written func() error) {
	g.view, g.write, g.written = v, write, written
	g.idle = sync.NewCond(&v.Mu)
}

// Commit writes b, with the batches of other callers that arrive while a
// write is in flight, and returns once it is written (nil) or failed.
// Only once its write returned nil are its records applied to the view
// and its warnings kept: a batch whose write fails leaves neither (one
// whose written fails is durable, and still reported failed). Mu is
// held, and released while waiting.
func (g *GroupCommit) Commit(b *Batch) error {
	q := &queued{b: b}
	g.queue = append(g.queue, q)
	if g.busy {
		q.done = make(chan groupDone, 1)
		g.view.Mu.Unlock()
		d := <-q.done
		g.view.Mu.Lock()
		if !d.lead {
			return d.err
		}
		// Led by us now: q is first of everything queued so far.
	}
	return g.lead(q)
}

// lead writes every queued batch at once (Mu held), answers the others,
// and hands the slot on. It returns own's result.
func (g *GroupCommit) lead(own *queued) error {
	group := g.queue
	g.queue = nil
	g.busy = true
	// Alone (a sequential run's every write), a batch is written as it
	// is: joined lists are made only for a group.
	records, payloads := group[0].b.Records, group[0].b.Payloads
	if len(group) > 1 {
		records, payloads = nil, nil
		for _, q := range group {
			records = append(records, q.b.Records...)
			payloads = append(payloads, q.b.Payloads...)
		}
	}
	err := g.write(records, payloads)
	if err == nil {
		for _, r := range records {
			g.view.Sess.Apply(r)
		}
		for _, q := range group {
			g.view.Warn(q.b.warnings...)
		}
		if g.written != nil {
			err = g.written()
		}
	}
	for _, q := range group {
		if q != own {
			q.done <- groupDone{err: err}
		}
	}
	g.handOver()
	return err
}

// handOver passes the slot on (Mu held): to a Hold waiting for it, else
// to the first batch that queued, else it is free.
func (g *GroupCommit) handOver() {
	switch {
	case g.wanted != nil:
		close(g.wanted)
		g.wanted = nil
	case len(g.queue) > 0:
		g.queue[0].done <- groupDone{lead: true}
	default:
		g.busy = false
		g.idle.Broadcast()
	}
}

// Hold takes the slot, ahead of the batches queued, for a step no write
// may run beside (a file journal's switch to a new file); Release gives
// it back. Mu is held, and released while the write in flight ends. One
// Hold at a time.
func (g *GroupCommit) Hold() {
	if g.busy {
		ready := make(chan struct{})
		g.wanted = ready
		g.view.Mu.Unlock()
		<-ready
		g.view.Mu.Lock()
	}
	g.busy = true
}

// Release ends a Hold (Mu held).
func (g *GroupCommit) Release() { g.handOver() }

// Busy says whether a write or a Hold is under way (Mu held).
func (g *GroupCommit) Busy() bool { return g.busy }

// Queued is how many batches wait for the next write (Mu held).
func (g *GroupCommit) Queued() int { return len(g.queue) }

// Wait waits until the slot goes free or Wake is called, for a store
// waiting for its own state too (Mu held, and released meanwhile).
func (g *GroupCommit) Wait() { g.idle.Wait() }

// Wake ends every Wait, for a store whose own state changed (Mu held).
func (g *GroupCommit) Wake() { g.idle.Broadcast() }
