package checkpoint

// Standing is how a task that a held task reads stands against the result
// the held task's recorded result was made from (Restored.Recorded): the
// early cut-off reuses a held task only when everything it reads stands
// AsRecorded.
type Standing int8

const (
	// Undecided: it has not ended yet, and has a recorded result: the
	// result it comes out with decides.
	Undecided Standing = iota
	// AsRecorded: restored, cut off, run again with a byte-identical
	// result, or skipped again as it was.
	AsRecorded
	// Changed: anything else (a new result, newly skipped, or a result
	// with nothing recorded to compare it with): the held task runs.
	Changed
)

// Now is a task as a run has it when a held task that reads it is
// decided; plan's dry run has it so before anything runs.
type Now struct {
	// Ended: completed or skipped this time; Outcome is what it ended
	// with (Outcome.Skipped when skipped).
	Ended bool
	Outcome
	// Restored: completed with the result this invocation's restore took
	// over (or cut off), not one it made (an earlier pass of the same
	// invocation made it: not restored).
	Restored bool
}

// Stands is the one rule by which run (the engine's cut-off) and plan say
// how a task stands: recorded is its recorded result, ok whether it has
// one, now what it is this time.
//
// A task restored with nothing recorded did not run again: it stands. One
// restored with a recorded result is one a killed run that held tasks ran
// again (its hold keeps the result they were made from): it stands only if
// its result is that one, as does one run or skipped this time.
func Stands(recorded Outcome, ok bool, now Now) Standing {
	switch {
	case !ok && now.Ended && now.Restored && !now.Skipped:
		return AsRecorded
	case !ok:
		return Changed // whatever it ends with is new
	case !now.Ended:
		return Undecided
	case recorded.Same(now.Outcome):
		return AsRecorded
	}
	return Changed
}
