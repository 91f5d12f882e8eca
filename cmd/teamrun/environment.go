package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamrun/teamrun/pkg/runner/llm"
)

// environmentTopic is the help topic on environment variables: `teamrun
// help environment`, as gh has `gh help environment`.
const environmentTopic = "environment"

// environmentCommand is that topic. It is a hidden command so that `help
// environment`, `environment --help` and `--help environment` reach it as
// they reach any command's help, while `teamrun --help` lists commands
// only (its last line names the topic) and completion offers it after
// `help` alone.
func environmentCommand() *cli.Command {
	text := environmentHelp()
	return &cli.Command{
		Name:   environmentTopic,
		Usage:  "the environment variables teamrun reads and gives the commands it starts",
		Hidden: true,
		// Printed as it is: the text holds no template action.
		CustomHelpTemplate: text,
		Action: func(c *cli.Context) error {
			_, err := io.WriteString(c.App.Writer, text)
			return err
		},
	}
}

// appHelpTopics ends `teamrun --help`: the topics that are no command.
const appHelpTopics = `
HELP TOPICS:
   environment  the environment variables teamrun reads and gives the commands it starts (teamrun help environment)
`

// environmentHelp is the topic's text: every variable the README names that
// a user sets or a command reads, one line each. The providers' key
// variables come from llm's own table.
func environmentHelp() string {
	var b strings.Builder
	line := func(name, what string) { fmt.Fprintf(&b, "   %-22s%s\n", name, what) }
	b.WriteString("ENVIRONMENT VARIABLES:\n\nteamrun reads:\n")
	line("OPENAI_BASE_URL", "an LLM agent's server when its llm has no base_url and no provider prefix (else https://api.openai.com/v1)")
	line("OPENAI_API_KEY", "an LLM agent's key when its llm names no api_key_env (a local server needs none)")
	line("(api_key_env's NAME)", "the key of an llm whose api_key_env (or config.yml's llm.api_key_env) names NAME")
	// The served providers, those that share variables on one line
	// (together/, together_ai/); openai/'s is OPENAI_API_KEY, above.
	var keys [][]string
	prefixes := map[string][]string{}
	for _, p := range llm.Providers() {
		if len(p.KeyEnv) == 0 || slices.Contains(p.KeyEnv, "OPENAI_API_KEY") {
			continue
		}
		k := strings.Join(p.KeyEnv, ", ")
		if _, seen := prefixes[k]; !seen {
			keys = append(keys, p.KeyEnv)
		}
		prefixes[k] = append(prefixes[k], p.Prefix)
	}
	for _, k := range keys {
		line(k[0], fmt.Sprintf("the key of %s models%s", strings.Join(prefixes[strings.Join(k, ", ")], " and "), alsoRead(k[1:])))
	}
	line("TEAMRUN_STORE", "the session store when --store is not given: a folder, file://PATH or postgres://user@host/db")
	line("TEAMRUN_HOME", "the file store's folder when neither --store nor TEAMRUN_STORE is given (default ~/.teamrun)")
	line("TEAMRUN_PROJECT", "the project key of a PostgreSQL store (default: the spec folder's absolute path)")
	line("PGPASSWORD, PG*", "what a postgres:// store URL leaves out, its password included (as ~/.pgpass does)")
	line("SSL_CERT_FILE", "a CA certificate to trust for an https server, an LLM's or an MCP server's (self-signed, a private CA)")
	line("NO_COLOR", "set: no colour on a terminal")
	line("TERM", "dumb: plain timestamped lines, no colour (control characters are still escaped on a terminal)")
	line("HOME", "~ in a store's location, and the default store ~/.teamrun")
	line("TMPDIR", "the scratch folder's place when the user has no cache folder to use")
	line("GOGC, GOMEMLIMIT", "set: they override teamrun's collector settings")
	line("GOTRACEBACK", "crash: SIGQUIT dumps every goroutine and crashes (to debug a teamrun that hangs)")
	b.WriteString("\nteamrun gives the commands it starts (command agents, an LLM agent's tools and stdio MCP servers):\n")
	line("TEAMRUN_SESSION", "the session's id")
	line("TEAMRUN_TASK", "the task's name")
	line("TEAMRUN_ATTEMPT", "the attempt's number: 1, 2, … counted across runs")
	line("TEAMRUN_CONTEXT_DIR", "a folder with one file per context task, its raw output, named after the task")
	line("TEAMRUN_VAR_<NAME>", "each shared-state variable, NAME upper-cased and other characters as _ (non-strings as JSON)")
	line("TEAMRUN_VARS_FILE", "a JSON file of the whole shared state, when a variable was left out of the environment")
	line("TEAMRUN_STORE", "the run's store, for a teamrun the command runs (a PostgreSQL URL without its password)")
	line("TEAMRUN_ARG_<NAME>", "a tool's only: each top-level scalar argument of the call (stdin has them all as JSON)")
	return b.String()
}

// alsoRead is ", else NAME" for the variables read when the first is unset.
func alsoRead(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (else " + strings.Join(names, ", else ") + ")"
}
