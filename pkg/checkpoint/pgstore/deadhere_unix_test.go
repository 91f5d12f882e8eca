//go:build unix

package pgstore

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/teamrun/teamrun/pkg/checkpoint"
)

func TestDeadHere(t *testing.T) {
	host, _ := os.Hostname()
	reaped := exec.Command("true")
	if err := reaped.Run(); err != nil {
		t.Fatal(err)
	}
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zombie.Wait() })
	// Until its parent reaps it, the exited child is a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for !deadHere(&checkpoint.HeldError{PID: zombie.Process.Pid, Host: host}) {
		if time.Now().After(deadline) {
			t.Fatal("an exited, unreaped child never reads as dead")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tests := []struct {
		name string
		h    *checkpoint.HeldError
		want bool
	}{
		{"this process", &checkpoint.HeldError{PID: os.Getpid(), Host: host}, false},
		{"a reaped child", &checkpoint.HeldError{PID: reaped.Process.Pid, Host: host}, true},
		{"another host", &checkpoint.HeldError{PID: reaped.Process.Pid, Host: host + "-elsewhere"}, false},
		{"no pid", &checkpoint.HeldError{Host: host}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := deadHere(tt.h); got != tt.want {
			t.Errorf("%s: deadHere = %v, want %v", tt.name, got, tt.want)
		}
	}
}
