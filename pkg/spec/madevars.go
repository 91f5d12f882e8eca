package spec

import (
	"fmt"
	"slices"
)

// madeVars names the variables teamrun makes for a steps file's step
// outputs: {{NAME_output}}'s, a loop's STEP_loop_outputs, a repeat's
// count, a parallel step's outputs. A NAME that is a variable's name
// gives NAME_KIND, as PraisonAI names it (and as sessions recorded it).
// Any other NAME has _ for each byte a variable name cannot hold (as
// sessions recorded it: Étape's is __tape), and a number after when
// another name of the file comes out the same (fetch-data and fetch data,
// 調査 and 分析) or a variable has that name: two steps never share one,
// whichever the text names.
type madeVars struct {
	// taken are the names variables have: the file's variables and
	// output_variables, and those made.
	taken map[string]bool
	// groups are the names of the file, by identOf, in file order.
	groups map[string][]string
	made   map[[2]string]string // NAME, KIND -> its variable
	// spelled is, for each variable made of a NAME that is no variable's
	// name, the NAME_KIND a text writes for it.
	spelled map[string]string
	// shared are the identifier spellings (fetch_data_output) that several
	// names before a text come out as: a text that writes one reads none.
	shared map[string][]string
}

// newMadeVars is the naming of team t's made variables; names are the
// names of the file a text may name a step by, in file order.
func newMadeVars(t *Team, names []string) *madeVars {
	m := &madeVars{taken: map[string]bool{}, groups: map[string][]string{}, made: map[[2]string]string{}}
	for k := range t.Variables {
		m.taken[k] = true
	}
	for _, tk := range t.Tasks {
		if tk.OutputVariable != "" {
			m.taken[tk.OutputVariable] = true
		}
	}
	for _, n := range names {
		if id := identOf(n); !slices.Contains(m.groups[id], n) {
			m.groups[id] = append(m.groups[id], n)
		}
	}
	return m
}

// varFor is the variable made for what KIND of the step named name holds.
func (m *madeVars) varFor(name, kind string) string {
	k := [2]string{name, kind}
	if v, ok := m.made[k]; ok {
		return v
	}
	v := identOf(name) + "_" + kind
	if !IsIdentifier(name) {
		g := m.groups[identOf(name)]
		if len(g) > 1 || m.taken[v] {
			// The number is the name's place among those that come out the
			// same: the same each time the file loads.
			n := slices.Index(g, name) + 1
			if n == 0 {
				n = len(g) + 1
			}
			for base := v; ; n++ {
				if v = fmt.Sprintf("%s_%d", base, n); !m.taken[v] {
					break
				}
			}
		}
		if m.spelled == nil {
			m.spelled = map[string]string{}
		}
		m.spelled[v] = name + "_" + kind
	}
	m.taken[v] = true
	m.made[k] = v
	return v
}

// named is the name the NAME of a text's {{NAME_KIND}} names a step by:
// NAME itself when has(NAME) (a step so named before the text); else,
// for a NAME that is an identifier and no name of the file, the one name
// of has that comes out as NAME with _ for what a variable name cannot
// hold (fetch_data for fetch-data), as the README has always let a text
// write it. ok is false when there is none, or several: then that
// spelling is recorded as shared, for the placeholder check to say which
// to write.
func (m *madeVars) named(name, kind string, has func(string) bool) (string, bool) {
	if has(name) {
		return name, true
	}
	if !IsIdentifier(name) || slices.Contains(m.groups[name], name) {
		return "", false // no spelling of another's: a step has that name
	}
	var found []string
	for _, n := range m.groups[name] {
		if n != name && has(n) {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	if len(found) > 1 {
		if m.shared == nil {
			m.shared = map[string][]string{}
		}
		spelling := name + "_" + kind
		for _, n := range found {
			if w := "{{" + n + "_" + kind + "}}"; !slices.Contains(m.shared[spelling], w) {
				m.shared[spelling] = append(m.shared[spelling], w)
			}
		}
	}
	return "", false
}

// identOf is s with each byte a variable name cannot hold made _: a
// character of several bytes in UTF-8 gives as many (Étape: __tape), as
// sessions recorded it, for the made variable is in a task's key.
func identOf(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !isIdentByte(c, i == 0) {
			out[i] = '_'
		}
	}
	return string(out)
}
