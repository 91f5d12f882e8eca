package llm

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/pkg/spec"
)

func BenchmarkBuildMessages(b *testing.B) {
	a := &spec.Agent{Role: "Writer", Goal: "Write notes", Backstory: "Seasoned.", Instructions: "Be brief."}
	ctx := []ContextOutput{{Task: "draft", Output: strings.Repeat("word ", 2000)}, {Task: "review", Output: "ok"}}
	hist := []Message{{Role: "user", Content: "u"}, {Role: "assistant", Content: "a"}}
	for b.Loop() {
		BuildMessages(a, "Count the words", "a number", ctx, hist)
	}
}

// BenchmarkCompleteLocal is the client's own cost per call: a loopback
// httptest server that answers at once.
func BenchmarkCompleteLocal(b *testing.B) {
	fs := newFakeServer(b, func(_ int, w http.ResponseWriter, _ *http.Request) { okReply(w, "done") })
	c := &Client{BaseURL: fs.URL + "/v1", APIKey: "k"}
	for b.Loop() {
		if _, err := c.Complete(context.Background(), tinyReq); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompleteStream is the same for a streamed answer: what reading
// server-sent events costs per call.
func BenchmarkCompleteStream(b *testing.B) {
	fs := newFakeServer(b, func(_ int, w http.ResponseWriter, _ *http.Request) {
		sse(w, delta("Hel"), delta("lo, "), delta("world"), finishStop, usageChunk, "[DONE]")
	})
	c := &Client{BaseURL: fs.URL + "/v1", APIKey: "k"}
	req := tinyReq
	req.Stream = true
	for b.Loop() {
		if _, err := c.Complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
