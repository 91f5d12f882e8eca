package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

// A model that refuses max_tokens for max_completion_tokens gets the same
// request once more under that name, with the same value; the run's other
// clients (sharing Learned) send it so from the start.
func TestCompleteMaxCompletionTokensFallback(t *testing.T) {
	const refusal = `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`
	var fs *fakeServer
	fs = newFakeServer(t, func(i int, w http.ResponseWriter, _ *http.Request) {
		if _, ok := fs.requests()[i].Body["max_tokens"]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, refusal)
			return
		}
		okReply(w, "ok")
	})
	var learned Learned
	var admitted []int
	client := func() *Client {
		c := testClient(fs, &fakeSleep{})
		c.MaxAttempts = 1 // the fallback is no retry: it is sent all the same
		c.Learned = &learned
		c.Admit = func(_ context.Context, n int) (func(*Call), error) {
			admitted = append(admitted, n)
			return func(*Call) {}, nil
		}
		return c
	}
	req := tinyReq
	req.MaxTokens = 1000
	resp, err := client().Complete(context.Background(), req)
	if err != nil || resp.Content != "ok" {
		t.Fatalf("Complete: %q, %v", resp.Content, err)
	}
	if got := fs.requests(); len(got) != 2 || string(got[0].Body["max_tokens"]) != "1000" ||
		string(got[1].Body["max_completion_tokens"]) != "1000" || got[1].Body["max_tokens"] != nil {
		t.Fatalf("requests %+v, want max_tokens then max_completion_tokens, both 1000", got)
	}
	if len(admitted) != 2 || len(resp.Calls) != 1 {
		t.Errorf("%d requests admitted, %d paid; want both admitted, the answer paid", len(admitted), len(resp.Calls))
	}
	// A new client of the run sends max_completion_tokens at once.
	if _, err := client().Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := fs.requests(); len(got) != 3 || string(got[2].Body["max_completion_tokens"]) != "1000" || got[2].Body["max_tokens"] != nil {
		t.Fatalf("the run's next request %+v, want max_completion_tokens from the start", got[len(got)-1])
	}
	// Another model of the same server is not taken to refuse max_tokens.
	other := req
	other.Model = "m2"
	client().Complete(context.Background(), other)
	if got := fs.requests(); string(got[3].Body["max_tokens"]) != "1000" {
		t.Errorf("model m2 was sent %+v, want max_tokens", got[3].Body)
	}
}

// Other 400s are not taken for that refusal: sent once, failed.
func TestCompleteOtherBadRequestNotResent(t *testing.T) {
	for _, msg := range []string{
		"Unsupported parameter: 'temperature' is not supported with this model.",
		"max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.",
	} {
		fs := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { errReply(w, http.StatusBadRequest, msg) })
		req := tinyReq
		req.MaxTokens = 100000
		_, err := testClient(fs, &fakeSleep{}).Complete(context.Background(), req)
		if n := len(fs.requests()); n != 1 || !errors.Is(err, ErrPermanent) {
			t.Errorf("%q: %d requests, %v; want one, failed", msg, n, err)
		}
	}
}
