package gateway

import (
	"errors"
	"fmt"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// Match is one HTTPRouteMatch in the model's terms: the path a location
// matches, and the conditions the balancer's split checks on the
// requests the location receives.
type Match struct {
	// Path is Exact (as written), Prefix (element-wise, without a
	// trailing "/": Gateway API's PathPrefix is Ingress's Prefix) or
	// Regex.
	//
	// A RegularExpression is ParseRegex's safe grammar (what PCRE and
	// RE2 read alike, printed into nginx inside quotes), not the header
	// grammar: it becomes an nginx location, so it must start with "/" and
	// may hold "$" only as its final anchor. It must match the whole
	// path, as the spec's matches do: a leading "^" is dropped (the model
	// anchors at the start) and "$" is added at the end. The model's regex locations are
	// case-insensitive (nginx's ~*), where the spec asks for case
	// sensitivity: a documented difference of this implementation-specific
	// match.
	Path model.Match
	// Conditions are the header, query parameter and method matches:
	// all must hold.
	Conditions []model.Condition
	// Method, Headers and Queries rank the match (the spec's precedence):
	// whether it matches the method, and how many header and query
	// parameter matches it has.
	Method           bool
	Headers, Queries int
}

// The methods of HTTPMethod.
var httpMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true}

// translateMatch translates one HTTPRouteMatch. Names and values are held
// to the model's condition grammars, which are narrower than Gateway
// API's:
//   - a header name is 1 to 64 letters, digits, "-" and "_": nginx (with
//     its default ignore_invalid_headers) drops request headers whose
//     names hold any other token character, so such a match could never
//     hold;
//   - a query parameter name is 1 to 64 letters, digits and "_" (the
//     balancer reads it as nginx's $arg_<name>, which compares names
//     ignoring case and does not decode the value);
//   - a value is at most 256 printable ASCII characters without '"' and
//     '\'; a regex is ParseHeaderRegex's grammar (searched anywhere in
//     the value, case-sensitively, no "$").
//
// A match outside them leaves its rule out (UnsupportedValue), never
// silently matching something else.
func translateMatch(field string, in *gwv1.HTTPRouteMatch) (Match, *ruleError) {
	var out Match
	var err *ruleError
	if out.Path, err = translatePath(field+".path", in.Path); err != nil {
		return Match{}, err
	}
	seen := map[string]bool{}
	for i, h := range in.Headers {
		f := fmt.Sprintf("%s.headers[%d]", field, i)
		name := string(h.Name)
		key := strings.ToLower(name)
		if seen[key] {
			// The spec: only the first of equivalent names counts.
			continue
		}
		seen[key] = true
		match, err := matchKind(f, h.Type)
		if err != nil {
			return Match{}, err
		}
		c := model.Condition{Kind: model.ConditionHeader, Name: name, Match: match, Value: h.Value}
		if err := checkCondition(f, &c); err != nil {
			return Match{}, err
		}
		out.Conditions = append(out.Conditions, c)
		out.Headers++
	}
	seen = map[string]bool{}
	for i, q := range in.QueryParams {
		f := fmt.Sprintf("%s.queryParams[%d]", field, i)
		name := string(q.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		var t *gwv1.HeaderMatchType
		if q.Type != nil {
			mt := gwv1.HeaderMatchType(*q.Type)
			t = &mt
		}
		match, err := matchKind(f, t)
		if err != nil {
			return Match{}, err
		}
		c := model.Condition{Kind: model.ConditionArgument, Name: name, Match: match, Value: q.Value}
		if err := checkCondition(f, &c); err != nil {
			return Match{}, err
		}
		out.Conditions = append(out.Conditions, c)
		out.Queries++
	}
	if in.Method != nil {
		m := string(*in.Method)
		if !httpMethods[m] {
			return Match{}, ruleUnsupported("%s.method %q: want GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE or PATCH", field, model.Truncate(m))
		}
		out.Conditions = append(out.Conditions, model.Condition{Kind: model.ConditionVariable, Name: "request_method", Match: model.MatchExact, Value: m})
		out.Method = true
	}
	if len(out.Conditions) > model.MaxSplitConditions {
		return Match{}, ruleUnsupported("%s: %d header, query parameter and method matches, at most %d", field, len(out.Conditions), model.MaxSplitConditions)
	}
	return out, nil
}

// matchKind reads a header or query parameter match's type.
func matchKind(field string, t *gwv1.HeaderMatchType) (model.MatchKind, *ruleError) {
	if t == nil {
		return model.MatchExact, nil
	}
	switch *t {
	case gwv1.HeaderMatchExact:
		return model.MatchExact, nil
	case gwv1.HeaderMatchRegularExpression:
		return model.MatchRegex, nil
	}
	return "", ruleUnsupported("%s.type %q: want Exact or RegularExpression", field, model.Truncate(string(*t)))
}

// checkCondition holds c to the model's grammar; Gateway API's values
// are never empty.
func checkCondition(field string, c *model.Condition) *ruleError {
	if c.Value == "" {
		return ruleUnsupported("%s.value is empty", field)
	}
	if err := c.Validate(); err != nil {
		return ruleUnsupported("%s (%s %q): %v", field, c.Kind, model.Truncate(c.Name), err)
	}
	return nil
}

// translatePath translates a match's path; nil is the API's default,
// PathPrefix "/".
func translatePath(field string, in *gwv1.HTTPPathMatch) (model.Match, *ruleError) {
	typ, value := gwv1.PathMatchPathPrefix, "/"
	if in != nil {
		if in.Type != nil {
			typ = *in.Type
		}
		if in.Value != nil {
			value = *in.Value
		}
	}
	switch typ {
	case gwv1.PathMatchExact, gwv1.PathMatchPathPrefix:
		if err := model.ValidatePath(value); err != nil {
			return model.Match{}, ruleUnsupported("%s.value: %v", field, err)
		}
		if typ == gwv1.PathMatchExact {
			return model.Match{Type: model.Exact, Path: value}, nil
		}
		if value != "/" {
			value = strings.TrimSuffix(value, "/")
		}
		return model.Match{Type: model.Prefix, Path: value}, nil
	case gwv1.PathMatchRegularExpression:
		re := strings.TrimPrefix(value, "^")
		_, err := model.ParseRegex(re)
		if err == nil && (strings.Contains(strings.TrimSuffix(re, "$"), "$") || strings.Contains(re, `\$`)) {
			err = errors.New(`"$" only as the final anchor`)
		}
		if err == nil {
			re = strings.TrimSuffix(re, "$") + "$"
			_, err = model.ParseRegex(re)
		}
		if err != nil {
			return model.Match{}, ruleUnsupported("%s.value %q: %v", field, model.Truncate(value), err)
		}
		return model.Match{Type: model.Regex, Path: re}, nil
	}
	return model.Match{}, ruleUnsupported("%s.type %q: want Exact, PathPrefix or RegularExpression", field, model.Truncate(string(typ)))
}
