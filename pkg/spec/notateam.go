package spec

import (
	"fmt"
	"slices"
	"strings"
)

// teamKeys are the top-level keys of either format that a team is made of
// or configured with; a file with mostly other keys is not a team.
var teamKeys = map[string]bool{
	// native (schemas/agents.schema.json)
	"name": true, "process": true, "variables": true, "models": true, "budget": true,
	"llm": true, "agents": true, "tasks": true,
	// PraisonAI
	"framework": true, "topic": true, "input": true, "roles": true, "steps": true,
	"workflow": true, "task": true, "schedule": true, "config": true, "dependencies": true,
	"type": true, "description": true, "version": true, "metadata": true,
}

// notATeam recognises files that are something other than a team — an API
// server, a bot gateway, a benchmark job, a recipe manifest, another tool's
// values — and says so in one line: reporting each of their keys as unknown
// would hide what is wrong, and no edit of those keys would make them run.
func notATeam(file string, root *tree) *Diagnostic {
	at := func(v *tree, msg string) *Diagnostic {
		return &Diagnostic{File: file, Line: v.kpos().Line, Column: v.kpos().Column, Path: v.path, Message: msg}
	}
	top := &tree{at: root.at, kat: root.at}
	if hasAnyTask(root) {
		return nil
	}
	for _, k := range []string{"gateway", "channels"} {
		if v := root.get(k); v != nil {
			return at(v, "this is a chat-bot gateway configuration (gateway:/channels: route messages to agents), not a team: teamrun runs a team's tasks to an end and answers no chat; a team has agents and tasks (see `teamrun schema`)")
		}
	}
	// A recipe's manifest (PraisonAI's TEMPLATE.yaml, an Agent-Recipes
	// recipe.yaml) names the files its team is in, or says what the
	// recipe requires; the team is in the file beside it.
	for _, k := range []string{"agents", "workflow"} {
		if v := root.get(k); v != nil {
			if s, ok := v.str(); ok && s != "" {
				return at(v, fmt.Sprintf("this is a recipe manifest (%s: names the file %s), not a team: run that file instead (teamrun run %s)", k, quoteShort(s), s))
			}
		}
	}
	if r := root.get("requires"); r != nil {
		return at(r, "this is a recipe manifest (requires: lists what the recipe needs), not a team: PraisonAI runs the recipe's agents.yaml (or workflow.yaml) beside it; run that file instead (teamrun run agents.yaml)")
	}
	if r := root.get("includes"); r != nil {
		// A manifest without tasks that lists the recipes it uses.
		return at(r, "this is a recipe manifest (includes: lists the recipes it uses), not a team: PraisonAI runs the recipe's agents.yaml (or workflow.yaml) beside it; run that file instead (teamrun run agents.yaml)")
	}
	ag := root.get("agents")
	for _, it := range ag.itemsOrNil() {
		if it.get("import_path") != nil || it.get("model_name") != nil {
			return at(ag, "this is a benchmark job configuration (agents listed by import_path/model_name), not a team: teamrun runs agents.yaml teams with tasks (see `teamrun schema`)")
		}
	}
	if a := root.get("agent"); a.isMap() {
		return at(a, "this is a single agent (agent:) with no task: PraisonAI answers prompts with it, teamrun runs a team's tasks to an end; declare it under agents: and say what it should do (steps: [{agent: NAME, action: WHAT}], or tasks:, see `teamrun schema`)")
	}
	if d := root.get("deploy"); d != nil {
		return at(d, "this file serves agents as an API (deploy:); teamrun runs tasks: give the agents tasks (tasks: with description and agent) to run them here")
	}
	if crewAIAgents(root) {
		return at(top, "this is a CrewAI agents file (each top-level key an agent with role, goal and backstory), not a team: CrewAI keeps the tasks in a tasks.yaml beside it; teamrun runs one file with both: put the agents under roles: and give each its tasks (roles.NAME.tasks)")
	}
	var unknown []string
	for _, k := range root.keys() {
		if !teamKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if ag := root.get("agents"); len(unknown) == 0 && praisonAgentsOnly(ag) {
		return at(ag, "these agents have no task: PraisonAI makes one from each agent's instructions, teamrun runs the tasks a file writes down: give each agent a step (steps: [{agent: NAME, action: WHAT}]) or a task (tasks:, see `teamrun schema`)")
	}
	if len(unknown) >= 3 && 2*len(unknown) > len(root.keys()) {
		shown := unknown
		if len(shown) > 4 {
			shown = append(shown[:4:4], "…")
		}
		return at(top, fmt.Sprintf("this is not a team: most top-level keys (%s) are not agents.yaml keys, so it looks like another tool's configuration (such as Helm values); teamrun runs a file with agents and tasks (see `teamrun schema`)", strings.Join(shown, ", ")))
	}
	return nil
}

// crewAIAgents reports whether root is a CrewAI config/agents.yaml: every
// top-level key, none of them a team's, an agent with a role and a goal or
// backstory.
func crewAIAgents(root *tree) bool {
	for i, k := range root.keys() {
		if teamKeys[k] || !crewAIAgent(root.vals()[i]) {
			return false
		}
	}
	return len(root.keys()) > 0
}

// crewAIAgent reports whether v is an agent as CrewAI writes one: a role
// and a goal or backstory.
func crewAIAgent(v *tree) bool {
	return v.isMap() && v.get("role") != nil && (v.get("goal") != nil || v.get("backstory") != nil)
}

// agentList recognises a file whose top level is a list of CrewAI-style
// agents (a CrewAI agents file written as a list), which has neither the
// tasks nor the mapping a team is: it says what the file is and what to do
// instead of only "got a list".
func agentList(file string, root *tree) *Diagnostic {
	items := root.itemsOrNil()
	if len(items) == 0 || slices.ContainsFunc(items, func(v *tree) bool { return !crewAIAgent(v) }) {
		return nil
	}
	return &Diagnostic{File: file, Line: root.pos().Line, Column: root.pos().Column,
		Message: "this is a list of agents (each item with role, goal and backstory), as a CrewAI agents file, not a team: CrewAI keeps the tasks in a tasks.yaml beside it; teamrun runs one file with both, a mapping at the top: put the agents under roles: (each under its name) and give each its tasks (roles.NAME.tasks)"}
}

// nativeAgentKeys are the keys of an agent in schemas/agents.schema.json
// (TestNativeAgentKeys holds them to it).
var nativeAgentKeys = []string{"backstory", "command", "dir", "goal", "instructions", "llm", "max_tool_calls", "max_turns", "memory", "role", "shell", "timeout", "tools"}

// praisonAgentsOnly reports whether agents, in a file with no task, are
// PraisonAI's, which PraisonAI gives a task each from their instructions:
// one of them has a key the native format has not, or one has
// instructions and none runs a command (a native file's agents without
// tasks keep the schema's errors).
func praisonAgentsOnly(agents *tree) bool {
	members := agents.itemsOrNil()
	if agents.isMap() {
		members = agents.vals()
	}
	instructed, command := false, false
	for _, m := range members {
		if !m.isMap() {
			continue
		}
		for _, k := range m.keys() {
			switch {
			case k == "shell" || k == "command":
				command = true
			case k == "instructions":
				instructed = true
			case !slices.Contains(nativeAgentKeys, k):
				return true
			}
		}
	}
	return instructed && !command
}

// hasAnyTask tells whether the file defines work in any shape teamrun
// reads: top-level tasks, steps, a scheduler task, or tasks under a role.
func hasAnyTask(root *tree) bool {
	if v := root.get("tasks"); v != nil && !v.isNull() {
		return true
	}
	if stepsOf(root) != nil || root.get("task") != nil {
		return true
	}
	for _, k := range []string{"roles", "agents"} {
		r := root.get(k)
		var members []*tree
		if r.isMap() {
			members = r.vals()
		}
		members = append(members, r.itemsOrNil()...)
		for _, m := range members {
			if m.get("tasks") != nil {
				return true
			}
		}
	}
	return false
}

// groupWarnings folds the same warning about the same key in several
// agents or tasks ("verbose" ignored in six roles) into one line at the
// first, listing the lines: six copies bury the warnings that differ.
func groupWarnings(ws []Diagnostic) []Diagnostic {
	type key struct{ leaf, msg string }
	leafOf := func(d Diagnostic) string {
		p := d.Path
		if i := strings.LastIndexByte(p, '.'); i >= 0 {
			return p[i+1:]
		}
		return ""
	}
	count := map[key]int{}
	for _, d := range ws {
		if l := leafOf(d); l != "" {
			count[key{l, d.Message}]++
		}
	}
	out := ws[:0:0]
	done := map[key]bool{}
	for _, d := range ws {
		k := key{leafOf(d), d.Message}
		if k.leaf == "" || count[k] < 2 {
			out = append(out, d)
			continue
		}
		if done[k] {
			continue
		}
		done[k] = true
		var lines []string
		kind := ""
		for _, o := range ws {
			if leafOf(o) != k.leaf || o.Message != k.msg {
				continue
			}
			lines = append(lines, fmt.Sprint(o.Line))
			k := "places"
			switch {
			case strings.Contains(o.Path, "tasks"):
				k = "tasks"
			case strings.HasPrefix(o.Path, "roles") || strings.HasPrefix(o.Path, "agents"):
				k = "agents"
			case strings.HasPrefix(o.Path, "steps") || strings.HasPrefix(o.Path, "workflow"):
				k = "steps"
			}
			if kind == "" {
				kind = k
			} else if kind != k {
				kind = "places"
			}
		}
		g := d
		g.Path = k.leaf
		g.Message = fmt.Sprintf("%s (in %d %s, lines %s)", d.Message, len(lines), kind, strings.Join(lines, ", "))
		out = append(out, g)
	}
	return out
}
