package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/source"
)

// toUnstructured is obj as the API server would send it, with managed
// fields for the transform to drop.
func toUnstructured(obj runtime.Object, kind string) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(gwv1.SchemeGroupVersion.String())
	u.SetKind(kind)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	return u
}

func gatewayWithCert(ns, name string, generation int64, certs ...gwv1.SecretObjectReference) *unstructured.Unstructured {
	return toUnstructured(&gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: generation},
		Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{{
			Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, TLS: &gwv1.ListenerTLSConfig{CertificateRefs: certs}}}}}, "Gateway")
}

func listenerSetWithCert(ns, name string, generation int64, certs ...gwv1.SecretObjectReference) *unstructured.Unstructured {
	return toUnstructured(&gwv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: generation},
		Spec: gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: "gw"}, Listeners: []gwv1.ListenerEntry{{
			Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, TLS: &gwv1.ListenerTLSConfig{CertificateRefs: certs}}}}}, "ListenerSet")
}

func httpRoute(ns, name, service string) *unstructured.Unstructured {
	return toUnstructured(&gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec: gwv1.HTTPRouteSpec{Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
			BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(service), Port: ptr.To(gwv1.PortNumber(80))}}}}}}}}, "HTTPRoute")
}

func gatewayClass(name string) *unstructured.Unstructured {
	return toUnstructured(&gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: gwv1.GatewayClassSpec{ControllerName: "causeway.io/gateway-controller"}}, "GatewayClass")
}

func newGatewayAPI(t *testing.T, objs ...runtime.Object) (*fakeAPI, *switchableDiscovery, discoveryAPI) {
	api := newFakeAPI(t, objs...)
	d := &switchableDiscovery{FakeDiscovery: api.Discovery().(*fakediscovery.FakeDiscovery), gv: gwv1.SchemeGroupVersion}
	return api, d, discoveryAPI{api, d}
}

var gatewayGVR = gwv1.SchemeGroupVersion.WithResource("gateways")

// TestGatewayAPIWatched: Gateway API's kinds whose CRDs are installed
// reach the snapshot typed and trimmed, namespaced ones from the watched
// namespaces only, GatewayClasses from the whole cluster; a kind whose CRD
// is missing is absent, logged once. The Secrets a Gateway's listeners
// name, of any type and of another watched namespace too, are watched by
// name and follow the Gateway.
func TestGatewayAPIWatched(t *testing.T) {
	api, d, client := newGatewayAPI(t,
		secret("web", "cert", corev1.SecretTypeOpaque, "tls.crt"),
		secret("shared", "wildcard", corev1.SecretTypeOpaque, "tls.crt"),
		secret("other", "hidden", corev1.SecretTypeOpaque, "tls.crt"),
		secret("web", "next", corev1.SecretTypeOpaque, "tls.crt"),
	)
	d.set("gatewayclasses", "gateways", "httproutes", "referencegrants")
	dyn := newFakeDynamic(
		gatewayClass("causeway"),
		gatewayWithCert("web", "gw", 1, gwv1.SecretObjectReference{Name: "cert"},
			gwv1.SecretObjectReference{Name: "wildcard", Namespace: ptr.To(gwv1.Namespace("shared"))},
			gwv1.SecretObjectReference{Name: "hidden", Namespace: ptr.To(gwv1.Namespace("other"))}),
		httpRoute("web", "route", "app"),
		httpRoute("other", "outside", "app"),
	)
	s, logs := startSource(t, api, Options{Client: client, Namespaces: []string{"web", "shared"}, GatewayAPI: true, Dynamic: dyn})
	snap := s.Snapshot()
	if len(snap.GatewayClasses) != 1 || snap.GatewayClasses[0].Spec.ControllerName != "causeway.io/gateway-controller" {
		t.Fatalf("GatewayClasses %+v", snap.GatewayClasses)
	}
	if len(snap.Gateways) != 1 || snap.Gateways[0].Name != "gw" || snap.Gateways[0].ManagedFields != nil {
		t.Fatalf("Gateways %+v: want web/gw, trimmed", snap.Gateways)
	}
	if len(snap.HTTPRoutes) != 1 || snap.HTTPRoutes[0].Namespace != "web" {
		t.Fatalf("HTTPRoutes %+v: want only the one in a watched namespace", snap.HTTPRoutes)
	}
	if len(snap.Problems) != 0 {
		t.Fatalf("problems %+v", snap.Problems)
	}
	if findSecret(snap, "web", "cert") == nil || findSecret(snap, "shared", "wildcard") == nil {
		t.Fatal("the first snapshot lacks the Secrets the Gateway's listener names")
	}
	if findSecret(snap, "other", "hidden") != nil {
		t.Fatal("a Secret of a namespace that is not watched was read")
	}
	if l := logs.String(); !strings.Contains(l, "watching Gateway API resources") ||
		!strings.Contains(l, "notInstalled=listenersets,grpcroutes,tlsroutes,tcproutes,udproutes,backendtlspolicies") {
		t.Fatalf("logs %q: want the watched and the missing kinds", l)
	}
	if l := logs.String(); strings.Count(l, "notInstalled") != 1 {
		t.Fatalf("logs %q: the missing kinds logged more than once", l)
	}

	// The Gateway names another Secret: it follows.
	dyn.waitWatch(t, "gateways", "web")
	drain(s)
	if _, err := dyn.Resource(gatewayGVR).Namespace("web").Update(context.Background(),
		gatewayWithCert("web", "gw", 2, gwv1.SecretObjectReference{Name: "next"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the Secret the Gateway names now", func(snap *source.Snapshot) bool {
		return findSecret(snap, "web", "next") != nil && findSecret(snap, "web", "cert") == nil && findSecret(snap, "shared", "wildcard") == nil
	})
}

var listenerSetGVR = gwv1.SchemeGroupVersion.WithResource("listenersets")

// TestListenerSetWatched: ListenerSets reach the snapshot typed and
// trimmed, from the watched namespaces only; the Secrets their listeners
// name, of another watched namespace too, are watched by name and follow
// the ListenerSet, as a Gateway's do.
func TestListenerSetWatched(t *testing.T) {
	api, d, client := newGatewayAPI(t,
		secret("web", "team-cert", corev1.SecretTypeOpaque, "tls.crt"),
		secret("shared", "wildcard", corev1.SecretTypeOpaque, "tls.crt"),
		secret("other", "hidden", corev1.SecretTypeOpaque, "tls.crt"),
		secret("web", "next", corev1.SecretTypeOpaque, "tls.crt"),
	)
	d.set("gateways", "listenersets")
	dyn := newFakeDynamic(
		listenerSetWithCert("web", "team", 1, gwv1.SecretObjectReference{Name: "team-cert"},
			gwv1.SecretObjectReference{Name: "wildcard", Namespace: ptr.To(gwv1.Namespace("shared"))},
			gwv1.SecretObjectReference{Name: "hidden", Namespace: ptr.To(gwv1.Namespace("other"))}),
		listenerSetWithCert("other", "outside", 1),
	)
	s, _ := startSource(t, api, Options{Client: client, Namespaces: []string{"web", "shared"}, GatewayAPI: true, Dynamic: dyn})
	snap := s.Snapshot()
	if len(snap.ListenerSets) != 1 || snap.ListenerSets[0].Name != "team" || snap.ListenerSets[0].ManagedFields != nil ||
		snap.ListenerSets[0].Spec.ParentRef.Name != "gw" {
		t.Fatalf("ListenerSets %+v: want web/team only, typed and trimmed", snap.ListenerSets)
	}
	if len(snap.Problems) != 0 {
		t.Fatalf("problems %+v", snap.Problems)
	}
	if findSecret(snap, "web", "team-cert") == nil || findSecret(snap, "shared", "wildcard") == nil {
		t.Fatal("the first snapshot lacks the Secrets the ListenerSet's listener names")
	}
	if findSecret(snap, "other", "hidden") != nil {
		t.Fatal("a Secret of a namespace that is not watched was read")
	}

	dyn.waitWatch(t, "listenersets", "web")
	drain(s)
	if _, err := dyn.Resource(listenerSetGVR).Namespace("web").Update(context.Background(),
		listenerSetWithCert("web", "team", 2, gwv1.SecretObjectReference{Name: "next"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the Secret the ListenerSet names now", func(snap *source.Snapshot) bool {
		return findSecret(snap, "web", "next") != nil && findSecret(snap, "web", "team-cert") == nil && findSecret(snap, "shared", "wildcard") == nil
	})

	// Deleted, its Secrets leave.
	if err := dyn.Resource(listenerSetGVR).Namespace("web").Delete(context.Background(), "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "no ListenerSet, and not its Secret, once it is deleted", func(snap *source.Snapshot) bool {
		return len(snap.ListenerSets) == 0 && findSecret(snap, "web", "next") == nil
	})
}

// TestGatewayAPIRediscovered: CRDs installed after the start are watched
// from the next discovery on; removed, their objects and the Secrets they
// named leave the snapshot.
func TestGatewayAPIRediscovered(t *testing.T) {
	api, d, client := newGatewayAPI(t, secret("web", "cert", corev1.SecretTypeOpaque, "tls.crt"))
	dyn := newFakeDynamic(gatewayWithCert("web", "gw", 1, gwv1.SecretObjectReference{Name: "cert"}), httpRoute("web", "route", "app"))
	s, logs := startSource(t, api, Options{Client: client, GatewayAPI: true, Dynamic: dyn, RediscoverEvery: 20 * time.Millisecond})
	eventually(t, "the first sync", s.HasSynced)
	if !strings.Contains(logs.String(), "Gateway API resources off: the gateway.networking.k8s.io CRDs are not installed") {
		t.Fatalf("logs %q: want the reason Gateway API is off", logs.String())
	}
	if snap := s.Snapshot(); snap.Gateways != nil || snap.HTTPRoutes != nil {
		t.Fatalf("without the CRDs: %+v %+v", snap.Gateways, snap.HTTPRoutes)
	}
	d.set("gateways", "httproutes")
	waitSignal(t, s, "the Gateway, its route and its Secret once the CRDs are installed", func(snap *source.Snapshot) bool {
		return len(snap.Gateways) == 1 && len(snap.HTTPRoutes) == 1 && findSecret(snap, "web", "cert") != nil
	})
	d.set("httproutes")
	waitSignal(t, s, "no Gateway, and not its Secret, once its CRD is removed", func(snap *source.Snapshot) bool {
		return len(snap.Gateways) == 0 && len(snap.HTTPRoutes) == 1 && findSecret(snap, "web", "cert") == nil
	})
}

// TestGatewayAPINamespaceSelector: the namespace selector keeps the
// namespaced kinds to the selected namespaces; GatewayClasses stay.
func TestGatewayAPINamespaceSelector(t *testing.T) {
	api, d, client := newGatewayAPI(t, namespace("web", map[string]string{"team": "web"}), namespace("shop", nil))
	d.set("gatewayclasses", "listenersets", "httproutes")
	dyn := newFakeDynamic(gatewayClass("causeway"), httpRoute("web", "in", "app"), httpRoute("shop", "out", "app"),
		listenerSetWithCert("web", "in", 1), listenerSetWithCert("shop", "out", 1))
	s, _ := startSource(t, api, Options{Client: client, GatewayAPI: true, Dynamic: dyn, NamespaceSelector: labels.SelectorFromSet(labels.Set{"team": "web"})})
	snap := s.Snapshot()
	if len(snap.HTTPRoutes) != 1 || snap.HTTPRoutes[0].Name != "in" || len(snap.GatewayClasses) != 1 {
		t.Fatalf("HTTPRoutes %+v, GatewayClasses %+v: want web/in and the class", snap.HTTPRoutes, snap.GatewayClasses)
	}
	if len(snap.ListenerSets) != 1 || snap.ListenerSets[0].Namespace != "web" {
		t.Fatalf("ListenerSets %+v: want web/in only", snap.ListenerSets)
	}
}

// An object that does not fit its Go type is a problem naming it.
func TestGatewayAPIUnreadable(t *testing.T) {
	api, d, client := newGatewayAPI(t)
	d.set("gatewayclasses", "gateways")
	badClass := gatewayClass("bad")
	_ = unstructured.SetNestedField(badClass.Object, int64(3), "spec", "controllerName")
	badGateway := gatewayWithCert("web", "bad", 1)
	_ = unstructured.SetNestedField(badGateway.Object, "many", "spec", "listeners")
	s, _ := startSource(t, api, Options{Client: client, GatewayAPI: true, Dynamic: newFakeDynamic(badClass, badGateway)})
	var where []string
	for _, p := range s.Snapshot().Problems {
		where = append(where, p.Where)
	}
	if strings.Join(where, " ") != "GatewayClass/bad Gateway/web/bad" {
		t.Fatalf("problems at %v", where)
	}
}

func TestNewGatewayAPINeedsDynamicClient(t *testing.T) {
	if _, err := New(Options{Client: newFakeAPI(t), GatewayAPI: true}); err == nil {
		t.Fatal("Gateway API without a dynamic client must be refused")
	}
}

// TestBackendTLSPolicyConfigMapWatched: the CA ConfigMap a
// BackendTLSPolicy names is watched by name and in the first snapshot.
func TestBackendTLSPolicyConfigMapWatched(t *testing.T) {
	ca := configMap("web", "backend-ca", map[string]string{"ca.crt": "pem"})
	api, d, client := newGatewayAPI(t, ca)
	d.set("backendtlspolicies")
	policy := toUnstructured(&gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "tls", Generation: 1},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "app"}}},
			Validation: gwv1.BackendTLSPolicyValidation{CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: "backend-ca"}}, Hostname: "app.internal"},
		}}, "BackendTLSPolicy")
	s, _ := startSource(t, api, Options{Client: client, GatewayAPI: true, Dynamic: newFakeDynamic(policy)})
	snap := s.Snapshot()
	if len(snap.BackendTLSPolicies) != 1 {
		t.Fatalf("BackendTLSPolicies %+v", snap.BackendTLSPolicies)
	}
	if cm := findConfigMap(snap, "web", "backend-ca"); cm == nil || cm.Data["ca.crt"] != "pem" {
		t.Fatalf("the first snapshot lacks the CA ConfigMap the BackendTLSPolicy names: %v", cm)
	}
	api.waitWatch(t, "configmaps", "web", "metadata.name=backend-ca")
}

// TestGatewayServicesAndNamespaces: the Services of Gateways are those of
// the controller's namespace with the label of ours; Namespaces (name and
// labels only) are listed while Gateway API's CRDs are served, and a
// change of their labels is seen.
func TestGatewayServicesAndNamespaces(t *testing.T) {
	gwSvc := func(ns, name string, ours bool) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if ours {
			s.Labels = gatewayservice.Labels("web", name)
		}
		return s
	}
	web := namespace("web", map[string]string{"team": "web"})
	web.Annotations = map[string]string{"big": "annotation"}
	web.Spec.Finalizers = []corev1.FinalizerName{"kubernetes"}
	api, d, client := newGatewayAPI(t, web, namespace("shop", nil),
		gwSvc("causeway-system", "gw-a", true), gwSvc("causeway-system", "causeway", false), gwSvc("web", "gw-b", true))
	dyn := newFakeDynamic()
	s, _ := startSource(t, api, Options{Client: client, GatewayAPI: true, Dynamic: dyn, ControllerNamespace: "causeway-system",
		Namespaces: []string{"web"}, RediscoverEvery: 20 * time.Millisecond})
	snap := s.Snapshot()
	if len(snap.GatewayServices) != 1 || snap.GatewayServices[0].Name != "gw-a" {
		t.Fatalf("GatewayServices %+v: want causeway-system/gw-a only", snap.GatewayServices)
	}
	if snap.Namespaces != nil {
		t.Fatalf("Namespaces %+v without the CRDs", snap.Namespaces)
	}
	d.set("gateways")
	waitSignal(t, s, "the Namespaces once the CRDs are served", func(snap *source.Snapshot) bool { return len(snap.Namespaces) == 2 })
	for _, n := range s.Snapshot().Namespaces {
		if n.Annotations != nil || n.Spec.Finalizers != nil {
			t.Errorf("Namespace %s not trimmed: %+v", n.Name, n)
		}
	}
	shop := namespace("shop", map[string]string{"team": "shop"})
	if _, err := api.CoreV1().Namespaces().Update(context.Background(), shop, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, s, "the Namespace's new labels", func(snap *source.Snapshot) bool {
		for _, n := range snap.Namespaces {
			if n.Name == "shop" && n.Labels["team"] == "shop" {
				return true
			}
		}
		return false
	})
	d.set()
	waitSignal(t, s, "no Namespaces once the CRDs are gone", func(snap *source.Snapshot) bool { return snap.Namespaces == nil })
}

// Without Gateway API, no Service of Gateways is listed.
func TestGatewayServicesOff(t *testing.T) {
	api := newFakeAPI(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway-system", Name: "gw-a",
		Labels: gatewayservice.Labels("web", "a")}})
	s, _ := startSource(t, api, Options{ControllerNamespace: "causeway-system", Namespaces: []string{"web"}})
	if snap := s.Snapshot(); snap.GatewayServices != nil {
		t.Fatalf("GatewayServices %+v with Gateway API off", snap.GatewayServices)
	}
}
