package writer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/source"
)

const ns = "causeway-system"

var opts = gatewayservice.Options{Namespace: ns, Selector: map[string]string{"app.kubernetes.io/name": "causeway"},
	Ports: gatewayservice.PortRange{First: 20000, Last: 20002}}

func class(name string, ctl gwv1.GatewayController) *gwv1.GatewayClass {
	return &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gwv1.GatewayClassSpec{ControllerName: ctl}}
}

func gw(namespace, name, class string, ports ...int32) *gwv1.Gateway {
	g := &gwv1.Gateway{TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: "uid-" + "name"},
		Spec:       gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class)}}
	for _, p := range ports {
		g.Spec.Listeners = append(g.Spec.Listeners, gwv1.Listener{Name: gwv1.SectionName(fmt.Sprint("l", p)), Port: gwv1.PortNumber(p), Protocol: gwv1.HTTPProtocolType})
	}
	return g
}

type harness struct {
	t      *testing.T
	client *fake.Clientset
	w      *Writer
	events *record.FakeRecorder
	leader atomic.Bool
}

func newHarness(t *testing.T, objs ...runtime.Object) *harness {
	h := &harness{t: t, client: fake.NewClientset(objs...), events: record.NewFakeRecorder(100)}
	h.leader.Store(true)
	h.w = New(Options{Client: h.client, Service: opts, IsLeader: h.leader.Load, Recorder: h.events})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// services are the Services of the fake API server's namespace.
func (h *harness) services() []*corev1.Service {
	list, err := h.client.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*corev1.Service
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

// ours are the Services of ours as a snapshot would hold them.
func (h *harness) ours() []*corev1.Service {
	var out []*corev1.Service
	for _, s := range h.services() {
		if _, ok := gatewayservice.Parse(s); ok {
			out = append(out, s)
		}
	}
	return out
}

func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.w.Pending() > 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("%d writes still pending", h.w.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// allocations are the Services in the API as "gateway: port->internal".
func (h *harness) allocations() []string {
	var out []string
	for _, s := range h.ours() {
		o, _ := gatewayservice.Parse(s)
		var ps []string
		for _, p := range s.Spec.Ports {
			ps = append(ps, fmt.Sprintf("%d->%d", p.Port, o.Ports[p.Port]))
		}
		out = append(out, o.Key()+": "+strings.Join(ps, ","))
	}
	slices.Sort(out)
	return out
}

func (h *harness) want(allocs ...string) {
	h.t.Helper()
	if got := h.allocations(); !slices.Equal(got, allocs) {
		h.t.Fatalf("Services = %q, want %q", got, allocs)
	}
}

func snap(services []*corev1.Service, gws ...*gwv1.Gateway) *source.Snapshot {
	return &source.Snapshot{
		GatewayClasses:  []*gwv1.GatewayClass{class("causeway", gateway.ControllerName), class("other", "example.com/other")},
		Gateways:        gws,
		GatewayServices: services,
	}
}

func (h *harness) countActions(verb string) int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "services" {
			n++
		}
	}
	return n
}

// TestWriterLifecycle: Services are created for the Gateways of our
// classes only, updated in place (node ports and internal ports kept)
// when listeners change, deleted when their Gateway goes or changes
// class; a Service not labelled ours is never touched.
func TestWriterLifecycle(t *testing.T) {
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "causeway"}}
	h := newHarness(t, foreign)
	a, b := gw("web", "a", "causeway", 80, 443), gw("web", "b", "causeway", 80)
	h.w.Observe(snap(nil, a, b, gw("web", "theirs", "other", 80), gw("web", "classless", "missing", 80)))
	h.settle()
	h.want("web/a: 80->20000,443->20001", "web/b: 80->20002")

	// The API server gives node ports; an update keeps them.
	for _, s := range h.ours() {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 30000 + s.Spec.Ports[i].Port
		}
		s.ResourceVersion = "5"
		if _, err := h.client.CoreV1().Services(ns).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a2 := gw("web", "a", "causeway", 443)
	h.w.Observe(snap(h.ours(), a2, b))
	h.settle()
	h.want("web/a: 443->20001", "web/b: 80->20002")
	for _, s := range h.ours() {
		if s.Spec.Ports[0].NodePort != 30000+s.Spec.Ports[0].Port {
			t.Errorf("Service %s lost its node port: %+v", s.Name, s.Spec.Ports)
		}
	}

	// a changes class: deleted; b's Gateway is gone: deleted.
	h.w.Observe(snap(h.ours(), gw("web", "a", "other", 443)))
	h.settle()
	h.want()
	if got := h.services(); len(got) != 1 || got[0].Name != "causeway" {
		t.Errorf("Services left: %v", got)
	}
	for _, a := range h.client.Actions() {
		if n := actionName(a); n == "causeway" && a.GetVerb() != "list" {
			t.Errorf("the Service not ours was written: %v", a)
		}
	}
}

func actionName(a clienttesting.Action) string {
	switch a := a.(type) {
	case clienttesting.UpdateAction:
		return a.GetObject().(*corev1.Service).Name
	case clienttesting.CreateAction:
		return a.GetObject().(*corev1.Service).Name
	case clienttesting.DeleteAction:
		return a.GetName()
	}
	return ""
}

// TestWriterStaleSnapshot: until the snapshot shows what was written, the
// writer plans against its own writes: no second create, and a Gateway
// added meanwhile takes a port no Service holds.
func TestWriterStaleSnapshot(t *testing.T) {
	h := newHarness(t)
	a := gw("web", "a", "causeway", 80)
	h.w.Observe(snap(nil, a))
	h.settle()
	h.w.Observe(snap(nil, a, gw("web", "b", "causeway", 80))) // the snapshot predates a's Service
	h.settle()
	h.want("web/a: 80->20000", "web/b: 80->20001")
	if n := h.countActions("create"); n != 2 {
		t.Errorf("%d creates, want 2", n)
	}
	// Caught up: nothing more to write.
	before := len(h.client.Actions())
	h.w.Observe(snap(h.ours(), a, gw("web", "b", "causeway", 80)))
	h.settle()
	for _, a := range h.client.Actions()[before:] {
		if a.GetVerb() != "list" {
			t.Errorf("a write after the snapshot caught up: %v", a)
		}
	}
}

// TestWriterProblems: a Gateway that does not fit in the port range, and
// a Service name taken by a Service not ours, are Warning Events on the
// Gateway, each said once; the other Gateways are served.
func TestWriterProblems(t *testing.T) {
	taken := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gatewayservice.ServiceName("web", "squatted")}}
	h := newHarness(t, taken)
	gws := []*gwv1.Gateway{gw("web", "a", "causeway", 80, 443), gw("web", "big", "causeway", 80, 81), gw("web", "squatted", "causeway", 80)}
	h.w.Observe(snap(nil, gws...))
	// squatted's create is retried as long as the name is taken.
	deadline := time.Now().Add(5 * time.Second)
	for h.w.Pending() > 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	h.want("web/a: 80->20000,443->20001")
	if got := h.services(); len(got) != 2 || !slices.ContainsFunc(got, func(s *corev1.Service) bool { return s.Name == taken.Name && len(s.Labels) == 0 }) {
		t.Errorf("the Service not ours was changed: %v", got)
	}
	evs := drain(h.events)
	if !slices.ContainsFunc(evs, func(e string) bool {
		return strings.HasPrefix(e, "Warning NoResources no internal port is free in --gateway-port-range 20000-20002 for listener port(s) 81")
	}) {
		t.Errorf("no NoResources Event: %q", evs)
	}
	// The squatted name: the create fails, retried with a Warning.
	if !slices.ContainsFunc(evs, func(e string) bool {
		return strings.HasPrefix(e, "Warning ServiceNotWritten cannot create Service") && strings.Contains(e, "is left alone")
	}) {
		// The retry may not have run yet; wait for it.
		select {
		case e := <-h.events.Events:
			evs = append(evs, e)
		case <-time.After(3 * time.Second):
		}
		if !slices.ContainsFunc(evs, func(e string) bool { return strings.Contains(e, "ServiceNotWritten") }) {
			t.Errorf("no ServiceNotWritten Event: %q", evs)
		}
	}
}

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		case <-time.After(100 * time.Millisecond):
			return out
		}
	}
}

// TestWriterFollower: a replica that does not lead writes nothing and
// reports nothing; on becoming leader, Resync writes.
func TestWriterFollower(t *testing.T) {
	h := newHarness(t)
	h.leader.Store(false)
	h.w.Observe(snap(nil, gw("web", "a", "causeway", 80), gw("web", "big", "causeway", 80, 81, 82, 83)))
	time.Sleep(50 * time.Millisecond)
	if n := len(h.client.Actions()); n != 0 {
		t.Fatalf("a follower made %d requests", n)
	}
	if evs := drain(h.events); len(evs) != 0 {
		t.Errorf("a follower reported %q", evs)
	}
	h.leader.Store(true)
	h.w.Resync()
	h.settle()
	h.want("web/a: 80->20000")
	if evs := drain(h.events); len(evs) != 1 {
		t.Errorf("events = %q, want the one Problem", evs)
	}
}

// TestWriterOwner: the controller's ConfigMap, in the Services'
// namespace, owns them, so that they go with the installation; one that
// appears later is added to the Services that exist.
func TestWriterOwner(t *testing.T) {
	h := newHarness(t)
	h.w.opts.ConfigMap = ns + "/causeway"
	a := gw("web", "a", "causeway", 80)
	h.w.Observe(snap(nil, a))
	h.settle()
	if s := h.ours(); len(s) != 1 || len(s[0].OwnerReferences) != 0 {
		t.Fatalf("without the ConfigMap: %+v", s)
	}
	cm := func(namespace string) *source.Snapshot {
		sn := snap(h.ours(), a)
		sn.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "causeway", UID: "cm-uid"}}}
		return sn
	}
	h.w.Observe(cm("elsewhere"))
	h.settle()
	if s := h.ours(); len(s[0].OwnerReferences) != 0 {
		t.Fatalf("owned by a ConfigMap of another namespace: %+v", s[0].OwnerReferences)
	}
	h.w.Observe(cm(ns))
	h.settle()
	want := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "causeway", UID: "cm-uid"}
	if s := h.ours(); len(s[0].OwnerReferences) != 1 || s[0].OwnerReferences[0] != want {
		t.Fatalf("owners %+v, want %+v", s[0].OwnerReferences, want)
	}
}

func TestDiffersApply(t *testing.T) {
	o := opts
	o.Owner = &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "causeway", UID: "cm-uid"}
	want := gatewayservice.Desired([]*gwv1.Gateway{gw("web", "a", "causeway", 80)}, gatewayservice.ListenerSets{}, nil, o).Want[gatewayservice.ServiceName("web", "a")]
	have := want.DeepCopy()
	have.Labels["team"] = "x"
	have.Spec.ClusterIP = "10.0.0.1"
	have.Spec.Ports[0].NodePort = 31000
	have.OwnerReferences = append(have.OwnerReferences, metav1.OwnerReference{Kind: "Other", UID: "other"})
	if Differs(have, want) {
		t.Error("extra labels, a cluster IP and node ports differ")
	}
	for name, change := range map[string]func(*corev1.Service){
		"type":       func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP },
		"selector":   func(s *corev1.Service) { s.Spec.Selector = map[string]string{"x": "y"} },
		"label":      func(s *corev1.Service) { s.Labels[gatewayservice.LabelName] = "b" },
		"targetPort": func(s *corev1.Service) { s.Spec.Ports[0].TargetPort.IntVal = 1 },
		"protocol":   func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP },
		"ports":      func(s *corev1.Service) { s.Spec.Ports = nil },
		"owner":      func(s *corev1.Service) { s.OwnerReferences = nil },
	} {
		h := have.DeepCopy()
		change(h)
		if !Differs(h, want) {
			t.Errorf("a changed %s does not differ", name)
		}
		Apply(h, want)
		if Differs(h, want) || h.Labels["team"] != "x" || h.Spec.ClusterIP != "10.0.0.1" {
			t.Errorf("Apply after a changed %s: %+v", name, h)
		}
	}
}

// TestInfrastructureMetadata: a Gateway's spec.infrastructure labels and
// annotations go onto its Service (with Gateway API's gateway-name
// label); a key dropped from the Gateway leaves the Service, while keys
// others set stay; a key Causeway sets itself keeps Causeway's value, with
// a Problem naming the Gateway.
func TestInfrastructureMetadata(t *testing.T) {
	g := gw("web", "a", "causeway", 80)
	g.Spec.Infrastructure = &gwv1.GatewayInfrastructure{
		Labels:      map[gwv1.LabelKey]gwv1.LabelValue{"team": "shop", gatewayservice.LabelName: "forged"},
		Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb", "x": "1"}}
	plan := gatewayservice.Desired([]*gwv1.Gateway{g}, gatewayservice.ListenerSets{}, nil, opts)
	want := plan.Want[gatewayservice.ServiceName("web", "a")]
	if want.Labels["team"] != "shop" || want.Labels[gatewayservice.LabelName] != "a" || want.Labels[gwv1.GatewayNameLabelKey] != "a" ||
		want.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"] != "nlb" || want.Annotations["x"] != "1" {
		t.Errorf("Service metadata: labels %v, annotations %v", want.Labels, want.Annotations)
	}
	if len(plan.Problems) != 1 || plan.Problems[0].Object.Name != "a" || !strings.Contains(plan.Problems[0].Message, gatewayservice.LabelName) {
		t.Errorf("problems %v, want one naming the refused label", plan.Problems)
	}
	stored := want.DeepCopy()
	stored.Annotations["lb.example.com/id"] = "someone else's"
	// The Gateway drops the label team and the annotation x.
	g.Spec.Infrastructure = &gwv1.GatewayInfrastructure{
		Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}}
	want = gatewayservice.Desired([]*gwv1.Gateway{g}, gatewayservice.ListenerSets{}, nil, opts).Want[gatewayservice.ServiceName("web", "a")]
	if !Differs(stored, want) {
		t.Fatal("dropped keys do not differ")
	}
	Apply(stored, want)
	if _, ok := stored.Labels["team"]; ok {
		t.Errorf("label team stays: %v", stored.Labels)
	}
	if _, ok := stored.Annotations["x"]; ok || stored.Annotations["lb.example.com/id"] == "" ||
		stored.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"] != "nlb" {
		t.Errorf("annotations %v: want x gone, the others kept", stored.Annotations)
	}
	if Differs(stored, want) {
		t.Error("still differs after Apply")
	}
	// Dropping spec.infrastructure removes the rest.
	g.Spec.Infrastructure = nil
	want = gatewayservice.Desired([]*gwv1.Gateway{g}, gatewayservice.ListenerSets{}, nil, opts).Want[gatewayservice.ServiceName("web", "a")]
	Apply(stored, want)
	if _, ok := stored.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"]; ok || stored.Annotations[gatewayservice.AnnotationInfrastructure] != "" {
		t.Errorf("annotations %v after spec.infrastructure is gone", stored.Annotations)
	}
}

// TestWriterListenerSets: a Gateway's Service gets the ports of the
// ListenerSets it admits, from the snapshot, and of the namespaces its
// selector picks by their labels in the snapshot; a ListenerSet gone, or
// its namespace relabelled, takes its port away.
func TestWriterListenerSets(t *testing.T) {
	h := newHarness(t)
	g := gw("web", "a", "causeway", 80)
	g.Spec.AllowedListeners = &gwv1.AllowedListeners{Namespaces: &gwv1.ListenerNamespaces{From: ptr.To(gwv1.NamespacesFromSelector),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway": "shared"}}}}
	ls := &gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "team"},
		Spec: gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: "a", Namespace: ptr.To(gwv1.Namespace("web"))},
			Listeners: []gwv1.ListenerEntry{{Name: "team", Port: 8080, Protocol: gwv1.HTTPProtocolType}}}}
	shop := func(lbls map[string]string) []*corev1.Namespace {
		return []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, {ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: lbls}}}
	}
	observe := func(sets []*gwv1.ListenerSet, nss []*corev1.Namespace) {
		s := snap(h.ours(), g)
		s.ListenerSets, s.Namespaces = sets, nss
		h.w.Observe(s)
		h.settle()
	}
	observe([]*gwv1.ListenerSet{ls}, shop(map[string]string{"gateway": "shared"}))
	h.want("web/a: 80->20000,8080->20001")
	observe([]*gwv1.ListenerSet{ls}, shop(nil))
	h.want("web/a: 80->20000")
	observe([]*gwv1.ListenerSet{ls}, shop(map[string]string{"gateway": "shared"}))
	h.want("web/a: 80->20000,8080->20001")
	observe(nil, shop(map[string]string{"gateway": "shared"}))
	h.want("web/a: 80->20000")
}
