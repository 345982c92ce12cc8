// Package source defines where Kubernetes objects come from: a Snapshot of
// everything the model reads, and the Source interface that both the
// informer-backed kube source and the manifest-directory files source
// implement.
package source

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// Snapshot is a consistent view of the objects the model reads. Slices are
// owned by the snapshot: a Source hands out a fresh one on every call, and
// nobody mutates it afterwards.
type Snapshot struct {
	Ingresses      []*networkingv1.Ingress
	IngressClasses []*networkingv1.IngressClass
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	Secrets        []*corev1.Secret
	ConfigMaps     []*corev1.ConfigMap
	// Pods carry their namespace, name and labels only: a VirtualServer
	// upstream's subselector picks the endpoints (by their EndpointSlice
	// targetRef) of the Pods whose labels it matches. The kube source
	// lists them only with the custom resources.
	Pods []*corev1.Pod
	// NGINX Ingress Controller's resources (k8s.nginx.org/v1).
	VirtualServers       []*nicv1.VirtualServer
	VirtualServerRoutes  []*nicv1.VirtualServerRoute
	Policies             []*nicv1.Policy
	TransportServers     []*nicv1.TransportServer
	GlobalConfigurations []*nicv1.GlobalConfiguration
	// Gateway API's resources (gateway.networking.k8s.io/v1), the kinds
	// of its standard channel v1.6.3.
	GatewayClasses     []*gwv1.GatewayClass
	Gateways           []*gwv1.Gateway
	ListenerSets       []*gwv1.ListenerSet
	HTTPRoutes         []*gwv1.HTTPRoute
	GRPCRoutes         []*gwv1.GRPCRoute
	TLSRoutes          []*gwv1.TLSRoute
	TCPRoutes          []*gwv1.TCPRoute
	UDPRoutes          []*gwv1.UDPRoute
	ReferenceGrants    []*gwv1.ReferenceGrant
	BackendTLSPolicies []*gwv1.BackendTLSPolicy
	// GatewayServices are the Services the leader keeps for the Gateways
	// of Causeway's classes (package gatewayservice), in the controller's
	// namespace: those labelled app.kubernetes.io/managed-by=
	// causeway-gateway. The kube source lists them only with Gateway API
	// enabled; the files source reads them from the manifests.
	GatewayServices []*corev1.Service
	// Namespaces carry their name and labels only: a Gateway listener's
	// allowedRoutes.namespaces.from=Selector selects the routes'
	// namespaces by their labels. The kube source lists them only while
	// Gateway API's CRDs are served.
	Namespaces []*corev1.Namespace
	// Problems are objects the source could not read (a malformed YAML
	// file, say). They are reported like model problems.
	Problems []Problem
}

// Problem is something a source could not turn into an object.
type Problem struct {
	Where   string // a file path, or kind/namespace/name
	Message string
}

// Source delivers Snapshots and tells when a new one is worth taking.
type Source interface {
	// Run starts watching and blocks until ctx is done or the source fails.
	Run(ctx context.Context) error
	// HasSynced reports whether the first full listing has arrived.
	HasSynced() bool
	// Changed receives a value whenever something relevant changed. It is
	// edge-triggered and never blocks the source: several changes may
	// collapse into one signal.
	Changed() <-chan struct{}
	// Snapshot returns the current objects.
	Snapshot() *Snapshot
}

// EndpointSource is the optional part of a Source that reports
// EndpointSlice changes apart from the others, by Service, so that they
// can reach the data plane without a Snapshot and a build. A Source that
// has it signals such changes on EndpointsChanged only, never on Changed.
type EndpointSource interface {
	// EndpointsChanged receives a value when TakeEndpointChanges has
	// something; edge-triggered like Changed.
	EndpointsChanged() <-chan struct{}
	// TakeEndpointChanges returns the Services ("namespace/name") whose
	// EndpointSlices changed since the last call, and forgets them. A
	// Snapshot taken after it holds every change it returned.
	TakeEndpointChanges() map[string]bool
	// ServiceEndpoints returns a Service (nil if there is none) and its
	// EndpointSlices as they are now.
	ServiceEndpoints(namespace, name string) (*corev1.Service, []*discoveryv1.EndpointSlice)
}

// ChangeSource is the optional part of a Source that tells what a signal
// on Changed is about: a change of Ingresses alone can reach the data
// plane before a Snapshot of everything is built (the controller's hosts
// table), and a change of Services no object uses needs no build at all.
type ChangeSource interface {
	// TakeChanges returns what changed since the last call and forgets
	// it. A Snapshot taken after it holds every change it returned.
	TakeChanges() Changes
}

// Changes are what a ChangeSource saw change.
type Changes struct {
	// Ingresses are those ("namespace/name") added, changed or deleted.
	Ingresses map[string]bool
	// Services are those ("namespace/name") added, updated (any update:
	// a Service is read whole) or deleted.
	Services map[string]bool
	// Other is whether an object of another kind changed (EndpointSlices
	// aside: EndpointSource).
	Other bool
}

// AheadSource is the optional part of a ChangeSource that hands over what
// a build of a few Ingresses alone needs without a listing of everything
// (the controller's hosts fast path, at 10,000 objects of each kind).
type AheadSource interface {
	// SnapshotAhead is Ahead(Snapshot(), keys, services), from indexes.
	SnapshotAhead(keys map[string]bool, services func([]*networkingv1.Ingress) map[string]bool) *Snapshot
}

// Ahead is snap for a build of the Ingresses keys names ("namespace/name")
// alone: its Ingresses are those of them that snap has and those with a
// rule for a host one of them has a rule for; its Services those that
// services (given those Ingresses) names ("namespace/name"), and its
// EndpointSlices theirs; it has no object of the other kinds that make
// servers (VirtualServers, VirtualServerRoutes, Gateways, ListenerSets and
// routes); every other object is snap's.
func Ahead(snap *Snapshot, keys map[string]bool, services func([]*networkingv1.Ingress) map[string]bool) *Snapshot {
	type nsName struct{ ns, name string } // no "namespace/name" per object
	want := make(map[nsName]bool, len(keys))
	for key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		want[nsName{ns, name}] = true
	}
	var ings []*networkingv1.Ingress
	hosts := map[string]bool{}
	for _, ing := range snap.Ingresses {
		if want[nsName{ing.Namespace, ing.Name}] {
			ings = append(ings, ing)
			for _, r := range ing.Spec.Rules {
				hosts[r.Host] = true
			}
		}
	}
	for _, ing := range snap.Ingresses {
		if want[nsName{ing.Namespace, ing.Name}] {
			continue
		}
		for _, r := range ing.Spec.Rules {
			if hosts[r.Host] {
				ings = append(ings, ing)
				break
			}
		}
	}
	out := WithoutServers(snap)
	out.Ingresses = ings
	named := services(ings)
	for _, svc := range snap.Services {
		if named[svc.Namespace+"/"+svc.Name] {
			out.Services = append(out.Services, svc)
		}
	}
	for _, es := range snap.EndpointSlices {
		if named[es.Namespace+"/"+es.Labels[discoveryv1.LabelServiceName]] {
			out.EndpointSlices = append(out.EndpointSlices, es)
		}
	}
	return out
}

// WithoutServers is a copy of snap without the objects that make servers,
// and without Ingresses, Services and EndpointSlices: what Ahead and an
// AheadSource fill in.
func WithoutServers(snap *Snapshot) *Snapshot {
	out := *snap
	out.Ingresses, out.Services, out.EndpointSlices = nil, nil, nil
	out.VirtualServers, out.VirtualServerRoutes = nil, nil
	out.Gateways, out.ListenerSets, out.HTTPRoutes, out.GRPCRoutes = nil, nil, nil, nil
	out.TLSRoutes, out.TCPRoutes, out.UDPRoutes = nil, nil, nil
	return &out
}

// Notifier is a non-blocking, coalescing change signal, shared by sources.
type Notifier struct{ ch chan struct{} }

// NewNotifier returns a Notifier with room for one pending signal.
func NewNotifier() *Notifier { return &Notifier{ch: make(chan struct{}, 1)} }

// Notify records a change without blocking.
func (n *Notifier) Notify() {
	select {
	case n.ch <- struct{}{}:
	default:
	}
}

// C is the channel a consumer waits on.
func (n *Notifier) C() <-chan struct{} { return n.ch }

// TrimPod returns what the model reads of a Pod: its namespace, name and
// labels.
func TrimPod(p *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion, Labels: p.Labels}}
}

// TrimNamespace returns what the model reads of a Namespace: its name and
// labels.
func TrimNamespace(n *corev1.Namespace) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: n.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Labels: n.Labels}}
}

// TrimTargetRef returns what the model reads of an endpoint's targetRef:
// the name of a Pod (nil for any other kind).
func TrimTargetRef(r *corev1.ObjectReference) *corev1.ObjectReference {
	if r == nil || r.Kind != "Pod" || r.Name == "" {
		return nil
	}
	return &corev1.ObjectReference{Kind: "Pod", Name: r.Name}
}
