package filestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m, openForTest) }

// openForTest opens a store as a run does; TEAMRUN_CKPT_COMPACT lowers the
// journal size that triggers a compaction, so the crash test also kills
// mid-compaction.
func openForTest(location string) (checkpoint.Backend, error) {
	s, err := Open(location)
	if err != nil {
		return nil, err
	}
	if n, err := strconv.Atoi(os.Getenv("TEAMRUN_CKPT_COMPACT")); err == nil {
		s.compactMin = int64(n)
	}
	return s, nil
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New:      func(t *testing.T) checkpoint.Backend { return newStore(t) },
		Shared:   func(t *testing.T) string { return t.TempDir() },
		Open:     openForTest,
		ChildEnv: []string{"TEAMRUN_CKPT_COMPACT=8192"},
		DamageBlob: func(t *testing.T, s checkpoint.Backend, id string, b checkpoint.Blob) {
			path := s.(*Store).BlobPath(id, b)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 1
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		DamageSnapshot: func(t *testing.T, b checkpoint.Backend, id string) {
			path := b.(*Store).Path(id)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(data), "result of t01", "result of X01", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		DropTransition: func(t *testing.T, b checkpoint.Backend, id string, n int) {
			path := b.(*Store).journalPath(id)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n") // the header, then a line per transition
			if err := os.WriteFile(path, []byte(strings.Join(append(lines[:n:n], lines[n+1:]...), "")), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		Logs: true,
		// Any file or folder whose path in the store names the session.
		Leftovers: func(t *testing.T, b checkpoint.Backend, id string) []string {
			dir := b.(*Store).dir
			var left []string
			err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
				if rel, _ := filepath.Rel(dir, path); err == nil && strings.Contains(rel, id) {
					left = append(left, rel)
				}
				return err
			})
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			return left
		},
	})
}
