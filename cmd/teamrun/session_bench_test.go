package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
	"github.com/teamrun/teamrun/pkg/checkpoint/stores"
	"github.com/teamrun/teamrun/pkg/spec"
)

// benchStore makes a store of n sessions of 12 tasks each (one written by
// the checkpoint API, the rest copies of it under their own ids) and a
// project whose audit log names every one of them twice.
func benchStore(b *testing.B, n int) (home, project string) {
	b.Helper()
	home, project = filepath.Join(b.TempDir(), "home"), b.TempDir()
	store, err := stores.Open(context.Background(), home)
	if err != nil {
		b.Fatal(err)
	}
	var defs []spec.TaskDef
	for i := range 12 {
		defs = append(defs, spec.TaskDef{ID: i, Name: fmt.Sprintf("t%02d", i), Agent: "sh", Description: fmt.Sprintf("step %d", i), Key: fmt.Sprint(i)})
	}
	specPath := filepath.Join(project, "agents.yaml")
	sess := checkpoint.NewSession("template", specPath, "bench", spec.Sequential, defs, spec.FingerprintOf(defs), time.Now())
	l, err := store.Lock(context.Background(), "template", 0)
	if err != nil {
		b.Fatal(err)
	}
	j, err := store.Begin(context.Background(), l, sess)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range defs[:9] {
		if err := j.Record(checkpoint.Record{Kind: checkpoint.TaskCompleted, Task: d.Name, Result: "a result of some length, " + d.Description}); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	l.Release()
	tmpl, err := store.Load(context.Background(), "template")
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Delete(context.Background(), "template"); err != nil {
		b.Fatal(err)
	}
	var audit bytes.Buffer
	for i := range n {
		id := fmt.Sprintf("bench-20260301-%06d-ab12", i)
		tmpl.ID = id
		data, err := checkpoint.EncodeSession(tmpl)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store.Location(), id+".json"), data, 0o600); err != nil {
			b.Fatal(err)
		}
		for _, ev := range []string{checkpoint.EventCreated, checkpoint.EventCompleted} {
			fmt.Fprintf(&audit, `{"time":"2026-03-01T10:00:00Z","event":%q,"session":%q,"store":%q,"pid":1,"user":"u"}`+"\n", ev, id, store.Location())
		}
	}
	if err := os.MkdirAll(filepath.Join(project, ".teamrun"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".teamrun", "audit.log"), audit.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	return home, project
}

// BenchmarkSessionList10k is `teamrun session list` (and --json) on a store
// of 10,000 sessions, through the CLI as users run it.
func BenchmarkSessionList10k(b *testing.B) {
	home, project := benchStore(b, 10000)
	b.Setenv("TEAMRUN_HOME", home)
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"text", []string{"teamrun", "session", "list", "--project", project}},
		{"json", []string{"teamrun", "session", "list", "--project", project, "--json"}},
	} {
		args := bc.args
		b.Run(bc.name, func(b *testing.B) {
			var out bytes.Buffer
			if code := run(args, nil, &out, io.Discard); code != 0 || bytes.Count(out.Bytes(), []byte("bench-")) < 10000 {
				b.Fatalf("exit %d, output %.300s", code, out.String())
			}
			b.ResetTimer()
			for b.Loop() {
				if code := run(args, nil, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
