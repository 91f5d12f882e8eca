package spec

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/teamrun/teamrun/internal/sessionid"
	"github.com/teamrun/teamrun/internal/shellcmd"
)

// PraisonAI scheduler files hold one task (a top-level task: string) for the
// first agent, and a schedule: teamrun runs the task once, as one tick of
// PraisonAI's scheduler, and says which crontab line would repeat it.

// praisonSchedulerTask makes the top-level task: string a task of the
// first agent, as PraisonAI's scheduler runs it.
func (b *builder) praisonSchedulerTask(v *tree) {
	s, ok := v.str()
	if !ok || strings.TrimSpace(s) == "" {
		b.errorf(v, v.pos(), "expected the task as a string, got %s", v.gotText())
		return
	}
	if len(b.team.Agents) == 0 {
		b.errorf(v, v.kpos(), "the task needs an agent to run it: declare one under agents")
		return
	}
	tk := &Task{Name: "task", Agent: b.team.Agents[0].Name, Description: s, Pos: v.kpos()}
	if sc := b.scheduleMap(); sc != nil {
		if f := sc.get("max_retries"); f != nil {
			b.praisonRetries(f, tk)
		}
		if f := sc.get("timeout"); f != nil {
			tk.Timeout = b.seconds(f)
		}
	}
	if n := len(b.team.Agents); n > 1 {
		var rest []string
		for _, a := range b.team.Agents[1:] {
			rest = append(rest, a.Name)
		}
		verb := "do"
		if len(rest) == 1 {
			verb = "does"
		}
		b.warnf(v, v.kpos(), "only the first agent (%s) runs the task, as PraisonAI's scheduler does; %s %s nothing", b.team.Agents[0].Name, strings.Join(rest, ", "), verb)
	}
	if b.addTask(tk, v, nameSource{at: v, made: "the task of a scheduler file's task:"}) {
		b.userTexts = append(b.userTexts, tk)
	}
}

// scheduleMap is the schedule: mapping, if the file has one; set by
// praisonSchedule.
func (b *builder) scheduleMap() *tree {
	if b.schedule.isMap() {
		return b.schedule
	}
	return nil
}

// praisonSchedule warns, in one line, that teamrun runs the team once and
// shows the crontab line that would run it on the schedule.
func (b *builder) praisonSchedule(v *tree) {
	b.schedule = v
	expr, ok := v.str()
	if v.isMap() {
		expr, ok = v.get("interval").str()
		if !ok {
			if n, isInt := v.get("interval").val().(int64); isInt {
				expr, ok = strconv.FormatInt(n, 10), true
			}
		}
	} else if n, isInt := v.val().(int64); isInt {
		expr, ok = strconv.FormatInt(n, 10), true
	}
	if !ok || expr == "" {
		b.warnf(v, v.kpos(), "ignored: teamrun runs the team once; run it from cron to repeat it")
		return
	}
	cron, note := cronLine(expr)
	abs, err := filepath.Abs(b.file)
	if err != nil {
		abs = b.file
	}
	extra := ""
	if v.isMap() {
		var ignored []string
		for i, k := range v.keys() {
			switch k {
			case "interval", "max_retries", "timeout", "run_immediately":
			case "max_cost", "max_cost_usd":
				if bg := b.scheduleBudget(v.vals()[i], k); bg != nil {
					// cron starts a new session each time: the budget is per run.
					extra += fmt.Sprintf("; schedule.%s is each run's budget ($%.2f a session)", k, bg.MaxCostUSD)
				}
			default:
				ignored = append(ignored, k)
			}
		}
		if len(ignored) > 0 {
			b.warnf(v, v.kpos(), "%s not applied: teamrun runs the team once, now", strings.Join(ignored, ", "))
		}
	}
	if cron == "" {
		b.warnf(v, v.kpos(), "%q is not run by teamrun (%s): teamrun runs the team once, now%s", expr, note, extra)
		return
	}
	if note != "" {
		note = " (" + note + ")"
	}
	if strings.ContainsAny(abs, "\n\r") {
		b.warnf(v, v.kpos(), "teamrun runs the team once, now; to run it %s%s from cron, give the file a path without a line break: a crontab line cannot hold one%s", scheduleWords(expr), note, extra)
		return
	}
	// The line comes last, so that what is pasted is the line alone.
	b.notef(v, v.kpos(), "teamrun runs the team once, now%s; to run it %s%s, put this line in crontab: %s", extra, scheduleWords(expr), note, cronCommand(cron, abs))
}

// cronCommand is the crontab line that runs the file at path abs on the
// schedule cron (its five fields), each tick a session of its own.
func cronCommand(cron, abs string) string {
	// The session id is the file's name made an id's start as a fresh
	// id's is, then the tick's local time.
	const tick = "-YYYY-MM-DD-HHMM"
	prefix := sessionid.Prefix(defaultName(abs), sessionid.MaxLen-len(tick))
	// --quiet: the cron job mails only what went wrong; this advice is a
	// note, which --quiet leaves out, so it is not mailed every time.
	cmd := shellcmd.Command("run", nil, []string{abs}, []string{"--continue", "--quiet", "--session", shellcmd.Quote(prefix) + "-$(date +%F-%H%M)"})
	// cron ends the command at a bare % (the rest is its stdin), and
	// gives the shell \% as %: every % of the line, the path's too.
	return cron + " " + strings.ReplaceAll(cmd, "%", `\%`)
}

// scheduleWords says how often expr runs, for "to run it ...".
func scheduleWords(expr string) string {
	e := strings.TrimSpace(expr)
	switch l := strings.ToLower(e); {
	case l == "hourly" || l == "daily" || l == "weekly":
		return l
	case strings.HasPrefix(l, "cron:"):
		return "on the schedule " + strings.TrimSpace(e[5:])
	}
	if _, err := strconv.Atoi(e); err == nil {
		return "every " + e + " seconds"
	}
	return "every " + strings.TrimPrefix(e, "*/")
}

// scheduleBudget makes the scheduler's max_cost (US dollars, PraisonAI's
// cost limit) the session's budget.
func (b *builder) scheduleBudget(f *tree, key string) *Budget {
	x, ok := number(f)
	if s, isStr := f.str(); isStr {
		n, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
		x, ok = n, err == nil
	}
	if !ok || !(x > 0) || math.IsInf(x, 0) {
		b.errorf(f, f.pos(), "expected a positive number of US dollars (such as 1.50), got %s", f.describe())
		return nil
	}
	if x > MaxBudget {
		// The native budget.max_cost_usd's bound (the schema's maximum).
		b.errorf(f, f.pos(), "expected at most %d, got %s", MaxBudget, f.describe())
		return nil
	}
	b.team.Budget = &Budget{MaxCostUSD: x, Pos: f.kpos(), Key: "schedule." + key}
	return b.team.Budget
}

var intervalRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\*?/?\*?(\d+)\s*(s|sec|seconds?|m|min|minutes?|h|hr|hours?)$`)
})

// cronLine turns a PraisonAI schedule expression into the five cron fields;
// note says what cron cannot do exactly. An empty line: no cron equivalent.
func cronLine(expr string) (line, note string) {
	e := strings.TrimSpace(expr)
	switch strings.ToLower(e) {
	case "hourly":
		return "0 * * * *", ""
	case "daily":
		return "0 0 * * *", ""
	case "weekly":
		return "0 0 * * 0", ""
	}
	if strings.HasPrefix(strings.ToLower(e), "cron:") {
		return strings.TrimSpace(e[5:]), ""
	}
	if strings.HasPrefix(strings.ToLower(e), "at:") || strings.HasPrefix(strings.ToLower(e), "in ") {
		return "", "a one-time run; start it then with at(1) or a timer"
	}
	secs := 0
	if m := intervalRE().FindStringSubmatch(e); m != nil {
		n, _ := strconv.Atoi(m[1])
		switch strings.ToLower(m[2])[0] {
		case 's':
			secs = n
		case 'm':
			secs = n * 60
		case 'h':
			secs = n * 3600
		}
	} else if n, err := strconv.Atoi(e); err == nil {
		secs = n
	}
	switch {
	case secs <= 0:
		return "", "not a schedule teamrun understands"
	case secs < 60:
		return "* * * * *", fmt.Sprintf("cron's floor is one minute, not %d seconds", secs)
	case secs%86400 == 0 && secs/86400 == 1:
		return "0 0 * * *", ""
	case secs%3600 == 0 && secs < 86400:
		if h := secs / 3600; h > 1 {
			return fmt.Sprintf("0 */%d * * *", h), ""
		}
		return "0 * * * *", ""
	case secs < 3600:
		m := secs / 60
		note := ""
		if secs%60 != 0 {
			note = fmt.Sprintf("cron counts whole minutes: every %d", m)
		}
		if m == 1 {
			return "* * * * *", note
		}
		return fmt.Sprintf("*/%d * * * *", m), note
	}
	h := secs / 3600
	if h >= 24 {
		return "0 0 * * *", "cron runs it daily at most this simply"
	}
	return fmt.Sprintf("0 */%d * * *", h), "cron counts whole hours"
}
