package admission

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/source"
)

func handlerWorld(mode Mode) *Handler {
	svc, es := service("ns1", "svc-0")
	snap := &source.Snapshot{
		Ingresses:      []*networkingv1.Ingress{mkIngress("ns1", "older", 0, nil, rule("taken.test", path("/", "Prefix", "svc-0")))},
		Services:       []*corev1.Service{svc},
		EndpointSlices: []*discoveryv1.EndpointSlice{es},
		// Layer 4: listener tcp-a is owned, tcp-b is free.
		TransportServers: []*nicv1.TransportServer{mkTransportServer("ns1", "owner", 0, "tcp-a", "svc-0")},
		GatewayClasses: []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "causeway"},
			Spec: gwv1.GatewayClassSpec{ControllerName: "causeway.io/gateway-controller"}}},
		Gateways: []*gwv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "gw"},
			Spec: gwv1.GatewaySpec{GatewayClassName: "causeway", Listeners: []gwv1.Listener{{Name: "http", Port: 9080, Protocol: gwv1.HTTPProtocolType}}}}},
		GlobalConfigurations: []*nicv1.GlobalConfiguration{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "gc"},
			Spec: nicv1.GlobalConfigurationSpec{Listeners: []nicv1.Listener{
				{Name: "tcp-a", Protocol: "TCP", Port: 5000}, {Name: "tcp-b", Protocol: "TCP", Port: 5001}}}}},
	}
	opts := testOpts
	opts.GlobalConfiguration, opts.StreamAvailable = "causeway/gc", true
	r := NewReviewer(opts, nil, nil)
	r.Update(snap)
	return &Handler{Reviewer: r, Mode: mode}
}

func reviewBody(t testing.TB, op admissionv1.Operation, kind metav1.GroupVersionKind, obj any) []byte {
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("req-1"), Kind: kind, Operation: op,
			Namespace: "ns1", Name: "new", Object: runtime.RawExtension{Raw: raw}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func post(h http.Handler, body []byte, contentType string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func answer(t *testing.T, rec *httptest.ResponseRecorder) *admissionv1.AdmissionResponse {
	t.Helper()
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("answer %q: %v", rec.Body.String(), err)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response.UID != "req-1" {
		t.Fatalf("answer %+v does not echo the review's type and UID", out)
	}
	return out.Response
}

func TestHandlerAnswers(t *testing.T) {
	newIngress := func(ann map[string]string, host, svc string) *networkingv1.Ingress {
		i := mkIngress("ns1", "new", 5, ann, rule(host, path("/", "Prefix", svc)))
		i.TypeMeta = metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"}
		return i
	}
	other := newIngress(nil, "taken.test", "svc-0")
	other.Spec.IngressClassName = ptr.To("someone-else")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "x"}}
	newVS := func(host string, change func(*nicv1.VirtualServer)) *nicv1.VirtualServer {
		v := mkVirtualServer("ns1", "new", 5, host, nicv1.Route{Path: "/", Action: &nicv1.Action{Pass: "web"}})
		v.TypeMeta = metav1.TypeMeta{APIVersion: "k8s.nginx.org/v1", Kind: "VirtualServer"}
		if change != nil {
			change(v)
		}
		return v
	}
	newTS := func(listener string, change func(*nicv1.TransportServer)) *nicv1.TransportServer {
		ts := mkTransportServer("ns1", "new", 5, listener, "svc-0")
		ts.TypeMeta = metav1.TypeMeta{APIVersion: "k8s.nginx.org/v1", Kind: "TransportServer"}
		if change != nil {
			change(ts)
		}
		return ts
	}
	for _, tc := range []struct {
		name     string
		mode     Mode
		op       admissionv1.Operation
		kind     metav1.GroupVersionKind
		obj      any
		allowed  bool
		message  []string // in the refusal
		warnings []string // in some warning
	}{
		{name: "a valid Ingress", mode: Deny, op: admissionv1.Create, kind: ingressKind, obj: newIngress(nil, "free.test", "svc-0"), allowed: true},
		{name: "an unknown annotation is refused", mode: Deny, op: admissionv1.Create, kind: ingressKind,
			obj:     newIngress(map[string]string{"nginx.ingress.kubernetes.io/no-such": "1"}, "free.test", "svc-0"),
			message: []string{"Ingress ns1/new", "UnknownAnnotation", "nginx.ingress.kubernetes.io/no-such"}},
		{name: "an invalid value is refused on update too", mode: Deny, op: admissionv1.Update, kind: ingressKind,
			obj:     newIngress(map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "lots"}, "free.test", "svc-0"),
			message: []string{"InvalidAnnotation", "proxy-body-size"}},
		{name: "a collision is refused", mode: Deny, op: admissionv1.Create, kind: ingressKind, obj: newIngress(nil, "taken.test", "svc-0"),
			message: []string{"Collision", "ns1/older"}},
		{name: "in warn mode a Problem is a warning", mode: Warn, op: admissionv1.Create, kind: ingressKind, obj: newIngress(nil, "taken.test", "svc-0"),
			allowed: true, warnings: []string{"Collision", "ns1/older"}},
		{name: "a Service that does not exist yet is a warning", mode: Deny, op: admissionv1.Create, kind: ingressKind,
			obj: newIngress(nil, "free.test", "later"), allowed: true, warnings: []string{"MissingService", "later"}},
		{name: "a Secret that does not exist yet is a warning", mode: Deny, op: admissionv1.Create, kind: ingressKind,
			obj:     newIngress(map[string]string{"nginx.ingress.kubernetes.io/auth-type": "basic", "nginx.ingress.kubernetes.io/auth-secret": "later"}, "free.test", "svc-0"),
			allowed: true, warnings: []string{"MissingSecret", "later"}},
		{name: "another controller's Ingress", mode: Deny, op: admissionv1.Create, kind: ingressKind, obj: other, allowed: true},
		{name: "a deletion is not reviewed", mode: Deny, op: admissionv1.Delete, kind: ingressKind, obj: newIngress(nil, "taken.test", "svc-0"), allowed: true},
		{name: "another kind is not reviewed", mode: Deny, op: admissionv1.Create, kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, obj: cm, allowed: true},
		{name: "a valid VirtualServer", mode: Deny, op: admissionv1.Create, kind: virtualServerKind, obj: newVS("free.test", nil), allowed: true},
		{name: "a VirtualServer for a host an Ingress serves is refused", mode: Deny, op: admissionv1.Create, kind: virtualServerKind,
			obj: newVS("taken.test", nil), message: []string{"VirtualServer ns1/new", "Collision", "ns1/older"}},
		{name: "a VirtualServer passing to an undefined upstream is refused", mode: Deny, op: admissionv1.Update, kind: virtualServerKind,
			obj:     newVS("free.test", func(v *nicv1.VirtualServer) { v.Spec.Routes[0].Action.Pass = "nope" }),
			message: []string{"Invalid", `names upstream "nope", which spec.upstreams does not define`}},
		{name: "an unsupported VirtualServer field is refused", mode: Deny, op: admissionv1.Create, kind: virtualServerKind,
			obj: newVS("free.test", func(v *nicv1.VirtualServer) { v.Spec.ExternalDNS.Enable = true }), message: []string{"Unsupported", "spec.externalDNS"}},
		{name: "a valid Policy", mode: Deny, op: admissionv1.Create, kind: policyKind,
			obj: &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "new"},
				Spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}"}}}, allowed: true},
		{name: "a Policy of a kind that needs NGINX Plus is refused", mode: Deny, op: admissionv1.Create, kind: policyKind,
			obj: &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "new"},
				Spec: nicv1.PolicySpec{JWT: &nicv1.JWTAuth{Secret: "jwk"}}}, message: []string{"Policy ns1/new", "needs NGINX Plus"}},
		{name: "a VirtualServerRoute no VirtualServer names is admitted with a warning", mode: Deny, op: admissionv1.Create, kind: vsrKind,
			obj: &nicv1.VirtualServerRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "new"},
				Spec: nicv1.VirtualServerRouteSpec{Host: "x.test"}}, allowed: true, warnings: []string{"NoVirtualServerFound"}},
		{name: "an unused invalid VirtualServerRoute is refused", mode: Deny, op: admissionv1.Create, kind: vsrKind,
			obj: &nicv1.VirtualServerRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "new"},
				Spec: nicv1.VirtualServerRouteSpec{Host: "x.test", Subroutes: []nicv1.Route{{Path: "/a", Action: &nicv1.Action{Pass: "nope"}}}}},
			message: []string{"VirtualServerRoute ns1/new", "nope"}},
		{name: "in warn mode a VirtualServer's Problem is a warning", mode: Warn, op: admissionv1.Create, kind: virtualServerKind,
			obj: newVS("taken.test", nil), allowed: true, warnings: []string{"Collision", "ns1/older"}},
		{name: "an upstream's Service that does not exist yet is a warning", mode: Deny, op: admissionv1.Create, kind: virtualServerKind,
			obj: newVS("free.test", func(v *nicv1.VirtualServer) { v.Spec.Upstreams[0].Service = "later" }), allowed: true,
			warnings: []string{"MissingService", "later"}},
		{name: "a VirtualServer's TLS Secret that does not exist yet is a warning", mode: Deny, op: admissionv1.Create, kind: virtualServerKind,
			obj: newVS("free.test", func(v *nicv1.VirtualServer) { v.Spec.TLS = &nicv1.TLS{Secret: "later-tls"} }), allowed: true,
			warnings: []string{"MissingSecret", "later-tls"}},
		{name: "another class's VirtualServer", mode: Deny, op: admissionv1.Create, kind: virtualServerKind,
			obj: newVS("taken.test", func(v *nicv1.VirtualServer) { v.Spec.IngressClass = "nginx" }), allowed: true},
		{name: "a VirtualServer deletion is not reviewed", mode: Deny, op: admissionv1.Delete, kind: virtualServerKind, obj: newVS("taken.test", nil), allowed: true},
		{name: "another version of VirtualServer is not reviewed", mode: Deny, op: admissionv1.Create,
			kind: metav1.GroupVersionKind{Group: "k8s.nginx.org", Version: "v1alpha1", Kind: "VirtualServer"}, obj: newVS("taken.test", nil), allowed: true},
		{name: "an object that is no VirtualServer is refused", mode: Deny, op: admissionv1.Create, kind: virtualServerKind, obj: map[string]any{"spec": "x"},
			message: []string{"not a VirtualServer"}},
		{name: "a valid TransportServer", mode: Deny, op: admissionv1.Create, kind: tsKind, obj: newTS("tcp-b", nil), allowed: true},
		{name: "a TransportServer on a listener another owns is refused", mode: Deny, op: admissionv1.Create, kind: tsKind,
			obj: newTS("tcp-a", nil), message: []string{"TransportServer ns1/new", "Collision", "ns1/owner"}},
		{name: "a TransportServer on a listener the GlobalConfiguration lacks is refused", mode: Deny, op: admissionv1.Update, kind: tsKind,
			obj: newTS("nope", nil), message: []string{"Invalid", `listener "nope"`}},
		{name: "in warn mode a TransportServer's Problem is a warning", mode: Warn, op: admissionv1.Create, kind: tsKind,
			obj: newTS("tcp-a", nil), allowed: true, warnings: []string{"Collision", "ns1/owner"}},
		{name: "a TransportServer's Service that does not exist yet is a warning", mode: Deny, op: admissionv1.Create, kind: tsKind,
			obj: newTS("tcp-b", func(ts *nicv1.TransportServer) { ts.Spec.Upstreams[0].Service = "later" }), allowed: true,
			warnings: []string{"MissingService", "later"}},
		{name: "another class's TransportServer", mode: Deny, op: admissionv1.Create, kind: tsKind,
			obj: newTS("tcp-a", func(ts *nicv1.TransportServer) { ts.Spec.IngressClass = "nginx" }), allowed: true},
		{name: "a TransportServer deletion is not reviewed", mode: Deny, op: admissionv1.Delete, kind: tsKind, obj: newTS("tcp-a", nil), allowed: true},
		{name: "an object that is no TransportServer is refused", mode: Deny, op: admissionv1.Create, kind: tsKind, obj: map[string]any{"spec": "x"},
			message: []string{"not a TransportServer"}},
		{name: "the GlobalConfiguration with two listeners on one port is refused", mode: Deny, op: admissionv1.Update, kind: gcKind,
			obj:     newGC("gc", nicv1.Listener{Name: "tcp-a", Protocol: "TCP", Port: 5000}, nicv1.Listener{Name: "tcp-b", Protocol: "TCP", Port: 5000}),
			message: []string{"GlobalConfiguration causeway/gc", "Invalid", `port 5000 TCP is used by listener "tcp-a"`}},
		{name: "in warn mode a GlobalConfiguration's Problem is a warning", mode: Warn, op: admissionv1.Update, kind: gcKind,
			obj:     newGC("gc", nicv1.Listener{Name: "tcp-a", Protocol: "SCTP", Port: 5000}),
			allowed: true, warnings: []string{"Invalid", `protocol "SCTP"`}},
		{name: "a valid GlobalConfiguration", mode: Deny, op: admissionv1.Update, kind: gcKind,
			obj: newGC("gc", nicv1.Listener{Name: "tcp-a", Protocol: "TCP", Port: 5000}), allowed: true},
		{name: "a GlobalConfiguration --global-configuration does not name is not read", mode: Deny, op: admissionv1.Create, kind: gcKind,
			obj: newGC("other", nicv1.Listener{Name: "tcp-a", Protocol: "SCTP", Port: 5000}), allowed: true},
		// Gateway API: Problems are warnings, whatever the mode (status
		// conditions are the API's way to refuse).
		{name: "an HTTPRoute's refused filter is a warning, never a refusal", mode: Deny, op: admissionv1.Create, kind: httpRouteKind,
			obj: newRoute("gw", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExtensionRef,
				ExtensionRef: &gwv1.LocalObjectReference{Group: "x.io", Kind: "Y", Name: "z"}}),
			allowed: true, warnings: []string{"ExtensionRef"}},
		{name: "a valid HTTPRoute", mode: Deny, op: admissionv1.Create, kind: httpRouteKind, obj: newRoute("gw"), allowed: true},
		{name: "an HTTPRoute of another controller's Gateway", mode: Deny, op: admissionv1.Create, kind: httpRouteKind,
			obj: newRoute("theirs", gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterExtensionRef,
				ExtensionRef: &gwv1.LocalObjectReference{Group: "x.io", Kind: "Y", Name: "z"}}), allowed: true},
		{name: "a BackendTLSPolicy Causeway cannot honour is a warning, never a refusal", mode: Deny, op: admissionv1.Create, kind: btlsKind,
			obj: newBackendTLSPolicy("other.example.com"), allowed: true, warnings: []string{"subjectAltNames[0]"}},
		{name: "a valid BackendTLSPolicy", mode: Deny, op: admissionv1.Create, kind: btlsKind, obj: newBackendTLSPolicy(), allowed: true},
		// A ListenerSet's Problems (the front-end's) are warnings as a
		// route's; one of another controller's Gateway raises none.
		{name: "a ListenerSet of another controller's Gateway", mode: Deny, op: admissionv1.Create, kind: listenerSetKind,
			obj: newListenerSet("theirs"), allowed: true},
		{name: "an object that is no ListenerSet is refused", mode: Deny, op: admissionv1.Update, kind: listenerSetKind, obj: "a string",
			message: []string{"not a ListenerSet"}},
		{name: "an object that is no Ingress is refused", mode: Deny, op: admissionv1.Create, kind: ingressKind, obj: "a string",
			message: []string{"not an Ingress"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(handlerWorld(tc.mode), reviewBody(t, tc.op, tc.kind, tc.obj), "application/json")
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d %q", rec.Code, rec.Body.String())
			}
			resp := answer(t, rec)
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed %v, want %v (%+v)", resp.Allowed, tc.allowed, resp)
			}
			if !tc.allowed {
				if resp.Result == nil || resp.Result.Code != http.StatusUnprocessableEntity && resp.Result.Code != http.StatusBadRequest {
					t.Fatalf("refusal without a status: %+v", resp.Result)
				}
				for _, m := range tc.message {
					if !strings.Contains(resp.Result.Message, m) {
						t.Errorf("message %q lacks %q", resp.Result.Message, m)
					}
				}
			}
			all := strings.Join(resp.Warnings, "\n")
			for _, w := range tc.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", resp.Warnings, w)
				}
			}
			if len(tc.warnings) == 0 && len(resp.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", resp.Warnings)
			}
		})
	}
}

func TestHandlerRefusesMalformedRequests(t *testing.T) {
	valid := reviewBody(t, admissionv1.Create, ingressKind, mkIngress("ns1", "new", 1, nil))
	v1beta1 := strings.Replace(string(valid), "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1)
	for _, tc := range []struct {
		name        string
		method      string
		contentType string
		body        string
		synced      bool
		want        int
	}{
		{"GET", http.MethodGet, "application/json", string(valid), true, http.StatusMethodNotAllowed},
		{"not JSON by its type", http.MethodPost, "text/plain", string(valid), true, http.StatusUnsupportedMediaType},
		{"not JSON", http.MethodPost, "application/json", "{", true, http.StatusBadRequest},
		{"JSON but no review", http.MethodPost, "application/json", `{"a":1}`, true, http.StatusBadRequest},
		{"no request", http.MethodPost, "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, true, http.StatusBadRequest},
		{"v1beta1", http.MethodPost, "application/json", v1beta1, true, http.StatusBadRequest},
		{"too large", http.MethodPost, "application/json", `{"apiVersion":"` + strings.Repeat("x", maxBody) + `"}`, true, http.StatusRequestEntityTooLarge},
		{"before the first snapshot", http.MethodPost, "application/json", string(valid), false, http.StatusServiceUnavailable},
		{"charset is fine", http.MethodPost, "application/json; charset=utf-8", string(valid), true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := handlerWorld(Deny)
			if !tc.synced {
				h.Reviewer = NewReviewer(testOpts, nil, nil)
			}
			req := httptest.NewRequest(tc.method, Path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("HTTP %d %q, want %d", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
}

func TestTruncateAndWarnings(t *testing.T) {
	if got := truncate("ééé", 5); got != "é…" {
		t.Errorf("truncate = %q", got)
	}
	lines := make([]string, 30)
	for i := range lines {
		lines[i] = strings.Repeat("x", 2000)
	}
	w := warnings(lines)
	if len(w) != maxWarnings+1 || !strings.Contains(w[maxWarnings], "10 more") || len(w[0]) > maxWarning {
		t.Errorf("warnings: %d lines, last %q, first %d bytes", len(w), w[len(w)-1], len(w[0]))
	}
}

// FuzzHandler: whatever arrives, the handler answers with a status it
// documents, never panics, and a 200 always carries a review answering
// the request's UID.
func FuzzHandler(f *testing.F) {
	f.Add(reviewBody(f, admissionv1.Create, ingressKind, mkIngress("ns1", "new", 1, map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/$1"},
		rule("a.test", path("/(.*)", "ImplementationSpecific", "svc-0")))))
	f.Add(reviewBody(f, admissionv1.Update, ingressKind, mkIngress("ns1", "older", 1, nil, rule("taken.test", path("/", "Prefix", "svc-0")))))
	f.Add(reviewBody(f, admissionv1.Create, ingressKind, map[string]any{"spec": map[string]any{"rules": "x"}}))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"networking.k8s.io","version":"v1","kind":"Ingress"},"operation":"CREATE","object":null}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE","object":{"metadata":{"annotations":{"nginx.ingress.kubernetes.io/server-snippet":"}\nserver {"}}}}}`))
	f.Add(reviewBody(f, admissionv1.Create, virtualServerKind, mkVirtualServer("ns1", "new", 1, "taken.test",
		nicv1.Route{Path: "/", Action: &nicv1.Action{Pass: "web"}}, nicv1.Route{Path: "~* ^/x", Action: &nicv1.Action{Pass: "nope"}})))
	f.Add(reviewBody(f, admissionv1.Update, virtualServerKind, mkVirtualServer("ns1", "new", 1, "free.test",
		nicv1.Route{Path: "/", Action: &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://a.test/", Code: 302}}})))
	f.Add(reviewBody(f, admissionv1.Create, virtualServerKind, map[string]any{"spec": map[string]any{"host": 1, "routes": []any{nil}}}))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"k8s.nginx.org","version":"v1","kind":"VirtualServer"},"operation":"CREATE","object":{"spec":{"host":"","upstreams":[{"name":"a","port":0}]}}}}`))
	f.Add([]byte("null"))
	h := handlerWorld(Deny)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := post(h, body, "application/json")
		switch rec.Code {
		case http.StatusOK:
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("200 without a review: %q", rec.Body.String())
			}
			var in admissionv1.AdmissionReview
			if json.Unmarshal(body, &in) == nil && in.Request != nil && out.Response.UID != in.Request.UID {
				t.Fatalf("answer UID %q, request UID %q", out.Response.UID, in.Request.UID)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("HTTP %d %q", rec.Code, rec.Body.String())
		}
	})
}

var httpRouteKind = metav1.GroupVersionKind{Group: gwv1.GroupName, Version: "v1", Kind: "HTTPRoute"}

// newRoute is an HTTPRoute in ns1 of Gateway parent, to svc-0, with filters.
func newRoute(parent string, filters ...gwv1.HTTPRouteFilter) *gwv1.HTTPRoute {
	port := gwv1.PortNumber(80)
	return &gwv1.HTTPRoute{TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "route"},
		Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: gwv1.ObjectName(parent)}}},
			Rules: []gwv1.HTTPRouteRule{{Filters: filters, BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: "svc-0", Port: &port}}}}}}}}
}

func newGC(name string, ls ...nicv1.Listener) *nicv1.GlobalConfiguration {
	return &nicv1.GlobalConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: name},
		Spec: nicv1.GlobalConfigurationSpec{Listeners: ls}}
}

var listenerSetKind = metav1.GroupVersionKind{Group: gwv1.GroupName, Version: "v1", Kind: "ListenerSet"}

// newListenerSet is a ListenerSet in ns1 of Gateway parent, with one HTTP
// listener.
func newListenerSet(parent string) *gwv1.ListenerSet {
	return &gwv1.ListenerSet{TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "ListenerSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "team"},
		Spec: gwv1.ListenerSetSpec{ParentRef: gwv1.ParentGatewayReference{Name: gwv1.ObjectName(parent)},
			Listeners: []gwv1.ListenerEntry{{Name: "team", Port: 9081, Protocol: gwv1.HTTPProtocolType}}}}
}

var btlsKind = metav1.GroupVersionKind{Group: gwv1.GroupName, Version: "v1", Kind: "BackendTLSPolicy"}

// newBackendTLSPolicy is a BackendTLSPolicy in ns1 for svc-0, verified
// by the system's CAs, with subject alternative names sans.
func newBackendTLSPolicy(sans ...string) *gwv1.BackendTLSPolicy {
	p := &gwv1.BackendTLSPolicy{TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "BackendTLSPolicy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "tls"},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "svc-0"}}},
			Validation: gwv1.BackendTLSPolicyValidation{Hostname: "svc.internal", WellKnownCACertificates: new(gwv1.WellKnownCACertificatesSystem)}}}
	for _, s := range sans {
		p.Spec.Validation.SubjectAltNames = append(p.Spec.Validation.SubjectAltNames, gwv1.SubjectAltName{Type: gwv1.HostnameSubjectAltNameType, Hostname: gwv1.Hostname(s)})
	}
	return p
}
