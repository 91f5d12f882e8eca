package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
)

// Resolution is the session a run uses (DESIGN §5), as run, plan and the
// session commands all decide it: one rule in one place.
type Resolution struct {
	ID      string   // the session to use
	Exists  bool     // it is in the store; else a run starts it
	Active  bool     // it is the session the project's state names
	Pending bool     // it is, and a run that claimed it is starting it: held, not in the store yet
	Adopted bool     // taken in place of a missing or foreign active session
	Notes   []string // warnings for the user, in order
	// Info is what a --continue that finds nothing to resume says: every
	// first night of a cron job does, so it is no warning (--quiet drops it).
	Info string
	// Fallback: Notes end with why the active session is not taken and
	// nothing else is; ID is then a new id, which only a run makes its
	// own (Starting says so), while plan says a new one would be started.
	Fallback bool
	// Claim: ID is a new session that --continue starts as the project's
	// active one in place of Prev ("" for none). A run locks it, writes
	// it, then claims it (checkpoint.ProjectState.ClaimActive); a run that
	// loses the claim to an overlapping one discards it, resolves again,
	// and finds the winner's session held.
	Claim bool
	Prev  string
	// Lost: --session names a session the audit log says was made, which
	// this store lacks (nil else). Notes end with that; a run starts it
	// again, every task with it (Starting says so), and audits it then,
	// with the session's creation: not before an exit 2 could come.
	Lost *checkpoint.Missing
}

// Starting is the last note completed with the new session a run starts.
func (r Resolution) Starting() []string {
	notes := slices.Clone(r.Notes)
	if n := len(notes); n > 0 {
		switch {
		case r.Fallback:
			notes[n-1] += ": starting " + r.ID
		case r.Lost != nil:
			notes[n-1] += ": starting it again in this store, every task with it"
		}
	}
	return notes
}

// ResolveSession applies the session-id rules for a run: --session
// (session), else with --continue (cont) the project's active session or
// the fallback of checkpoint.ResolveActive, which audits a missing one,
// else a new id for teamName.
func ResolveSession(ctx context.Context, store checkpoint.Backend, project checkpoint.ProjectState, specAbs, teamName, session string, cont bool) (Resolution, error) {
	return resolveSession(ctx, checkpoint.ResolveActive, store, project, specAbs, teamName, session, cont)
}

// PlanSession is ResolveSession for plan, which only looks: the same
// resolution and warnings, and nothing written (checkpoint.FindActive).
func PlanSession(ctx context.Context, store checkpoint.Backend, project checkpoint.ProjectState, specAbs, teamName, session string) (Resolution, error) {
	return resolveSession(ctx, checkpoint.FindActive, store, project, specAbs, teamName, session, true)
}

// activeFinder is checkpoint.ResolveActive or FindActive.
type activeFinder func(context.Context, checkpoint.Backend, checkpoint.ProjectState, string) (checkpoint.Active, error)

func resolveSession(ctx context.Context, active activeFinder, store checkpoint.Backend, project checkpoint.ProjectState, specAbs, teamName, session string, cont bool) (Resolution, error) {
	if session != "" {
		if err := checkpoint.ValidateID(session); err != nil {
			return Resolution{}, &UsageError{Err: fmt.Errorf("--session: %w", err)}
		}
		if !cont {
			return Resolution{ID: session}, nil
		}
		ok, err := store.Exists(ctx, session)
		if err != nil {
			return Resolution{}, err
		}
		r := Resolution{ID: session, Exists: ok}
		if ok {
			return r, nil
		}
		m, err := checkpoint.FindMissing(ctx, store, project, session)
		if err != nil {
			return Resolution{}, err
		}
		if m.Damage != nil {
			r.Notes = append(r.Notes, m.Damage.Error())
		}
		if m.Audited {
			// Made before, yet not here: starting it again pays for every
			// task again, which --quiet must not hide (DESIGN §5, as for
			// the session state.json names). One a run holds is being
			// started now, in this store: not missing.
			held, err := store.Held(ctx, session)
			if err != nil {
				return Resolution{}, err
			}
			if held == nil {
				r.Notes = append(r.Notes, m.Note("session "+session+" is"))
				r.Lost = &m
				return r, nil
			}
		}
		r.Info = fmt.Sprintf("no session %s in %s yet: starting it", session, store.Location())
		return r, nil
	}
	fresh := checkpoint.NewID(teamName, time.Now())
	if !cont {
		return Resolution{ID: fresh}, nil
	}
	act, err := active(ctx, store, project, specAbs)
	if err != nil {
		return Resolution{}, err
	}
	switch {
	case act.ID != "":
		return Resolution{ID: act.ID, Exists: !act.Pending, Active: !act.Adopted, Pending: act.Pending, Adopted: act.Adopted, Notes: act.Notes}, nil
	case act.Named == "":
		return Resolution{ID: fresh, Info: fmt.Sprintf("--continue: this project has no active session yet: starting %s", fresh), Claim: true}, nil
	default:
		return Resolution{ID: fresh, Notes: act.Notes, Fallback: true, Claim: true, Prev: act.Named}, nil
	}
}

// OpenStore opens the store a run or command uses: location (--store or
// Options.Home), else $TEAMRUN_STORE, else $TEAMRUN_HOME, else ~/.teamrun;
// lookup is os.LookupEnv's (stores.Location).
func OpenStore(ctx context.Context, location string, lookup func(string) (string, bool)) (checkpoint.Backend, error) {
	loc, err := stores.Location(location, lookup)
	if err != nil {
		return nil, err
	}
	return stores.Open(ctx, loc)
}
