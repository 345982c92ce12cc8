package nic

import (
	"reflect"
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// TestTranslateChoice: a row per rule of splits and matches. err is a
// fragment of the rejection (NGINX Ingress Controller's Invalid); problem
// a fragment of the one Problem, the route then left out; else want is
// the route's choice.
func TestTranslateChoice(t *testing.T) {
	pass := func(u string) *nicv1.Action { return &nicv1.Action{Pass: u} }
	split := func(w int, u string) nicv1.Split { return nicv1.Split{Weight: w, Action: pass(u)} }
	hdr := func(name, value string) nicv1.Condition { return nicv1.Condition{Header: name, Value: value} }
	to := func(u string) []Weighted { return []Weighted{{Upstream: u, Weight: 100}} }
	for _, tc := range []struct {
		name    string
		action  *nicv1.Action
		splits  []nicv1.Split
		matches []nicv1.Match
		err     string
		problem string
		primary string
		want    *Choice
	}{
		{name: "two splits", splits: []nicv1.Split{split(90, "a"), split(10, "b")}, primary: "a",
			want: &Choice{Default: []Weighted{{Upstream: "a", Weight: 90}, {Upstream: "b", Weight: 10}}}},
		{name: "N splits", splits: []nicv1.Split{split(20, "a"), split(30, "b"), split(50, "c")}, primary: "a",
			want: &Choice{Default: []Weighted{{Upstream: "a", Weight: 20}, {Upstream: "b", Weight: 30}, {Upstream: "c", Weight: 50}}}},
		{name: "a zero weight is allowed", splits: []nicv1.Split{split(0, "a"), split(100, "b")}, primary: "a",
			want: &Choice{Default: []Weighted{{Upstream: "a", Weight: 0}, {Upstream: "b", Weight: 100}}}},
		{name: "splits sum to 100", splits: []nicv1.Split{split(20, "a"), split(30, "b"), split(40, "c")}, err: "sum to 90"},
		{name: "a split needs an action", splits: []nicv1.Split{split(50, "a"), {Weight: 50}}, err: "splits[1].action is required"},
		{name: "a split into a return", splits: []nicv1.Split{{Weight: 50, Action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 204}}},
			split(50, "a")}, primary: "a",
			want: &Choice{Default: []Weighted{{Answer: &Action{Return: &model.Return{Status: 204}}, Weight: 50}, {Upstream: "a", Weight: 50}}}},
		{name: "a split into a return with headers keeps them", splits: []nicv1.Split{split(50, "a"),
			{Weight: 50, Action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 204, Headers: []nicv1.Header{{Name: "X-A", Value: "b"}}}}}},
			primary: "a",
			want: &Choice{Default: []Weighted{{Upstream: "a", Weight: 50},
				{Answer: &Action{Return: &model.Return{Status: 204}, Headers: []model.Header{{Name: "X-A", Value: "b"}}}, Weight: 50}}}},
		{name: "splits that all answer proxy nothing", splits: []nicv1.Split{{Weight: 50, Action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 204}}},
			{Weight: 50, Action: &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.com/"}}}},
			want: &Choice{Default: []Weighted{{Answer: &Action{Return: &model.Return{Status: 204}}, Weight: 50},
				{Answer: &Action{Redirect: &model.Redirect{Code: 301, URL: "https://example.com/"}}, Weight: 50}}}},
		{name: "matches that all answer proxy nothing", action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 404}},
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x-maintenance", "on")},
				Action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 503}}}},
			want: &Choice{Default: []Weighted{{Answer: &Action{Return: &model.Return{Status: 404}}, Weight: 100}},
				Matches: []ChoiceMatch{{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "x-maintenance", Match: model.MatchCaseless, Value: "on"}},
					Targets: []Weighted{{Answer: &Action{Return: &model.Return{Status: 503}}, Weight: 100}}}}}},
		{name: "header, cookie, argument and variable conditions; negation", action: pass("a"),
			matches: []nicv1.Match{
				{Conditions: []nicv1.Condition{hdr("X-Version", "v2"), {Cookie: "user", Value: "!beta"}}, Action: pass("b")},
				{Conditions: []nicv1.Condition{{Argument: "v", Value: "3"}, {Variable: "$request_method", Value: "POST"}},
					Splits: []nicv1.Split{split(50, "b"), split(50, "c")}},
			}, primary: "a",
			want: &Choice{Default: to("a"), Matches: []ChoiceMatch{
				{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "X-Version", Match: model.MatchCaseless, Value: "v2"},
					{Kind: model.ConditionCookie, Name: "user", Match: model.MatchCaseless, Value: "beta", Negate: true}}, Targets: to("b")},
				{Conditions: []model.Condition{{Kind: model.ConditionArgument, Name: "v", Match: model.MatchCaseless, Value: "3"},
					{Kind: model.ConditionVariable, Name: "request_method", Match: model.MatchCaseless, Value: "POST"}}, Targets: []Weighted{{Upstream: "b", Weight: 50}, {Upstream: "c", Weight: 50}}},
			}}},
		{name: "matches beside splits", splits: []nicv1.Split{split(50, "a"), split(50, "b")},
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x", "")}, Action: pass("c")}}, primary: "a",
			want: &Choice{Default: []Weighted{{Upstream: "a", Weight: 50}, {Upstream: "b", Weight: 50}}, Matches: []ChoiceMatch{
				{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "x", Match: model.MatchCaseless}}, Targets: to("c")}}}},
		{name: "a match without conditions", action: pass("a"), matches: []nicv1.Match{{Action: pass("b")}}, err: "at least one condition"},
		{name: "a match with both action and splits", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x", "y")}, Action: pass("b"), Splits: []nicv1.Split{split(50, "a"), split(50, "b")}}},
			err:     "exactly one of action and splits"},
		{name: "a condition with two subjects", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{{Header: "x", Argument: "y"}}, Action: pass("b")}}, err: "exactly one of header, cookie"},
		{name: "a condition without a subject", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{{Value: "y"}}, Action: pass("b")}}, err: "exactly one of header, cookie"},
		{name: "an unknown variable", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{{Variable: "$host", Value: "y"}}, Action: pass("b")}}, err: "variable"},
		{name: "a variable without $", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{{Variable: "scheme", Value: "http"}}, Action: pass("b")}}, err: "variable"},
		{name: "a header name that is no token", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("X Version", "y")}, Action: pass("b")}}, err: "header"},
		{name: "a token header name outside Causeway's grammar", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr(strings.Repeat("X", 65), "y")}, Action: pass("b")}}, problem: `header "XXX`},
		{name: "a header name with _ (no HTTP token for NGINX Ingress Controller)", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("X_Version", "y")}, Action: pass("b")}}, err: "header"},
		{name: "a cookie name with -", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{{Cookie: "a-b", Value: "y"}}, Action: pass("b")}}, err: "cookie"},
		{name: "a value with a quote", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x", `a\"b`)}, Action: pass("b")}}, problem: "value"},
		{name: "a match naming an undefined upstream", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x", "y")}, Action: pass("nope")}}, err: "does not define"},
		{name: "a match answering a redirect", action: pass("a"),
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x", "y")},
				Action: &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.com/"}}}}, primary: "a",
			want: &Choice{Default: to("a"), Matches: []ChoiceMatch{{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "x", Match: model.MatchCaseless, Value: "y"}},
				Targets: []Weighted{{Answer: &Action{Redirect: &model.Redirect{Code: 301, URL: "https://example.com/"}}, Weight: 100}}}}}},
		{name: "a route redirect beside matches: the proxy settings are the match's",
			action:  &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.com/", Code: 302}},
			matches: []nicv1.Match{{Conditions: []nicv1.Condition{hdr("x", "y")}, Action: pass("a")}}, primary: "a",
			want: &Choice{Default: []Weighted{{Answer: &Action{Redirect: &model.Redirect{Code: 302, URL: "https://example.com/"}}, Weight: 100}},
				Matches: []ChoiceMatch{{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "x", Match: model.MatchCaseless, Value: "y"}}, Targets: to("a")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := translateRoute(t, nicv1.Route{Path: "/", Action: tc.action, Splits: tc.splits, Matches: tc.matches}, tc.err, tc.problem)
			if r == nil {
				return
			}
			if r.Action.Upstream != tc.primary || !reflect.DeepEqual(r.Choice, tc.want) {
				t.Errorf("action %+v choice %+v, want %s and %+v", r.Action, r.Choice, tc.primary, tc.want)
			}
		})
	}
}
