package build

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// TestVirtualServerChoice: a route's splits and matches become the
// model's Choice over the upstreams' backends, applied by the balancer.
func TestVirtualServerChoice(t *testing.T) {
	split := func(w int, u string) nicv1.Split { return nicv1.Split{Weight: w, Action: &nicv1.Action{Pass: u}} }
	route := nicv1.Route{Path: "/", Splits: []nicv1.Split{split(20, "a"), split(30, "b"), split(50, "c")},
		Matches: []nicv1.Match{{Conditions: []nicv1.Condition{{Header: "X-Version", Value: "!v1"}}, Action: &nicv1.Action{Pass: "c"}}}}
	key := func(i int) string { return "default/" + svcName(i) + "/80" }
	for _, tc := range []struct {
		name   string
		change func(*source.Snapshot)
		check  func(*testing.T, *model.Location, []model.Problem)
	}{
		{name: "splits and a match", check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			p := l.Action.Proxy
			want := &model.Split{Source: model.ObjectRef{Kind: "VirtualServer", Namespace: "default", Name: "cafe", UID: "uid-cafe"}, Route: "/",
				Default: []model.Target{{Backend: key(0), Weight: 20}, {Backend: key(1), Weight: 30}, {Backend: key(2), Weight: 50}},
				Rules: []model.SplitRule{{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "X-Version", Match: model.MatchCaseless, Value: "v1", Negate: true}},
					Targets: []model.Target{{Backend: key(2), Weight: 100}}}}}
			if p == nil || p.Backend != key(0) || !reflect.DeepEqual(p.Split, want) || len(ps) != 0 {
				t.Errorf("proxy %+v choice %+v problems %v", p, p.Split, ps)
			}
			if err := p.Split.Validate(); err != nil {
				t.Error(err)
			}
		}},
		{name: "a chosen upstream without a Service answers 503", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.Upstreams[2].Service = "nope"
		}, check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			if l.Action.Return == nil || l.Action.Return.Status != 503 {
				t.Errorf("action %+v", l.Action)
			}
			if r := reasonsOf(ps, "VirtualServer", "cafe"); !slices.Equal(r, []string{model.ReasonMissingService}) {
				t.Errorf("reasons %v", r)
			}
		}},
		{name: "the first upstream's settings apply; others' are reported", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.Upstreams[2].ReadTimeout = "5s"
		}, check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			if l.Policy != nil || len(ps) != 1 || ps[0].Reason != model.ReasonUnsupported {
				t.Errorf("policy %+v problems %v", l.Policy, ps)
			}
		}},
		{name: "upstreams that keep idle connections differently are reported", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.Upstreams[1].Keepalive = new(8)
		}, check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			if len(ps) != 1 || ps[0].Reason != model.ReasonUnsupported || !strings.Contains(ps[0].Message, `upstreams "a" and "b" keep idle connections differently`) {
				t.Errorf("problems %v", ps)
			}
		}},
		{name: "upstreams with the same keepalive agree", change: func(s *source.Snapshot) {
			for i := range s.VirtualServers[0].Spec.Upstreams {
				s.VirtualServers[0].Spec.Upstreams[i].Keepalive = new(8)
			}
		}, check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			if len(ps) != 0 {
				t.Errorf("problems %v", ps)
			}
		}},
		{name: "a split into a return: the first proxying action's upstream is the location's", change: func(s *source.Snapshot) {
			s.VirtualServers[0].Spec.Routes[0].Splits[0].Action = &nicv1.Action{Return: &nicv1.ActionReturn{Code: 418, Body: "tea"}}
		}, check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			p := l.Action.Proxy
			if p == nil || p.Backend != key(1) || len(ps) != 0 {
				t.Fatalf("action %+v problems %v", l.Action, ps)
			}
			c := p.Split
			want := []model.Target{model.AnswerTarget(0, 20), {Backend: key(1), Weight: 30}, {Backend: key(2), Weight: 50}}
			if !reflect.DeepEqual(c.Default, want) || len(c.Answers) != 1 || c.Answers[0].Return == nil || c.Answers[0].Return.Status != 418 {
				t.Errorf("choice %+v", c)
			}
			if err := c.Validate(); err != nil {
				t.Error(err)
			}
		}},
		{name: "a route redirect beside matches keeps the matches", change: func(s *source.Snapshot) {
			r := &s.VirtualServers[0].Spec.Routes[0]
			r.Splits, r.Action = nil, &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.com/", Code: 307}}
		}, check: func(t *testing.T, l *model.Location, ps []model.Problem) {
			p := l.Action.Proxy
			if p == nil || p.Backend != key(2) || len(ps) != 0 {
				t.Fatalf("action %+v problems %v", l.Action, ps)
			}
			c := p.Split
			if !reflect.DeepEqual(c.Default, []model.Target{model.AnswerTarget(0, 100)}) || len(c.Rules) != 1 ||
				!reflect.DeepEqual(c.Answers, []model.Answer{{Redirect: &model.Redirect{Code: 307, URL: "https://example.com/"}}}) {
				t.Errorf("choice %+v", c)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := world(3)
			vs := mkVirtualServer("cafe", "cafe.test", 0, route)
			vs.Spec.Upstreams = append(vs.Spec.Upstreams, nicv1.Upstream{Name: "c", Service: svcName(2), Port: 80})
			snap.VirtualServers = []*nicv1.VirtualServer{vs}
			if tc.change != nil {
				tc.change(snap)
			}
			m, problems := Build(snap, testOpts)
			tc.check(t, server(m, "cafe.test").Match("/"), problems)
		})
	}
}
