package spec

import (
	"encoding/json"
	"time"
)

// MarshalJSON writes the task for TestValidSpecs' golden files, with the
// fields taskMore holds (Options, Condition, OutputFile) where they were
// before they moved there: the golden files do not change with how a
// task is laid out. Nothing but the tests writes a task as JSON.
func (t Task) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name            string
		Description     string
		ExpectedOutput  string
		Agent           string
		Context         []string
		HasContext      bool
		MaxRetries      int
		RetryDelay      time.Duration
		Timeout         time.Duration
		OutputVariable  string
		Options         []string
		Condition       []Route
		Pos             Pos
		AcceptTruncated bool       `json:",omitempty"`
		OutputFile      string     `json:",omitempty"`
		Foreach         *Foreach   `json:",omitempty"`
		Repeat          *Repeat    `json:",omitempty"`
		Expansion       *Expansion `json:",omitempty"`
	}{t.Name, t.Description, t.ExpectedOutput, t.Agent, t.Context, t.HasContext, t.MaxRetries, t.RetryDelay, t.Timeout,
		t.OutputVariable, t.Options(), t.Condition(), t.Pos, t.AcceptTruncated, t.OutputFile(), t.Foreach, t.Repeat, t.Expansion})
}
