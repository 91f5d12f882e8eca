package runner

import (
	"path/filepath"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

// scratchStore is a store that keeps each session's scratch (context
// folders, variables files) beside the session's files, so that what a
// killed run left is the session's to sweep (the file store). With any
// other store the scratch goes to os.TempDir().
type scratchStore interface {
	ScratchDir(id string) string
	// SweepScratch removes what earlier runs left; l holds the session.
	SweepScratch(l checkpoint.Lock) error
}

// homeWarner is a store whose folder may be open to other users (the file
// store's $TEAMRUN_HOME made by hand): HomeWarning says so, or "".
type homeWarner interface {
	HomeWarning() string
}

// scratchDir is the folder of session id's scratch; "" means
// os.TempDir().
func scratchDir(store checkpoint.Backend, id string) string {
	if s, ok := store.(scratchStore); ok {
		return s.ScratchDir(id)
	}
	return ""
}

// sweepScratch removes what earlier runs of the session left in its
// scratch, if the store keeps one; a failure is worth a warning, not the
// run.
func sweepScratch(store checkpoint.Backend, l checkpoint.Lock, warn func(string)) {
	if s, ok := store.(scratchStore); ok {
		if err := s.SweepScratch(l); err != nil {
			warn(err.Error())
		}
	}
}

// procsRecord is where a run of session id writes down its tasks'
// processes (Groups.Subreap), for the next run's killOrphans; "" (no
// record) when the store keeps no scratch.
func procsRecord(store checkpoint.Backend, id string) string {
	dir := scratchDir(store, id)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "procs")
}
