package llm

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/teamrun/teamrun/pkg/spec"
)

// Provider is a service that a LiteLLM-style model prefix (groq/llama3-70b)
// names: where its OpenAI-compatible endpoint is and which variables hold
// its key, tried in order.
type Provider struct {
	Prefix  string // with the slash: "groq/"
	BaseURL string
	KeyEnv  []string // empty: the endpoint needs no key (a local server)
}

// providers are the prefixes teamrun serves, each with the base URL and key
// variable its own documentation gives for the OpenAI-compatible API.
var providers = []Provider{
	{"openai/", DefaultBaseURL, []string{"OPENAI_API_KEY"}},
	{"ollama/", "http://127.0.0.1:11434/v1", nil},
	{"groq/", "https://api.groq.com/openai/v1", []string{"GROQ_API_KEY"}},
	{"openrouter/", "https://openrouter.ai/api/v1", []string{"OPENROUTER_API_KEY"}},
	{"together/", "https://api.together.xyz/v1", []string{"TOGETHER_API_KEY", "TOGETHERAI_API_KEY"}},
	{"together_ai/", "https://api.together.xyz/v1", []string{"TOGETHER_API_KEY", "TOGETHERAI_API_KEY"}},
	{"deepseek/", "https://api.deepseek.com/v1", []string{"DEEPSEEK_API_KEY"}},
	{"mistral/", "https://api.mistral.ai/v1", []string{"MISTRAL_API_KEY"}},
	{"fireworks_ai/", "https://api.fireworks.ai/inference/v1", []string{"FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"}},
	{"xai/", "https://api.x.ai/v1", []string{"XAI_API_KEY"}},
	{"gemini/", "https://generativelanguage.googleapis.com/v1beta/openai", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
	{"anthropic/", "https://api.anthropic.com/v1", []string{"ANTHROPIC_API_KEY"}},
	{"perplexity/", "https://api.perplexity.ai", []string{"PERPLEXITY_API_KEY", "PERPLEXITYAI_API_KEY"}},
	// Azure has no fixed endpoint: each resource has its own, so base_url
	// is required (see unserved).
	{"azure/", "", []string{"AZURE_API_KEY", "AZURE_OPENAI_API_KEY"}},
}

// unserved are prefixes whose services speak no OpenAI-compatible API with
// a plain key (AWS and Google Cloud sign requests; Hugging Face's router
// differs per model): what to do instead.
var unserved = map[string]string{
	"bedrock/":     "AWS Bedrock signs requests with AWS credentials, which teamrun does not do: put an OpenAI-compatible proxy in front (such as LiteLLM's) and set llm.base_url to it",
	"sagemaker/":   "SageMaker signs requests with AWS credentials, which teamrun does not do: put an OpenAI-compatible proxy in front and set llm.base_url to it",
	"vertex_ai/":   "Vertex AI needs Google Cloud credentials, which teamrun does not do: use gemini/ with GEMINI_API_KEY, or set llm.base_url to an OpenAI-compatible proxy",
	"huggingface/": "Hugging Face endpoints differ per model: set llm.base_url to the endpoint's OpenAI-compatible URL (it ends in /v1)",
}

// ErrUnserved is a model whose provider prefix teamrun cannot send to.
var ErrUnserved = errors.New("llm: provider not served")

// Providers are the prefixes teamrun serves, in its order: a copy, for
// the help that lists their key variables.
func Providers() []Provider {
	out := make([]Provider, len(providers))
	for i, p := range providers {
		p.KeyEnv = slices.Clone(p.KeyEnv)
		out[i] = p
	}
	return out
}

// ProviderOf is the provider a model's prefix names, or false.
func ProviderOf(model string) (Provider, bool) {
	for _, p := range providers {
		if strings.HasPrefix(model, p.Prefix) {
			return p, true
		}
	}
	return Provider{}, false
}

// checkServed says why a model cannot be served as l gives it, or nil.
// With its own base_url any model is sent to it, prefix and all except a
// served provider's: a proxy such as LiteLLM's expects bedrock/… as is.
func checkServed(l *spec.LLM) error {
	if l == nil || strings.TrimSpace(l.BaseURL) != "" {
		return nil
	}
	for prefix, why := range unserved {
		if strings.HasPrefix(l.Model, prefix) {
			return fmt.Errorf("%w: model %q: %s", ErrUnserved, l.Model, why)
		}
	}
	if strings.HasPrefix(l.Model, "azure/") {
		return fmt.Errorf("%w: model %q: Azure has no common endpoint: set llm.base_url to your resource's OpenAI-compatible URL (https://RESOURCE.openai.azure.com/openai/v1) and export AZURE_API_KEY", ErrUnserved, l.Model)
	}
	return nil
}

// Endpoint is where one agent's requests go: the URL, the key and the model
// name to send (without the provider prefix).
type Endpoint struct {
	BaseURL, APIKey, Model string
	// KeyVar is the environment variable the key comes from ("" when
	// none would give one), for the hint on a refused key.
	KeyVar string
	// BaseFrom says where BaseURL comes from (llm.base_url,
	// $OPENAI_BASE_URL, a provider's, the default), for the hint on a
	// request that got no answer.
	BaseFrom string
}

// Resolve says where an agent's requests go, with which key and under which
// model name (DESIGN §2). A served provider prefix picks its base URL and
// key variables and is removed from the model name; llm.base_url and
// llm.api_key_env still override. Without a prefix: base_url from l, else
// $OPENAI_BASE_URL, else DefaultBaseURL; the key from the variable
// l.APIKeyEnv names, else $OPENAI_API_KEY (empty is fine for a local
// server, not for OpenAI's own URL). A hosted provider's key that no variable holds, or a variable that
// api_key_env names but that is unset, is an error naming the variable,
// never a value. l may be nil; getenv nil means os.Getenv.
func Resolve(l *spec.LLM, getenv func(string) string) (Endpoint, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var ep Endpoint
	if l != nil {
		ep.Model = l.Model
	}
	if err := checkServed(l); err != nil {
		return Endpoint{}, err
	}
	prov, hasProv := ProviderOf(ep.Model)
	if hasProv {
		ep.Model = strings.TrimPrefix(ep.Model, prov.Prefix)
		// openai/ only says what no prefix says: $OPENAI_BASE_URL still applies.
		hasProv = prov.Prefix != "openai/"
	}
	var source string
	switch {
	case l != nil && strings.TrimSpace(l.BaseURL) != "":
		ep.BaseURL, source = strings.TrimSpace(l.BaseURL), cmp.Or(l.BaseURLAt, "llm.base_url")
		if prov.Prefix == "ollama/" {
			if v1, ok := withV1(ep.BaseURL); ok {
				ep.BaseURL, source = v1, source+", with the /v1 an ollama/ model's server answers under"
			}
		}
	case hasProv:
		ep.BaseURL, source = prov.BaseURL, "the "+prov.Prefix+" base URL"
	case strings.TrimSpace(getenv("OPENAI_BASE_URL")) != "":
		ep.BaseURL, source = strings.TrimSpace(getenv("OPENAI_BASE_URL")), "$OPENAI_BASE_URL"
	default:
		ep.BaseURL, source = DefaultBaseURL, "the default base URL"
	}
	if _, _, err := chatURL(ep.BaseURL); err != nil {
		return Endpoint{}, fmt.Errorf("%s: %w", source, err)
	}
	ep.BaseURL, ep.BaseFrom = strings.TrimRight(ep.BaseURL, "/"), source

	switch {
	case l != nil && l.APIKeyEnv != "":
		ep.APIKey, ep.KeyVar = strings.TrimSpace(getenv(l.APIKeyEnv)), l.APIKeyEnv
		if ep.APIKey == "" {
			return Endpoint{}, fmt.Errorf("llm.api_key_env: %s is not set or empty: export it, or drop api_key_env to use %s", KeyVarText(l.APIKeyEnv), keyVarsText(prov, hasProv))
		}
	case hasProv:
		for _, v := range prov.KeyEnv {
			if ep.APIKey = strings.TrimSpace(getenv(v)); ep.APIKey != "" {
				ep.KeyVar = v
				break
			}
		}
		if ep.APIKey == "" && len(prov.KeyEnv) > 0 {
			return Endpoint{}, fmt.Errorf("model %q: no key for %s: export %s, or name another variable in llm.api_key_env", l.Model, strings.TrimSuffix(prov.Prefix, "/"), prov.KeyEnv[0])
		}
	default:
		ep.APIKey, ep.KeyVar = strings.TrimSpace(getenv("OPENAI_API_KEY")), "OPENAI_API_KEY"
		if ep.APIKey == "" && ep.BaseURL == DefaultBaseURL {
			// OpenAI is a hosted provider like the prefixed ones: without a
			// key every request is refused, after the run has started.
			model := ep.Model
			if l != nil {
				model = l.Model // as written, prefix and all
			}
			return Endpoint{}, fmt.Errorf("model %q: no key for OpenAI (%s): export OPENAI_API_KEY, or name another variable in llm.api_key_env; for a local server set llm.base_url (or $OPENAI_BASE_URL)", model, DefaultBaseURL)
		}
	}
	if strings.ContainsFunc(ep.APIKey, unicode.IsControl) {
		// No HTTP header can carry it: Go's words were "invalid header
		// field value for \"Authorization\"", retried as if the server
		// were down.
		return Endpoint{}, fmt.Errorf("%s holds a line break or another control character inside its key, which no HTTP header can carry: export the key on one line", KeyVarText(ep.KeyVar))
	}
	return ep, nil
}

// withV1 is base with the path /v1 when it has none (http://host:11434,
// as LiteLLM users write an ollama/ model's api_base: LiteLLM adds the
// path itself), and true; else base and false.
func withV1(base string) (string, bool) {
	u, err := url.Parse(base)
	if err != nil || strings.Trim(u.Path, "/") != "" || u.RawPath != "" {
		return base, false
	}
	end := len(base)
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		end = i
	}
	return strings.TrimRight(base[:end], "/") + "/v1" + base[end:], true
}

func keyVarsText(p Provider, ok bool) string {
	if !ok {
		return "$OPENAI_API_KEY"
	}
	if len(p.KeyEnv) == 0 {
		return "no key"
	}
	return "$" + p.KeyEnv[0]
}

// UnservedModels lists the LLM agents, used by a task, whose model names a
// provider teamrun cannot send to: validate and run refuse them before
// anything is paid for. One line per llm mapping, however many agents
// inherit it.
func UnservedModels(t *spec.Team) []spec.Diagnostic {
	used := t.UsedAgents()
	seen := map[spec.Pos]bool{}
	var out []spec.Diagnostic
	for _, a := range t.Agents {
		if a.Kind != spec.LLMAgent || a.LLM == nil || !used[a.Name] {
			continue
		}
		err := checkServed(a.LLM)
		pos, path := a.LLM.Pos, a.KeyPath()+".llm"
		switch {
		case a.LLM.Alias != "" && a.LLM.BaseURL == t.Models[a.LLM.Alias].BaseURL:
			// The alias is where the model is set: fix it there.
			pos, path = a.LLM.AliasPos, "models."+a.LLM.Alias
		case t.LLM != nil && a.LLM.Pos == t.LLM.Pos:
			path = "llm"
		}
		if err == nil || (pos != (spec.Pos{}) && seen[pos]) {
			continue
		}
		seen[pos] = true
		msg := strings.TrimPrefix(err.Error(), ErrUnserved.Error()+": ")
		out = append(out, spec.Diagnostic{File: t.File, Line: pos.Line, Column: pos.Column, Path: path, Message: msg})
	}
	return out
}

// KeyVarText names the variable a key comes from in a message: by its name
// when that reads as one (spec.ShowsVarName), else by the key that names
// it, as what was written there may be a key itself.
func KeyVarText(name string) string {
	if spec.ShowsVarName(name) {
		return "the environment variable " + name
	}
	return "the environment variable llm.api_key_env names (not shown: it reads as a key rather than a name)"
}
