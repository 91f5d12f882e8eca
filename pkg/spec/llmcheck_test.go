package spec

import "testing"

// TestLLMStreamValues: a stream: the schema refuses names the values it
// takes, whichever way it is wrong.
func TestLLMStreamValues(t *testing.T) {
	spec := func(stream string) string {
		return "llm: {model: m, stream: " + stream + "}\nagents:\n  w: {role: W}\ntasks:\n  a: {description: d, agent: w}\n"
	}
	tests := []refusal{
		{"yes", spec("yes"), `agents.yaml:1:25: llm.stream: expected true, false or auto, got string "yes"`},
		{"Auto", spec("Auto"), `agents.yaml:1:25: llm.stream: expected true, false or auto, got string "Auto"`},
		{"number", spec("1"), `agents.yaml:1:25: llm.stream: expected true, false or auto, got integer 1`},
	}
	refusedWithLine(t, tests)
}
