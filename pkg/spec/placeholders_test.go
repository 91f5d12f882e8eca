package spec

import (
	"strings"
	"testing"
)

func TestUndefinedPlaceholders(t *testing.T) {
	native := `variables:
  topic: AI
agents:
  w:
    llm: m
    goal: Write for {audience}
tasks:
  research:
    agent: w
    description: Research {topic}
    output_variable: notes
  write:
    agent: w
    description: |
      Use {notes}.
      Write about {topik} for {audience}.
    expected_output: "{json} {\"a\": 1} {1x}"
`
	praison := `framework: praisonai
input: AI
agents:
  r:
    role: R
steps:
  - agent: r
    action: "Research {{ input }} and {{inputs}}, then {{previous_output}}"
`
	roles := `topic: AI
roles:
  w:
    role: W
    goal: Write for {audience}
    tasks:
      t:
        description: About {topic}
`
	tests := []struct {
		name, file, src string
		vars            map[string]any
		want            []string
	}{
		{"native", "a.yaml", native, nil, []string{
			`a.yaml:6:21: agents.w.goal: {audience}: nothing defines audience (variables:, an output_variable or --var audience=VALUE), so the text keeps it as written; known: notes, topic`,
			`a.yaml:16:19: tasks.write.description: {topik}: nothing defines topik (variables:, an output_variable or --var topik=VALUE), so the text keeps it as written (did you mean "topic"?); known: notes, topic`,
			`a.yaml:16:31: tasks.write.description: {audience}: nothing defines audience (variables:, an output_variable or --var audience=VALUE), so the text keeps it as written; known: notes, topic`,
			`a.yaml:17:23: tasks.write.expected_output: {json}: nothing defines json (variables:, an output_variable or --var json=VALUE), so the text keeps it as written; known: notes, topic`,
		}},
		{"a --var defines it", "a.yaml", native, map[string]any{"audience": "x", "topik": "y", "json": "z"}, nil},
		{"roles: name the agent where it is declared", "r.yaml", roles, nil, []string{
			`r.yaml:5:21: roles.w.goal: {audience}: nothing defines audience (variables:, an output_variable or --var audience=VALUE), so the text keeps it as written; known: topic`,
		}},
		{"praisonai {{ }}", "p.yaml", praison, nil, []string{
			`p.yaml:8:39: steps[0].action: {inputs}: nothing defines inputs (variables:, an output_variable or --var inputs=VALUE), so the text keeps it as written (did you mean "input"?); known: input`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse(tt.file, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range team.UndefinedPlaceholders(tt.vars) {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
