package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// This file prints ModSecurity directives (model.SecRules) in
// ModSecurity's configuration language. Every directive passes
// model.CheckSecDirective again first; its values are then of a grammar
// that needs no escaping: no quote, no control character, no backslash
// before a closing quote.

// SecRulesText prints rules, one directive a line, leaving out their
// Includes (the caller puts what they name in place).
func SecRulesText(r *model.SecRules) ([]string, error) {
	if r == nil {
		return nil, nil
	}
	var out []string
	for i, d := range r.Directives {
		if d.Include != model.SecIncludeNone {
			continue
		}
		line, err := secLine(d)
		if err != nil {
			return nil, fmt.Errorf("directive %d: %w", i+1, err)
		}
		out = append(out, line)
	}
	return out, nil
}

// secLine checks a directive again and prints it.
func secLine(d model.SecDirective) (string, error) {
	if err := model.CheckSecDirective(d); err != nil {
		return "", err
	}
	if d.Include != model.SecIncludeNone {
		return "", fmt.Errorf("an Include is not printed as a line")
	}
	return secDirective(d), nil
}

// secBare are the bytes an argument may hold unquoted.
func secBare(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._/:&;+-", c) >= 0) {
			return false
		}
	}
	return true
}

// secArg prints a checked argument, in double quotes unless it is bare.
func secArg(s string) string {
	if secBare(s) {
		return s
	}
	return `"` + s + `"`
}

func secDirective(d model.SecDirective) string {
	switch {
	case d.Setting != nil:
		parts := []string{d.Setting.Name}
		for _, a := range d.Setting.Args {
			parts = append(parts, secArg(a))
		}
		return strings.Join(parts, " ")
	case d.Remove != nil:
		if d.Remove.By != model.SecByID {
			return "SecRuleRemoveBy" + string(d.Remove.By) + " " + `"` + d.Remove.Text + `"`
		}
		parts := []string{"SecRuleRemoveById"}
		for _, r := range d.Remove.IDs {
			parts = append(parts, secIDRange(r))
		}
		return strings.Join(parts, " ")
	case d.UpdateTarget != nil:
		u := d.UpdateTarget
		rule := `"` + u.Text + `"`
		if u.By == model.SecByID {
			rule = strconv.Itoa(u.ID)
		}
		return "SecRuleUpdateTargetBy" + string(u.By) + " " + rule + ` "` + secVariables(u.Targets) + `"`
	case d.Rule != nil:
		r := d.Rule
		actions := `"` + secActions(r.Actions) + `"`
		switch {
		case r.Default:
			return "SecDefaultAction " + actions
		case r.Operator == nil:
			return "SecAction " + actions
		}
		op := "@" + r.Operator.Name
		if r.Operator.Negate {
			op = "!" + op
		}
		if r.Operator.Arg != "" {
			op += " " + r.Operator.Arg
		}
		line := "SecRule " + secVariables(r.Variables) + ` "` + op + `"`
		if len(r.Actions) > 0 {
			line += " " + actions
		}
		return line
	}
	return "SecMarker " + d.Marker
}

func secIDRange(r model.SecIDRange) string {
	if r.Lo == r.Hi {
		return strconv.Itoa(r.Lo)
	}
	return strconv.Itoa(r.Lo) + "-" + strconv.Itoa(r.Hi)
}

func secVariables(vs []model.SecVariable) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		s := v.Name
		if v.Key != "" {
			s += ":" + v.Key
		}
		switch {
		case v.Exclude:
			s = "!" + s
		case v.Count:
			s = "&" + s
		}
		parts[i] = s
	}
	return strings.Join(parts, "|")
}

// secQuotedActions are the actions whose values are text, printed in
// single quotes.
var secQuotedActions = map[string]bool{"msg": true, "logdata": true, "tag": true, "rev": true, "ver": true, "setvar": true}

func secActions(as []model.SecAction) string {
	parts := make([]string, len(as))
	for i, a := range as {
		switch {
		case a.Value == "":
			parts[i] = a.Name
		case secQuotedActions[a.Name]:
			parts[i] = a.Name + ":'" + a.Value + "'"
		default:
			parts[i] = a.Name + ":" + a.Value
		}
	}
	return strings.Join(parts, ",")
}
