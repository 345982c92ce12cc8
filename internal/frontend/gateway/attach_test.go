package gateway

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// baseGateways are the conformance suite's base Gateways
// (base/manifests.yaml) and a few of its tests', checked, by
// namespace/name.
func baseGateways(t *testing.T) map[string]*Gateway {
	t.Helper()
	https := func(name, host string) gwv1.Listener {
		opts := []func(*gwv1.Listener){from("Same"), cert(infra + "/tls-validity-checks-certificate")}
		if host != "" {
			opts = append(opts, hostname(host))
		}
		return listener(name, 443, "HTTPS", opts...)
	}
	gws := []*gwv1.Gateway{
		gateway("same-namespace", listener("http", 80, "HTTP", from("Same"))),
		gateway("all-namespaces", listener("http", 80, "HTTP", from("All"))),
		gateway("backend-namespaces", listener("http", 80, "HTTP", selector(map[string]string{"gateway-conformance": "backend"}))),
		gateway("same-namespace-with-https-listener", https("https", ""), https("https-with-hostname", "second-example.org"),
			https("https-with-wildcard-hostname", "*.wildcard.org"), https("https-with-hostname-matching-wildcard", "fourth-example.wildcard.org")),
		gateway("tls-passthrough", listener("tls-passthrough", 443, "TLS", from("Same"), mode("Passthrough"))),
		gateway("tcp-mixed-protocol-gateway", listener("only-allow-http-routes", 5300, "HTTP", from("All"), kinds("HTTPRoute"))),
		gateway("l4", listener("tcp", 5300, "TCP", from("All")), listener("udp", 5300, "UDP", from("All"))),
		gateway("by-name", listener("http", 80, "HTTP", selector(map[string]string{"kubernetes.io/metadata.name": infra}))),
		gateway("by-expression", listener("http", 80, "HTTP", func(l *gwv1.Listener) {
			from(gwv1.NamespacesFromSelector)(l)
			l.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "gateway-conformance", Operator: metav1.LabelSelectorOpIn, Values: []string{"backend", "other"}}}}
		})),
		gateway("unresolved-gateway-with-one-attached-unresolved-route", listener("tls", 443, "HTTPS", from("Same"), cert("does-not-exist"))),
		gateway("two-ports", listener("http", 80, "HTTP", from("All")), listener("http-8080", 8080, "HTTP", from("All")),
			listener("conflicted-a", 8081, "HTTP", from("All")), listener("conflicted-b", 8081, "HTTP", from("All"))),
	}
	out := map[string]*Gateway{}
	for _, gw := range gws {
		g, _ := CheckGateway(gw, ourClass, addresses, testInputs())
		out[gw.Namespace+"/"+gw.Name] = g
	}
	return out
}

// ref is a parentRef "[group/kind:][namespace/]name[#section][@port]".
func ref(s string) gwv1.ParentReference {
	var r gwv1.ParentReference
	if s2, port, ok := strings.Cut(s, "@"); ok {
		var p int32
		fmt.Sscan(port, &p)
		r.Port = &p
		s = s2
	}
	if s2, sec, ok := strings.Cut(s, "#"); ok {
		sn := gwv1.SectionName(sec)
		r.SectionName = &sn
		s = s2
	}
	if gk, rest, ok := strings.Cut(s, ":"); ok {
		g, k, _ := strings.Cut(gk, "/")
		grp, kind := gwv1.Group(g), gwv1.Kind(k)
		r.Group, r.Kind = &grp, &kind
		s = rest
	}
	if ns, name, ok := strings.Cut(s, "/"); ok {
		n := gwv1.Namespace(ns)
		r.Namespace = &n
		s = name
	}
	r.Name = gwv1.ObjectName(s)
	return r
}

func meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 4}
}

func httpRouteOf(ns string, hosts []string, refs ...string) Route {
	r := &gwv1.HTTPRoute{ObjectMeta: meta(ns, "route")}
	for _, s := range refs {
		r.Spec.ParentRefs = append(r.Spec.ParentRefs, ref(s))
	}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	return HTTPRouteOf(r)
}

// describe abbreviates attachments: "0 Accepted [http:*]" per parentRef
// with a status, listeners with their effective hostnames ("*": all) and
// the isolated ones ("-h").
func describe(as []Attachment) string {
	var out []string
	for _, a := range as {
		s := fmt.Sprintf("%d %s", a.Index, a.Status.Conditions[0].Reason)
		if a.Accepted() {
			var ls []string
			for _, l := range a.Listeners {
				h := strings.Join(l.Hostnames, ",")
				if l.All {
					h = "*"
				}
				for _, i := range l.Isolated {
					h += " -" + i
				}
				ls = append(ls, string(l.Listener.Name)+":"+h)
			}
			s += " [" + strings.Join(ls, " ") + "]"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func TestAttach(t *testing.T) {
	gws := baseGateways(t)
	const backend = "gateway-conformance-web-backend"
	for _, tc := range []struct {
		name  string
		route Route
		want  string
	}{
		{"RouteNamespaces.From Same: a route of the Gateway's namespace attaches",
			httpRouteOf(infra, nil, "same-namespace"), "0 Accepted [http:*]"},
		{"RouteNamespaces.From Same: a route of another namespace is NotAllowedByListeners",
			httpRouteOf(backend, nil, infra+"/same-namespace"), "0 NotAllowedByListeners"},
		{"RouteNamespaces.From All: any namespace",
			httpRouteOf(backend, nil, infra+"/all-namespaces"), "0 Accepted [http:*]"},
		{"RouteNamespaces.Selector: a namespace with the label",
			httpRouteOf(backend, nil, infra+"/backend-namespaces"), "0 Accepted [http:*]"},
		{"RouteNamespaces.Selector: a namespace without it",
			httpRouteOf(infra, nil, "backend-namespaces"), "0 NotAllowedByListeners"},
		{"RouteNamespaces.Selector: a namespace not in the Snapshot",
			httpRouteOf("unknown", nil, infra+"/backend-namespaces"), "0 NotAllowedByListeners"},
		{"GatewayWithAttachedRoutes: selector on kubernetes.io/metadata.name, which every namespace has",
			httpRouteOf(infra, nil, "by-name"), "0 Accepted [http:*]"},
		{"RouteNamespaces.Selector: kubernetes.io/metadata.name of another namespace",
			httpRouteOf(backend, nil, infra+"/by-name"), "0 NotAllowedByListeners"},
		{"RouteNamespaces.Selector: matchExpressions",
			httpRouteOf(backend, nil, infra+"/by-expression"), "0 Accepted [http:*]"},
		{"ParentReference.Namespace: defaults to the route's (no such Gateway there: no status)",
			httpRouteOf(backend, nil, "all-namespaces"), ""},
		{"ParentReference.Group/Kind: explicit Gateway API Gateway",
			httpRouteOf(infra, nil, "gateway.networking.k8s.io/Gateway:same-namespace"), "0 Accepted [http:*]"},
		{"ParentReference.Kind: a Service parent (mesh) is not ours",
			httpRouteOf(infra, nil, "/Service:same-namespace"), ""},
		{"RouteStatus.Parents: a Gateway of another class gets no entry from us",
			httpRouteOf(infra, nil, "other-class", "same-namespace"), "1 Accepted [http:*]"},
		{"ParentReference.SectionName: the named listener",
			httpRouteOf(infra, nil, "two-ports#http-8080"), "0 Accepted [http-8080:*]"},
		{"TLSRouteInvalidNoMatchingListener: sectionName not found is NoMatchingParent",
			httpRouteOf(infra, nil, "two-ports#nonexistent-listener"), "0 NoMatchingParent"},
		{"HTTPRouteInvalidParentRefNotMatchingListenerPort: NoMatchingParent",
			httpRouteOf(infra, nil, "two-ports@81"), "0 NoMatchingParent"},
		{"HTTPRouteListenerPortMatching: port selects the listeners on it",
			httpRouteOf(infra, nil, "two-ports@8080"), "0 Accepted [http-8080:*]"},
		{"ParentReference.Port and SectionName: both must match",
			httpRouteOf(infra, nil, "two-ports#http@8080"), "0 NoMatchingParent"},
		{"ParentReference.SectionName unset: every listener that admits it (conflicted ones count too)",
			httpRouteOf(infra, nil, "two-ports"), "0 Accepted [http:* http-8080:* conflicted-a:* conflicted-b:*]"},
		{"HTTPRoute.Hostnames: intersect each listener; non-matching listeners left out",
			httpRouteOf(infra, []string{"*.wildcard.org"}, "same-namespace-with-https-listener"),
			"0 Accepted [https: -*.wildcard.org https-with-wildcard-hostname:*.wildcard.org https-with-hostname-matching-wildcard:fourth-example.wildcard.org]"},
		{"Listener isolation: second-example.org is served by the listener of that name, not the one without a hostname",
			httpRouteOf(infra, []string{"second-example.org"}, "same-namespace-with-https-listener"),
			"0 Accepted [https: -second-example.org https-with-hostname:second-example.org]"},
		{"HTTPRouteHostnameIntersection: no intersection is NoMatchingListenerHostname",
			httpRouteOf(infra, []string{"foo.example.com"}, "same-namespace-with-https-listener#https-with-wildcard-hostname"), "0 NoMatchingListenerHostname"},
		{"HTTPRoute.Hostnames: an invalid hostname is UnsupportedValue",
			httpRouteOf(infra, []string{"Foo.Example.com"}, "same-namespace"), "0 UnsupportedValue"},
		{"TLSRouteInvalidNoMatchingListener: TLSRoute to an HTTP listener is NotAllowedByListeners",
			TLSRouteOf(&gwv1.TLSRoute{ObjectMeta: meta(infra, "tls"), Spec: gwv1.TLSRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("same-namespace")}}, Hostnames: []gwv1.Hostname{"tls.example.com"}}}),
			"0 NotAllowedByListeners"},
		{"TLSRoute: to a Passthrough listener",
			TLSRouteOf(&gwv1.TLSRoute{ObjectMeta: meta(infra, "tls"), Spec: gwv1.TLSRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("tls-passthrough")}}, Hostnames: []gwv1.Hostname{"tls.example.com"}}}),
			"0 Accepted [tls-passthrough:tls.example.com]"},
		{"TCPRouteInvalidNonTCPListener: NotAllowedByListeners",
			TCPRouteOf(&gwv1.TCPRoute{ObjectMeta: meta(infra, "tcp"), Spec: gwv1.TCPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("tcp-mixed-protocol-gateway")}}}}),
			"0 NotAllowedByListeners"},
		{"UDPRouteParentRefAttachAllListeners: only the UDP listener",
			UDPRouteOf(&gwv1.UDPRoute{ObjectMeta: meta(infra, "udp"), Spec: gwv1.UDPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("l4")}}}}),
			"0 Accepted [udp:*]"},
		{"TCPRoute: only the TCP listener",
			TCPRouteOf(&gwv1.TCPRoute{ObjectMeta: meta(infra, "tcp"), Spec: gwv1.TCPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("l4")}}}}),
			"0 Accepted [tcp:*]"},
		{"GRPCRoute: on an HTTP listener",
			GRPCRouteOf(&gwv1.GRPCRoute{ObjectMeta: meta(infra, "grpc"), Spec: gwv1.GRPCRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("same-namespace")}}}}),
			"0 Accepted [http:*]"},
		{"GRPCRoute: not where allowedRoutes.kinds names HTTPRoute only",
			GRPCRouteOf(&gwv1.GRPCRoute{ObjectMeta: meta(infra, "grpc"), Spec: gwv1.GRPCRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{ref("tcp-mixed-protocol-gateway")}}}}),
			"0 NotAllowedByListeners"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as, problems := Attach(tc.route, &Resolution{Gateways: gws}, testInputs())
			if got := describe(as); got != tc.want {
				t.Errorf("attachments\n got %s\nwant %s", got, tc.want)
			}
			var rejected int
			for _, a := range as {
				c := a.Status.Conditions[0]
				if a.Status.ControllerName != ControllerName || c.Type != "Accepted" || c.ObservedGeneration != tc.route.GetGeneration() {
					t.Errorf("status entry %+v", a.Status)
				}
				if a.Status.ParentRef != tc.route.ParentRefs()[a.Index] {
					t.Errorf("the entry's parentRef is not the one written")
				}
				if c.Status == metav1.ConditionFalse {
					rejected++
				}
			}
			if len(problems) != rejected {
				t.Fatalf("%d problems for %d rejections: %v", len(problems), rejected, problems)
			}
			for _, p := range problems {
				if p.Object.Kind != tc.route.RouteKind() || p.Condition == nil || p.Condition.Parent == 0 || p.Reason != p.Condition.Reason {
					t.Errorf("problem %+v", p)
				}
			}
		})
	}
}

// TestSetAttachedRoutes: ListenerStatus.AttachedRoutes counts the routes
// Accepted on each listener, conflicted listeners included, a route once
// however many of its parentRefs reach the listener.
func TestSetAttachedRoutes(t *testing.T) {
	gws := baseGateways(t)
	var all [][]Attachment
	for _, r := range []Route{
		httpRouteOf(infra, nil, "two-ports"),
		httpRouteOf(infra, nil, "two-ports#http", "two-ports#http-8080"),
		httpRouteOf(infra, nil, "two-ports#nonexistent"),
		httpRouteOf(infra, nil, "same-namespace"),
		httpRouteOf(infra, nil, "unresolved-gateway-with-one-attached-unresolved-route#tls"),
	} {
		as, _ := Attach(r, &Resolution{Gateways: gws}, testInputs())
		all = append(all, as)
	}
	var list []*Gateway
	for _, g := range gws {
		list = append(list, g)
	}
	SetAttachedRoutes(list, all)
	got := func(gw string) string {
		var s []string
		for _, l := range gws[infra+"/"+gw].Status.Listeners {
			s = append(s, fmt.Sprintf("%s=%d", l.Name, l.AttachedRoutes))
		}
		return strings.Join(s, " ")
	}
	if g := got("two-ports"); g != "http=2 http-8080=2 conflicted-a=1 conflicted-b=1" {
		t.Errorf("two-ports: %s", g)
	}
	if g := got("same-namespace"); g != "http=1" {
		t.Errorf("same-namespace: %s", g)
	}
	if g := got("unresolved-gateway-with-one-attached-unresolved-route"); g != "tls=1" {
		t.Errorf("GatewayWithAttachedRoutes: attachedRoutes is set even when the listener has unresolved refs: %s", g)
	}
	if g := got("all-namespaces"); g != "http=0" {
		t.Errorf("all-namespaces: %s", g)
	}
}

// TestAttachManyListeners: a route attaches across 1,000 listeners with
// long hostnames in one pass.
func TestAttachManyListeners(t *testing.T) {
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + ".example.com"
	var ls []gwv1.Listener
	for i := range 1000 {
		ls = append(ls, listener(fmt.Sprintf("l%d", i), int32(1000+i), "HTTP", hostname(fmt.Sprintf("*.%s", long)), from("Same")))
	}
	g, _ := CheckGateway(gateway("big", ls...), ourClass, addresses, testInputs())
	gws := map[string]*Gateway{infra + "/big": g}
	as, problems := Attach(httpRouteOf(infra, []string{"x." + long, "*." + long, "y.example.com"}, "big"), &Resolution{Gateways: gws}, testInputs())
	if len(problems) != 0 || len(as) != 1 || len(as[0].Listeners) != 1000 {
		t.Fatalf("problems %v, %d attachments", problems, len(as))
	}
	if h := as[0].Listeners[999].Hostnames; len(h) != 2 || h[0] != "x."+long || h[1] != "*."+long {
		t.Errorf("effective hostnames %q", h)
	}
}

// TestListenerIsolation is GatewayHTTPListenerIsolation's
// with-hostname-intersection manifest: each route serves on its listener
// only the hostnames no more specific listener of the port serves.
func TestListenerIsolation(t *testing.T) {
	gw := gateway("http-listener-isolation-with-hostname-intersection",
		listener("empty-hostname", 80, "HTTP", from("All")),
		listener("wildcard-example-com", 80, "HTTP", hostname("*.example.com"), from("All")),
		listener("wildcard-foo-example-com", 80, "HTTP", hostname("*.foo.example.com"), from("All")),
		listener("abc-foo-example-com", 80, "HTTP", hostname("abc.foo.example.com"), from("All")))
	g, _ := CheckGateway(gw, ourClass, addresses, testInputs())
	gws := map[string]*Gateway{infra + "/" + gw.Name: g}
	hosts := []string{"bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"}
	for _, tc := range []struct{ section, want string }{
		{"empty-hostname", "0 Accepted [empty-hostname:bar.com -*.example.com -*.foo.example.com -abc.foo.example.com]"},
		{"wildcard-example-com", "0 Accepted [wildcard-example-com:*.example.com -*.foo.example.com -abc.foo.example.com]"},
		// "*.example.com" becomes "*.foo.example.com": no less specific
		// than the listener.
		{"wildcard-foo-example-com", "0 Accepted [wildcard-foo-example-com:*.foo.example.com -abc.foo.example.com]"},
		{"abc-foo-example-com", "0 Accepted [abc-foo-example-com:abc.foo.example.com]"},
	} {
		t.Run(tc.section, func(t *testing.T) {
			as, problems := Attach(httpRouteOf(infra, hosts, gw.Name+"#"+tc.section), &Resolution{Gateways: gws}, testInputs())
			if got := describe(as); got != tc.want || len(problems) > 0 {
				t.Errorf("got %s (%v)\nwant %s", got, problems, tc.want)
			}
		})
	}
}
