package controller

import (
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/externalname"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// fakeNames answers from a table and records what it was told.
type fakeNames struct {
	answers  map[string]externalname.Answer
	kept     [][]string
	settings externalname.Settings
}

func (f *fakeNames) Configure(s externalname.Settings)      { f.settings = s }
func (f *fakeNames) Keep(names []string)                    { f.kept = append(f.kept, names) }
func (f *fakeNames) Lookup(name string) externalname.Answer { return f.answers[name] }
func (f *fakeNames) Changed() <-chan struct{}               { return nil }
func ext(host string, port int32, eps ...model.Endpoint) *model.Backend {
	return &model.Backend{Key: "default/" + host + "/80", Namespace: "default", Service: host, Port: "80",
		External: &model.ExternalName{Host: host, Port: port}, Endpoints: eps}
}

// TestFillExternalNames: resolved addresses become endpoints on the
// backend's port; a name that does not resolve is a Problem on its
// Service and on the Ingress routing to it, one that failed again keeps
// its addresses with a Problem on the Service; an address written as the
// name is never looked up; only the sync's own build changes the names
// kept.
func TestFillExternalNames(t *testing.T) {
	addr := netip.MustParseAddr
	names := &fakeNames{answers: map[string]externalname.Answer{
		"ok.test":    {Addrs: []netip.Addr{addr("192.0.2.1"), addr("2001:db8::1")}, Resolved: true},
		"gone.test":  {Err: errors.New("no such name"), Gone: true, Resolved: true},
		"stale.test": {Addrs: []netip.Addr{addr("192.0.2.7")}, Err: errors.New("timeout"), Resolved: true},
	}}
	ing := model.ObjectRef{Kind: "Ingress", Namespace: "default", Name: "web"}
	m := &model.Model{
		Config: model.Config{Resolvers: []netip.AddrPort{netip.MustParseAddrPort("10.0.0.53:53")}, NoIPv6DNS: true},
		Backends: []*model.Backend{ext("ok.test", 8080), ext("gone.test", 80), ext("stale.test", 80), ext("new.test", 80),
			ext("192.0.2.9", 80, model.Endpoint{Address: "192.0.2.9", Port: 80})},
		Servers: []*model.Server{{Host: "a.test", Locations: []*model.Location{{Match: model.Match{Type: model.Prefix, Path: "/"}, Source: ing,
			Action: model.Action{Proxy: &model.Proxy{Backend: "default/gone.test/80"}}}}}},
	}
	c := &Controller{opts: Options{Names: names}}
	problems := c.fillExternalNames(m, &source.Snapshot{}, true)

	if want := []string{"gone.test", "new.test", "ok.test", "stale.test"}; len(names.kept) != 1 || !reflect.DeepEqual(names.kept[0], want) {
		t.Errorf("kept %v, want %v", names.kept, want)
	}
	if !names.settings.NoIPv6 || len(names.settings.Servers) != 1 {
		t.Errorf("settings %+v, want the ConfigMap's", names.settings)
	}
	want := map[string][]model.Endpoint{
		"ok.test":    {{Address: "192.0.2.1", Port: 8080}, {Address: "2001:db8::1", Port: 8080}},
		"gone.test":  nil,
		"stale.test": {{Address: "192.0.2.7", Port: 80}},
		"new.test":   nil,
		"192.0.2.9":  {{Address: "192.0.2.9", Port: 80}},
	}
	for _, b := range m.Backends {
		if !reflect.DeepEqual(b.Endpoints, want[b.Service]) {
			t.Errorf("%s: endpoints %v, want %v", b.Service, b.Endpoints, want[b.Service])
		}
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Object.Kind+" "+p.Object.Name+" "+p.Reason)
	}
	wantProblems := []string{"Service gone.test " + ReasonExternalName, "Ingress web " + ReasonExternalName, "Service stale.test " + ReasonExternalName}
	if !reflect.DeepEqual(got, wantProblems) {
		t.Errorf("problems %v, want %v", got, wantProblems)
	}

	c.fillExternalNames(m, &source.Snapshot{}, false)
	if len(names.kept) != 1 {
		t.Errorf("a trial build changed the names kept: %v", names.kept)
	}
}
