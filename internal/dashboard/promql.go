package dashboard

import (
	"fmt"
	"slices"
	"strings"
)

// notNames are the PromQL words that can stand where a metric name could
// without being one: binary and set operators, modifiers, and the
// aggregation operators, which may be followed by by/without rather than
// "(". Functions need no list: an identifier followed by "(" is one.
var notNames = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// labelLists are the keywords followed by a parenthesised list of label
// names.
var labelLists = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// MetricNames returns the metric names a PromQL expression selects, sorted
// and without duplicates. It reads PromQL only as far as needed to tell
// them apart from functions, keywords, label names (in {...} and in
// by/without/on/ignoring/group_left/group_right lists), strings, numbers,
// durations ([5m], offset 1h) and Grafana variables ($x, ${x}); a
// selector by {__name__="..."} counts too. It does not check that the
// expression is valid beyond balanced brackets and closed strings.
func MetricNames(expr string) ([]string, error) {
	var names []string
	s := expr
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#': // a comment runs to the end of the line
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(s, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '{':
			end, name, err := skipMatchers(s, i)
			if err != nil {
				return nil, err
			}
			if name != "" {
				names = append(names, name)
			}
			i = end
		case c == '[': // a range or subquery: durations, Grafana variables
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ at %d in %q", i, expr)
			}
			i += end + 1
		case c == '$': // a Grafana variable: $name, ${name} or ${name:format}
			i++
			if i < len(s) && s[i] == '{' {
				end := strings.IndexByte(s[i:], '}')
				if end < 0 {
					return nil, fmt.Errorf("unclosed ${ at %d in %q", i, expr)
				}
				i += end + 1
			} else {
				for i < len(s) && isIdentChar(s[i]) {
					i++
				}
			}
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			i = skipNumber(s, i)
		case isIdentStart(c):
			start := i
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			word := s[start:i]
			next := skipSpace(s, i)
			lower := strings.ToLower(word)
			switch {
			case labelLists[lower] && next < len(s) && s[next] == '(':
				end := strings.IndexByte(s[next:], ')')
				if end < 0 {
					return nil, fmt.Errorf("unclosed %s( in %q", word, expr)
				}
				i = next + end + 1
			case lower == "offset": // a duration follows: 5m, -1h30m
				i = skipNumber(s, skipSign(s, next))
			case notNames[lower]:
			case next < len(s) && s[next] == '(': // a function
			default:
				names = append(names, word)
			}
		default: // operators, parentheses, commas, @
			i++
		}
	}
	if err := balanced(expr); err != nil {
		return nil, err
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unclosed string at %d in %q", i, s)
}

// skipMatchers returns the index after the label matchers starting at
// the "{" at i, and the metric name if they select one by __name__="...".
func skipMatchers(s string, i int) (int, string, error) {
	name := ""
	for j := i + 1; j < len(s); {
		switch c := s[j]; {
		case c == '}':
			return j + 1, name, nil
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(s, j)
			if err != nil {
				return 0, "", err
			}
			j = end
		case strings.HasPrefix(s[j:], "__name__"):
			k := skipSpace(s, j+len("__name__"))
			if k < len(s) && s[k] == '=' && (k+1 >= len(s) || s[k+1] != '~') {
				k = skipSpace(s, k+1)
				if k < len(s) && (s[k] == '"' || s[k] == '\'' || s[k] == '`') {
					end, err := skipString(s, k)
					if err != nil {
						return 0, "", err
					}
					name = s[k+1 : end-1]
					j = end
					continue
				}
			}
			j += len("__name__")
		default:
			j++
		}
	}
	return 0, "", fmt.Errorf("unclosed { at %d in %q", i, s)
}

// balanced checks that (), {} and [] nest outside string literals.
func balanced(s string) error {
	var stack []byte
	pair := map[byte]byte{')': '(', '}': '{', ']': '['}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'', '`':
			end, err := skipString(s, i)
			if err != nil {
				return err
			}
			i = end - 1
		case '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case '(', '{', '[':
			stack = append(stack, c)
		case ')', '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != pair[c] {
				return fmt.Errorf("unbalanced %q at %d in %q", c, i, s)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %q in %q", stack[len(stack)-1], s)
	}
	return nil
}

// skipNumber returns the index after the number or duration at i: 0.5,
// 1e-3, 0x1f, 5m, 1h30m.
func skipNumber(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case isIdentChar(c) || c == '.':
			i++
		case (c == '+' || c == '-') && i > 0 && (s[i-1] == 'e' || s[i-1] == 'E') && !strings.HasPrefix(strings.ToLower(s[:i]), "0x"):
			i++
		default:
			return i
		}
	}
	return i
}

func skipSign(s string, i int) int {
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		return i + 1
	}
	return i
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }
