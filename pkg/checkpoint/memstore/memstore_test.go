package memstore

import (
	"testing"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New:  func(*testing.T) checkpoint.Backend { return New() },
		Logs: true,
		Leftovers: func(_ *testing.T, b checkpoint.Backend, id string) []string {
			s := b.(*Store)
			s.mu.Lock()
			defer s.mu.Unlock()
			var left []string
			if s.sessions[id] != nil {
				left = append(left, "session")
			}
			if s.locks[id] != nil {
				left = append(left, "lock")
			}
			if len(s.blobs[id]) > 0 {
				left = append(left, "blobs")
			}
			return left
		},
		DamageBlob: func(t *testing.T, s checkpoint.Backend, id string, b checkpoint.Blob) {
			if !s.(*Store).DamageBlob(id, b) {
				t.Fatalf("no blob %s to damage", b.Digest)
			}
		},
	})
}
