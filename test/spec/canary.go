package spec

import (
	"regexp"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Canary rows: a main Ingress "web" for canary.test/ and canary Ingresses
// of it. Weights are 0 or the total here, so that Eval and nginx agree
// on every request; the distribution of other weights is the
// integration tier's (TestCanaryWeightDistribution).

func canaryRow(name string, canary map[string]string, r Request, service string, problems ...string) AnnotationCase {
	return AnnotationCase{Name: name,
		Ingresses: []Ingress{{Name: "web", Host: "canary.test", Paths: []Route{{"/", "Prefix", "stable"}}},
			{Name: "web-canary", Host: "canary.test", Paths: []Route{{"/", "Prefix", "next"}}, Annotations: canary}},
		Request: r, Want: Response{Status: 200, Service: service}, Problems: problems}
}

func canaryAnn(kv ...string) map[string]string {
	return ann(append([]string{"canary", "true"}, kv...)...)
}

func canaryGet(header ...string) Request {
	return Request{Host: "canary.test", Path: "/", Header: ann(header...)}
}

var (
	byHeader  = canaryAnn("canary-by-header", "X-Canary")
	allThree  = canaryAnn("canary-by-header", "X-Canary", "canary-by-cookie", "canary_on", "canary-weight", "100")
	headerVal = canaryAnn("canary-by-header", "X-Canary", "canary-by-header-value", "v2")
	headerPat = canaryAnn("canary-by-header", "X-Canary", "canary-by-header-pattern", "^(v2|v3)-[a-z]+")
)

// CanaryTable is one row per canary rule and its precedence.
var CanaryTable = []AnnotationCase{
	canaryRow("canary: no rule sends nothing to the canary", canaryAnn(), canaryGet(), "stable"),
	canaryRow("canary: header always goes to the canary", byHeader, canaryGet("X-Canary", "always"), "next"),
	canaryRow("canary: header never stays on the main", byHeader, canaryGet("X-Canary", "never"), "stable"),
	canaryRow("canary: another header value falls through", byHeader, canaryGet("X-Canary", "yes"), "stable"),
	canaryRow("canary: the header name ignores case", byHeader, canaryGet("x-canary", "always"), "next"),
	canaryRow("canary: header value matches exactly", headerVal, canaryGet("X-Canary", "v2"), "next"),
	canaryRow("canary: header value is case-sensitive", headerVal, canaryGet("X-Canary", "V2"), "stable"),
	canaryRow("canary: with a header value, always is just a value", headerVal, canaryGet("X-Canary", "always"), "stable"),
	canaryRow("canary: header pattern matches", headerPat, canaryGet("X-Canary", "v3-beta"), "next"),
	canaryRow("canary: header pattern does not match", headerPat, canaryGet("X-Canary", "v4-beta"), "stable"),
	canaryRow("canary: cookie always goes to the canary", canaryAnn("canary-by-cookie", "canary_on"),
		canaryGet("Cookie", "a=1; canary_on=always"), "next"),
	canaryRow("canary: cookie never beats the weight", canaryAnn("canary-by-cookie", "canary_on", "canary-weight", "100"),
		canaryGet("Cookie", "canary_on=never"), "stable"),
	canaryRow("canary: weight 100 of 100 sends everything", canaryAnn("canary-weight", "100"), canaryGet(), "next"),
	canaryRow("canary: weight 10 of 10 sends everything", canaryAnn("canary-weight", "10", "canary-weight-total", "10"), canaryGet(), "next"),
	canaryRow("canary: header never beats cookie and weight", allThree, canaryGet("X-Canary", "never", "Cookie", "canary_on=always"), "stable"),
	canaryRow("canary: cookie never beats the weight under an undecided header", allThree,
		canaryGet("X-Canary", "maybe", "Cookie", "canary_on=never"), "stable"),
	canaryRow("canary: an undecided header and cookie leave it to the weight", allThree,
		canaryGet("X-Canary", "maybe", "Cookie", "canary_on=maybe"), "next"),
	canaryRow("canary: its other annotations are ignored", canaryAnn("canary-by-header", "X-Canary", "rewrite-target", "/elsewhere"),
		canaryGet("X-Canary", "always"), "next", model.ReasonUnsupportedAnnotation),
	{Name: "canary: without endpoints the main serves",
		Ingresses: []Ingress{{Name: "web", Host: "canary.test", Paths: []Route{{"/", "Prefix", "stable"}}},
			{Name: "web-canary", Host: "canary.test", Paths: []Route{{"/", "Prefix", "next"}}, Annotations: byHeader}},
		Empty:   []string{"next"},
		Request: canaryGet("X-Canary", "always"), Want: Response{Status: 200, Service: "stable"}},
	{Name: "canary: the oldest of two canaries applies",
		Ingresses: []Ingress{{Name: "web", Host: "canary.test", Paths: []Route{{"/", "Prefix", "stable"}}},
			{Name: "web-canary", Host: "canary.test", Paths: []Route{{"/", "Prefix", "next"}}, Annotations: byHeader},
			{Name: "web-canary2", Host: "canary.test", Paths: []Route{{"/", "Prefix", "later"}}, Annotations: byHeader}},
		Request: canaryGet("X-Canary", "always"), Want: Response{Status: 200, Service: "next"}, Problems: []string{model.ReasonCollision}},
	{Name: "canary: without a main Ingress the path is not served",
		Ingresses: []Ingress{{Name: "web", Host: "canary.test", Paths: []Route{{"/app", "Prefix", "stable"}}},
			{Name: "web-canary", Host: "canary.test", Paths: []Route{{"/", "Prefix", "next"}}, Annotations: canaryAnn("canary-weight", "100")}},
		Request: canaryGet(), Want: Response{Status: 404}, Problems: []string{"CanaryNotApplied"}},
}

// splitChoice applies a location's split as the Lua balancer does and
// returns the key of the backend that serves r. Weights that do not give
// one target every request are random; Eval takes the location's own
// backend then.
func splitChoice(p *model.Proxy, r Request) string {
	s := p.Split
	if s == nil {
		return p.Backend
	}
	for _, rule := range s.Rules {
		if holds(rule.Conditions, r) {
			return certain(rule.Targets, p.Backend)
		}
	}
	return certain(s.Default, p.Backend)
}

// splitAnswer is the answer a split picks for r, nil when it picks a
// backend (or there is no split).
func splitAnswer(p *model.Proxy, r Request) *model.Answer {
	if p == nil || p.Split == nil {
		return nil
	}
	s := p.Split
	ts := s.Default
	for _, rule := range s.Rules {
		if holds(rule.Conditions, r) {
			ts = rule.Targets
			break
		}
	}
	sum := 0
	for _, t := range ts {
		sum += t.Weight
	}
	for _, t := range ts {
		if t.Weight == sum && t.Answer > 0 {
			return &s.Answers[t.Answer-1]
		}
	}
	return nil
}

// holds reports whether every condition holds of r. Only the headers
// and cookies the rows use are read.
func holds(conds []model.Condition, r Request) bool {
	for _, c := range conds {
		var v string
		var present bool
		switch c.Kind {
		case model.ConditionHeader:
			v, present = headerVar(r.Header, c.Name)
		case model.ConditionCookie:
			v = cookie(r.Header["Cookie"], c.Name)
			present = v != ""
		default:
			panic("spec: a split condition on " + string(c.Kind) + " is not evaluated")
		}
		var ok bool
		switch c.Match {
		case model.MatchRegex:
			ok = present && regexp.MustCompile(c.Value).MatchString(v)
		case model.MatchCaseless:
			ok = strings.EqualFold(v, c.Value)
		default:
			ok = v == c.Value
		}
		if ok == c.Negate {
			return false
		}
	}
	return true
}

// certain is the backend of the target that takes every request, else
// def.
func certain(ts []model.Target, def string) string {
	sum := 0
	for _, t := range ts {
		sum += t.Weight
	}
	for _, t := range ts {
		if t.Weight == sum && t.Answer == 0 {
			return t.Backend
		}
	}
	return def
}

// headerVar reads a header as nginx's $http_<name>: case-insensitive, with
// "-" and "_" alike.
func headerVar(h map[string]string, name string) (string, bool) {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	for k, v := range h {
		if norm(k) == norm(name) {
			return v, true
		}
	}
	return "", false
}

// cookie reads a cookie as nginx's $cookie_<name>: the first one whose
// name matches ignoring ASCII case.
func cookie(header, name string) string {
	for _, c := range strings.Split(header, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(c), "=")
		if ok && strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// evalTemplate fills a redirect template's variables from r as nginx
// would: scheme, host, request_uri, is_args and args; a literal URL is
// returned as is.
func evalTemplate(t model.Template, r Request, host, path, query string) string {
	var b strings.Builder
	for _, p := range t {
		switch p.Variable {
		case "":
			b.WriteString(p.Literal)
		case "scheme":
			b.WriteString(r.Scheme)
		case "host":
			b.WriteString(host)
		case "request_uri":
			b.WriteString(r.Path)
		case "is_args":
			if query != "" {
				b.WriteString("?")
			}
		case "args":
			b.WriteString(query)
		default:
			panic("spec: a redirect variable $" + p.Variable + " is not evaluated")
		}
	}
	return b.String()
}
