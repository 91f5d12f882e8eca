package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teamrun/teamrun/internal/scripttest"
	"gopkg.in/yaml.v3"
)

// TestKubernetesCronJobExample holds examples/kubernetes-cronjob.yaml to
// what the README promises of it, and runs its container's command line
// (the Job's name substituted as Kubernetes does) with the real CLI: twice,
// as a retried pod would, the second continuing the first's session. The
// store is PostgreSQL when TEAMRUN_TEST_PG_URL is set, else a folder.
func TestKubernetesCronJobExample(t *testing.T) {
	data, err := os.ReadFile("../../examples/kubernetes-cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Kind string
		Spec struct {
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					Template struct {
						Spec struct {
							RestartPolicy string `yaml:"restartPolicy"`
							Containers    []struct {
								Args []string
								Env  []struct {
									Name      string
									Value     string
									ValueFrom struct {
										FieldRef struct {
											FieldPath string `yaml:"fieldPath"`
										} `yaml:"fieldRef"`
										SecretKeyRef struct{ Name, Key string } `yaml:"secretKeyRef"`
									} `yaml:"valueFrom"`
								}
							}
						}
					}
				}
			} `yaml:"jobTemplate"`
		}
	}
	if err := yaml.Unmarshal(data, &cj); err != nil {
		t.Fatal(err)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if cj.Kind != "CronJob" || cj.Spec.ConcurrencyPolicy != "Forbid" || len(pod.Containers) != 1 || pod.RestartPolicy == "" {
		t.Fatalf("not a CronJob with concurrencyPolicy: Forbid and one container: %+v", cj)
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom.FieldRef.FieldPath != "":
			env[e.Name] = "field:" + e.ValueFrom.FieldRef.FieldPath
		case e.ValueFrom.SecretKeyRef.Name != "":
			env[e.Name] = "secret"
		default:
			env[e.Name] = e.Value
		}
	}
	if env["TEAMRUN_SESSION"] != "field:metadata.labels['batch.kubernetes.io/job-name']" || env["TEAMRUN_STORE"] != "secret" || env["TEAMRUN_PROJECT"] == "" {
		t.Errorf("the session id must come from the Job's name and the store from a Secret: %v", env)
	}
	for _, want := range []string{"--continue", "--wait", "$(TEAMRUN_SESSION)"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %s", c.Args, want)
		}
	}

	// The command line, as the kubelet expands it, against a real store.
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec", "agents.yaml")
	if err := os.MkdirAll(filepath.Dir(spec), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, []byte("agents:\n  w:\n    command: [echo, ok]\ntasks:\n  one:\n    description: one\n    agent: w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "home")
	if u := os.Getenv("TEAMRUN_TEST_PG_URL"); u != "" {
		schema := scripttest.RandomSchema()
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		store = u + sep + "schema=" + schema
		t.Cleanup(func() { scripttest.DropSchemas(t, u, []string{schema}) })
	}
	t.Setenv("TEAMRUN_STORE", store)
	t.Setenv("TEAMRUN_PROJECT", env["TEAMRUN_PROJECT"])
	args := []string{"teamrun"}
	for _, a := range c.Args {
		a = strings.ReplaceAll(a, "$(TEAMRUN_SESSION)", "nightly-team-29412360")
		args = append(args, strings.Replace(a, "/spec/agents.yaml", spec, 1))
	}
	for i, want := range []string{"summary done: 0 restored, 1 ran", "summary done: 1 restored, 0 ran"} {
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("pod %d: %s exited %d\n%s%s", i+1, strings.Join(args, " "), code, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "session: nightly-team-29412360") {
			t.Errorf("pod %d: want %q in\n%s", i+1, want, out.String())
		}
	}
}
