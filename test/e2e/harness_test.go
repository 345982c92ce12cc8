package e2e

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/test/echo"
)

// Leader election timings for tests: short, so a hand-over takes seconds.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// waitFor is the default bound on "eventually" checks: generous for a
// loaded 2-core machine running race-enabled binaries in parallel.
const waitFor = 30 * time.Second

var (
	// nextIP hands every controller its own loopback address for traffic.
	nextIP atomic.Int32
	// nextNS numbers test namespaces.
	nextNS atomic.Int32
)

func loopbackIP() string {
	n := nextIP.Add(1)
	return fmt.Sprintf("127.0.%d.%d", 100+n/250, 1+n%250)
}

func freePort(t testing.TB, ip string) int {
	t.Helper()
	return harness.FreePort(t, ip)
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// newNamespace creates a namespace for t, named after it, in which the
// controller may keep its ConfigMap and Lease. Namespaces are not deleted:
// without a controller manager their deletion would never finish, and the
// whole control plane goes away after the package anyway.
func newNamespace(t *testing.T) string {
	t.Helper()
	base := strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	name := fmt.Sprintf("%.50s-%d", base, nextNS.Add(1))
	if _, err := e2e.admin.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	grantNamespace(t, name)
	return name
}

// backend is an echo server in the backend network namespace.
type backend struct {
	Service string
	IP      string
	Port    int
}

func startBackend(t *testing.T, service string) *backend {
	t.Helper()
	l, err := e2e.backends.Listen(net.JoinHostPort(e2e.backends.PeerIP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{Service: service, IP: e2e.backends.PeerIP.String(), Port: l.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: echo.Handler(service, l.Addr().String()), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return b
}

// createService creates a Service with port 80 ("http") and an
// EndpointSlice pointing at the backends, as the EndpointSlice controller
// would.
func createService(t *testing.T, ns, name string, backends ...*backend) {
	t.Helper()
	ctx := t.Context()
	createServiceObject(t, ns, name)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, b := range backends {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{b.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
		slice.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(b.Port)), Protocol: ptr.To(corev1.ProtocolTCP)}}
	}
	if _, err := e2e.admin.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create EndpointSlice %s/%s: %v", ns, slice.Name, err)
	}
}

// createServiceObject creates a Service with port 80 ("http") and no
// EndpointSlice.
func createServiceObject(t *testing.T, ns, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if _, err := e2e.admin.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Service %s/%s: %v", ns, name, err)
	}
}

// newIngress returns an Ingress of class causeway routing host/ (Prefix)
// to service:80.
func newIngress(ns, name, host, service string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To(ingressClass),
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: service, Port: networkingv1.ServiceBackendPort{Number: 80},
						}},
					}},
				}},
			}},
		},
	}
}

func createIngress(t *testing.T, ing *networkingv1.Ingress) *networkingv1.Ingress {
	t.Helper()
	out, err := e2e.admin.NetworkingV1().Ingresses(ing.Namespace).Create(t.Context(), ing, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Ingress %s/%s: %v", ing.Namespace, ing.Name, err)
	}
	return out
}

// updateIngress applies change to the current version of an Ingress.
func updateIngress(t *testing.T, ns, name string, change func(*networkingv1.Ingress)) {
	t.Helper()
	eventually(t, waitFor, func() error {
		ing, err := e2e.admin.NetworkingV1().Ingresses(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(ing)
		_, err = e2e.admin.NetworkingV1().Ingresses(ns).Update(t.Context(), ing, metav1.UpdateOptions{})
		return err // a conflict with the status writer is retried
	})
}

func getIngress(t *testing.T, ns, name string) *networkingv1.Ingress {
	t.Helper()
	ing, err := e2e.admin.NetworkingV1().Ingresses(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Ingress %s/%s: %v", ns, name, err)
	}
	return ing
}

// statusAddresses renders an Ingress's status as "ip" and "host" entries,
// in order.
func statusAddresses(ing *networkingv1.Ingress) []string {
	var out []string
	for _, a := range ing.Status.LoadBalancer.Ingress {
		if a.IP != "" {
			out = append(out, a.IP)
		}
		if a.Hostname != "" {
			out = append(out, a.Hostname)
		}
	}
	return out
}

// waitStatus waits until the Ingress's status shows exactly want.
func waitStatus(t *testing.T, ns, name string, timeout time.Duration, want ...string) {
	t.Helper()
	eventually(t, timeout, func() error {
		got := statusAddresses(getIngress(t, ns, name))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("Ingress %s/%s status = %v, want %v", ns, name, got, want)
		}
		return nil
	})
}

// ingressEvents lists the Events about one Ingress.
func ingressEvents(t *testing.T, ns, name string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": "Ingress", "involvedObject.name": name}.AsSelector().String()
	list, err := e2e.admin.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	return list.Items
}

// waitEvent waits for an Event of type and reason about an Ingress whose
// message contains every fragment, and returns it.
func waitEvent(t *testing.T, ns, name, typ, reason string, fragments ...string) corev1.Event {
	t.Helper()
	var found corev1.Event
	eventually(t, waitFor, func() error {
		evs := ingressEvents(t, ns, name)
	next:
		for _, ev := range evs {
			if ev.Type != typ || ev.Reason != reason {
				continue
			}
			for _, f := range fragments {
				if !strings.Contains(ev.Message, f) {
					continue next
				}
			}
			found = ev
			return nil
		}
		return fmt.Errorf("no %s %s event with %q on Ingress %s/%s; events: %s", typ, reason, fragments, ns, name, describeEvents(evs))
	})
	if found.Source.Component != "causeway" {
		t.Errorf("event source component = %q, want causeway", found.Source.Component)
	}
	return found
}

func describeEvents(evs []corev1.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n  %s %s (x%d): %s", ev.Type, ev.Reason, ev.Count, ev.Message)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// eventually is harness.Eventually.
var eventually = harness.Eventually

// consistently fails t if check fails at any point during d.
func consistently(t testing.TB, d time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := check(); err != nil {
			t.Fatalf("stopped holding: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
