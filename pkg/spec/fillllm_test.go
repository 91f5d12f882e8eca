package spec

import "testing"

func TestFillLLM(t *testing.T) {
	own := &LLM{Model: "own"}
	team := &Team{Agents: []*Agent{
		{Name: "bare", Kind: LLMAgent},
		{Name: "own", Kind: LLMAgent, LLM: own},
		{Name: "cmd", Kind: CommandAgent, Shell: "cat"},
	}}
	team.FillLLM(LLM{})
	if team.Agents[0].LLM != nil {
		t.Fatalf("an empty default must change nothing, got %+v", team.Agents[0].LLM)
	}
	team.FillLLM(LLM{Model: "tiny", BaseURL: "http://127.0.0.1:1/v1"})
	if got := team.Agents[0].LLM; got == nil || got.Model != "tiny" || got.BaseURL != "http://127.0.0.1:1/v1" {
		t.Errorf("bare agent: got %+v, want the default", got)
	}
	if team.Agents[1].LLM != own {
		t.Errorf("an agent's own llm was replaced by %+v", team.Agents[1].LLM)
	}
	if team.Agents[2].LLM != nil {
		t.Errorf("a command agent got an llm: %+v", team.Agents[2].LLM)
	}
	team.Agents[0].LLM.Model = "changed"
	team.FillLLM(LLM{Model: "tiny"})
	if team.Agents[0].LLM.Model != "changed" {
		t.Errorf("a filled agent must not be filled again")
	}
}
