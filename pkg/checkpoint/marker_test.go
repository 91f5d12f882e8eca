package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// User data that looks like the store's own markers must come back as it
// was written: the markers may never collide with a user value.
func TestUserValuesShapedLikeMarkersRoundTrip(t *testing.T) {
	values := []any{
		map[string]any{"$base64": "aGk="},
		map[string]any{"$map": map[string]any{"a": int64(1)}},
		map[string]any{"$map": "x"},
		map[string]any{"$anything": []any{"y"}},
		[]any{map[string]any{"$base64": "aGk="}},
		map[string]any{"outer": map[string]any{"$base64": "not base64 at all"}},
		"\xff\xfe not UTF-8",
		map[string]any{"$base64": "\xff"},
	}
	for _, v := range values {
		sess := NewSession("s1", "/x/agents.yaml", "t", "sequential", nil, "fp", time.Unix(0, 0))
		sess.Team.State = map[string]any{"v": v}
		sess.Team.Tasks = []TaskRecord{{Name: "a", Status: StatusCompleted, Variables: map[string]any{"v": v}}}
		data, err := EncodeSession(sess)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		back, err := DecodeSession("s1", "test", data)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if got := back.Team.State["v"]; !reflect.DeepEqual(got, v) {
			t.Errorf("state: wrote %#v, read %#v", v, got)
		}
		if got := back.Team.Tasks[0].Variables["v"]; !reflect.DeepEqual(got, v) {
			t.Errorf("variables: wrote %#v, read %#v", v, got)
		}

		rec, _, err := PrepareRecord(Record{Kind: TaskCompleted, Task: "a", Variables: map[string]any{"v": v}, State: map[string]any{"v": v}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := EncodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRecord(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Variables["v"], v) || !reflect.DeepEqual(r.State["v"], v) {
			t.Errorf("record: wrote %#v, read %#v / %#v", v, r.Variables["v"], r.State["v"])
		}
	}
}

// Any changed byte of a snapshot is damage, never a session restored as
// good (issue: "gooe-result" or "resu1t" loaded with exit 0).
func TestSnapshotByteFlipsAreAlwaysCorrupt(t *testing.T) {
	sess := NewSession("s1", "/x/agents.yaml", "t", "sequential", nil, "fp", time.Unix(0, 0))
	sess.Team.Tasks = []TaskRecord{
		{Name: "a", Status: StatusCompleted, Result: "good-result", Variables: map[string]any{"n": int64(1)}},
		{Name: "b", Status: StatusCompleted, Result: "second"},
	}
	data, err := EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeSession("s1", "s1.json", data); err != nil {
		t.Fatalf("the intact snapshot: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		flipped := bytes.Clone(data)
		i := rng.IntN(len(flipped))
		flipped[i] ^= byte(1 + rng.IntN(255))
		_, err := DecodeSession("s1", "s1.json", flipped)
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("byte %d (%q -> %q) changed: err = %v, want a CorruptError", i, data[i], flipped[i], err)
		}
		if !strings.Contains(err.Error(), "s1.json") {
			t.Errorf("the error does not name the file: %v", err)
		}
	}
}

func TestTextRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b", `back\slash`, "nl\n\ttab", "\x00\x01\x1f", "é ✓ 😀", "\xff", "ok\xc3", "<&>", "\u2028", `{"$base64":"AA=="}`} {
		b, err := text(s).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back text
		if err := json.Unmarshal(b, &back); err != nil || string(back) != s {
			t.Errorf("%q -> %s -> %q (%v)", s, b, back, err)
		}
	}
}
