package checkpoint

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// richSession is a session whose tasks use every field a task record has,
// in the shapes the fast decoder reads itself and in those it hands to
// encoding/json.
func richSession(t *testing.T) []byte {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	ds := []spec.TaskDef{
		{ID: 0, Name: "a", Agent: "w", Key: "k0", Description: "plain"},
		{ID: 1, Name: "b", Agent: "w", Key: "k1", OwnKey: "o1", Context: []string{"a"}, Description: "quote \" and \\ and\nnewline"},
		{ID: 2, Name: "c", Agent: "wé", Key: "k2", Context: []string{"a", "b"}, Description: "ünïcode ✓", ExpectedOutput: "<html> & more"},
		{ID: 3, Name: "d", Agent: "w", Key: "k3"},
		{ID: 4, Name: "e", Agent: "w", Key: "k4"},
	}
	sess := NewSession("s1", "/p/agents.yaml", "team", spec.Sequential, ds, "fp", at)
	sess.Team.State = map[string]any{"n": json.Number("12345678901234567890"), "s": "x"}
	sess.Apply(Record{Kind: TaskStarted, Task: "a", At: at, Host: "h", PGID: 42})
	sess.Apply(Record{Kind: TaskCompleted, Task: "a", Result: "r1", Agent: "w", At: at.Add(time.Second)})
	sess.Apply(Record{Kind: TaskStarted, Task: "b", At: at})
	sess.Apply(Record{Kind: TaskFailed, Task: "b", Error: "bad \xff byte", RetryCount: 1, At: at.Add(time.Second)})
	sess.Apply(Record{Kind: TaskStarted, Task: "b", Attempt: 2, At: at.Add(2 * time.Second)})
	sess.Apply(Record{Kind: TaskCompleted, Task: "b", Attempt: 2, Result: "r\xff\n\"q\"", Variables: map[string]any{"v": json.Number("1.5"), "l": []any{"x", json.Number("2")}},
		Usage: &Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7, CostUSD: 0.25, Calls: []Call{{Model: "m", Attempt: 2, Status: 200}}}, At: at.Add(3 * time.Second)})
	blob := &Blob{Digest: Digest("big"), Size: 3}
	sess.Apply(Record{Kind: TaskStarted, Task: "c", At: at})
	sess.Apply(Record{Kind: TaskCompleted, Task: "c", Blob: blob, At: at.Add(time.Second)})
	sess.Apply(Record{Kind: TaskStarted, Task: "d", At: at})
	sess.Team.Tasks[3].Previous = &PreviousResult{Outcome: Outcome{Text: "before\ttab"}, Key: "k-before"}
	sess.Team.Tasks[4].Previous = &PreviousResult{Outcome: Outcome{Blob: blob}}
	data, err := EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// onePass is the reference: one encoding/json Decode of the whole file,
// its tasks as records (as fastDecode leaves them).
func onePass(data string) (sessionWire, error) {
	var w sessionWire
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&w)
	if err == nil && dec.More() {
		err = fmt.Errorf("data after the object")
	}
	if w.Team.Tasks != nil {
		w.records = make([]TaskRecord, len(w.Team.Tasks))
		for i := range w.Team.Tasks {
			w.records[i] = w.Team.Tasks[i].record()
		}
		w.Team.Tasks = nil
	}
	return w, err
}

// The fast decoder decodes what one Decode of the file does; it takes the
// canonical file itself, every task field by field (a fallback taken
// always would hide behind encoding/json's equal results).
func TestFastSessionMatchesOnePass(t *testing.T) {
	full := string(richSession(t))
	body := full[:len(full)-checksumLength] + "}"
	for name, data := range map[string]string{
		"encoded":      full,
		"no checksum":  body,
		"spaces":       " {\n \"session_id\" : \"s1\" ,\n \"team\" :\n {\t\"tasks\" : [ {\"name\" : \"x\" , \"history\" : [ {\"n\" : 1 } ] , \"context\" : [ ] , \"variables\" : { } } ] } } ",
		"nulls":        `{"session_id":"s1","team":{"tasks":[{"name":null,"id":null,"context":null,"variables":null,"history":null,"started_at":null,"result":null,"usage":null}]}}`,
		"no tasks":     `{"session_id":"s1","team":{"state":{"k":1}}}`,
		"empty tasks":  `{"session_id":"s1","team":{"tasks":[]}}`,
		"odd numbers":  `{"session_id":"s1","team":{"tasks":[{"name":"x","id":-3,"attempts":0,"pgid":12345678901234}]}}`,
		"unknown task": `{"session_id":"s1","team":{"tasks":[{"name":"x","surprise":[1,{"a":"}"}]},{"Name":"y"}]}}`,
		"dup task key": `{"session_id":"s1","team":{"tasks":[{"name":"x","variables":{"a":1},"variables":{"b":2}}]}}`,
		"escapes":      `{"session_id":"s1","team":{"tasks":[{"name":"\u0078","context":["\"a\""],"history":[{"n":1,"error":"\t"}]}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			want, err := onePass(data)
			if err != nil {
				t.Fatal(err)
			}
			var got sessionWire
			s, err := fastDecode([]byte(data), &got)
			if err != nil {
				t.Fatalf("fastSession refused a valid file: %v", err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("differs:\n one-pass %+v\n fast     %+v", want, got)
			}
			if name == "encoded" && (s.whole != 0 || len(got.records) != 5) {
				t.Errorf("%d of %d tasks were decoded whole by encoding/json, want none", s.whole, len(got.records))
			}
		})
	}
}

// Results as commands print them (a trailing newline, quotes, tabs,
// backslashes) are read by the fast decoder itself, not handed to
// encoding/json a value at a time.
func TestFastSessionReadsEscapes(t *testing.T) {
	ds := []spec.TaskDef{{ID: 0, Name: "a", Agent: "w", Key: "k0", Description: "say \"hi\"\tthen\\ go/on\r\n"}, {ID: 1, Name: "b", Agent: "w", Key: "k1", Context: []string{"a"}}}
	sess := NewSession("s1", "/p/agents.yaml", "team", spec.Sequential, ds, "fp", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	for _, d := range ds {
		sess.Apply(Record{Kind: TaskStarted, Task: d.Name, At: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)})
		sess.Apply(Record{Kind: TaskCompleted, Task: d.Name, Result: "line one\n\"two\"\t\\ three\b\f ünï\n", At: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)})
	}
	data, err := EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	want, err := onePass(string(data))
	if err != nil {
		t.Fatal(err)
	}
	var got sessionWire
	s, err := fastDecode(data, &got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("differs:\n one-pass %+v\n fast     %+v", want, got)
	}
	if s.fields != 0 || s.whole != 0 {
		t.Errorf("%d values and %d tasks went to encoding/json, want none", s.fields, s.whole)
	}
}

// Whatever a file is changed into, the fast decoder either refuses it
// (and the other decoders take over) or decodes what one Decode does; it
// never takes a file encoding/json refuses.
func TestFastSessionNeverDisagrees(t *testing.T) {
	full := string(richSession(t))
	repl := []string{"", `"`, `\`, "{", "}", "[", "]", ",", ":", " ", "0", "-", "a", "\x01", "\xff", "null", `"x"`, "1.5", "e"}
	var taken, refused int
	for i := 0; i < len(full); i++ {
		for k := range 4 { // four replacements a byte, in turn: all of them would take long
			r := repl[(i+k*5)%len(repl)]
			data := full[:i] + r + full[i+1:]
			want, werr := onePass(data)
			var got sessionWire
			_, gerr := fastDecode([]byte(data), &got)
			switch {
			case gerr != nil:
				refused++
			case werr != nil:
				t.Fatalf("fast decoder took a file encoding/json refuses (%v): byte %d → %q", werr, i, r)
			case !reflect.DeepEqual(want, got):
				t.Fatalf("differs at byte %d → %q:\n one-pass %+v\n fast     %+v", i, r, want, got)
			default:
				taken++
			}
		}
	}
	t.Logf("%d variants taken and equal, %d refused", taken, refused)
	if taken == 0 {
		t.Error("no variant taken: the comparison tests nothing")
	}
}

// A file the fast decoder gives up on half-way still decodes to what the
// one-pass decoder makes of it: nothing it filled in before is kept.
func TestDecodeSessionAfterFastGivesUp(t *testing.T) {
	full := string(richSession(t))
	// The state map is decoded before the tasks; a task key in another
	// spelling makes the fast decoder give up after it.
	body := strings.Replace(full[:len(full)-checksumLength], `"tasks":`, `"Tasks":`, 1)
	data := body + checksumOpen + fmt.Sprintf("%08x", Checksum([]byte(body))) + checksumClose
	var s sessionWire
	if _, err := fastDecode([]byte(data), &s); err == nil {
		t.Fatal("fast decoder took another spelling of tasks")
	}
	sess, err := decodeSession([]byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeSession([]byte(full), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sess.Team, want.Team) {
		t.Errorf("differs:\n got  %+v\n want %+v", sess.Team, want.Team)
	}
}

// FuzzFastSession: whatever the fast decoder takes, one encoding/json
// Decode takes too and decodes the same.
//
//	go test -run '^$' -fuzz FuzzFastSession ./pkg/checkpoint
func FuzzFastSession(f *testing.F) {
	f.Add([]byte(`{"session_id":"s1","team":{"tasks":[{"id":1,"name":"x","status":"completed","result":"r\n\"q\"","history":[{"n":1,"start":"2026-01-02T03:04:05Z","end":null,"outcome":"completed"}],"context":["a"],"variables":{},"attempts":2,"started_at":"2026-01-02T03:04:05.5Z"}],"state":{}},"checkpoint":{"decisions":{}}}`))
	f.Add([]byte(`{"session_id":"s1","team":{"tasks":[{"name":"x","history":[{"n":1,"start":"2026-01-02T03:04:05Z"}],"context":["a\n"],"variables":{}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got sessionWire
		if _, err := fastDecode(data, &got); err != nil {
			return
		}
		want, err := onePass(string(data))
		if err != nil {
			t.Fatalf("fast decoder took a file encoding/json refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("differs:\n one-pass %+v\n fast     %+v\n%q", want, got, data)
		}
	})
}
