package togateway

import (
	"fmt"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/model"
)

// frontendGaps are what the front-end does not serve yet although the
// conversion writes it as Gateway API says; TestOutputAcceptedByCauseway
// fails when one no longer occurs, so that it is taken off the list (and
// the rule's note).
var frontendGaps = []string{}

// checkAccepted checks out with Causeway's own Gateway API front-end: the
// Gateways and their listeners without a Problem (the ReferenceGrants let
// them use the Secrets), every route attached to each listener it names,
// and every rule translated. gaps records the frontendGaps met.
func checkAccepted(t *testing.T, out Output, gaps map[string]bool) {
	t.Helper()
	report := func(what string, problems []model.Problem) {
		t.Helper()
	problems:
		for _, p := range problems {
			for _, g := range frontendGaps {
				if strings.Contains(p.Message, g) {
					gaps[g] = true
					continue problems
				}
			}
			t.Errorf("%s: %s: %s", what, p.Reason, p.Message)
		}
	}
	now := metav1.Now()
	class, problems := gateway.CheckClass(&gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultGatewayClass},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName},
	}, nil, now)
	if class == nil {
		t.Fatalf("class: %v", problems)
	}
	inputs := gateway.Inputs{Now: now, Grants: out.ReferenceGrants, Secret: func(string, string) error { return nil }}
	gateways := map[string]*gateway.Gateway{}
	for _, g := range out.Gateways {
		gw, problems := gateway.CheckGateway(g, class, []string{"127.0.0.1"}, inputs)
		report("Gateway "+g.Name, problems)
		gateways[gw.Ref.Namespace+"/"+gw.Ref.Name] = gw
	}
	attach := func(kind string, r gateway.Route) {
		attached, problems := gateway.Attach(r, &gateway.Resolution{Gateways: gateways}, inputs)
		report(kind+" "+r.GetName()+" attachment", problems)
		if len(attached) != len(r.ParentRefs()) {
			t.Errorf("%s %s/%s: %d of its %d parentRefs name a Gateway written", kind, r.GetNamespace(), r.GetName(), len(attached), len(r.ParentRefs()))
		}
		for _, a := range attached {
			if !a.Accepted() {
				t.Errorf("%s %s/%s is not attached to parentRef %d", kind, r.GetNamespace(), r.GetName(), a.Index)
			}
		}
	}
	env := gateway.RouteEnv{ServicePort: func(string, string, int32) (bool, bool) { return true, true }}
	for _, r := range out.HTTPRoutes {
		attach("HTTPRoute", gateway.HTTPRouteOf(r))
		_, problems := gateway.TranslateHTTPRoute(r, env)
		report("HTTPRoute "+r.Name, problems)
	}
	for _, r := range out.GRPCRoutes {
		attach("GRPCRoute", gateway.GRPCRouteOf(r))
		_, problems := gateway.TranslateGRPCRoute(r, env)
		report("GRPCRoute "+r.Name, problems)
	}
	for _, r := range out.TLSRoutes {
		attach("TLSRoute", gateway.TLSRouteOf(r))
	}
}

// TestOutputAcceptedByCauseway: what every case converts is what
// Causeway's own Gateway API front-end accepts. (That the model built
// from the output equals the one built from the Ingresses is a test of its
// own, once the front-end is in the build.)
func TestOutputAcceptedByCauseway(t *testing.T) {
	gaps := map[string]bool{}
	for _, file := range cases(t) {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "testdata/"), ".yaml"), func(t *testing.T) {
			in, opts := readCase(t, file)
			out, _ := Convert(in, opts)
			checkAccepted(t, out, gaps)
		})
	}
	for _, g := range frontendGaps {
		if !gaps[g] {
			t.Errorf("the front-end no longer reports %q: take it off frontendGaps and the rules' notes", g)
		}
	}
}

// TestManyHosts: more TLS hosts than a Gateway has listeners spread over
// several Gateways, each host's routes (HTTP, redirect, passthrough) on
// the Gateway of its listener.
func TestManyHosts(t *testing.T) {
	pt := networkingv1.PathTypePrefix
	var ings []*networkingv1.Ingress
	for i := range 70 {
		host := fmt.Sprintf("h%02d.example.com", i)
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("i%02d", i), Namespace: "web"},
			Spec: networkingv1.IngressSpec{
				TLS: []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: "tls"}},
				Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
				}}}},
			},
		}
		if i == 69 {
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/ssl-passthrough": "true"}
		}
		ings = append(ings, ing)
	}
	out, r := Convert(Input{Ingresses: ings}, Options{})
	// 69 HTTPS hosts: 63 on the first, 6 on the second; the passthrough
	// host on a third, since HTTPS and TLS passthrough share no port.
	if len(out.Gateways) != 3 {
		t.Fatalf("%d Gateways, want 3", len(out.Gateways))
	}
	for _, g := range out.Gateways {
		if n := len(g.Spec.Listeners); n > maxListeners {
			t.Errorf("Gateway %s has %d listeners", g.Name, n)
		}
	}
	if len(out.HTTPRoutes) != 69*2+1 || len(out.TLSRoutes) != 1 {
		t.Fatalf("%d HTTPRoutes and %d TLSRoutes", len(out.HTTPRoutes), len(out.TLSRoutes))
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "3 Gateways") {
		t.Errorf("notes %q do not say there are 3 Gateways", r.Notes)
	}
	if got := out.TLSRoutes[0].Spec.ParentRefs[0].Name; got != "causeway-3" {
		t.Errorf("the TLSRoute's parent is %s, want causeway-3", got)
	}
	// The last hosts' routes, HTTP redirect and passthrough included, are
	// on the second Gateway.
	for _, rt := range out.HTTPRoutes {
		want := "causeway"
		switch h := rt.Spec.Hostnames[0]; {
		case h == "h69.example.com":
			want = "causeway-3"
		case h >= "h63":
			want = "causeway-2"
		}
		for _, p := range rt.Spec.ParentRefs {
			if string(p.Name) != want {
				t.Errorf("HTTPRoute %s: parentRef %s/%s, want Gateway %s", rt.Name, p.Name, *p.SectionName, want)
			}
		}
	}
	checkAccepted(t, out, map[string]bool{})
}
