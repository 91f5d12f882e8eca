package checkpoint

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

func TestBlobReferenceRoundTrip(t *testing.T) {
	b := &Blob{Digest: Digest("big"), Size: 3}
	ds := []spec.TaskDef{{Name: "a", Agent: "x", Key: "k"}, {Name: "b", Agent: "x", Key: "k2"}}
	s := NewSession("s1", "/x/agents.yaml", "t", spec.Sequential, ds, "fp", time.Now())
	s.Apply(Record{Kind: TaskStarted, Task: "a"})
	s.Apply(Record{Kind: TaskCompleted, Task: "a", Blob: b})
	// A result that reads like a reference is text, and a user mapping
	// shaped like one is escaped: neither comes back as a blob.
	s.Apply(Record{Kind: TaskCompleted, Task: "b", Result: `{"$blob":"` + b.Digest + `","size":3}`,
		Variables: map[string]any{"v": map[string]any{"$blob": b.Digest}}})
	data, err := EncodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSession("s1", "file", data)
	if err != nil {
		t.Fatal(err)
	}
	// Format 3 only with a blob: older teamruns call it newer, not damaged,
	// and still read sessions without one.
	if got.FormatVersion != 3 || !strings.HasPrefix(string(data), `{"format_version":3,`) {
		t.Errorf("a session with a blob is format %d, want 3", got.FormatVersion)
	}
	plain, err := EncodeSession(NewSession("s2", "/x/agents.yaml", "t", spec.Sequential, ds, "fp", time.Now()))
	if err != nil || !strings.HasPrefix(string(plain), `{"format_version":2,`) {
		t.Errorf("a session without blobs: %.40s, %v; want format 2", plain, err)
	}
	a, _ := got.Task("a")
	if a.Blob == nil || *a.Blob != *b || a.Result != "" || a.History[0].Digest != b.Digest {
		t.Fatalf("a = %+v, want the reference %+v", a, b)
	}
	bt, _ := got.Task("b")
	if bt.Blob != nil || !strings.HasPrefix(bt.Result, `{"$blob"`) {
		t.Fatalf("b = %+v: a text result became a reference", bt)
	}
	if m, ok := bt.Variables["v"].(map[string]any); !ok || m["$blob"] != b.Digest {
		t.Fatalf("b's variables = %#v", bt.Variables)
	}
	// The journal record carries the reference too.
	p, err := EncodeRecord(Record{Kind: TaskCompleted, Task: "a", Blob: b})
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRecord(p)
	if err != nil || r.Blob == nil || *r.Blob != *b || r.Result != "" {
		t.Fatalf("record %s decoded as %+v, %v", p, r, err)
	}
}

func TestBlobReferenceRefused(t *testing.T) {
	for _, bad := range []string{
		`{"k":"completed","task":"a","result":{"$blob":"sha256:zz","size":1},"variables":null,"at":"2026-01-01T00:00:00Z"}`,
		`{"k":"completed","task":"a","result":{"$blob":"md5:00","size":1},"variables":null,"at":"2026-01-01T00:00:00Z"}`,
		`{"k":"completed","task":"a","result":{"$blob":"` + Digest("x") + `","size":-1},"variables":null,"at":"2026-01-01T00:00:00Z"}`,
		`{"k":"completed","task":"a","result":{"$blob":"` + Digest("x") + `","size":1,"more":1},"variables":null,"at":"2026-01-01T00:00:00Z"}`,
		`{"k":"failed","task":"a","result":{"$blob":"` + Digest("x") + `","size":1},"variables":null,"at":"2026-01-01T00:00:00Z"}`,
	} {
		if r, err := DecodeRecord([]byte(bad)); err == nil {
			t.Errorf("%s decoded as %+v", bad, r)
		}
	}
}

func TestVerifyBlob(t *testing.T) {
	content := strings.Repeat("z", 5000)
	b := Blob{Digest: Digest(content), Size: int64(len(content))}
	tests := []struct {
		name, stored string
		bad          bool
	}{
		{"intact", content, false},
		{"a byte changed", content[:100] + "y" + content[101:], true},
		{"cut", content[:4999], true},
		{"longer", content + "z", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(VerifyBlob(strings.NewReader(tc.stored), b, "s", "/the/file"))
			var ce *CorruptError
			if tc.bad {
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), "/the/file") {
					t.Fatalf("err = %v, want a *CorruptError naming the file", err)
				}
				return
			}
			if err != nil || string(got) != content {
				t.Fatalf("intact blob: %d bytes, %v", len(got), err)
			}
		})
	}
}

func TestOutcomeSame(t *testing.T) {
	big := strings.Repeat("q", 10)
	b := &Blob{Digest: Digest(big), Size: 10}
	other := &Blob{Digest: Digest("other"), Size: 5}
	tests := []struct {
		name string
		a, b Outcome
		same bool
	}{
		{"equal texts", Outcome{Text: "a"}, Outcome{Text: "a"}, true},
		{"other texts", Outcome{Text: "a"}, Outcome{Text: "b"}, false},
		{"same blob", Outcome{Blob: b}, Outcome{Blob: &Blob{Digest: b.Digest, Size: 10}}, true},
		{"other blob", Outcome{Blob: b}, Outcome{Blob: other}, false},
		{"blob and its text", Outcome{Blob: b}, Outcome{Text: big}, true},
		{"text and its blob", Outcome{Text: big}, Outcome{Blob: b}, true},
		{"blob and another text", Outcome{Blob: b}, Outcome{Text: big + "!"}, false},
		{"empty and blob", Outcome{}, Outcome{Blob: b}, false},
		{"skipped twice", Outcome{Skipped: true}, Outcome{Skipped: true}, true},
		// Skipped is no output, not an empty one.
		{"skipped and empty", Outcome{Skipped: true}, Outcome{}, false},
		{"empty and skipped", Outcome{}, Outcome{Skipped: true}, false},
	}
	for _, tc := range tests {
		if got := tc.a.Same(tc.b); got != tc.same {
			t.Errorf("%s: Same = %v, want %v", tc.name, got, tc.same)
		}
	}
}
