// Package textdiff writes a unified diff of two texts, line by line, as
// `diff -u` does (for `teamrun session diff`).
package textdiff

import (
	"fmt"
	"strings"
)

// maxCells bounds the longest-common-subsequence table; beyond it the two
// texts differ as one hunk that replaces every line (still a valid diff).
const maxCells = 16 << 20

// Unified is the unified diff turning a into b, with context lines around
// each change and the file names from and to; "" when a and b are equal.
func Unified(from, to, a, b string, context int) string {
	if a == b {
		return ""
	}
	x, y := lines(a), lines(b)
	ops := script(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	// Group the edit script into hunks with context lines around changes.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

type op struct {
	kind byte // ' ', '-' or '+'
	text string
	ax   int // line number in a (1-based) of a ' ' or '-' line
	by   int // line number in b of a ' ' or '+' line
}

func writeHunk(w *strings.Builder, ops []op) {
	var aStart, aLen, bStart, bLen int
	for _, o := range ops {
		if o.kind != '+' {
			if aLen == 0 {
				aStart = o.ax
			}
			aLen++
		}
		if o.kind != '-' {
			if bLen == 0 {
				bStart = o.by
			}
			bLen++
		}
	}
	// diff -u numbers an empty side by the line before it.
	if aLen == 0 {
		aStart = lineBefore(ops, true)
	}
	if bLen == 0 {
		bStart = lineBefore(ops, false)
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", rng(aStart, aLen), rng(bStart, bLen))
	for _, o := range ops {
		w.WriteByte(o.kind)
		w.WriteString(o.text)
		if !strings.HasSuffix(o.text, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func lineBefore(ops []op, a bool) int {
	for _, o := range ops {
		if a && o.kind == '+' {
			return o.ax
		}
		if !a && o.kind == '-' {
			return o.by
		}
	}
	return 0
}

func rng(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// lines splits s after each newline; the last line may lack one.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// script is an edit script from x to y by longest common subsequence.
func script(x, y []string) []op {
	// Common head and tail are context whatever the table says.
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	var ops []op
	for i := range pre {
		ops = append(ops, op{' ', x[i], i + 1, i + 1})
	}
	n, m := len(mx), len(my)
	if (n+1)*(m+1) > maxCells {
		for i, s := range mx {
			ops = append(ops, op{'-', s, pre + i + 1, pre + m})
		}
		for j, s := range my {
			ops = append(ops, op{'+', s, pre + n, pre + j + 1})
		}
	} else {
		// lcs[i][j]: the LCS length of mx[i:] and my[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				ops = append(ops, op{' ', mx[i], pre + i + 1, pre + j + 1})
				i, j = i+1, j+1
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				// Deletions first, as diff -u writes them.
				ops = append(ops, op{'-', mx[i], pre + i + 1, pre + j})
				i++
			default:
				ops = append(ops, op{'+', my[j], pre + i, pre + j + 1})
				j++
			}
		}
	}
	for k := range suf {
		ops = append(ops, op{' ', x[len(x)-suf+k], len(x) - suf + k + 1, len(y) - suf + k + 1})
	}
	return ops
}
