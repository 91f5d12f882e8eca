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
		DamageBlob: func(t *testing.T, s checkpoint.Backend, id string, b checkpoint.Blob) {
			if !s.(*Store).DamageBlob(id, b) {
				t.Fatalf("no blob %s to damage", b.Digest)
			}
		},
	})
}
