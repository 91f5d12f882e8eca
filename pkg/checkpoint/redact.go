package checkpoint

// A session's Redact is applied where its texts are encoded, and nowhere
// else: WriteSession for the snapshot, FoldedView.Prepare for a journal
// record. In memory they stay as the run made them (a command task gets
// the real value of a --var), while what any store keeps never holds a
// key (DESIGN §2). Names, keys, digests and times are the spec's and the
// format's, never a secret, and are left alone: a task's name cut short
// would lose its record.

// redactValue is v with redact applied to every string it holds; what it
// changes is a copy, v itself is left as it is.
func redactValue(v any, redact func(string) string) any {
	switch x := v.(type) {
	case string:
		return redact(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, redact)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = redact(e)
		}
		return out
	case map[string]any:
		return redactMap(x, redact)
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[k] = redact(e)
		}
		return out
	}
	return v
}

// redactMap is m, a shared state or a task's variables, with its values
// redacted (a copy; nil stays nil).
func redactMap(m map[string]any, redact func(string) string) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = redactValue(v, redact)
	}
	return out
}

// redactHead redacts the texts of the snapshot's head (everything but the
// tasks), a shallow copy of the session: it gets maps of its own.
func (s *Session) redactHead(redact func(string) string) {
	s.Team.State = redactMap(s.Team.State, redact)
	s.Team.InitialState = redactMap(s.Team.InitialState, redact)
	if s.Memory != nil {
		mem := make(map[string][]Message, len(s.Memory))
		for a, msgs := range s.Memory {
			mem[a] = redactMessages(msgs, redact)
		}
		s.Memory = mem
	}
}

func redactMessages(msgs []Message, redact func(string) string) []Message {
	if msgs == nil {
		return nil
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.Content = redact(m.Content)
		out[i] = m
	}
	return out
}

// redact redacts the texts of a task's wire form, which shares its
// lists and maps with the record: those it changes are copies.
func (w *taskRecordWire) redact(redact func(string) string) {
	w.Description, w.ExpectedOutput = redact(w.Description), redact(w.ExpectedOutput)
	w.Result.text, w.Error = text(redact(string(w.Result.text))), text(redact(string(w.Error)))
	if w.Previous != nil {
		p := *w.Previous
		p.text = text(redact(string(p.text)))
		w.Previous = &p
	}
	w.Variables = redactMap(w.Variables, redact)
	if len(w.History) > 0 {
		h := make([]Attempt, len(w.History))
		for i, a := range w.History {
			a.Error = redact(a.Error)
			h[i] = a
		}
		w.History = h
	}
}

// redacted is r with its texts redacted (redact nil: r as it is). Its
// tool step was redacted by the tool loop, which runs what it records.
func (r Record) redacted(redact func(string) string) Record {
	if redact == nil {
		return r
	}
	r.Result, r.Error, r.Value = redact(r.Result), redact(r.Error), redact(r.Value)
	r.Variables, r.State = redactMap(r.Variables, redact), redactMap(r.State, redact)
	r.Messages = redactMessages(r.Messages, redact)
	return r
}
