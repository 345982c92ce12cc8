package controller

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// withCanary gives location i of testModel's server a canary to backend
// key, from the canary Ingress ns/name.
func withCanary(res *SyncResult, i int, key, name string, weight int) {
	l := res.Model.Servers[0].Locations[i]
	rule := model.CanaryRule{Weight: weight, WeightTotal: 100}
	l.Action.Proxy.Split = rule.Split(model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: name, UID: "uid-" + name}, l.Action.Proxy.Backend, key)
}

// TestDynamicBackendsCarrySplits: each split a location names is pushed
// once, after the backends, with its rule; a new weight changes the
// pushed state only.
func TestDynamicBackendsCarrySplits(t *testing.T) {
	c := &Controller{dyn: &dynamicChannel{pusher: &fakePusher{}, stateFile: filepath.Join(t.TempDir(), "state.json")}}
	res := testModel(map[string]int{"a": 1, "c": 1})
	withCanary(res, 0, "ns/c/80", "a-canary", 20)
	// A second location with the same main, canary and canary Ingress
	// shares the split.
	dup := *res.Model.Servers[0].Locations[0]
	proxy := *dup.Action.Proxy
	dup.Action.Proxy, dup.Match.Path = &proxy, "/a2"
	res.Model.Servers[0].Locations = append(res.Model.Servers[0].Locations, &dup)
	backends := c.dynamicBackends(res)
	if got := keysOf(backends); got != "ns/a/80,ns/c/80,split@ns/a-canary@ns/a/80@ns/c/80" {
		t.Fatalf("backends %s", got)
	}
	s := backends[2].Split
	if s == nil || s.Primary != "ns/a/80" || len(s.Rules) != 0 || len(s.Targets) != 2 || s.Targets[0] != (balancer.Target{Backend: "ns/c/80", Weight: 20}) ||
		s.Targets[1] != (balancer.Target{Backend: "ns/a/80", Weight: 80}) || len(res.Problems) != 0 {
		t.Fatalf("split %+v, problems %v", s, res.Problems)
	}
	if err := backends[2].Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedSplitIsReported: a split nginx refuses (which the shared
// grammar should prevent) is reported on both Ingresses, not dropped
// silently.
func TestRefusedSplitIsReported(t *testing.T) {
	res := testModel(map[string]int{"a": 1, "c": 1})
	withCanary(res, 0, "ns/c/80", "a-canary", 20)
	report(res, "split@ns/a-canary@ns/a/80@ns/c/80", ReasonInvalidBackend, "refused")
	if got := problemsOf(res); got != "Ingress ns/a-canary(uid-a-canary) InvalidBackend; Ingress ns/a(uid-ing-a) InvalidBackend" {
		t.Fatalf("problems %q", got)
	}
}

// TestPlainModeReportsCanaries: without the Lua balancer nothing splits;
// each canary Ingress is told so once.
func TestPlainModeReportsCanaries(t *testing.T) {
	c := &Controller{}
	res := testModel(map[string]int{"a": 1, "big": 1, "c": 1})
	withCanary(res, 0, "ns/c/80", "x-canary", 20)
	withCanary(res, 1, "ns/c/80", "x-canary", 20)
	if got := c.dynamicBackends(res); got != nil {
		t.Fatalf("plain mode pushed %v", keysOf(got))
	}
	if got := problemsOf(res); got != "Ingress ns/x-canary(uid-x-canary) "+ReasonCanaryNeedsLua {
		t.Fatalf("problems %q", got)
	}
}

// TestPlainModeReportsAnsweringChoices: without the Lua balancer a route
// whose every action answers cannot choose and answers 503; its
// VirtualServer is told so, in other words than a choice with a backend.
func TestPlainModeReportsAnsweringChoices(t *testing.T) {
	c := &Controller{}
	res := testModel(map[string]int{"a": 1, "big": 1})
	vs := model.ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "vs", UID: "uid-vs"}
	res.Model.Servers[0].Locations[0].Action.Proxy = &model.Proxy{Split: &model.Split{Source: vs, Route: "/",
		Default: []model.Target{model.AnswerTarget(0, 100)}, Answers: []model.Answer{{Return: &model.Return{Status: 204}}}}}
	if got := c.dynamicBackends(res); got != nil {
		t.Fatalf("plain mode pushed %v", keysOf(got))
	}
	if len(res.Problems) != 1 || res.Problems[0].Object != vs || !strings.Contains(res.Problems[0].Message, "answers 503") {
		t.Fatalf("problems %+v", res.Problems)
	}
}
