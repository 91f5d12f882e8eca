package spec

// Agent returns the agent named name, or nil.
func (t *Team) Agent(name string) *Agent {
	for _, a := range t.Agents {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// TaskIndex returns the position of the task named name, or -1.
func (t *Team) TaskIndex(name string) int {
	for i, tk := range t.Tasks {
		if tk.Name == name {
			return i
		}
	}
	return -1
}

// ContextOf returns the names of the tasks whose outputs task i reads: its
// explicit context; else, in a sequential team, the previous task (none for
// the first); in a workflow, none.
func (t *Team) ContextOf(i int) []string {
	if i < 0 || i >= len(t.Tasks) {
		return nil
	}
	tk := t.Tasks[i]
	if tk.HasContext {
		return append([]string(nil), tk.Context...)
	}
	if t.Process != Workflow && i > 0 {
		return []string{t.Tasks[i-1].Name}
	}
	return nil
}
