package spec

import (
	"errors"
	"strings"
	"testing"
)

// PraisonAI scheduler files: the task: string runs once with the first
// agent; schedule: is one note with the crontab line that repeats it;
// its max_retries and timeout apply to the task and max_cost becomes the
// session's budget.
func TestPraisonAISchedulerFile(t *testing.T) {
	const head = "framework: praisonai\nagents:\n  - name: monitor\n    role: News Analyst\n    llm: m\n"
	tests := []struct {
		name     string
		src      string // after head
		err      string // the one error, when refused
		warnings []string
		not      string // in no warning
		budget   float64
		retries  int
	}{
		{name: "interval string", src: "task: Check AI news\nschedule: \"*/30m\"\n",
			warnings: []string{"schedule: teamrun runs the team once, now; to run it every 30m, put this line in crontab: */30 * * * * teamrun run "}},
		{name: "hourly", src: "task: Check AI news\nschedule: {interval: hourly}\n",
			warnings: []string{"to run it hourly, put this line in crontab: 0 * * * * teamrun run "}},
		{name: "cron", src: "task: Check AI news\nschedule: \"cron:0 7 * * 1-5\"\n",
			warnings: []string{"to run it on the schedule 0 7 * * 1-5, put this line in crontab: 0 7 * * 1-5 teamrun run "}},
		{name: "plain seconds", src: "task: Check AI news\nschedule: 3600\n",
			warnings: []string{"to run it every 3600 seconds, put this line in crontab: 0 * * * * teamrun run "}},
		{name: "seconds", src: "task: Check AI news\nschedule: {interval: \"*/10s\"}\n",
			warnings: []string{"(cron's floor is one minute, not 10 seconds), put this line in crontab: * * * * * "}},
		{name: "retries and budget", src: "task: Check AI news\nschedule:\n  interval: hourly\n  max_retries: 3\n  max_cost: 1.50\n  run_immediately: true\n",
			// The crontab line ends the note: pasted, it is the line alone.
			warnings: []string{"now; schedule.max_cost is each run's budget ($1.50 a session); to run it hourly, put this line in crontab: 0 * * * * teamrun run ", "schedule.max_cost: agents monitor have no price"},
			not:      "not applied", budget: 1.5, retries: 3},
		{name: "a whole number of dollars", src: "task: Check AI news\nschedule: {interval: daily, max_cost: 2}\n",
			warnings: []string{"$2.00 a session"}, budget: 2},
		{name: "not a number", src: "task: Check AI news\nschedule: {interval: daily, max_cost: lots}\n",
			err: `schedule.max_cost: expected a positive number of US dollars (such as 1.50), got string "lots"`},
		{name: "zero", src: "task: Check AI news\nschedule: {interval: daily, max_cost: 0}\n",
			err: "schedule.max_cost: expected a positive number of US dollars (such as 1.50), got integer 0"},
		{name: "past 2^53", src: "task: Check AI news\nschedule: {interval: daily, max_cost: 1e300}\n",
			err: "schedule.max_cost: expected at most 9007199254740991, got number 1e300"},
		{name: "a second agent", src: "  - {name: helper, llm: m}\ntask: Check AI news\n",
			warnings: []string{"only the first agent (monitor) runs the task, as PraisonAI's scheduler does; helper does nothing"}},
		{name: "other keys", src: "task: Check AI news\nschedule: {interval: daily, notify: ops}\n",
			warnings: []string{"schedule: notify not applied"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			team, err := Parse("sched.yaml", []byte(head+tt.src))
			if tt.err != "" {
				var list ErrorList
				if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].String(), tt.err) {
					t.Fatalf("want one error %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(team.Tasks) != 1 || team.Tasks[0].Agent != "monitor" || team.Tasks[0].Description != "Check AI news" {
				t.Fatalf("tasks %+v", team.Tasks)
			}
			all := ErrorList(append(team.Warnings, team.Notes...)).Error()
			// The crontab line is a note (--quiet leaves it out), and it
			// carries --quiet: the cron job it makes mails nothing on success.
			if notes := ErrorList(team.Notes).Error(); strings.Contains(all, "crontab") &&
				(!strings.Contains(notes, "crontab") || !strings.Contains(notes, " --continue --quiet --session ")) {
				t.Errorf("the crontab line is no note with --quiet:\nnotes: %s\nall: %s", notes, all)
			}
			for _, w := range tt.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("no warning says %q:\n%s", w, all)
				}
			}
			if tt.not != "" && strings.Contains(all, tt.not) {
				t.Errorf("a warning says %q:\n%s", tt.not, all)
			}
			switch {
			case tt.budget == 0 && team.Budget != nil:
				t.Errorf("budget %+v, want none", team.Budget)
			case tt.budget != 0 && (team.Budget == nil || team.Budget.MaxCostUSD != tt.budget || team.Budget.CostKey() != "schedule.max_cost"):
				t.Errorf("budget %+v, want max_cost_usd %v set by schedule.max_cost", team.Budget, tt.budget)
			}
			if team.Tasks[0].MaxRetries != tt.retries {
				t.Errorf("max_retries %d, want %d", team.Tasks[0].MaxRetries, tt.retries)
			}
		})
	}
}

// A native budget names its own key.
func TestBudgetCostKey(t *testing.T) {
	if k := (&Budget{MaxCostUSD: 1}).CostKey(); k != "budget.max_cost_usd" {
		t.Errorf("CostKey %q", k)
	}
}

// config.yml prices reach a scheduler file's agents: the warning that
// max_cost counts nothing goes once they have one.
func TestSchedulerBudgetPrices(t *testing.T) {
	src := "framework: praisonai\nagents:\n  - {name: monitor, llm: m}\ntask: Check AI news\nschedule: {interval: hourly, max_cost: 1}\n"
	team, err := Parse("sched.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ErrorList(team.Warnings).Error(), "schedule.max_cost: agents monitor have no price") {
		t.Fatalf("no unpriced warning:\n%v", ErrorList(team.Warnings))
	}
	team.FillPrices(map[string]*Price{"m": {Input: 1, Output: 2}})
	if w := ErrorList(team.Warnings).Error(); strings.Contains(w, "have no price") {
		t.Errorf("the warning stays once the model has a price:\n%s", w)
	}
}
