package schemas

import (
	"encoding/json"
	"testing"
)

func TestAgentsSchemaIsDraft2020(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(AgentsSchema, &doc); err != nil {
		t.Fatalf("embedded schema is not JSON: %v", err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", doc["$schema"])
	}
	defs, _ := doc["$defs"].(map[string]any)
	for _, name := range []string{"agent", "task", "listTask", "llm", "duration"} {
		if defs[name] == nil {
			t.Errorf("$defs.%s is missing", name)
		}
	}
}
