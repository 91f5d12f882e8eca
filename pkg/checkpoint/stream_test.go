package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// streamSession decodes exactly what one Decode of the file does, and takes
// every valid file itself (a fallback taken always would hide behind the
// one-pass decoder's equal results).
func TestStreamSessionMatchesOnePass(t *testing.T) {
	ds := []spec.TaskDef{{ID: 0, Name: "a", Agent: "w", Key: "k0"}, {ID: 1, Name: "b", Agent: "w", Key: "k1", Context: []string{"a"}}}
	sess := NewSession("s1", "/p/agents.yaml", "team", spec.Sequential, ds, "fp", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sess.Team.State = map[string]any{"n": json.Number("12345678901234567890"), "s": "x"}
	sess.Apply(Record{Kind: TaskStarted, Task: "a", At: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)})
	sess.Apply(Record{Kind: TaskCompleted, Task: "a", Result: "r\xff\n\"q\"", Variables: map[string]any{"v": json.Number("1.5")}, Agent: "w",
		Messages: []Message{{Role: "assistant", Content: "hi"}}, At: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)})
	sess.Apply(Record{Kind: DecisionRecorded, Task: "b", Value: "yes"})
	full, err := EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	body := string(full[:len(full)-checksumLength])
	for name, data := range map[string]string{
		"encoded":              body + "}",
		"keys in another case": strings.Replace(strings.Replace(body, `"team":`, `"Team":`, 1), `"tasks":`, `"TASKS":`, 1) + "}",
		"team null":            `{"format_version":2,"session_id":"s1","team":null}`,
		"tasks null":           `{"format_version":2,"session_id":"s1","team":{"process":"sequential","tasks":null}}`,
		"tasks twice":          `{"session_id":"s1","team":{"tasks":[{"name":"x"}],"tasks":[{"name":"y"},{"name":"z"}]}}`,
		"no tasks":             `{"session_id":"s1","team":{"state":{"k":1}}}`,
		"spaces":               " {\n \"session_id\" : \"s1\" ,\n \"team\" :\n {\t\"tasks\" : [ {\"name\":\"x\",\"history\":[{\"n\":1}]} ] } } ",
	} {
		t.Run(name, func(t *testing.T) {
			var one, streamed sessionWire
			dec := json.NewDecoder(strings.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(&one); err != nil {
				t.Fatal(err)
			}
			if err := streamSession([]byte(data), &streamed); err != nil {
				t.Fatalf("streamSession refused a valid file: %v", err)
			}
			if !reflect.DeepEqual(one, streamed) {
				t.Errorf("differs:\n one-pass %+v\n streamed %+v", one, streamed)
			}
		})
	}
	for _, bad := range []string{`{"session_id":"s1","team":{"tasks":[{"name":1}]}}`, `{"team":{"tasks":[`, `{"team":{}} x`, `[1]`} {
		if err := streamSession([]byte(bad), &sessionWire{}); err == nil {
			t.Errorf("streamSession took %q", bad)
		}
	}
}

// Decoding a session allocates about its size, not several times it: the
// tasks are decoded one by one, never buffered whole by the decoder.
func TestDecodeSessionAllocatesAboutItsSize(t *testing.T) {
	ds := make([]spec.TaskDef, 5000)
	for i := range ds {
		ds[i] = spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "w", Key: "k"}
	}
	sess := NewSession("big", "/p/agents.yaml", "team", spec.Sequential, ds, "fp", time.Now())
	for i := range sess.Team.Tasks {
		sess.Apply(Record{Kind: TaskStarted, Task: ds[i].Name})
		sess.Apply(Record{Kind: TaskCompleted, Task: ds[i].Name, Result: strings.Repeat("r", 100)})
	}
	data, err := EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := DecodeSession("big", "x", data); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*uint64(len(data)) {
		t.Errorf("decoding a %d-byte session allocated %d bytes (%.1f×)", len(data), got, float64(got)/float64(len(data)))
	} else {
		t.Logf("decoding a %d-byte session allocated %d bytes (%.1f×)", len(data), got, float64(got)/float64(len(data)))
	}
	_ = bytes.MinRead
}
