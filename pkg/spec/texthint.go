package spec

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// quoteAdvice is what a "got ..." message adds for a scalar YAML read as a
// number, a boolean or null where a text (a name) is expected: quote it.
// key, when not empty, is the key to show it under (agent: "123").
func quoteAdvice(src, key string) string {
	w := strconv.Quote(src)
	if key != "" {
		w = key + ": " + w
	}
	return " (if that is meant as a text, quote it: " + w + ")"
}

// textHint is quoteAdvice for t, where a text is expected: "" unless t is
// a scalar YAML read as no text (agent: 123, agent: true, agent: null).
func (t *tree) textHint() string {
	if t == nil {
		return ""
	}
	if name, ok := t.placeholderMapping(); ok {
		// description: {topic}, a placeholder left unquoted: YAML reads
		// a mapping of topic to nothing.
		return quoteAdvice("{"+name+"}", t.path[strings.LastIndexByte(t.path, '.')+1:])
	}
	if t.kind != yaml.ScalarNode {
		return ""
	}
	if _, ok := t.str(); ok {
		return ""
	}
	key := t.path[strings.LastIndexByte(t.path, '.')+1:]
	if strings.HasSuffix(key, "]") {
		key = "" // a list item: the quoted text alone
	}
	if t.vt == noNum && t.typed() == nil && t.text == "" {
		if key == "" {
			return " (the item is empty: write it)"
		}
		return " (nothing is written after " + strconv.Quote(key+":") + ": write it there)"
	}
	return quoteAdvice(t.text, key)
}

// gotText is describe and textHint, for a "got ..." message where a text
// or a name is expected.
func (t *tree) gotText() string { return t.describe() + t.textHint() }

// fits reports whether text matches the schema's pattern p.
func fits(p, text string) bool {
	re, err := regexp.Compile(p)
	return err == nil && re.MatchString(text)
}

// placeholderMapping reports a mapping of one key to nothing, as YAML
// reads an unquoted {name}, and the name.
func (t *tree) placeholderMapping() (string, bool) {
	if t.kind != yaml.MappingNode || len(t.keys()) != 1 {
		return "", false
	}
	v := t.vals()[0]
	if v == nil || v.kind != yaml.ScalarNode || v.vt != noNum || v.typed() != nil || v.text != "" || !identRE().MatchString(t.keys()[0]) {
		return "", false
	}
	return t.keys()[0], true
}
