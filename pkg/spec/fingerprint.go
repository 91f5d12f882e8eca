package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"time"
)

func sortStrings(s []string) { sort.Strings(s) }

func hash16(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// TaskDefs returns the tasks as a checkpoint compares them: placeholders
// rendered against state, effective context resolved, keys computed.
func (t *Team) TaskDefs(state map[string]any) []TaskDef {
	defs := make([]TaskDef, len(t.Tasks))
	agentKeys := map[string]string{}
	agents := make(map[string]*Agent, len(t.Agents))
	for _, a := range t.Agents {
		if _, dup := agents[a.Name]; !dup {
			agents[a.Name] = a
		}
	}
	for i, tk := range t.Tasks {
		ak, ok := agentKeys[tk.Agent]
		if !ok {
			ak = agentKeyOf(tk.Agent, agents[tk.Agent], state)
			agentKeys[tk.Agent] = ak
		}
		defs[i] = TaskDef{
			ID:             i,
			Name:           tk.Name,
			Agent:          tk.Agent,
			Description:    Render(tk.Description, state),
			ExpectedOutput: Render(tk.ExpectedOutput, state),
			Context:        t.ContextOf(i),
			AgentKey:       ak,
		}
	}
	index := make(map[string]int, len(defs))
	for i, d := range defs {
		if _, dup := index[d.Name]; !dup {
			index[d.Name] = i
		}
	}
	// Keys include the keys of context tasks, so compute them depth first;
	// a cycle (only in an unvalidated team) is cut rather than followed.
	const (
		todo = iota
		busy
		done
	)
	state2 := make([]int, len(defs))
	var key func(i int) string
	key = func(i int) string {
		switch state2[i] {
		case done:
			return defs[i].Key
		case busy:
			return ""
		}
		state2[i] = busy
		tk := t.Tasks[i]
		var ctx []any
		for _, name := range defs[i].Context {
			ck := ""
			if j, ok := index[name]; ok {
				ck = key(j)
			}
			ctx = append(ctx, map[string]any{"name": name, "key": ck})
		}
		var cond []any
		for _, r := range tk.Condition {
			cond = append(cond, map[string]any{"value": r.Value, "next": anyStrings(r.Next)})
		}
		defs[i].Key = hash16(canonicalJSON(map[string]any{
			"name":            defs[i].Name,
			"agent":           defs[i].Agent,
			"agent_key":       defs[i].AgentKey,
			"description":     defs[i].Description,
			"expected_output": defs[i].ExpectedOutput,
			"output_variable": tk.OutputVariable,
			"options":         anyStrings(tk.Options),
			"condition":       cond,
			"max_retries":     tk.MaxRetries,
			"timeout":         durationText(tk.Timeout),
			"context":         ctx,
		}))
		state2[i] = done
		return defs[i].Key
	}
	for i := range defs {
		key(i)
	}
	return defs
}

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// AgentKey hashes the full definition of the agent named name as it would
// run with state: kind, prompts (rendered), llm settings (the name of the
// key's variable, never a key), memory, command and timeout.
func (t *Team) AgentKey(name string, state map[string]any) string {
	return t.agentKey(name, state)
}

func (t *Team) agentKey(name string, state map[string]any) string {
	return agentKeyOf(name, t.Agent(name), state)
}

func agentKeyOf(name string, a *Agent, state map[string]any) string {
	if name == HumanAgent {
		return hash16(canonicalJSON(map[string]any{"kind": Human.String()}))
	}
	if a == nil {
		return hash16(canonicalJSON(map[string]any{"kind": "unknown", "name": name}))
	}
	def := map[string]any{
		"kind":         a.Kind.String(),
		"role":         Render(a.Role, state),
		"goal":         Render(a.Goal, state),
		"backstory":    Render(a.Backstory, state),
		"instructions": Render(a.Instructions, state),
		"memory":       a.Memory,
		"shell":        a.Shell,
		"command":      anyStrings(a.Command),
		"timeout":      durationText(a.Timeout),
	}
	if a.LLM != nil {
		l := map[string]any{
			"model":       a.LLM.Model,
			"base_url":    a.LLM.BaseURL,
			"api_key_env": a.LLM.APIKeyEnv,
			"max_tokens":  a.LLM.MaxTokens,
			"timeout":     durationText(time.Duration(a.LLM.Timeout)),
		}
		if a.LLM.Temperature != nil {
			l["temperature"] = *a.LLM.Temperature
		}
		def["llm"] = l
	}
	return hash16(canonicalJSON(def))
}

// CanonicalTasks is the JSON array DESIGN §4 hashes: per task, in file
// order, {"agent","description","expected_output","id","name"}.
func CanonicalTasks(defs []TaskDef) []byte {
	list := make([]any, len(defs))
	for i, d := range defs {
		list[i] = map[string]any{
			"agent":           d.Agent,
			"description":     d.Description,
			"expected_output": d.ExpectedOutput,
			"id":              d.ID,
			"name":            d.Name,
		}
	}
	return canonicalJSON(list)
}

// FingerprintOf is the task-set fingerprint of defs: the first 16 hex
// digits of the SHA-256 of CanonicalTasks. A checkpoint recomputes it from
// its stored defs.
func FingerprintOf(defs []TaskDef) string {
	return hash16(CanonicalTasks(defs))
}

// Fingerprint is the task-set fingerprint of the team as it runs with state.
func (t *Team) Fingerprint(state map[string]any) string {
	return FingerprintOf(t.TaskDefs(state))
}
