package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/spec"
)

// A snapshot edited by hand with its checksum made again is not what a
// run recorded when it holds a task record no teamrun writes: a status it
// does not know (it was read as interrupted, and run again) or a name
// twice (the second record was never read; renamed, the log and summary
// disagreed on what was restored). Corrupt, naming the task, in sessions
// small (names compared) and large (names hashed).
func TestDecodeRefusesRecordsNoRunWrites(t *testing.T) {
	for _, n := range []int{4, 40} {
		data := taskSession(t, n)
		for _, tt := range []struct {
			name string
			edit func(string) string
			want string // "": it decodes
		}{
			{"as written", func(s string) string { return s }, ""},
			{"an unknown status", func(s string) string {
				i := strings.Index(s, `"name":"t2"`)
				return s[:i] + strings.Replace(s[i:], `"status":"completed"`, `"status":"weird"`, 1)
			}, `task "t2" has status "weird", which no teamrun writes (it is one of pending, running, completed, failed, skipped): the file was changed`},
			{"a record renamed to another's name", func(s string) string {
				return strings.Replace(s, `"name":"t3"`, `"name":"t1"`, 1)
			}, `task "t1" is recorded twice, which no teamrun writes: the file was changed`},
			{"a record repeated", func(s string) string {
				i := strings.Index(s, `{"id":1,`)
				j := strings.Index(s, `,{"id":2,`)
				return s[:j] + "," + s[i:j] + s[j:]
			}, `task "t1" is recorded twice`},
		} {
			t.Run(fmt.Sprintf("%d tasks, %s", n, tt.name), func(t *testing.T) {
				edited := resum(t, tt.edit(string(data)))
				if tt.want != "" && bytes.Equal(edited, data) {
					t.Fatal("the edit changed nothing")
				}
				sess, err := DecodeSession("s", "s.json", edited)
				if tt.want == "" {
					if err != nil || len(sess.Team.Tasks) != n {
						t.Fatalf("DecodeSession = %v", err)
					}
					return
				}
				var ce *CorruptError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), "session s: s.json is corrupt: "+tt.want) {
					t.Fatalf("DecodeSession = %v; want corrupt: %s", err, tt.want)
				}
			})
		}
	}
}

// Names whose hashes collide are compared, not taken for one name.
func TestRepeatedHashed(t *testing.T) {
	tasks := make([]TaskRecord, 40)
	for i := range tasks {
		tasks[i].Name = fmt.Sprintf("t%d", i)
	}
	collide := func(name string) uint32 { return uint32(len(name)) } // t0…t9 share one, t10…t39 another
	if name, ok := repeatedHashed(tasks, collide); ok {
		t.Errorf("distinct names: %q repeated", name)
	}
	tasks[33].Name = "t12"
	if name, ok := repeatedHashed(tasks, collide); !ok || name != "t12" {
		t.Errorf("t12 twice: %q, %v", name, ok)
	}
}

// taskSession is a session of n completed tasks t0 … t(n-1), encoded.
func taskSession(t *testing.T, n int) []byte {
	t.Helper()
	ds := make([]spec.TaskDef, n)
	for i := range ds {
		ds[i] = spec.TaskDef{ID: i, Name: fmt.Sprintf("t%d", i), Agent: "w"}
	}
	sess := NewSession("s", "/p/team.yaml", "team", spec.Sequential, ds, "fp", time.Unix(0, 0).UTC())
	for _, d := range ds {
		sess.Apply(Record{Kind: TaskStarted, Task: d.Name, At: time.Unix(1, 0)})
		sess.Apply(Record{Kind: TaskCompleted, Task: d.Name, Result: "r", At: time.Unix(2, 0)})
	}
	data, err := EncodeSession(sess)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// resum is a snapshot whose body was edited, its checksum made again.
func resum(t *testing.T, s string) []byte {
	t.Helper()
	i := strings.LastIndex(s, checksumOpen)
	if i < 0 {
		t.Fatal("no checksum")
	}
	body := []byte(s[:i])
	return fmt.Appendf(body, checksumOpen+"%08x"+checksumClose, Checksum(body))
}
