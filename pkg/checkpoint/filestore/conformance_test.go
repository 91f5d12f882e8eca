package filestore

import (
	"os"
	"strconv"
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
		Logs: true,
	})
}
