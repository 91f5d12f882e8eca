package checkpoint

import "testing"

// TestStands is the rule run's cut-off and plan share, over the cases
// each meets. The run asks once a task has ended (or not: an
// output_variable's producer still running); plan asks before anything
// runs, so what runs is Undecided, unless nothing is recorded to compare
// with. Before the rule was one, plan left out a task with nothing
// recorded ("unrecorded" rows: it counted as unchanged, the run runs the
// held task) and could not tell a newly skipped task from one still to
// run (it said "only if its output changes").
func TestStands(t *testing.T) {
	old := Outcome{Text: "old"}
	bigOld := Outcome{Blob: &Blob{Digest: Digest("old"), Size: 3}}
	skipped := Outcome{Skipped: true}
	ended := func(o Outcome) Now { return Now{Ended: true, Outcome: o} }
	restored := func(o Outcome) Now { return Now{Ended: true, Outcome: o, Restored: true} }
	for _, c := range []struct {
		name     string
		recorded *Outcome
		now      Now
		want     Standing
	}{
		{"restored, nothing recorded (never ran again)", nil, restored(old), AsRecorded},
		{"restored, a killed run ran it again, same result", &old, restored(old), AsRecorded},
		{"restored, a killed run ran it again, other result", &old, restored(Outcome{Text: "new"}), Changed},
		{"cut off (restored with its held result)", &old, restored(old), AsRecorded},
		{"run again, same result", &old, ended(old), AsRecorded},
		{"run again, same result stored out of line", &bigOld, ended(old), AsRecorded},
		{"run again, other result", &old, ended(Outcome{Text: "new"}), Changed},
		{"ran in an earlier pass of this run (RanBefore), same", &old, ended(old), AsRecorded},
		{"ran in an earlier pass of this run (RanBefore), unrecorded", nil, ended(old), Changed},
		{"run, unrecorded (new task, new gate)", nil, ended(old), Changed},
		{"skipped again", &skipped, ended(skipped), AsRecorded},
		{"newly skipped (a repeat iteration an until stops)", &old, ended(skipped), Changed},
		{"skipped, unrecorded", nil, ended(skipped), Changed},
		{"skipped last time, runs now (an iteration an until no longer stops)", &skipped, ended(old), Changed},
		{"foreach instance whose item changed, same result", &old, ended(old), AsRecorded},
		{"foreach join over instances run again, other array", &Outcome{Text: `["a"]`}, ended(Outcome{Text: `["a","b"]`}), Changed},
		{"not ended yet (plan: it runs; run: a producer still running)", &old, Now{}, Undecided},
		{"not ended yet, unrecorded", nil, Now{}, Changed},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rec Outcome
			if c.recorded != nil {
				rec = *c.recorded
			}
			if got := Stands(rec, c.recorded != nil, c.now); got != c.want {
				t.Errorf("Stands = %d, want %d", got, c.want)
			}
		})
	}
}
