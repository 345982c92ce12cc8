package model

// ModSecurity is a location's web application firewall: ModSecurity v3
// with the base configuration Causeway renders (ingress-nginx's defaults:
// DetectionOnly, so a match is logged and the request goes through, until
// a snippet says "SecRuleEngine On"), the ConfigMap's rules when it
// enables ModSecurity for every Ingress, and the location's own.
type ModSecurity struct {
	// CRS runs the OWASP Core Rule Set for the location.
	CRS bool
	// Rules are the location's own directives (modsecurity-snippet), run
	// ahead of the base configuration's and the ConfigMap's; nil for none.
	Rules *SecRules
	// TransactionID is the ID ModSecurity gives each request
	// (modsecurity-transaction-id): literals and nginx variables; nil
	// lets ModSecurity draw one.
	TransactionID Template
}

// ModSecurityConfig is the ConfigMap's ModSecurity: enable-modsecurity,
// enable-owasp-modsecurity-crs and modsecurity-snippet.
type ModSecurityConfig struct {
	// Enabled runs ModSecurity on every path of every Ingress, unless an
	// Ingress says enable-modsecurity "false".
	Enabled bool
	// CRS runs the OWASP Core Rule Set wherever ModSecurity runs.
	CRS bool
	// Rules are the ConfigMap's directives (modsecurity-snippet); nil for
	// none. As in ingress-nginx, they replace the base configuration
	// unless they include it (SecIncludeBase).
	Rules *SecRules
}

// SecRules is a ModSecurity snippet read into directives of an allowlist
// (package modsec): never configuration text. Every value passed the
// grammar of this file, and the renderer checks it again as it prints.
type SecRules struct {
	Directives []SecDirective
}

// Includes reports whether the rules include file.
func (r *SecRules) Includes(file SecInclude) bool {
	if r == nil {
		return false
	}
	for _, d := range r.Directives {
		if d.Include == file {
			return true
		}
	}
	return false
}

// IDs are the ids of the rules the directives define (SecRule, SecAction).
func (r *SecRules) IDs() []int {
	if r == nil {
		return nil
	}
	var out []int
	for _, d := range r.Directives {
		if d.Rule != nil {
			if id, ok := d.Rule.ID(); ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// SecDirective is one directive; exactly one field is set.
type SecDirective struct {
	// Setting is a directive whose arguments have a fixed grammar, such as
	// SecRuleEngine On (SecSettings lists them).
	Setting *SecSetting
	// Remove is SecRuleRemoveById, SecRuleRemoveByTag or
	// SecRuleRemoveByMsg.
	Remove *SecRemove
	// UpdateTarget is SecRuleUpdateTargetById, -ByTag or -ByMsg.
	UpdateTarget *SecUpdateTarget
	// Rule is SecRule, SecAction or SecDefaultAction.
	Rule *SecRule
	// Marker is SecMarker's label (SecLabel).
	Marker string
	// Include is one of the two files of ingress-nginx's image that a
	// snippet may include; SecIncludeNone otherwise.
	Include SecInclude
}

// SecInclude names a file of ingress-nginx's image that a snippet may
// include; Causeway puts its own rendered equivalent in its place.
type SecInclude int

// The files.
const (
	SecIncludeNone SecInclude = iota
	// SecIncludeBase is /etc/nginx/modsecurity/modsecurity.conf: the base
	// configuration.
	SecIncludeBase
	// SecIncludeCRS is /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf:
	// the OWASP Core Rule Set.
	SecIncludeCRS
)

// SecIncludePaths are the paths a snippet may include, as ingress-nginx's
// image has them.
var SecIncludePaths = map[string]SecInclude{
	"/etc/nginx/modsecurity/modsecurity.conf":                 SecIncludeBase,
	"/etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf": SecIncludeCRS,
}

// SecSetting is a directive of SecSettings with its arguments.
type SecSetting struct {
	Name string
	Args []string
}

// SecRemove removes rules: by id (IDs), by tag or by message (Text).
type SecRemove struct {
	By   SecBy
	IDs  []SecIDRange
	Text string
}

// SecUpdateTarget changes what rules inspect: Targets added, or removed
// when Exclude ("!ARGS:password").
type SecUpdateTarget struct {
	By SecBy
	// ID is the rule of By SecByID; Text the tag or message otherwise.
	ID      int
	Text    string
	Targets []SecVariable
}

// SecBy is how SecRuleRemove* and SecRuleUpdateTarget* pick rules.
type SecBy string

// The ways.
const (
	SecByID  SecBy = "Id"
	SecByTag SecBy = "Tag"
	SecByMsg SecBy = "Msg"
)

// SecIDRange is a rule id or an inclusive range of them (Lo == Hi for
// one).
type SecIDRange struct{ Lo, Hi int }

// SecRule is SecRule (Variables and Operator set), SecAction (neither) or
// SecDefaultAction (Default; neither).
type SecRule struct {
	Variables []SecVariable
	Operator  *SecOperator
	Actions   []SecAction
	Default   bool
}

// ID is the rule's id action, if it has one.
func (r *SecRule) ID() (int, bool) {
	for _, a := range r.Actions {
		if a.Name == "id" {
			n, err := secInt(a.Value, 1, MaxSecRuleID)
			return n, err == nil
		}
	}
	return 0, false
}

// Chains reports whether the rule has the chain action: the next
// directive is the rest of the rule.
func (r *SecRule) Chains() bool {
	for _, a := range r.Actions {
		if a.Name == "chain" {
			return true
		}
	}
	return false
}

// SecVariable is one target of a rule: a variable or collection, with an
// optional key (a name or, between slashes, a regular expression).
type SecVariable struct {
	// Exclude drops the key from the targets ("!"); Count counts the
	// collection's members ("&").
	Exclude, Count bool
	Name           string
	Key            string
}

// SecOperator is a rule's operator and argument; Negate is "!".
type SecOperator struct {
	Negate bool
	Name   string
	Arg    string
}

// SecAction is one action of a rule: a name and, for most, a value.
type SecAction struct {
	Name  string
	Value string
}
