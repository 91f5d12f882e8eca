package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxCount bounds what a token count can be: far above any context
// window, and far below where the sums of a session's counts overflow.
const maxCount = 1 << 40

// wireUsage reads the usage member of the servers teamrun talks to: the
// details objects of OpenAI (and vLLM, llama-server), DeepSeek's cache
// hits. It never fails to decode, so that an answer whose usage cannot be
// read is kept (see usage); bad says why it cannot.
type wireUsage struct {
	prompt, completion, total wireCount
	cached, reasoning, hits   wireCount
	bad                       string
}

func (w *wireUsage) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		w.bad = "reported a usage that is not a JSON object"
		return nil
	}
	w.prompt = readCount("prompt_tokens", m["prompt_tokens"])
	w.completion = readCount("completion_tokens", m["completion_tokens"])
	w.total = readCount("total_tokens", m["total_tokens"])
	w.hits = readCount("prompt_cache_hit_tokens", m["prompt_cache_hit_tokens"])
	// A details member that is no object says nothing: left out.
	var pd, cd map[string]json.RawMessage
	if json.Unmarshal(m["prompt_tokens_details"], &pd) == nil {
		w.cached = readCount("cached_tokens", pd["cached_tokens"])
	}
	if json.Unmarshal(m["completion_tokens_details"], &cd) == nil {
		w.reasoning = readCount("reasoning_tokens", cd["reasoning_tokens"])
	}
	return nil
}

// zeroUsage is why a usage of no tokens ({}, or every count 0) is none.
const zeroUsage = "reported a usage of 0 tokens (or none at all), which no answer can have"

// usage is what w reports; false when there is no usage member, or one
// whose counts cannot be read or cannot be true (bad says why): such an
// answer is billed all the same and counted as one without usage (an
// estimate from its size, which a budget counts), never as 0 tokens nor
// as the negative tokens that would give a budget back what other
// requests spent.
func (w *wireUsage) usage() (Usage, bool, string) {
	if w == nil {
		return Usage{}, false, ""
	}
	if w.bad != "" {
		return Usage{}, false, w.bad
	}
	for _, c := range []wireCount{w.prompt, w.completion, w.total, w.hits, w.cached, w.reasoning} {
		if c.bad != "" {
			return Usage{}, false, c.bad
		}
	}
	if w.prompt.n == 0 && w.completion.n == 0 && w.total.n == 0 {
		// usage: {}, or the zeros of a server or proxy that counts
		// nothing: no answer is free, so it is one without usage.
		return Usage{}, false, zeroUsage
	}
	u := Usage{PromptTokens: w.prompt.n, CompletionTokens: w.completion.n, TotalTokens: w.total.n,
		CachedTokens: w.hits.n, ReasoningTokens: w.reasoning.n}
	if w.cached.n > 0 {
		u.CachedTokens = w.cached.n
	}
	// A total under its parts (none given, or a server that undercounts)
	// is their sum: max_tokens budgets count the total.
	u.TotalTokens = max(u.TotalTokens, u.PromptTokens+u.CompletionTokens)
	return u, true, ""
}

// atLeast is u with each count raised to o's where o's is larger.
func (u Usage) atLeast(o Usage) Usage {
	return Usage{PromptTokens: max(u.PromptTokens, o.PromptTokens), CompletionTokens: max(u.CompletionTokens, o.CompletionTokens),
		TotalTokens: max(u.TotalTokens, o.TotalTokens), CachedTokens: max(u.CachedTokens, o.CachedTokens),
		ReasoningTokens: max(u.ReasoningTokens, o.ReasoningTokens)}
}

// wireCount is one token count; bad says why the value sent is none.
type wireCount struct {
	n   int
	bad string
}

// readCount reads a count leniently where its meaning is clear: a JSON
// integer, or a whole number written as a float (100.0, 1e3) or as a text
// ("100"), as some servers send them; absent or null is 0. Anything else
// (a fraction, a negative, more than maxCount, true, an object) is no
// count: bad names the key and, when it is a number, the value (a text's
// is not shown: it may hold anything).
func readCount(key string, raw json.RawMessage) wireCount {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return wireCount{}
	}
	quoted := strings.HasPrefix(s, `"`)
	if quoted {
		var t string
		if json.Unmarshal(raw, &t) != nil {
			return unreadable(key, "a text")
		}
		s = strings.TrimSpace(t)
	}
	shown := func(words string) string {
		v := cutValue(s, words)
		switch {
		case quoted && v == words:
			return "a text"
		case quoted:
			return strconv.Quote(v)
		}
		return v
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && f == 0, math.IsNaN(f):
		return unreadable(key, shown("a value that is no number"))
	case f < 0:
		return wireCount{bad: "reported a negative token count, which no answer can have"}
	case f != math.Trunc(f):
		return unreadable(key, shown("a fraction"))
	case f > maxCount: // an overflow too (ParseFloat's ±Inf)
		return wireCount{bad: fmt.Sprintf("reported more tokens than any answer can have (%s: %s)", key, shown("a huge number"))}
	}
	return wireCount{n: int(f)}
}

func unreadable(key, shown string) wireCount {
	return wireCount{bad: fmt.Sprintf("reported a token count that is no whole number (%s: %s)", key, shown)}
}

// cutValue is a number as sent, if it is short enough for a message and
// holds nothing but a number's characters; else what it is in words.
func cutValue(s, words string) string {
	if len(s) > 32 || strings.Trim(s, "0123456789.eE+-") != "" {
		return words
	}
	return s
}
