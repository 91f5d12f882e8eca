package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/teamrun/teamrun/internal/sessionid"
	"github.com/teamrun/teamrun/pkg/spec"
)

// ValidateID checks the session id rule. Ids cannot hold a separator or
// start with a dot, so a session's files always stay inside the store.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty; an id is %s", ErrBadID, IDRule)
	}
	// Positions and lengths count characters, as people read them: "é"
	// is one character at 1, not the byte 'Ã'.
	if n := utf8.RuneCountInString(id); n > sessionid.MaxLen {
		return fmt.Errorf("%w: %d characters; an id is %s", ErrBadID, n, IDRule)
	}
	if id[0] == '.' {
		return fmt.Errorf("%w %s: starts with a dot; an id is %s", ErrBadID, spec.ShownValue(id), IDRule)
	}
	pos := 0
	for i, r := range id {
		pos++
		if r < utf8.RuneSelf && sessionid.Byte(byte(r)) {
			continue
		}
		what := fmt.Sprintf("character %q", r)
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(id[i:]); size == 1 {
				what = fmt.Sprintf("byte 0x%02X (not UTF-8)", id[i])
			}
		}
		return fmt.Errorf("%w %s: %s at %d; an id is %s", ErrBadID, spec.ShownValue(id), what, pos, IDRule)
	}
	return nil
}

// NewID is a fresh id <name>-<YYYYMMDD-HHMMSS>-<4 hex>, the name made an
// id's start by sessionid.Prefix.
func NewID(teamName string, now time.Time) string {
	suffix := "-" + now.UTC().Format("20060102-150405") + "-" + RandHex(2)
	return sessionid.Prefix(teamName, sessionid.MaxLen-len(suffix)) + suffix
}

// RandHex is n random bytes in hex.
func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Summary is one line of List.
type Summary struct {
	ID        string
	SpecPath  string
	TeamName  string
	CreatedAt time.Time
	UpdatedAt time.Time
	Done      int
	Total     int
	Path      string
	// Project is the key of the project the session was started in, where
	// the store records it (PostgreSQL); "" where it does not: the file
	// store, whose project is the spec's folder, or a row an older
	// teamrun wrote.
	Project string
	Err     error // the session could not be read; the other fields may be empty
}
