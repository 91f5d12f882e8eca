package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Decision is what a route agent (RouteAgent) picks its task's route by,
// in the runner's process: a PraisonAI route step's labels, or an if
// step's condition. It reads values whole, as the run holds them, where a
// command would get them through an environment of bounded size.
type Decision struct {
	// Labels are a route's, in file order: the result is the first found
	// as a word (HasWordFold) in the previous output, else "default".
	Labels []string
	// If is an if step's condition: the result is then or else.
	If *Condition
	// Prev are the tasks whose outputs, in this order, are the previous
	// output: the route's classifier, or what {{previous_output}} reads.
	Prev []string
}

// Condition is an if step's condition, as PraisonAI's evaluator reads it.
type Condition struct {
	Left, Right Operand
	// Op is ==, !=, >=, <=, >, <, contains or in; "" when Left alone is
	// the condition (true unless empty or "false").
	Op string
}

// Operand is a side of a condition: a variable's value, the previous
// output (Var is PreviousOutput), or a literal (Var "").
type Operand struct {
	Var  string
	Text string
}

// Decide is the decision's result: a route's label or default, an if's
// then or else. prev gives the previous output, value a variable's value
// as {{name}} renders it ("" when unset); an error of prev's is the
// result's, never taken for else.
func (d *Decision) Decide(prev func() (string, error), value func(name string) string) (string, error) {
	if d.If == nil {
		text, err := prev()
		if err != nil {
			return "", err
		}
		for _, l := range d.Labels {
			if HasWordFold(text, l) {
				return l, nil
			}
		}
		return "default", nil
	}
	read := func(o Operand) (string, error) {
		switch o.Var {
		case "":
			return o.Text, nil
		case PreviousOutput:
			return prev()
		}
		return value(o.Var), nil
	}
	a, err := read(d.If.Left)
	if err != nil {
		return "", err
	}
	b, err := read(d.If.Right)
	if err != nil {
		return "", err
	}
	if d.If.holds(a, b) {
		return "then", nil
	}
	return "else", nil
}

// holds evaluates the condition on its operands' values: both trimmed;
// two numbers compare as numbers, anything else as text (byte order, the
// same on every machine); contains and in ignore case (Lower); an
// ordering with nothing on its left is false.
func (c *Condition) holds(a, b string) bool {
	a, b = strings.Trim(a, " \t\r\n"), strings.Trim(b, " \t\r\n")
	switch c.Op {
	case "":
		return a != "" && Lower(a) != "false"
	case "contains":
		return ContainsFold(a, b)
	case "in":
		return ContainsFold(b, a)
	}
	cmp := strings.Compare(a, b)
	if x, ok := condNumber(a); ok {
		if y, ok := condNumber(b); ok {
			cmp = 0
			if x < y {
				cmp = -1
			} else if x > y {
				cmp = 1
			}
		}
	}
	switch c.Op {
	case "==":
		return cmp == 0
	case "!=":
		return cmp != 0
	case ">":
		return a != "" && cmp > 0
	case ">=":
		return a != "" && cmp >= 0
	case "<":
		return a != "" && cmp < 0
	case "<=":
		return a != "" && cmp <= 0
	}
	return false
}

// numberRE is a decimal number, as a condition compares it.
var numberRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$`)
})

// condNumber is s as a number, if it is one; one too large for a float64 is
// an infinity, so that it still compares.
func condNumber(s string) (float64, bool) {
	if !numberRE().MatchString(s) {
		return 0, false
	}
	f, _ := strconv.ParseFloat(s, 64) // the syntax is right: at worst out of range, ±Inf or 0
	return f, true
}

// condRE reads an if condition: a comparison of two operands, a contains
// or in test, or a single operand's truth.
var condRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(.+?)\s*(==|!=|>=|<=|>|<|\bcontains\b|\bin\b)\s*(.+?)\s*$`)
})

// operandRE is a {{ VAR }} reference.
var operandRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$`) })

// parseCondition reads a PraisonAI condition. Operands are {{VAR}}
// references ({{previous_output}} among them) or literals, a quoted one
// without its quotes.
func parseCondition(cond string) (*Condition, error) {
	operand := func(s string) (Operand, error) {
		s = strings.TrimSpace(s)
		if m := operandRE().FindStringSubmatch(s); m != nil {
			return Operand{Var: m[1]}, nil
		}
		if strings.Contains(s, "{{") {
			return Operand{}, fmt.Errorf("%q: an if condition compares variables ({{name}}) and literals; nested names such as {{item.score}} are not supported", s)
		}
		if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
			s = s[1 : len(s)-1]
		}
		return Operand{Text: s}, nil
	}
	if m := condRE().FindStringSubmatch(cond); m != nil {
		a, err := operand(m[1])
		if err != nil {
			return nil, err
		}
		b, err := operand(m[3])
		if err != nil {
			return nil, err
		}
		return &Condition{Left: a, Op: m[2], Right: b}, nil
	}
	a, err := operand(cond)
	if err != nil {
		return nil, err
	}
	if a.Var == "" {
		return nil, fmt.Errorf("%q: expected a comparison such as \"{{score}} >= 80\", \"{{status}} == approved\", \"{{status}} contains done\", \"error in {{message}}\" or a {{flag}}", cond)
	}
	return &Condition{Left: a}, nil
}
