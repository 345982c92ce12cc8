package modsec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/snippet"
)

// Options say what a snippet may hold beyond the grammar.
type Options struct {
	// Reserved are rule ids the snippet's rules may not take: those of
	// rules already loaded where the snippet applies.
	Reserved []model.SecIDRange
}

// ErrEmpty is returned for a snippet without directives.
var ErrEmpty = errors.New("snippet holds no directive")

// refusedWhy says why well-known directives are refused.
var refusedWhy = map[string]string{
	"secdebuglog":              "it writes a file",
	"secdebugloglevel":         "there is no debug log (SecDebugLog writes a file)",
	"secauditlogstoragedir":    "it writes files",
	"secauditlog2":             "it writes a file",
	"sectmpdir":                "it names a directory of the node",
	"secdatadir":               "it names a directory of the node",
	"secuploaddir":             "it writes files",
	"secuploadkeepfiles":       "it writes files",
	"secremoterules":           "it fetches rules from the network",
	"secremoterulesfailaction": "it fetches rules from the network",
	"secunicodemapfile":        "it reads a file",
	"secgeolookupdb":           "it reads a file",
	"secstatusengine":          "it sends data out of the cluster",
	"secrulescript":            "it runs a script",
	"secruleupdateactionbyid":  "the actions it would set are not checked",
	"seccomponentsignature":    "it changes the server's signature",
	"sechttpblkey":             "it asks the network",
	"include":                  "only ingress-nginx's /etc/nginx/modsecurity/modsecurity.conf and /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf may be included",
}

// canonical maps each allowed directive's lower-case name (ModSecurity
// reads directive names in any case) to its spelling.
var canonical = func() map[string]string {
	out := map[string]string{}
	for _, n := range []string{"SecRule", "SecAction", "SecDefaultAction", "SecMarker", "Include",
		"SecRuleRemoveById", "SecRuleRemoveByTag", "SecRuleRemoveByMsg",
		"SecRuleUpdateTargetById", "SecRuleUpdateTargetByTag", "SecRuleUpdateTargetByMsg"} {
		out[strings.ToLower(n)] = n
	}
	for n := range model.SecSettings {
		out[strings.ToLower(n)] = n
	}
	return out
}()

type parser struct {
	opts  Options
	out   model.SecRules
	ids   map[int]int
	chain bool // the last rule has the chain action
}

// Parse reads a ModSecurity snippet into typed directives. It refuses
// the whole snippet at the first thing it cannot read, naming the
// directive and its line.
func Parse(src string, opts Options) (*model.SecRules, error) {
	lines, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, ErrEmpty
	}
	if len(lines) > MaxDirectives {
		return nil, fmt.Errorf("snippet has more than %d directives", MaxDirectives)
	}
	p := &parser{opts: opts, ids: map[int]int{}}
	for _, l := range lines {
		name, args := l.words[0], l.words[1:]
		d, err := p.directive(name, args, l.n)
		if err != nil {
			return nil, fmt.Errorf("line %d: directive %s: %w", l.n, model.Truncate(name), err)
		}
		if err := model.CheckSecDirective(d); err != nil {
			return nil, fmt.Errorf("line %d: directive %s: %w", l.n, model.Truncate(name), err)
		}
		p.out.Directives = append(p.out.Directives, d)
	}
	if p.chain {
		return nil, errors.New("the last rule has the chain action, and no rule follows it")
	}
	return &p.out, nil
}

func (p *parser) directive(name string, args []string, n int) (model.SecDirective, error) {
	lower := strings.ToLower(name)
	canon, ok := canonical[lower]
	if !ok || canon == "Include" && model.SecIncludePaths[strings.Join(args, " ")] == model.SecIncludeNone {
		if why, known := refusedWhy[lower]; known {
			return model.SecDirective{}, fmt.Errorf("is not allowed: %s", why)
		}
		if strings.HasPrefix(lower, "sec") {
			return model.SecDirective{}, errors.New("is not allowed in a modsecurity-snippet")
		}
		return model.SecDirective{}, errors.New("is not a ModSecurity directive a snippet may hold")
	}
	if p.chain && canon != "SecRule" {
		return model.SecDirective{}, errors.New("follows a rule with the chain action, where a SecRule belongs")
	}
	switch canon {
	case "Include":
		return model.SecDirective{Include: model.SecIncludePaths[strings.Join(args, " ")]}, nil
	case "SecMarker":
		if len(args) != 1 {
			return model.SecDirective{}, errors.New("takes one label")
		}
		return model.SecDirective{Marker: args[0]}, nil
	case "SecRule", "SecAction", "SecDefaultAction":
		r, err := p.rule(canon, args)
		return model.SecDirective{Rule: r}, err
	case "SecRuleRemoveById", "SecRuleRemoveByTag", "SecRuleRemoveByMsg":
		r, err := remove(model.SecBy(strings.TrimPrefix(canon, "SecRuleRemoveBy")), args)
		return model.SecDirective{Remove: r}, err
	case "SecRuleUpdateTargetById", "SecRuleUpdateTargetByTag", "SecRuleUpdateTargetByMsg":
		u, err := updateTarget(model.SecBy(strings.TrimPrefix(canon, "SecRuleUpdateTargetBy")), args)
		return model.SecDirective{UpdateTarget: u}, err
	}
	if canon == "SecAuditLog" && len(args) == 1 && args[0] != "/dev/stdout" && args[0] != "/dev/stderr" {
		return model.SecDirective{}, errors.New("writes a file: only /dev/stdout and /dev/stderr (nginx's output, which the controller forwards) are accepted")
	}
	return model.SecDirective{Setting: &model.SecSetting{Name: canon, Args: settingWords(args)}}, nil
}

// settingWords spells the keywords of settings as the grammar does
// (ModSecurity reads them in any case: "SecRuleEngine on").
func settingWords(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for _, w := range []string{"On", "Off", "DetectionOnly", "RelevantOnly", "Reject", "ProcessPartial", "JSON", "Native", "Serial"} {
			if strings.EqualFold(a, w) {
				out[i] = w
			}
		}
	}
	return out
}

func remove(by model.SecBy, args []string) (*model.SecRemove, error) {
	if len(args) == 0 {
		return nil, errors.New("needs an argument")
	}
	r := &model.SecRemove{By: by}
	if by != model.SecByID {
		if len(args) != 1 {
			return nil, errors.New("takes one argument (quote it when it holds spaces)")
		}
		r.Text = args[0]
		return r, nil
	}
	for _, a := range args {
		// ModSecurity reads "1 2 3-5" and "1,2,3-5" alike.
		for _, f := range strings.Split(a, ",") {
			if f == "" {
				continue
			}
			id, err := model.ParseSecIDRange(f)
			if err != nil {
				return nil, err
			}
			r.IDs = append(r.IDs, id)
		}
	}
	return r, nil
}

func updateTarget(by model.SecBy, args []string) (*model.SecUpdateTarget, error) {
	if len(args) != 2 {
		return nil, errors.New("takes a rule and its targets (a replacement target is not accepted)")
	}
	u := &model.SecUpdateTarget{By: by}
	if by == model.SecByID {
		r, err := model.ParseSecIDRange(args[0])
		if err != nil {
			return nil, err
		}
		if r.Lo != r.Hi {
			return nil, errors.New("takes one rule id")
		}
		u.ID = r.Lo
	} else {
		u.Text = args[0]
	}
	targets, err := variables(args[1])
	if err != nil {
		return nil, err
	}
	u.Targets = targets
	return u, nil
}

func variables(s string) ([]model.SecVariable, error) {
	var out []model.SecVariable
	for _, f := range strings.Split(s, "|") {
		v, err := model.ParseSecVariable(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// rule reads SecRule VARIABLES OPERATOR [ACTIONS], SecAction ACTIONS and
// SecDefaultAction ACTIONS.
func (p *parser) rule(kind string, args []string) (*model.SecRule, error) {
	r := &model.SecRule{Default: kind == "SecDefaultAction"}
	actions := ""
	if kind == "SecRule" {
		if len(args) < 2 || len(args) > 3 {
			return nil, errors.New("takes variables, an operator and actions")
		}
		var err error
		if r.Variables, err = variables(args[0]); err != nil {
			return nil, err
		}
		if r.Operator, err = operator(args[1]); err != nil {
			return nil, err
		}
		if len(args) == 3 {
			actions = args[2]
		}
	} else {
		if len(args) != 1 {
			return nil, errors.New("takes one list of actions")
		}
		actions = args[0]
	}
	var err error
	if r.Actions, err = parseActions(actions); err != nil {
		return nil, err
	}
	if err := p.checkID(r); err != nil {
		return nil, err
	}
	if !r.Default {
		p.chain = r.Chains()
	}
	return r, nil
}

// checkID: a rule starting a chain, and an action, has an id of its own,
// outside the reserved ranges; a chained rule has none.
func (p *parser) checkID(r *model.SecRule) error {
	id, has := r.ID()
	chained := p.chain
	switch {
	case r.Default && has:
		return errors.New("a default action has no id")
	case r.Default:
		return nil
	case chained && has:
		return errors.New("a rule that continues a chain has no id")
	case chained:
		return nil
	case !has:
		return errors.New("has no id action")
	}
	for _, res := range p.opts.Reserved {
		if res.Contains(id) {
			return fmt.Errorf("id %d is reserved (%d-%d) for rules loaded before this snippet", id, res.Lo, res.Hi)
		}
	}
	if _, dup := p.ids[id]; dup {
		return fmt.Errorf("id %d is used twice", id)
	}
	p.ids[id] = 1
	return nil
}

// operator reads "[!]@name arg", or a bare regular expression (@rx).
func operator(s string) (*model.SecOperator, error) {
	o := &model.SecOperator{}
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		o.Negate, s = true, rest
	}
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		name, arg, _ := strings.Cut(rest, " ")
		o.Name, o.Arg = name, strings.TrimLeft(arg, " ")
	} else {
		o.Name, o.Arg = "rx", s
	}
	if err := model.CheckSecOperator(*o); err != nil {
		return nil, err
	}
	return o, nil
}

// parseActions splits a list of actions at the commas outside single
// quotes; a value in single quotes loses them.
func parseActions(s string) ([]model.SecAction, error) {
	var out []model.SecAction
	for _, f := range splitActions(s) {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, value, hasValue := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = value[1 : len(value)-1]
		}
		if hasValue && value == "" {
			return nil, fmt.Errorf("action %s has an empty value", model.Truncate(name))
		}
		a := model.SecAction{Name: actionName(name), Value: value}
		if err := model.CheckSecAction(a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// actionName spells an allowed action as the grammar does (ModSecurity
// reads action names in any case).
func actionName(n string) string {
	for _, c := range []string{"multiMatch", "skipAfter"} {
		if strings.EqualFold(n, c) {
			return c
		}
	}
	return strings.ToLower(n)
}

func splitActions(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			if i == 0 || s[i-1] != '\\' {
				quoted = !quoted
			}
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// TransactionID reads modsecurity-transaction-id: up to 128 letters,
// digits, ".", "_", ":", "-" and the nginx variables a snippet may read
// ("$request_id", "${host}-$request_id").
func TransactionID(s string) (model.Template, error) {
	if s == "" || len(s) > 128 {
		return nil, errors.New("want 1 to 128 characters")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-${}", c) >= 0) {
			return nil, fmt.Errorf("%q holds %q: want letters, digits, . _ : - and nginx variables", model.Truncate(s), c)
		}
	}
	return snippet.Value(s)
}
