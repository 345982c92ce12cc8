// Command admission measures the validating webhook's review latency with
// many Ingresses in the snapshot: each review is a POST of an
// AdmissionReview to the handler (JSON decoding, the review against the
// indexes, the answer), in process. It prints a Markdown table. Not a
// timed test: run it with `go run ./bench/admission`.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/internal/admission"
	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/source"
)

const prefix = "nginx.ingress.kubernetes.io/"

func main() {
	n := flag.Int("ingresses", 10000, "Ingresses (each with its Service and EndpointSlice) in the snapshot")
	reviews := flag.Int("reviews", 2000, "reviews per case")
	hostless := flag.Int("hostless", 0, "how many of the Ingresses also have a rule without a host (each such Ingress meets every other)")
	flag.Parse()

	opts := build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"},
		ConfigMap: "causeway-system/causeway", HeadersMoreAvailable: true, LuaAvailable: true}
	snap := world(*n, *hostless)
	r := admission.NewReviewer(opts, nil, nil)
	start := time.Now()
	r.Update(snap)
	indexed := time.Since(start)
	h := &admission.Handler{Reviewer: r, Mode: admission.Deny, Log: slog.New(slog.DiscardHandler)}

	type benchCase struct {
		name string
		ing  *networkingv1.Ingress
		vs   *nicv1.VirtualServer
	}
	cases := []benchCase{
		{name: "a new Ingress on a new host, 10 annotations (admitted)", ing: newIngress("new", "new.bench.test", "app-00001", annotations())},
		{name: "an update of a stored Ingress, 10 annotations (admitted)", ing: newIngress("app-00042", host(42), "app-00042", annotations())},
		{name: "a new Ingress on a taken host and path (collision, refused)", ing: newIngress("thief", host(7), "app-00007", annotations())},
		{name: "an unknown annotation (refused)", ing: newIngress("typo", "typo.bench.test", "app-00001", withTypo())},
		{name: "a rule without a host (meets the Ingresses of regex hosts)", ing: newIngress("catchall", "", "app-00001", plain())},
		{name: "a rule without a host, with use-regex (meets every Ingress)", ing: newIngress("catchall", "", "app-00001", annotations())},
	}
	cases = append(cases,
		benchCase{name: "a new VirtualServer on a new host, 3 routes (admitted)", vs: newVirtualServer("shop", "shop.bench.test")},
		benchCase{name: "a new VirtualServer on an Ingress's host (collision, refused)", vs: newVirtualServer("vs-thief", host(7))})
	fmt.Printf("Admission review latency, %d Ingresses in the snapshot (%d with host-less rules); indexing the snapshot took %s.\n\n",
		*n, *hostless, indexed.Round(time.Millisecond))
	fmt.Println("| review | allowed | p50 | p99 | max |")
	fmt.Println("|---|---|---:|---:|---:|")
	for _, c := range cases {
		var body []byte
		if c.vs != nil {
			body = reviewVirtualServer(c.vs)
		} else {
			body = review(c.ing)
		}
		count := *reviews
		if c.ing != nil && c.ing.Spec.Rules[0].Host == "" {
			count = min(count, 50) // many Ingresses each
		}
		var times []time.Duration
		allowed := false
		for range count {
			req := httptest.NewRequest(http.MethodPost, admission.Path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			t0 := time.Now()
			h.ServeHTTP(rec, req)
			times = append(times, time.Since(t0))
			var out admissionv1.AdmissionReview
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || out.Response == nil {
				fmt.Fprintf(os.Stderr, "%s: HTTP %d %s\n", c.name, rec.Code, rec.Body.String())
				os.Exit(1)
			}
			allowed = out.Response.Allowed
		}
		slices.Sort(times)
		q := func(p float64) string { return fmtDur(times[int(p*float64(len(times)-1))]) }
		fmt.Printf("| %s | %v | %s | %s | %s |\n", c.name, allowed, q(0.5), q(0.99), fmtDur(times[len(times)-1]))
	}
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

func host(i int) string { return fmt.Sprintf("h%05d.bench.test", i) }

func annotations() map[string]string {
	return map[string]string{prefix + "proxy-body-size": "8m", prefix + "proxy-read-timeout": "30", prefix + "enable-cors": "true",
		prefix + "rewrite-target": "/$2", prefix + "ssl-redirect": "false", prefix + "use-regex": "true",
		prefix + "proxy-connect-timeout": "5", prefix + "proxy-send-timeout": "30", prefix + "proxy-buffering": "on",
		prefix + "x-forwarded-prefix": "/s"}
}

// plain are annotations() without those that turn regex mode on.
func plain() map[string]string {
	a := annotations()
	delete(a, prefix+"rewrite-target")
	delete(a, prefix+"use-regex")
	return a
}

func withTypo() map[string]string {
	a := annotations()
	a[prefix+"rewrite-targt"] = "/"
	return a
}

func newIngress(name, host, svc string, ann map[string]string) *networkingv1.Ingress {
	p := func(path string, typ networkingv1.PathType) networkingv1.HTTPIngressPath {
		return networkingv1.HTTPIngressPath{Path: path, PathType: ptr.To(typ), Backend: networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}
	}
	second := p("/s", networkingv1.PathTypePrefix)
	if _, regex := ann[prefix+"rewrite-target"]; regex {
		second = p("/s(/|$)(.*)", networkingv1.PathTypeImplementationSpecific)
	}
	return &networkingv1.Ingress{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, UID: types.UID("uid-" + name), Annotations: ann},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("causeway"), Rules: []networkingv1.IngressRule{{Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				p("/", networkingv1.PathTypePrefix), second}}}}}},
	}
}

// world is n Ingresses, each on its own host with its Service and
// EndpointSlice, created a second apart, one in ten using regex paths
// (rewrite-target); the first hostless also route a path on every host.
func world(n, hostless int) *source.Snapshot {
	snap := &source.Snapshot{}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		name := fmt.Sprintf("app-%05d", i)
		ann := plain()
		if i%10 == 0 {
			ann = annotations()
		}
		ing := newIngress(name, host(i), name, ann)
		ing.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(i) * time.Second))
		if i < hostless {
			extra := ing.Spec.Rules[0]
			extra.Host = ""
			ing.Spec.Rules = append(ing.Spec.Rules, extra)
		}
		snap.Ingresses = append(snap.Ingresses, ing)
		snap.Services = append(snap.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
		snap.EndpointSlices = append(snap.EndpointSlices, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "bench", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		})
	}
	return snap
}

// newVirtualServer is a VirtualServer in the benchmark's namespace with
// two upstreams and three routes.
func newVirtualServer(name, host string) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		TypeMeta:   metav1.TypeMeta{APIVersion: "k8s.nginx.org/v1", Kind: "VirtualServer"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name, UID: types.UID("uid-" + name)},
		Spec: nicv1.VirtualServerSpec{Host: host,
			Upstreams: []nicv1.Upstream{{Name: "web", Service: "app-00001", Port: 80, ReadTimeout: "30s"},
				{Name: "api", Service: "app-00002", Port: 80}},
			Routes: []nicv1.Route{{Path: "/", Action: &nicv1.Action{Pass: "web"}}, {Path: "/api", Action: &nicv1.Action{Pass: "api"}},
				{Path: "/old", Action: &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://" + host + "/", Code: 301}}}}},
	}
}

func reviewVirtualServer(vs *nicv1.VirtualServer) []byte {
	raw, _ := json.Marshal(vs)
	b, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "bench", Operation: admissionv1.Create, Namespace: vs.Namespace, Name: vs.Name,
			Kind:   metav1.GroupVersionKind{Group: "k8s.nginx.org", Version: "v1", Kind: "VirtualServer"},
			Object: runtime.RawExtension{Raw: raw}},
	})
	return b
}

func review(ing *networkingv1.Ingress) []byte {
	raw, _ := json.Marshal(ing)
	op := admissionv1.Create
	if ing.Name != "new" && ing.Name != "thief" && ing.Name != "typo" && ing.Name != "catchall" {
		op = admissionv1.Update
	}
	b, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "bench", Operation: op, Namespace: ing.Namespace, Name: ing.Name,
			Kind:   metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
			Object: runtime.RawExtension{Raw: raw}},
	})
	return b
}
