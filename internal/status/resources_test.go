package status

import (
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/status/address"
)

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"}
}

// verdict is a verdict on the object "ns/name" of kind with status st.
func verdict(kind Kind, name string, st ResourceStatus, problems ...model.Problem) ResourceVerdict {
	m := meta(name)
	v := ResourceVerdict{Kind: kind, Object: &m, Status: st, Problems: problems}
	for _, p := range problems {
		v.Rejected = v.Rejected || p.Rejected
	}
	return v
}

func problem(kind Kind, name, reason, msg string, rejected bool) model.Problem {
	return model.Problem{Object: model.ObjectRef{Kind: kind.Name, Namespace: "ns", Name: name}, Reason: reason, Message: msg, Rejected: rejected}
}

// resourcePatchRecorder captures status patches of every kind, by "resource/name".
type resourcePatchRecorder struct {
	mu        sync.Mutex
	patches   map[string][]ResourceStatus
	raw       map[string][]string
	conflicts atomic.Int32
	notFound  atomic.Int32
}

func (p *resourcePatchRecorder) react(action k8stesting.Action) (bool, runtime.Object, error) {
	pa := action.(k8stesting.PatchAction)
	gr := pa.GetResource().GroupResource()
	if pa.GetSubresource() != "status" || pa.GetPatchType() != types.MergePatchType || gr.Group != nicv1.GroupName {
		return true, nil, apierrors.NewBadRequest("want a merge patch of a k8s.nginx.org status")
	}
	if p.conflicts.Add(-1) >= 0 {
		return true, nil, apierrors.NewConflict(gr, pa.GetName(), nil)
	}
	if p.notFound.Add(-1) >= 0 {
		return true, nil, apierrors.NewNotFound(gr, pa.GetName())
	}
	var body struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status nicv1.VirtualServerRouteStatus `json:"status"` // it has every field
	}
	if err := json.Unmarshal(pa.GetPatch(), &body); err != nil || body.Metadata.ResourceVersion == "" {
		return true, nil, apierrors.NewBadRequest("patch without a resourceVersion precondition")
	}
	key := gr.Resource + "/" + pa.GetName()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := body.Status
	p.patches[key] = append(p.patches[key], ResourceStatus{State: s.State, Reason: s.Reason, Message: s.Message,
		ReferencedBy: s.ReferencedBy, ExternalEndpoints: s.ExternalEndpoints})
	p.raw[key] = append(p.raw[key], string(pa.GetPatch()))
	rv, _ := strconv.Atoi(body.Metadata.ResourceVersion)
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("k8s.nginx.org/v1")
	u.SetName(pa.GetName())
	u.SetResourceVersion(strconv.Itoa(rv + 1))
	return true, u, nil
}

func (p *resourcePatchRecorder) get() map[string][]ResourceStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]ResourceStatus{}
	for k, v := range p.patches {
		out[k] = append([]ResourceStatus(nil), v...)
	}
	return out
}

type resourceHarness struct {
	w       *ResourceWriter
	rec     *resourcePatchRecorder
	leading atomic.Bool
}

func newResourceHarness(t *testing.T, src address.Source) *resourceHarness {
	h := &resourceHarness{rec: &resourcePatchRecorder{patches: map[string][]ResourceStatus{}, raw: map[string][]string{}}}
	h.leading.Store(true)
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	client.PrependReactor("patch", "*", h.rec.react)
	h.w = NewResourceWriter(ResourceWriterOptions{Client: client, Addresses: src, IsLeader: h.leading.Load,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	runWriter(t, h.w.Run)
	return h
}

func (h *resourceHarness) settle(t *testing.T) { t.Helper(); settleWrites(t, h.w.Pending) }

var publishedEndpoints = []nicv1.ExternalEndpoint{
	{IP: "192.0.2.1", Ports: "[80,443]"},
	{Hostname: "lb.example.com", Ports: "[80,443]"},
}

// valid is the Valid status of "ns/name" of kind, as it is written with
// the published addresses.
func valid(kind Kind, name string) ResourceStatus {
	s := ResourceStatus{State: "Valid", Reason: "AddedOrUpdated", Message: "Configuration for ns/" + name + " was added or updated"}
	if kind.Name == "Policy" {
		s.Message = "Policy ns/" + name + " was added or updated"
	}
	if kind.Endpoints {
		s.ExternalEndpoints = publishedEndpoints
	}
	return s
}

// TestResourceWriterPlan is the status specification, one row per rule
// and kind.
func TestResourceWriterPlan(t *testing.T) {
	withRef := func(v ResourceVerdict, by string) ResourceVerdict { v.ReferencedBy = by; return v }
	for _, tc := range []struct {
		name string
		v    ResourceVerdict
		want []ResourceStatus // nil: nothing written
	}{
		{"a VirtualServer without problems is Valid with the endpoints",
			verdict(VirtualServers, "a", ResourceStatus{}), []ResourceStatus{valid(VirtualServers, "a")}},
		{"one with problems that is still served is Warning, the problems in the message",
			verdict(VirtualServers, "a", ResourceStatus{}, problem(VirtualServers, "a", model.ReasonUnsupported, "spec.gunzip is not supported", false),
				problem(VirtualServers, "a", model.ReasonMissingService, "service s not found", false)),
			[]ResourceStatus{{State: "Warning", Reason: "AddedOrUpdatedWithWarning",
				Message:           "Configuration for ns/a was added or updated with warning(s): spec.gunzip is not supported; service s not found",
				ExternalEndpoints: publishedEndpoints}}},
		{"a rejected one is Invalid, and keeps the endpoints as NIC does",
			verdict(VirtualServers, "a", valid(VirtualServers, "a"), problem(VirtualServers, "a", model.ReasonInvalid, "upstream x is not defined", true)),
			[]ResourceStatus{{State: "Invalid", Reason: "Rejected", Message: "VirtualServer ns/a was rejected with error: upstream x is not defined",
				ExternalEndpoints: publishedEndpoints}}},
		{"nothing is written when the status already says so",
			verdict(VirtualServers, "a", valid(VirtualServers, "a")), nil},
		{"a VirtualServerRoute in use names its VirtualServer",
			withRef(verdict(VirtualServerRoutes, "r", ResourceStatus{}), "ns/cafe"),
			[]ResourceStatus{func() ResourceStatus { s := valid(VirtualServerRoutes, "r"); s.ReferencedBy = "ns/cafe"; return s }()}},
		{"one no VirtualServer has is Warning with NIC's reason and message",
			verdict(VirtualServerRoutes, "r", ResourceStatus{ReferencedBy: "ns/old"},
				problem(VirtualServerRoutes, "r", model.ReasonNoVirtualServerFound, "VirtualServer is invalid or doesn't exist", false)),
			[]ResourceStatus{{State: "Warning", Reason: "NoVirtualServerFound", Message: "VirtualServer is invalid or doesn't exist",
				ExternalEndpoints: publishedEndpoints}}},
		{"one the VirtualServer of its host ignores is Warning, Ignored",
			verdict(VirtualServerRoutes, "r", ResourceStatus{},
				problem(VirtualServerRoutes, "r", model.ReasonIgnored, "VirtualServer ns/cafe ignores VirtualServerRoute", false)),
			[]ResourceStatus{{State: "Warning", Reason: "Ignored", Message: "VirtualServer ns/cafe ignores VirtualServerRoute",
				ExternalEndpoints: publishedEndpoints}}},
		{"an unused one with other warnings keeps the reason and lists them all",
			verdict(VirtualServerRoutes, "r", ResourceStatus{},
				problem(VirtualServerRoutes, "r", model.ReasonUnsupported, "x ignored", false),
				problem(VirtualServerRoutes, "r", model.ReasonIgnored, "VirtualServer ns/cafe ignores VirtualServerRoute", false)),
			[]ResourceStatus{{State: "Warning", Reason: "Ignored",
				Message:           "Configuration for ns/r was added or updated with warning(s): x ignored; VirtualServer ns/cafe ignores VirtualServerRoute",
				ExternalEndpoints: publishedEndpoints}}},
		{"a rejected VirtualServerRoute is Invalid",
			verdict(VirtualServerRoutes, "r", ResourceStatus{}, problem(VirtualServerRoutes, "r", model.ReasonInvalid, "bad subroute", true)),
			[]ResourceStatus{{State: "Invalid", Reason: "Rejected", Message: "VirtualServerRoute ns/r was rejected with error: bad subroute",
				ExternalEndpoints: publishedEndpoints}}},
		{"a TransportServer without problems is Valid, with no endpoints",
			verdict(TransportServers, "t", ResourceStatus{}), []ResourceStatus{valid(TransportServers, "t")}},
		{"a TransportServer with problems is Warning",
			verdict(TransportServers, "t", ResourceStatus{}, problem(TransportServers, "t", model.ReasonMissingService, `upstream "u": service s not found`, false)),
			[]ResourceStatus{{State: "Warning", Reason: "AddedOrUpdatedWithWarning",
				Message: `Configuration for ns/t was added or updated with warning(s): upstream "u": service s not found`}}},
		{"a rejected TransportServer is Invalid",
			verdict(TransportServers, "t", valid(TransportServers, "t"), problem(TransportServers, "t", model.ReasonInvalid, `listener "tcp" belongs to ns/b`, true)),
			[]ResourceStatus{{State: "Invalid", Reason: "Rejected", Message: `TransportServer ns/t was rejected with error: listener "tcp" belongs to ns/b`}}},
		{"a valid Policy says so in NIC's words",
			verdict(Policies, "p", ResourceStatus{}), []ResourceStatus{valid(Policies, "p")}},
		{"an invalid Policy is Invalid in NIC's words",
			verdict(Policies, "p", ResourceStatus{}, problem(Policies, "p", model.ReasonInvalid, "jwt needs NGINX Plus", true)),
			[]ResourceStatus{{State: "Invalid", Reason: "Rejected", Message: "Policy ns/p is invalid and was rejected: jwt needs NGINX Plus"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newResourceHarness(t, published)
			h.w.Observe(Outcome{Applied: true, Resources: []ResourceVerdict{tc.v}})
			h.settle(t)
			got := h.rec.get()[tc.v.Kind.Resource.Resource+"/"+tc.v.Object.GetName()]
			if len(got) != len(tc.want) || (len(got) == 1 && !got[0].equal(tc.want[0])) {
				t.Errorf("patches:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestResourcePatchFields: the patch spells out exactly the kind's fields,
// an empty one as null, so stale values are removed and other kinds'
// fields never appear.
func TestResourcePatchFields(t *testing.T) {
	for _, tc := range []struct {
		kind       Kind
		has, lacks []string
	}{
		{VirtualServers, []string{`"externalEndpoints":null`, `"state":"Valid"`}, []string{"referencedBy"}},
		{VirtualServerRoutes, []string{`"externalEndpoints":null`, `"referencedBy":null`}, nil},
		{TransportServers, []string{`"message":"Configuration for ns/a was added or updated"`}, []string{"externalEndpoints", "referencedBy"}},
		{Policies, []string{`"reason":"AddedOrUpdated"`}, []string{"externalEndpoints", "referencedBy"}},
	} {
		t.Run(tc.kind.Name, func(t *testing.T) {
			h := newResourceHarness(t, nil) // nothing published
			st := ResourceStatus{State: "Invalid", ReferencedBy: "ns/x", ExternalEndpoints: publishedEndpoints}
			h.w.Observe(Outcome{Applied: true, Resources: []ResourceVerdict{verdict(tc.kind, "a", st)}})
			h.settle(t)
			raw := h.rec.raw[tc.kind.Resource.Resource+"/a"]
			if len(raw) != 1 {
				t.Fatalf("patches %q, want one", raw)
			}
			for _, s := range tc.has {
				if !strings.Contains(raw[0], s) {
					t.Errorf("patch %s lacks %s", raw[0], s)
				}
			}
			for _, s := range tc.lacks {
				if strings.Contains(raw[0], s) {
					t.Errorf("patch %s has %s", raw[0], s)
				}
			}
		})
	}
}

func TestResourceWriterLeavesStatusAfterAFailedApply(t *testing.T) {
	h := newResourceHarness(t, published)
	h.w.Observe(Outcome{Applied: false, ApplyError: "nginx -t failed", Resources: []ResourceVerdict{
		verdict(VirtualServers, "a", ResourceStatus{}),
		verdict(Policies, "p", valid(Policies, "p"), problem(Policies, "p", model.ReasonInvalid, "bad", true)),
	}})
	h.settle(t)
	if got := h.rec.get(); len(got) != 0 {
		t.Fatalf("wrote %v after a failed apply", got)
	}
}

func TestResourceWriterOnlyLeaderWrites(t *testing.T) {
	h := newResourceHarness(t, published)
	h.leading.Store(false)
	o := Outcome{Applied: true, Resources: []ResourceVerdict{verdict(VirtualServers, "a", ResourceStatus{})}}
	h.w.Observe(o)
	h.settle(t)
	time.Sleep(20 * time.Millisecond)
	if got := h.rec.get(); len(got) != 0 {
		t.Fatalf("a follower wrote %v", got)
	}
	h.leading.Store(true)
	h.w.Observe(o) // the sync becoming leader asks for
	h.settle(t)
	if got := h.rec.get(); len(got["virtualservers/a"]) != 1 {
		t.Fatalf("the new leader wrote %v, want one write", got)
	}
}

// TestResourceWriterWaitsForAddresses: kinds that show the addresses wait
// for them; the others are written at once.
func TestResourceWriterWaitsForAddresses(t *testing.T) {
	h := newResourceHarness(t, unknown{})
	h.w.Observe(Outcome{Applied: true, Resources: []ResourceVerdict{
		verdict(VirtualServers, "a", ResourceStatus{}), verdict(VirtualServerRoutes, "r", ResourceStatus{}),
		verdict(TransportServers, "t", ResourceStatus{}), verdict(Policies, "p", ResourceStatus{})}})
	h.settle(t)
	got := h.rec.get()
	if len(got) != 2 || len(got["transportservers/t"]) != 1 || len(got["policies/p"]) != 1 {
		t.Fatalf("wrote %v before the addresses were known; want only the TransportServer and the Policy", got)
	}
}

func TestResourceWriterRetriesConflictsAndDropsGone(t *testing.T) {
	for _, kind := range Kinds {
		h := newResourceHarness(t, published)
		h.rec.conflicts.Store(1)
		h.w.Observe(Outcome{Applied: true, Resources: []ResourceVerdict{verdict(kind, "a", ResourceStatus{})}})
		h.settle(t)
		if got := h.rec.get(); len(got[kind.Resource.Resource+"/a"]) != 1 {
			t.Fatalf("%s after a conflict: %v, want one write", kind.Name, got)
		}

		h2 := newResourceHarness(t, published)
		h2.rec.notFound.Store(1)
		h2.w.Observe(Outcome{Applied: true, Resources: []ResourceVerdict{verdict(kind, "a", ResourceStatus{})}})
		h2.settle(t)
		if got := h2.rec.get(); len(got) != 0 {
			t.Fatalf("a %s gone meanwhile was written: %v", kind.Name, got)
		}
	}
}

func TestResourceWriterIgnoresStaleSnapshots(t *testing.T) {
	// A snapshot taken before our write landed still shows the old status;
	// it must not cause a second write.
	h := newResourceHarness(t, published)
	o := Outcome{Applied: true, Resources: []ResourceVerdict{verdict(VirtualServers, "a", ResourceStatus{})}}
	h.w.Observe(o)
	h.settle(t)
	h.w.Observe(o)
	h.settle(t)
	if got := h.rec.get(); len(got["virtualservers/a"]) != 1 {
		t.Fatalf("wrote %d times, want once", len(got["virtualservers/a"]))
	}
	// The echo of our write (resourceVersion 8) finds nothing to do either.
	echo := verdict(VirtualServers, "a", valid(VirtualServers, "a"))
	echo.Object.SetResourceVersion("8")
	h.w.Observe(Outcome{Applied: true, Resources: []ResourceVerdict{echo}})
	h.settle(t)
	if got := h.rec.get(); len(got["virtualservers/a"]) != 1 {
		t.Fatalf("wrote %d times, want once", len(got["virtualservers/a"]))
	}
}

func TestWantStatusBoundsMessage(t *testing.T) {
	v := verdict(VirtualServers, "a", ResourceStatus{}, problem(VirtualServers, "a", model.ReasonInvalid, strings.Repeat("é", 2000), false))
	got := WantStatus(v, nil).Message
	if len(got) > maxStatusMessage || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Fatalf("message of %d bytes, valid UTF-8 %v: %q...", len(got), utf8.ValidString(got), got[:40])
	}
}

// TestNewOutcomeResources: the verdicts cover the objects of ours of every
// kind, with their own problems (not an older namesake's, nor another
// kind's), and a VirtualServerRoute names the served VirtualServer of its
// host that uses it.
func TestNewOutcomeResources(t *testing.T) {
	vs := func(name, class, host string, routes ...nicv1.Route) *nicv1.VirtualServer {
		return &nicv1.VirtualServer{ObjectMeta: meta(name), Spec: nicv1.VirtualServerSpec{IngressClass: class, Host: host, Routes: routes}}
	}
	delegate := nicv1.Route{Path: "/menu", Route: "menu"}
	snap := &source.Snapshot{
		VirtualServers: []*nicv1.VirtualServer{vs("mine", "causeway", "a.test"), vs("classless", "", "b.test"), vs("other", "nginx", "c.test"),
			vs("loser", "", "cafe.test", delegate), vs("cafe", "", "cafe.test", delegate)},
		VirtualServerRoutes: []*nicv1.VirtualServerRoute{
			{ObjectMeta: meta("menu"), Spec: nicv1.VirtualServerRouteSpec{Host: "cafe.test"}},
			{ObjectMeta: meta("foreign"), Spec: nicv1.VirtualServerRouteSpec{IngressClass: "nginx"}}},
		TransportServers:     []*nicv1.TransportServer{{ObjectMeta: meta("tcp")}},
		Policies:             []*nicv1.Policy{{ObjectMeta: meta("pol")}, {ObjectMeta: meta("theirs"), Spec: nicv1.PolicySpec{IngressClass: "nginx"}}},
		GlobalConfigurations: []*nicv1.GlobalConfiguration{{ObjectMeta: meta("gc")}},
	}
	problems := []model.Problem{
		problem(VirtualServers, "mine", model.ReasonUnsupported, "served anyway", false),
		problem(VirtualServers, "classless", model.ReasonInvalid, "refused", true),
		problem(VirtualServers, "other", model.ReasonInvalid, "not ours", true),
		problem(VirtualServers, "loser", model.ReasonCollision, "host taken", false),
		{Object: model.ObjectRef{Kind: "VirtualServer", Namespace: "ns", Name: "mine", UID: "an-older-one"}, Message: "stale", Rejected: true},
		{Object: model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "mine"}, Message: "an Ingress", Rejected: true},
		problem(Policies, "pol", model.ReasonInvalid, "bad", true),
		problem(TransportServers, "tcp", model.ReasonMissingService, "no service", false),
		{Object: model.ObjectRef{Kind: "GlobalConfiguration", Namespace: "ns", Name: "gc"}, Message: "listener left out"},
	}
	o := NewOutcome(snap, problems, nil, class.Options{ControllerName: "causeway.dev/ingress", IngressClass: "causeway"})
	var got []string
	for _, v := range o.Resources {
		got = append(got, v.Kind.Name+" "+v.Key()+" rejected="+strconv.FormatBool(v.Rejected)+" problems="+strconv.Itoa(len(v.Problems))+
			" by="+v.ReferencedBy)
	}
	want := []string{
		"VirtualServer ns/mine rejected=false problems=1 by=",
		"VirtualServer ns/classless rejected=true problems=1 by=",
		"VirtualServer ns/loser rejected=false problems=1 by=",
		"VirtualServer ns/cafe rejected=false problems=0 by=",
		"VirtualServerRoute ns/menu rejected=false problems=0 by=ns/cafe",
		"TransportServer ns/tcp rejected=false problems=1 by=",
		"Policy ns/pol rejected=true problems=1 by=",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Their problems reach Events through Others.
	kinds := map[string]bool{}
	for _, op := range o.Others {
		kinds[op.Ref.Kind] = true
	}
	for _, k := range []string{"VirtualServer", "Policy", "TransportServer", "GlobalConfiguration"} {
		if !kinds[k] {
			t.Errorf("Others %+v lack the %s problems", o.Others, k)
		}
	}
}

// TestGatewayAPIProblemsReachEvents: the Problems of Gateway API's kinds
// find their objects, so that each becomes a Warning Event on it.
func TestGatewayAPIProblemsReachEvents(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	snap := &source.Snapshot{
		GatewayClasses:     []*gwv1.GatewayClass{{ObjectMeta: meta("", "causeway")}},
		Gateways:           []*gwv1.Gateway{{ObjectMeta: meta("ns", "gw")}},
		ListenerSets:       []*gwv1.ListenerSet{{ObjectMeta: meta("ns", "team")}},
		HTTPRoutes:         []*gwv1.HTTPRoute{{ObjectMeta: meta("ns", "web")}},
		GRPCRoutes:         []*gwv1.GRPCRoute{{ObjectMeta: meta("ns", "rpc")}},
		TLSRoutes:          []*gwv1.TLSRoute{{ObjectMeta: meta("ns", "tls")}},
		TCPRoutes:          []*gwv1.TCPRoute{{ObjectMeta: meta("ns", "tcp")}},
		UDPRoutes:          []*gwv1.UDPRoute{{ObjectMeta: meta("ns", "udp")}},
		BackendTLSPolicies: []*gwv1.BackendTLSPolicy{{ObjectMeta: meta("ns", "btls")}},
	}
	var problems []model.Problem
	for _, r := range []model.ObjectRef{{Kind: "GatewayClass", Name: "causeway"}, {Kind: "Gateway", Namespace: "ns", Name: "gw"},
		{Kind: "ListenerSet", Namespace: "ns", Name: "team"}, {Kind: "HTTPRoute", Namespace: "ns", Name: "web"}, {Kind: "GRPCRoute", Namespace: "ns", Name: "rpc"},
		{Kind: "TLSRoute", Namespace: "ns", Name: "tls"}, {Kind: "TCPRoute", Namespace: "ns", Name: "tcp"},
		{Kind: "UDPRoute", Namespace: "ns", Name: "udp"}, {Kind: "BackendTLSPolicy", Namespace: "ns", Name: "btls"}} {
		r.UID = "uid"
		problems = append(problems, model.Problem{Object: r, Reason: model.ReasonUnsupported, Message: "not served yet", Rejected: true})
	}
	o := NewOutcome(snap, problems, nil, class.Options{IngressClass: "causeway"})
	var got []string
	for _, op := range o.Others {
		if op.Object == nil || len(op.Problems) != 1 {
			t.Errorf("%s: object %v, problems %v", op.Ref, op.Object, op.Problems)
		}
		got = append(got, op.Ref.Kind)
	}
	if want := "GatewayClass Gateway ListenerSet HTTPRoute GRPCRoute TLSRoute TCPRoute UDPRoute BackendTLSPolicy"; strings.Join(got, " ") != want {
		t.Errorf("Others for %q, want %q", strings.Join(got, " "), want)
	}
}
