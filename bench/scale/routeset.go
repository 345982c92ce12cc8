package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/test/cluster"
)

// gatewayNamespace holds the HTTPRoute set, apart from the Ingresses'.
const gatewayNamespace = "bench-gw"

var (
	crdResource          = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gatewayClassResource = gwv1.SchemeGroupVersion.WithResource("gatewayclasses")
	gatewayResource      = gwv1.SchemeGroupVersion.WithResource("gateways")
	httpRouteResource    = gwv1.SchemeGroupVersion.WithResource("httproutes")
)

// routeSet is n HTTPRoutes in namespace bench-gw over Gateways of
// GatewayClass causeway (one HTTP listener on port 80 each): HTTPRoute i
// has Ingress i's host, paths and Service, and attaches to Gateway
// i mod gateways (httpRoute). The controller keeps a ClusterIP Service per
// Gateway; with no kubelet nor kube-proxy the benchmark sends traffic to
// the internal port nginx listens on for the Gateway, which the Service
// records as its targetPort.
type routeSet struct {
	client                       kubernetes.Interface
	dyn                          dynamic.Interface
	n, workers, shapes, gateways int

	mu sync.Mutex
	// ports are the Gateways' internal ports, by Gateway number.
	ports map[int]int
}

func (s *routeSet) kind() string      { return "HTTPRoute" }
func (s *routeSet) plural() string    { return "HTTPRoutes" }
func (s *routeSet) namespace() string { return gatewayNamespace }

func (s *routeSet) describe() string {
	return fmt.Sprintf("%d HTTPRoutes (%d shapes) over %d Gateways + Services + EndpointSlices (%d workers)", s.n, s.shapes, s.gateways, s.workers)
}

func (s *routeSet) create(ctx context.Context, ip string, port int) (time.Duration, error) {
	if err := installGatewayAPI(ctx, s.client, s.dyn); err != nil {
		return 0, err
	}
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gatewayNamespace}}, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}
	if err := s.createObject(ctx, gatewayClassResource, "GatewayClass", class); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	for g := range s.gateways {
		if err := s.createObject(ctx, gatewayResource, "Gateway", gatewayObject(gatewayNamespace, g, 80)); err != nil {
			return 0, err
		}
	}
	return concurrently(ctx, s.n, s.workers, func(i int) error {
		if err := createBackend(ctx, s.client, gatewayNamespace, i, ip, port); err != nil {
			return err
		}
		return s.createObject(ctx, httpRouteResource, "HTTPRoute", httpRoute(gatewayNamespace, i, s.shapes, s.gateways))
	})
}

// createObject creates a Gateway API object through the dynamic client
// (the module's typed clientset would pull in a dependency for nothing).
func (s *routeSet) createObject(ctx context.Context, res schema.GroupVersionResource, kind string, obj metav1.Object) error {
	u, err := toUnstructured(obj, gwv1.SchemeGroupVersion.WithKind(kind))
	if err != nil {
		return err
	}
	var r dynamic.ResourceInterface = s.dyn.Resource(res)
	if u.GetNamespace() != "" {
		r = s.dyn.Resource(res).Namespace(u.GetNamespace())
	}
	if _, err := r.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s %s: %w", kind, u.GetName(), err)
	}
	return nil
}

func toUnstructured(obj any, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// installGatewayAPI creates the standard channel's CRDs of the pinned
// sigs.k8s.io/gateway-api (test/cluster finds them in the module cache)
// unless they exist, and waits until the API server serves HTTPRoutes.
func installGatewayAPI(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface) error {
	files, _, version, err := cluster.GatewayAPICRDs(ctx, "standard")
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if _, err := dyn.Resource(crdResource).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the CRD of %s: %w", f, err)
		}
	}
	fmt.Fprintf(os.Stderr, "Gateway API %s CRDs (standard channel) created\n", version)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		list, err := client.Discovery().ServerResourcesForGroupVersion(gwv1.SchemeGroupVersion.String())
		if err == nil {
			for _, r := range list.APIResources {
				if r.Name == httpRouteResource.Resource {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server does not serve %s after 2 minutes (%v)", httpRouteResource, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *routeSet) check(ctx context.Context) error {
	for _, i := range []int{0, s.shapes - 1, s.n - 1} {
		u, err := s.dyn.Resource(httpRouteResource).Namespace(gatewayNamespace).Get(ctx, name(i), metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("HTTPRoute %s from an earlier run: %w", name(i), err)
		}
		var got gwv1.HTTPRoute
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &got); err != nil {
			return err
		}
		want := httpRoute(gatewayNamespace, i, s.shapes, s.gateways)
		if len(got.Spec.Rules) != 2 || len(got.Spec.Rules[1].Matches) != 1 || got.Spec.Rules[1].Matches[0].Path == nil ||
			*got.Spec.Rules[1].Matches[0].Path.Value != *want.Spec.Rules[1].Matches[0].Path.Value ||
			len(got.Spec.ParentRefs) != 1 || got.Spec.ParentRefs[0].Name != want.Spec.ParentRefs[0].Name {
			return fmt.Errorf("namespace %s holds HTTPRoutes made with other -n, -shapes or -gateways (HTTPRoute %s); delete the namespace or use a fresh API server", gatewayNamespace, name(i))
		}
	}
	return nil
}

// controllerArgs: ClusterIP Services for the Gateways (no load balancer
// would ever give a LoadBalancer Service its address here).
func (s *routeSet) controllerArgs() []string {
	return []string{"--configmap", gatewayNamespace + "/causeway", "--watch-namespace", gatewayNamespace,
		"--gateway-service-type", "ClusterIP"}
}

// waitPublished waits until every HTTPRoute has Causeway's Accepted=True
// entry in status.parents.
func (s *routeSet) waitPublished(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := time.Now()
	for time.Now().Before(deadline) {
		list, err := s.dyn.Resource(httpRouteResource).Namespace(gatewayNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		done := 0
		for _, u := range list.Items {
			if routeAccepted(u.Object) {
				done++
			}
		}
		if done >= s.n {
			return nil
		}
		if time.Since(last) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "status written on %d of %d HTTPRoutes\n", done, s.n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("status not written on all %d HTTPRoutes within %s", s.n, timeout)
}

// routeAccepted reports whether a route's status has an entry of
// Causeway's with Accepted=True.
func routeAccepted(obj map[string]any) bool {
	parents, _, _ := unstructured.NestedSlice(obj, "status", "parents")
	for _, p := range parents {
		p, _ := p.(map[string]any)
		if p["controllerName"] != string(gateway.ControllerName) {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(p, "conditions")
		for _, c := range conds {
			if c, _ := c.(map[string]any); c["type"] == "Accepted" && c["status"] == "True" {
				return true
			}
		}
	}
	return false
}

func (s *routeSet) setHost(ctx context.Context, i int, host string) (func() error, error) {
	routes := s.dyn.Resource(httpRouteResource).Namespace(gatewayNamespace)
	u, err := routes.Get(ctx, name(i), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedStringSlice(u.Object, []string{host}, "spec", "hostnames"); err != nil {
		return nil, err
	}
	return func() error {
		_, err := routes.Update(ctx, u, metav1.UpdateOptions{})
		return err
	}, nil
}

// addr is the internal port of HTTPRoute i's Gateway, read from the
// Gateways' Services (which the controller writes once it leads).
func (s *routeSet) addr(ctx context.Context, c *controller, i int) (string, error) {
	g := i % s.gateways
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.ports[g]; ok {
		return net.JoinHostPort(c.ip, strconv.Itoa(p)), nil
	}
	list, err := s.client.CoreV1().Services(gatewayNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: gatewayservice.LabelManagedBy + "=" + gatewayservice.ManagedBy})
	if err != nil {
		return "", err
	}
	ports := map[int]int{}
	for k := range list.Items {
		o, ok := gatewayservice.Parse(&list.Items[k])
		if !ok || o.Namespace != gatewayNamespace {
			continue
		}
		for gw := range s.gateways {
			if o.Name == gatewayName(gw) && o.Ports[80] != 0 {
				ports[gw] = int(o.Ports[80])
			}
		}
	}
	s.ports = ports
	if p, ok := ports[g]; ok {
		return net.JoinHostPort(c.ip, strconv.Itoa(p)), nil
	}
	return "", fmt.Errorf("Gateway %s has no Service with port 80 yet", gatewayName(g))
}
