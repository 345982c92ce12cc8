package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// annotationPrefix is ingress-nginx's, which the controller reads by
// default.
const annotationPrefix = "nginx.ingress.kubernetes.io/"

// commonAnnotations are what -annotations N puts on every Ingress: the
// first N, chosen to exercise annotation parsing (sizes, durations,
// booleans), policy (location scope, and server scope resolved per host
// by age) and rendering (CORS blocks, regex locations and rewrites).
// "{k}" stands for the Ingress's layout number, so that Ingresses of one
// layout stay alike.
var commonAnnotations = [][2]string{
	{"proxy-body-size", "8m"},       // a size; client_max_body_size per location
	{"proxy-read-timeout", "30"},    // a duration; proxy_read_timeout per location
	{"enable-cors", "true"},         // CORS headers and the preflight answer in every location
	{"rewrite-target", "/$2"},       // regex paths ("/s{k}(/|$)(.*)") and a rewrite per location
	{"ssl-redirect", "false"},       // server scope: resolved per host, the oldest Ingress wins
	{"use-regex", "true"},           // regex mode, already implied by rewrite-target
	{"proxy-connect-timeout", "5"},  // more location settings
	{"proxy-send-timeout", "30"},    //
	{"proxy-buffering", "on"},       //
	{"x-forwarded-prefix", "/s{k}"}, // a per-layout header
}

// corsOrigin, the -cors-origin flag, gives every layout k CORS for its
// own origin, https://app-<k>.example.com (enable-cors and
// cors-allow-origin), as tenants' frontends each have their own.
var corsOrigin bool

// annotations are the first n commonAnnotations for layout k, with the
// prefix, and corsOrigin's; nil for none.
func annotations(n, k int) map[string]string {
	if n == 0 && !corsOrigin {
		return nil
	}
	out := map[string]string{}
	for _, a := range commonAnnotations[:n] {
		out[annotationPrefix+a[0]] = strings.ReplaceAll(a[1], "{k}", strconv.Itoa(k))
	}
	if corsOrigin {
		out[annotationPrefix+"enable-cors"] = "true"
		out[annotationPrefix+"cors-allow-origin"] = "https://app-" + strconv.Itoa(k) + ".example.com"
	}
	return out
}

// regexPaths reports whether the first n annotations make the layout's
// second path a regex with capture groups (rewrite-target needs one).
func regexPaths(n int) bool {
	for _, a := range commonAnnotations[:n] {
		if a[0] == "rewrite-target" {
			return true
		}
	}
	return false
}

// createObjects creates n Services, EndpointSlices and Ingresses with a
// bounded number of concurrent requests. Every Ingress carries the first
// annots of commonAnnotations.
func createObjects(ctx context.Context, c kubernetes.Interface, ns string, n, workers, shapes, annots int, ip string, port int) (time.Duration, error) {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "causeway"}, Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}
	if _, err := c.NetworkingV1().IngressClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	return concurrently(ctx, n, workers, func(i int) error { return createOne(ctx, c, ns, i, shapes, annots, ip, port) })
}

// concurrently runs one(i) for i in [0, n) on workers goroutines, stops
// at the first error, and reports how long it took.
func concurrently(ctx context.Context, n, workers int, one func(i int) error) (time.Duration, error) {
	start := time.Now()
	jobs := make(chan int)
	var firstErr atomic.Value
	var done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := one(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
				if d := done.Add(1); d%1000 == 0 {
					fmt.Fprintf(os.Stderr, "created %d/%d sets (%s)\n", d, n, time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	for i := range n {
		if firstErr.Load() != nil || ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return time.Since(start), ctx.Err()
}

func name(i int) string { return fmt.Sprintf("app-%05d", i) }

func host(i int) string { return fmt.Sprintf("h%05d.bench.test", i) }

// createOne creates Ingress i with its Service and EndpointSlice. Ingress i
// routes "/" and "/s<i mod shapes>" to its Service: Ingresses of one shape
// differ only in host and Service, and the controller may serve them from
// one nginx server block; shapes = n makes every one distinct. It carries
// the first annots of commonAnnotations, the same on every Ingress of one
// shape; with rewrite-target among them its second path is the regex
// "/s<i mod shapes>(/|$)(.*)".
func createOne(ctx context.Context, c kubernetes.Interface, ns string, i, shapes, annots int, ip string, port int) error {
	if err := createBackend(ctx, c, ns, i, ip, port); err != nil {
		return err
	}
	ing := ingress(ns, i, shapes, annots)
	if _, err := c.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Ingress %s: %w", ing.Name, err)
	}
	return nil
}

// createBackend creates Service i of ns and its EndpointSlice.
func createBackend(ctx context.Context, c kubernetes.Interface, ns string, i int, ip string, port int) error {
	svc := service(ns, i)
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Service %s/%s: %w", ns, svc.Name, err)
	}
	slice := endpointSlice(ns, i, ip, port)
	if _, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create EndpointSlice %s/%s: %w", ns, slice.Name, err)
	}
	return nil
}

// service is Service i of ns as createBackend makes it.
func service(ns string, i int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name(i)},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
}

// endpointSlice is Service i's one endpoint, the echo backend at ip:port.
func endpointSlice(ns string, i int, ip string, port int) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name(i) + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name(i)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

// ingress is Ingress i as createOne makes it.
func ingress(ns string, i, shapes, annots int) *networkingv1.Ingress {
	second := path(fmt.Sprintf("/s%d", i%shapes), networkingv1.PathTypePrefix, i)
	if regexPaths(annots) {
		second = path(fmt.Sprintf("/s%d(/|$)(.*)", i%shapes), networkingv1.PathTypeImplementationSpecific, i)
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name(i), Annotations: annotations(annots, i%shapes)},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("causeway"),
			Rules: []networkingv1.IngressRule{{
				Host: host(i),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{path("/", networkingv1.PathTypePrefix, i), second},
				}},
			}},
		},
	}
}

func path(p string, typ networkingv1.PathType, i int) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{
		Path: p, PathType: ptr.To(typ),
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: name(i), Port: networkingv1.ServiceBackendPort{Number: 80},
		}},
	}
}

// checkExisting makes sure Ingresses left by an earlier run (-kubeconfig)
// were made with the same -shapes and -annotations, so that the table
// describes what the controller actually served.
func checkExisting(ctx context.Context, c kubernetes.Interface, ns string, shapes, annots int) error {
	for _, i := range []int{0, shapes - 1} {
		got, err := c.NetworkingV1().Ingresses(ns).Get(ctx, name(i), metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("Ingress %s from an earlier run: %w", name(i), err)
		}
		want := ingress(ns, i, shapes, annots)
		ours := map[string]string{}
		for k, v := range got.Annotations {
			if strings.HasPrefix(k, annotationPrefix) {
				ours[k] = v
			}
		}
		if !maps.Equal(ours, want.Annotations) || len(got.Spec.Rules) == 0 || got.Spec.Rules[0].HTTP == nil ||
			len(got.Spec.Rules[0].HTTP.Paths) != 2 || got.Spec.Rules[0].HTTP.Paths[1].Path != want.Spec.Rules[0].HTTP.Paths[1].Path {
			return fmt.Errorf("namespace %s holds Ingresses made with other -shapes or -annotations (Ingress %s has %d of our annotations); delete the namespace or use a fresh API server", ns, name(i), len(ours))
		}
	}
	return nil
}

// waitPublished waits until n Ingresses of ns show the published address.
func waitPublished(ctx context.Context, client kubernetes.Interface, ns string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := time.Now()
	for time.Now().Before(deadline) {
		list, err := client.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		done := 0
		for _, ing := range list.Items {
			if lb := ing.Status.LoadBalancer.Ingress; len(lb) == 1 && lb[0].IP == publishAddress {
				done++
			}
		}
		if done >= n {
			return nil
		}
		if time.Since(last) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "status published on %d of %d Ingresses\n", done, n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("status not published on all %d Ingresses within %s", n, timeout)
}
