package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

var testOpts = build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"},
	ConfigMap: "causeway/config", HeadersMoreAvailable: true, LuaAvailable: true, TLSPassthrough: true, StreamAvailable: true}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const prefix = "nginx.ingress.kubernetes.io/"

func mkIngress(ns, name string, age int, ann map[string]string, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), Annotations: ann,
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("causeway"), Rules: rules},
	}
}

func rule(host string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{
		HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}}}
}

func path(p, typ, svc string) networkingv1.HTTPIngressPath {
	pt := networkingv1.PathType(typ)
	return networkingv1.HTTPIngressPath{Path: p, PathType: &pt, Backend: networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}}
}

func service(ns, name string) (*corev1.Service, *discoveryv1.EndpointSlice) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080)), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	return svc, es
}

// annotationPool holds annotations that interact across Ingresses
// (server-level settings, regex mode, canaries, balancing, aliases) and a
// few that are wrong on their own.
var annotationPool = []map[string]string{
	{prefix + "ssl-passthrough": "true"},
	{prefix + "use-regex": "true"},
	{prefix + "rewrite-target": "/$1"},
	{prefix + "server-alias": "b.test"},
	{prefix + "server-alias": "www.c.test"},
	{prefix + "from-to-www-redirect": "true"},
	{prefix + "ssl-redirect": "false"},
	{prefix + "ssl-redirect": "true"},
	{prefix + "app-root": "/app"},
	{prefix + "load-balance": "ewma"},
	{prefix + "load-balance": "round_robin"},
	{prefix + "upstream-hash-by": "$request_uri"},
	{prefix + "affinity": "cookie"},
	{prefix + "canary": "true", prefix + "canary-weight": "30"},
	{prefix + "canary": "true", prefix + "canary-by-header": "X-Canary"},
	{prefix + "proxy-body-size": "not-a-size"},
	{prefix + "no-such-annotation": "1"},
	{prefix + "auth-type": "basic", prefix + "auth-secret": "htpasswd"},
	{prefix + "auth-type": "basic", prefix + "auth-secret": "missing"},
	{prefix + "custom-headers": "headers"},
	{prefix + "whitelist-source-range": "10.0.0.0/8"},
	{prefix + "default-backend": "svc-3"},
	{prefix + "custom-http-errors": "404,503"},
	{prefix + "permanent-redirect": "https://example.test/"},
	{prefix + "proxy-ssl-secret": "tls-a"},
	{},
	{},
}

// randomWorld is a snapshot of up to 14 Ingresses over few hosts, paths
// and Services, so that they collide often.
func randomWorld(rng *rand.Rand) *source.Snapshot {
	snap := &source.Snapshot{}
	namespaces := []string{"ns1", "ns2"}
	for _, ns := range namespaces {
		for i := range 4 {
			svc, es := service(ns, fmt.Sprintf("svc-%d", i))
			snap.Services = append(snap.Services, svc)
			snap.EndpointSlices = append(snap.EndpointSlices, es)
		}
		snap.Secrets = append(snap.Secrets,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "htpasswd"}, Data: map[string][]byte{"auth": []byte("u:{SHA}UWuXg/ylF+7L0dBk2i0WUxCxl1k=\n")}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls-a"}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{"tls.crt": []byte("not a cert"), "tls.key": []byte("x")}})
		snap.ConfigMaps = append(snap.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "headers"},
			Data: map[string]string{"X-A": "1"}})
	}
	config := map[string]string{"global-allowed-response-headers": "X-A"}
	if rng.IntN(2) == 0 {
		config["allow-snippet-annotations"] = "true"
	}
	snap.ConfigMaps = append(snap.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data: config})
	for _, ns := range namespaces {
		// A cache Policy, and one that is invalid, for VirtualServers'
		// routes to name.
		snap.Policies = append(snap.Policies,
			&nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache", UID: types.UID("uid-cache-" + ns)},
				Spec: nicv1.PolicySpec{Cache: &nicv1.Cache{CacheZoneName: "pages", CacheZoneSize: "1m", Time: "1m"}}},
			&nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-cache", UID: types.UID("uid-bad-cache-" + ns)},
				Spec: nicv1.PolicySpec{Cache: &nicv1.Cache{CacheZoneName: "pages", CacheZoneSize: "1m", CacheKey: "$request_body"}}})
	}
	hosts := []string{"a.test", "www.a.test", "b.test", "c.test", "www.c.test", ""}
	paths := []string{"/", "/a", "/a/b", "/(x)", "/a(/|$)(.*)"}
	pathTypes := []string{"Prefix", "Exact", "ImplementationSpecific"}
	n := 2 + rng.IntN(13)
	for i := range n {
		ns := namespaces[rng.IntN(len(namespaces))]
		ann := map[string]string{}
		for range rng.IntN(3) {
			for k, v := range annotationPool[rng.IntN(len(annotationPool))] {
				ann[k] = v
			}
		}
		var rules []networkingv1.IngressRule
		for range 1 + rng.IntN(2) {
			var ps []networkingv1.HTTPIngressPath
			for range 1 + rng.IntN(2) {
				ps = append(ps, path(paths[rng.IntN(len(paths))], pathTypes[rng.IntN(len(pathTypes))], fmt.Sprintf("svc-%d", rng.IntN(4))))
			}
			rules = append(rules, rule(hosts[rng.IntN(len(hosts))], ps...))
		}
		ing := mkIngress(ns, fmt.Sprintf("ing-%d", i), rng.IntN(5), ann, rules...)
		if rng.IntN(6) == 0 {
			ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: "svc-0", Port: networkingv1.ServiceBackendPort{Number: 80}}}
		}
		if rng.IntN(5) == 0 {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{rules[0].Host}, SecretName: "tls-a"}}
		}
		snap.Ingresses = append(snap.Ingresses, ing)
	}
	for i := range rng.IntN(4) {
		snap.VirtualServers = append(snap.VirtualServers, randomVirtualServer(rng, i, namespaces))
	}
	if rng.IntN(2) == 0 {
		// A VirtualServer that delegates, on the host most
		// VirtualServerRoutes have.
		snap.VirtualServers = append(snap.VirtualServers, &nicv1.VirtualServer{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "delegating", UID: "uid-delegating",
				CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(rng.IntN(5)) * time.Second))},
			Spec: nicv1.VirtualServerSpec{Host: "v.test", Routes: []nicv1.Route{randomDelegation(rng, "/a")}}})
	}
	for i := range rng.IntN(3) {
		// TLS passthrough TransportServers, owning their hosts against
		// Ingresses and VirtualServers.
		hosts := []string{"a.test", "b.test", "v.test", "p.test"}
		snap.TransportServers = append(snap.TransportServers, &nicv1.TransportServer{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[rng.IntN(2)], Name: fmt.Sprintf("pt-%d", i), UID: types.UID(fmt.Sprintf("uid-pt-%d", i)),
				CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(rng.IntN(5)) * time.Second))},
			Spec: nicv1.TransportServerSpec{Listener: nicv1.TransportServerListener{Name: "tls-passthrough", Protocol: "TLS_PASSTHROUGH"},
				Host:      hosts[rng.IntN(len(hosts))],
				Upstreams: []nicv1.TransportServerUpstream{{Name: "u", Service: fmt.Sprintf("svc-%d", rng.IntN(5)), Port: 443}},
				Action:    &nicv1.TransportServerAction{Pass: "u"}},
		})
	}
	for _, name := range []string{"vsr", "vsr2"}[:rng.IntN(3)] {
		snap.VirtualServerRoutes = append(snap.VirtualServerRoutes, randomVirtualServerRoute(rng, name))
	}
	return snap
}

// randomVirtualServerRoute is a VirtualServerRoute in ns1 on one of the
// world's hosts, which VirtualServers may delegate to (or not), now and
// then invalid or of another class.
func randomVirtualServerRoute(rng *rand.Rand, name string) *nicv1.VirtualServerRoute {
	pick := func(l ...string) string { return l[rng.IntN(len(l))] }
	labels := []map[string]string{nil, {"app": "a"}, {"app": "a"}, {"app": "b"}}[rng.IntN(4)]
	return &nicv1.VirtualServerRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec: nicv1.VirtualServerRouteSpec{Host: pick("a.test", "v.test", "v.test"), IngressClass: pick("", "", "", "other"),
			Upstreams: []nicv1.Upstream{{Name: "m", Service: fmt.Sprintf("svc-%d", rng.IntN(5)), Port: 80}},
			Subroutes: []nicv1.Route{{Path: pick("/a", "/a/b", "/a", "/x", "~* ^/x", "=/exact"), Action: &nicv1.Action{Pass: pick("m", "m", "m", "nope")}}}},
	}
}

// randomDelegation is a route of path delegating to a VirtualServerRoute
// by name, or to those a routeSelector selects.
func randomDelegation(rng *rand.Rand, path string) nicv1.Route {
	if rng.IntN(3) == 0 {
		return nicv1.Route{Path: path, RouteSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"a", "b"}[rng.IntN(2)]}}}
	}
	return nicv1.Route{Path: path, Route: []string{"ns1/vsr", "ns1/vsr2", "vsr"}[rng.IntN(3)]}
}

// randomVirtualServer is a VirtualServer on one of the world's hosts (or
// one no Ingress names), with several routes and now and then something
// wrong: a route passing to an undefined upstream (the VirtualServer is
// invalid), an upstream whose Service does not exist, an unsupported
// field, a TLS Secret that is no certificate or is missing, a redirect
// code the ConfigMap does not use, another class.
func randomVirtualServer(rng *rand.Rand, i int, namespaces []string) *nicv1.VirtualServer {
	hosts := []string{"a.test", "www.a.test", "b.test", "c.test", "www.c.test", "v.test"}
	pick := func(l ...string) string { return l[rng.IntN(len(l))] }
	vs := &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[rng.IntN(len(namespaces))], Name: fmt.Sprintf("vs-%d", i),
			UID: types.UID(fmt.Sprintf("uid-vs-%d", i)), CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(rng.IntN(5)) * time.Second))},
		Spec: nicv1.VirtualServerSpec{Host: hosts[rng.IntN(len(hosts))], IngressClass: pick("", "", "", "causeway", "other")},
	}
	if rng.IntN(5) == 0 {
		vs.UID = types.UID(fmt.Sprintf("uid-%s-%s", vs.Namespace, vs.Name)) // ties with an Ingress's UID order
	}
	s := &vs.Spec
	s.Upstreams = []nicv1.Upstream{{Name: "a", Service: fmt.Sprintf("svc-%d", rng.IntN(4)), Port: 80}}
	if rng.IntN(2) == 0 {
		s.Upstreams = append(s.Upstreams, nicv1.Upstream{Name: "b", Service: pick("svc-1", "svc-3", "nope"), Port: 80,
			ReadTimeout: pick("", "", "30s", "soon")})
	}
	if rng.IntN(8) == 0 {
		s.Upstreams[0].LBMethod = "least_conn"
	}
	paths := []string{"/", "/a", "/a/b", "~* ^/x", "=/exact"}
	for j, k := range rng.Perm(len(paths))[:1+rng.IntN(3)] {
		r := nicv1.Route{Path: paths[k], Action: &nicv1.Action{Pass: s.Upstreams[rng.IntN(len(s.Upstreams))].Name}}
		switch rng.IntN(18) {
		case 0:
			r.Action = &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.test/", Code: 302}}
		case 1:
			r.Action = &nicv1.Action{Return: &nicv1.ActionReturn{Code: 204}}
		case 2:
			r.Action = &nicv1.Action{Pass: "undefined"}
		case 3:
			// Splits that only answer, one with headers.
			r.Action = nil
			r.Splits = []nicv1.Split{{Weight: 50, Action: &nicv1.Action{Return: &nicv1.ActionReturn{Code: 200, Body: "x",
				Headers: []nicv1.Header{{Name: "X-B", Value: "1"}}}}},
				{Weight: 50, Action: &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.test/"}}}}
		}
		if rng.IntN(8) == 0 {
			r.Policies = []nicv1.PolicyReference{{Name: pick("cache", "cache", "cache", "bad-cache")}}
		}
		if j == 0 && rng.IntN(4) == 0 {
			r = randomDelegation(rng, pick(r.Path, "/a"))
		}
		s.Routes = append(s.Routes, r)
	}
	if rng.IntN(8) == 0 {
		s.Gunzip = true
	}
	if rng.IntN(8) == 0 {
		// http-snippets reach every host: fine, refused, or refused and
		// closing the VirtualServer's own routes.
		s.HTTPSnippets = pick("add_header X-Http 1;", "add_header X-Http 1;", "map $a $b { default 1; }", "deny all;")
	}
	if rng.IntN(3) == 0 {
		s.TLS = &nicv1.TLS{Secret: pick("", "tls-a", "no-such-tls")}
		if rng.IntN(2) == 0 {
			s.TLS.Redirect = &nicv1.TLSRedirect{Enable: true, Code: ptr.To(pick2(rng, 301, 308))}
		}
	}
	return vs
}

func pick2(rng *rand.Rand, a, b int) int {
	if rng.IntN(2) == 0 {
		return a
	}
	return b
}

func problemStrings(ps []model.Problem, ns, name string) []string {
	return problemsOfKind(ps, "Ingress", ns, name)
}

func problemsOfKind(ps []model.Problem, kind, ns, name string) []string {
	var out []string
	for _, p := range ps {
		if p.Object.Kind == kind && p.Object.Namespace == ns && p.Object.Name == name {
			out = append(out, p.Reason+": "+p.Message)
		}
	}
	slices.Sort(out)
	return out
}

// TestReviewIsTheFullBuild is the webhook's specification: for every
// Ingress of a random world, a review in the context of the world answers
// exactly the Problems a full Build reports for that Ingress.
func TestReviewIsTheFullBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	worlds, checked, withProblems := 400, 0, 0
	vsChecked, vsWithProblems, vsForeign, vsCollisions := 0, 0, 0, 0
	vsrChecked, vsrWithProblems, ptChecked, ptCollisions := 0, 0, 0, 0
	for w := range worlds {
		snap := randomWorld(rng)
		_, all := build.Build(snap, testOpts)
		r := NewReviewer(testOpts, nil, nil)
		r.Update(snap)
		for _, ing := range snap.Ingresses {
			want := problemStrings(all, ing.Namespace, ing.Name)
			got, ours, err := r.Review(context.Background(), ing)
			if err != nil || !ours {
				t.Fatalf("world %d %s/%s: ours %v, err %v", w, ing.Namespace, ing.Name, ours, err)
			}
			checked++
			if len(want) > 0 {
				withProblems++
			}
			if g := problemStrings(got, ing.Namespace, ing.Name); !slices.Equal(g, want) {
				t.Errorf("world %d, %s/%s:\n review %q\n build  %q", w, ing.Namespace, ing.Name, g, want)
			}
		}
		for _, vs := range snap.VirtualServers {
			want := problemsOfKind(all, "VirtualServer", vs.Namespace, vs.Name)
			got, ours, err := r.ReviewVirtualServer(context.Background(), vs)
			if err != nil {
				t.Fatalf("world %d VirtualServer %s/%s: %v", w, vs.Namespace, vs.Name, err)
			}
			if !ours {
				vsForeign++
				if vs.Spec.IngressClass == "" || vs.Spec.IngressClass == "causeway" || len(want) > 0 {
					t.Errorf("world %d VirtualServer %s/%s of class %q: not ours, build says %q", w, vs.Namespace, vs.Name, vs.Spec.IngressClass, want)
				}
				continue
			}
			vsChecked++
			if len(want) > 0 {
				vsWithProblems++
			}
			if slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(p, model.ReasonCollision+":") }) {
				vsCollisions++
			}
			if g := problemsOfKind(got, "VirtualServer", vs.Namespace, vs.Name); !slices.Equal(g, want) {
				t.Errorf("world %d, VirtualServer %s/%s:\n review %q\n build  %q", w, vs.Namespace, vs.Name, g, want)
			}
		}
		for _, ts := range snap.TransportServers {
			want := problemsOfKind(all, "TransportServer", ts.Namespace, ts.Name)
			got, ours, err := r.ReviewTransportServer(context.Background(), ts)
			if err != nil || !ours {
				t.Fatalf("world %d TransportServer %s/%s: ours %v err %v", w, ts.Namespace, ts.Name, ours, err)
			}
			ptChecked++
			if slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(p, model.ReasonCollision+":") }) {
				ptCollisions++
			}
			if g := problemsOfKind(got, "TransportServer", ts.Namespace, ts.Name); !slices.Equal(g, want) {
				t.Errorf("world %d, TransportServer %s/%s:\n review %q\n build  %q", w, ts.Namespace, ts.Name, g, want)
			}
		}
		for _, vsr := range snap.VirtualServerRoutes {
			want := problemsOfKind(all, "VirtualServerRoute", vsr.Namespace, vsr.Name)
			got, ours, err := r.ReviewVirtualServerRoute(context.Background(), vsr)
			if err != nil || ours != (vsr.Spec.IngressClass == "") {
				t.Fatalf("world %d VirtualServerRoute %s: ours %v err %v", w, vsr.Name, ours, err)
			}
			if !ours {
				continue
			}
			vsrChecked++
			if len(want) > 0 {
				vsrWithProblems++
			}
			if g := problemsOfKind(got, "VirtualServerRoute", vsr.Namespace, vsr.Name); !slices.Equal(g, want) {
				t.Errorf("world %d, VirtualServerRoute %s:\n review %q\n build  %q", w, vsr.Name, g, want)
			}
		}
	}
	if ptChecked < worlds/4 || ptCollisions == 0 || ptCollisions == ptChecked {
		t.Errorf("%d of %d passthrough TransportServers collided: the random world is too tame or too broken", ptCollisions, ptChecked)
	}
	if vsrChecked < worlds/4 || vsrWithProblems == 0 || vsrWithProblems == vsrChecked {
		t.Errorf("%d of %d VirtualServerRoutes had Problems: the random world is too tame or too broken", vsrWithProblems, vsrChecked)
	}
	// The world must be hostile enough for the equality to mean something.
	if withProblems < checked/4 {
		t.Errorf("only %d of %d Ingresses had Problems: the random world collides too little", withProblems, checked)
	}
	if vsWithProblems < vsChecked/4 || vsWithProblems > vsChecked*9/10 || vsForeign == 0 || vsCollisions < vsChecked/10 {
		t.Errorf("%d of %d VirtualServers had Problems (%d a Collision), %d of another class: the random world is too tame or too broken",
			vsWithProblems, vsChecked, vsCollisions, vsForeign)
	}
	t.Logf("%d Ingresses in %d worlds, %d with Problems; %d VirtualServers of ours, %d with Problems (%d a Collision), %d of another class; %d VirtualServerRoutes, %d with Problems; %d passthrough TransportServers, %d colliding",
		checked, worlds, withProblems, vsChecked, vsWithProblems, vsCollisions, vsForeign, vsrChecked, vsrWithProblems, ptChecked, ptCollisions)
}

func TestReviewContext(t *testing.T) {
	svc, es := service("ns1", "svc-0")
	older := mkIngress("ns1", "older", 0, nil, rule("a.test", path("/", "Prefix", "svc-0")))
	other := mkIngress("ns1", "other", 0, nil, rule("z.test", path("/", "Prefix", "svc-9")))
	foreign := mkIngress("ns1", "foreign", 0, nil, rule("a.test", path("/", "Prefix", "svc-0")))
	foreign.Spec.IngressClassName = ptr.To("other")
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{older, other, foreign},
		Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es}}
	r := NewReviewer(testOpts, nil, nil)
	if _, _, err := r.Review(context.Background(), older); err != ErrNotSynced {
		t.Fatalf("before the first snapshot: err %v, want ErrNotSynced", err)
	}
	r.Update(snap)
	for _, tc := range []struct {
		name     string
		ing      *networkingv1.Ingress
		ours     bool
		problems []string // reasons
	}{
		{"new Ingress on a free host", mkIngress("ns1", "new", 5, nil, rule("b.test", path("/", "Prefix", "svc-0"))), true, nil},
		{"new Ingress claiming a taken path", mkIngress("ns1", "new", 5, nil, rule("a.test", path("/", "Prefix", "svc-0"))), true, []string{model.ReasonCollision}},
		{"a created object without a timestamp is the newest", func() *networkingv1.Ingress {
			i := mkIngress("ns1", "new", 0, nil, rule("a.test", path("/", "Prefix", "svc-0")))
			i.CreationTimestamp, i.UID = metav1.Time{}, ""
			return i
		}(), true, []string{model.ReasonCollision}},
		{"an update of the claim's owner does not collide with itself", older, true, nil},
		{"another class is not ours", foreign, false, nil},
		{"a missing Service", mkIngress("ns1", "new", 5, nil, rule("b.test", path("/", "Prefix", "nope"))), true, []string{model.ReasonMissingService}},
		{"an unknown annotation", mkIngress("ns1", "new", 5, map[string]string{prefix + "bogus": "x"}, rule("b.test", path("/", "Prefix", "svc-0"))), true,
			[]string{model.ReasonUnknownAnnotation}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, ours, err := r.Review(context.Background(), tc.ing)
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, p := range ps {
				reasons = append(reasons, p.Reason)
			}
			if ours != tc.ours || !slices.Equal(reasons, tc.problems) {
				t.Errorf("ours %v, reasons %v (%v); want %v, %v", ours, reasons, ps, tc.ours, tc.problems)
			}
		})
	}
}

type fakeFetcher struct{ secrets []*corev1.Secret }

func (f fakeFetcher) Referenced(context.Context, *networkingv1.Ingress) ([]*corev1.ConfigMap, []*corev1.Secret, error) {
	return nil, f.secrets, nil
}

// TestReviewFetchesReferences: a Secret no stored Ingress names yet is not
// in the snapshot; the review reads it rather than call it missing.
func TestReviewFetchesReferences(t *testing.T) {
	svc, es := service("ns1", "svc-0")
	snap := &source.Snapshot{Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es}}
	ing := mkIngress("ns1", "new", 0, map[string]string{prefix + "auth-type": "basic", prefix + "auth-secret": "pw"},
		rule("a.test", path("/", "Prefix", "svc-0")))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "pw"}, Data: map[string][]byte{"auth": []byte("u:{SHA}UWuXg/ylF+7L0dBk2i0WUxCxl1k=\n")}}
	for _, tc := range []struct {
		name    string
		fetcher Fetcher
		want    int
	}{
		{"without a fetcher the Secret is missing", nil, 1},
		{"with one it is read", fakeFetcher{[]*corev1.Secret{secret}}, 0},
	} {
		r := NewReviewer(testOpts, tc.fetcher, nil)
		r.Update(snap)
		ps, _, err := r.Review(context.Background(), ing)
		if err != nil || len(ps) != tc.want {
			t.Errorf("%s: problems %v, err %v; want %d problems", tc.name, ps, err, tc.want)
		}
	}
}

func mkVirtualServer(ns, name string, age int, host string, routes ...nicv1.Route) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-vs-" + ns + "-" + name),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: nicv1.VirtualServerSpec{Host: host, Upstreams: []nicv1.Upstream{{Name: "web", Service: "svc-0", Port: 80}}, Routes: routes},
	}
}

func TestReviewVirtualServer(t *testing.T) {
	svc, es := service("ns1", "svc-0")
	pass := nicv1.Route{Path: "/", Action: &nicv1.Action{Pass: "web"}}
	ing := mkIngress("ns1", "ing", 1, nil, rule("ing.test", path("/", "Prefix", "svc-0")))
	stored := mkVirtualServer("ns1", "stored", 1, "vs.test", pass)
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing}, VirtualServers: []*nicv1.VirtualServer{stored},
		Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es}}
	r := NewReviewer(testOpts, nil, nil)
	if _, _, err := r.ReviewVirtualServer(context.Background(), stored); err != ErrNotSynced {
		t.Fatalf("before the first snapshot: err %v, want ErrNotSynced", err)
	}
	r.Update(snap)
	for _, tc := range []struct {
		name     string
		vs       *nicv1.VirtualServer
		ours     bool
		problems []string // reasons
	}{
		{"a free host", mkVirtualServer("ns1", "new", 5, "free.test", pass), true, nil},
		{"a host an Ingress serves", mkVirtualServer("ns1", "new", 5, "ing.test", pass), true, []string{model.ReasonCollision}},
		{"a host another VirtualServer owns", mkVirtualServer("ns1", "new", 5, "vs.test", pass), true, []string{model.ReasonCollision}},
		{"an update of the owner does not collide with itself", stored, true, nil},
		{"a created object without a timestamp is the newest", func() *nicv1.VirtualServer {
			v := mkVirtualServer("ns1", "new", 0, "ing.test", pass)
			v.CreationTimestamp, v.UID = metav1.Time{}, ""
			return v
		}(), true, []string{model.ReasonCollision}},
		{"a route to an undefined upstream", mkVirtualServer("ns1", "new", 5, "free.test",
			nicv1.Route{Path: "/", Action: &nicv1.Action{Pass: "nope"}}), true, []string{model.ReasonInvalid}},
		{"a missing Service", func() *nicv1.VirtualServer {
			v := mkVirtualServer("ns1", "new", 5, "free.test", pass)
			v.Spec.Upstreams[0].Service = "later"
			return v
		}(), true, []string{model.ReasonMissingService}},
		{"our class by name", func() *nicv1.VirtualServer {
			v := mkVirtualServer("ns1", "new", 5, "ing.test", pass)
			v.Spec.IngressClass = "causeway"
			return v
		}(), true, []string{model.ReasonCollision}},
		{"another class is not ours", func() *nicv1.VirtualServer {
			v := mkVirtualServer("ns1", "new", 5, "ing.test", pass)
			v.Spec.IngressClass = "nginx"
			return v
		}(), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, ours, err := r.ReviewVirtualServer(context.Background(), tc.vs)
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, p := range ps {
				reasons = append(reasons, p.Reason)
			}
			if ours != tc.ours || !slices.Equal(reasons, tc.problems) {
				t.Errorf("ours %v, reasons %v (%v); want %v, %v", ours, reasons, ps, tc.ours, tc.problems)
			}
		})
	}
}

// TestReviewVirtualServerReadsItsPoliciesAndRoutes: the Policies and
// VirtualServerRoutes a VirtualServer names (and their Secrets and
// Services) are in its review's context, so a valid one is not refused as
// naming objects that do not exist; a missing one is reported as the
// full build reports it.
func TestReviewVirtualServerReadsItsPoliciesAndRoutes(t *testing.T) {
	svc0, es0 := service("ns1", "svc-0")
	svc1, es1 := service("ns1", "svc-1")
	snap := &source.Snapshot{
		Services:       []*corev1.Service{svc0, svc1},
		EndpointSlices: []*discoveryv1.EndpointSlice{es0, es1},
		Secrets: []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "users"}, Type: "nginx.org/htpasswd",
			Data: map[string][]byte{"htpasswd": []byte("u:{SHA}UWuXg/ylF+7L0dBk2i0WUxCxl1k=\n")}}},
		Policies: []*nicv1.Policy{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "lan"}, Spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/8"}}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "auth"}, Spec: nicv1.PolicySpec{BasicAuth: &nicv1.BasicAuth{Secret: "users"}}},
		},
		VirtualServerRoutes: []*nicv1.VirtualServerRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "menu"},
			Spec: nicv1.VirtualServerRouteSpec{Host: "cafe.test", Upstreams: []nicv1.Upstream{{Name: "m", Service: "svc-1", Port: 80}},
				Subroutes: []nicv1.Route{{Path: "/menu", Action: &nicv1.Action{Pass: "m"}, Policies: []nicv1.PolicyReference{{Name: "auth"}}}}}}},
	}
	vs := &nicv1.VirtualServer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "cafe", UID: "uid-cafe"},
		Spec: nicv1.VirtualServerSpec{Host: "cafe.test", Policies: []nicv1.PolicyReference{{Name: "lan"}},
			Upstreams: []nicv1.Upstream{{Name: "a", Service: "svc-0", Port: 80}},
			Routes: []nicv1.Route{{Path: "/", Action: &nicv1.Action{Pass: "a"}}, {Path: "/menu", Route: "menu"},
				{Path: "/gone", Action: &nicv1.Action{Pass: "a"}, Policies: []nicv1.PolicyReference{{Name: "nope"}}}}}}
	full := *snap
	full.VirtualServers = []*nicv1.VirtualServer{vs}
	_, all := build.Build(&full, testOpts)
	want := []string{}
	for _, p := range all {
		want = append(want, p.Object.Kind+" "+p.Reason+": "+p.Message)
	}
	r := NewReviewer(testOpts, nil, nil)
	r.Update(snap)
	ps, ours, err := r.ReviewVirtualServer(context.Background(), vs)
	got := []string{}
	for _, p := range ps {
		got = append(got, p.Object.Kind+" "+p.Reason+": "+p.Message)
	}
	if err != nil || !ours || len(got) != 1 || !slices.Equal(got, want) || !strings.Contains(got[0], "Policy ns1/nope does not exist") {
		t.Errorf("review %q (ours %v, err %v)\nbuild  %q", got, ours, err, want)
	}
}

func TestReviewPolicyAndVirtualServerRoute(t *testing.T) {
	svc, es := service("ns1", "svc-0")
	vsr := &nicv1.VirtualServerRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "menu"},
		Spec: nicv1.VirtualServerRouteSpec{Host: "cafe.test", Upstreams: []nicv1.Upstream{{Name: "m", Service: "svc-0", Port: 80}},
			Subroutes: []nicv1.Route{{Path: "/menu", Action: &nicv1.Action{Pass: "m"}}}}}
	snap := &source.Snapshot{Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es},
		VirtualServers: []*nicv1.VirtualServer{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "cafe"},
			Spec: nicv1.VirtualServerSpec{Host: "cafe.test", Routes: []nicv1.Route{{Path: "/menu", Route: "menu"}}}}},
		VirtualServerRoutes: []*nicv1.VirtualServerRoute{vsr}}
	r := NewReviewer(testOpts, nil, nil)
	r.Update(snap)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		review func() ([]model.Problem, bool, error)
		want   string // a fragment of the one Problem, "" for none
	}{
		{"a valid VirtualServerRoute", func() ([]model.Problem, bool, error) { return r.ReviewVirtualServerRoute(ctx, vsr) }, ""},
		{"a subroute outside the prefix", func() ([]model.Problem, bool, error) {
			bad := vsr.DeepCopy()
			bad.Spec.Subroutes[0].Path = "/tea"
			return r.ReviewVirtualServerRoute(ctx, bad)
		}, "must start with"},
		{"a VirtualServerRoute no VirtualServer names", func() ([]model.Problem, bool, error) {
			other := vsr.DeepCopy()
			other.Name, other.Spec.Host = "loose", "elsewhere.test"
			return r.ReviewVirtualServerRoute(ctx, other)
		}, "VirtualServer is invalid or doesn't exist"},
		{"one the VirtualServer of its host does not name", func() ([]model.Problem, bool, error) {
			other := vsr.DeepCopy()
			other.Name = "loose"
			return r.ReviewVirtualServerRoute(ctx, other)
		}, "VirtualServer ns1/cafe ignores VirtualServerRoute"},
		{"a valid Policy", func() ([]model.Problem, bool, error) {
			return r.ReviewPolicy(ctx, &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p"},
				Spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/8"}}}})
		}, ""},
		{"an invalid Policy", func() ([]model.Problem, bool, error) {
			return r.ReviewPolicy(ctx, &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p"},
				Spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{}}})
		}, "exactly one of allow and deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, ours, err := tc.review()
			if err != nil || !ours {
				t.Fatalf("ours %v err %v", ours, err)
			}
			switch {
			case tc.want == "" && len(ps) != 0:
				t.Errorf("problems %v, want none", ps)
			case tc.want != "" && (len(ps) != 1 || !strings.Contains(ps[0].Message, tc.want)):
				t.Errorf("problems %v, want one with %q", ps, tc.want)
			}
		})
	}
}

func mkTransportServer(ns, name string, age int, listener, svc string) *nicv1.TransportServer {
	return &nicv1.TransportServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-ts-" + ns + "-" + name),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: nicv1.TransportServerSpec{
			Listener:  nicv1.TransportServerListener{Name: listener, Protocol: "TCP"},
			Upstreams: []nicv1.TransportServerUpstream{{Name: "u", Service: svc, Port: 80}},
			Action:    &nicv1.TransportServerAction{Pass: "u"},
		},
	}
}

// TestReviewTransportServerIsTheFullBuild: a TransportServer's review,
// built on its small context, reports exactly the Problems the full build
// reports for it, in worlds with a listener collision, a missing listener,
// a missing GlobalConfiguration and an invalid upstream.
func TestReviewTransportServerIsTheFullBuild(t *testing.T) {
	opts := testOpts
	opts.GlobalConfiguration = "causeway/gc"
	opts.StreamAvailable = true
	gc := &nicv1.GlobalConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "gc"},
		Spec: nicv1.GlobalConfigurationSpec{Listeners: []nicv1.Listener{
			{Name: "tcp-a", Protocol: "TCP", Port: 5000}, {Name: "tcp-b", Protocol: "TCP", Port: 5001}, {Name: "udp", Protocol: "UDP", Port: 5002}}}}
	svc, es := service("ns1", "svc-0")
	owner := mkTransportServer("ns1", "owner", 1, "tcp-a", "svc-0")
	other := mkTransportServer("ns2", "other", 2, "tcp-b", "svc-0")
	base := func() *source.Snapshot {
		return &source.Snapshot{TransportServers: []*nicv1.TransportServer{owner, other},
			GlobalConfigurations: []*nicv1.GlobalConfiguration{gc},
			Services:             []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es}}
	}
	badUpstream := mkTransportServer("ns1", "new", 5, "tcp-b", "svc-0")
	badUpstream.Spec.Action.Pass = "nope"
	wrongProto := mkTransportServer("ns1", "new", 5, "udp", "svc-0")
	foreign := mkTransportServer("ns1", "new", 5, "tcp-a", "svc-0")
	foreign.Spec.IngressClass = "nginx"
	for _, tc := range []struct {
		name  string
		world func(*source.Snapshot)
		opts  func(*build.Options)
		ts    *nicv1.TransportServer
		want  []string // reasons
		ours  bool
	}{
		{"a free listener", nil, nil, mkTransportServer("ns1", "new", 5, "tcp-c", "svc-0"), []string{model.ReasonInvalid}, true},
		{"a listener another owns", nil, nil, mkTransportServer("ns1", "new", 5, "tcp-a", "svc-0"), []string{model.ReasonCollision}, true},
		{"an update of the owner", nil, nil, owner, nil, true},
		{"the older one takes the listener", nil, nil, mkTransportServer("ns1", "new", 0, "tcp-b", "svc-0"), nil, true},
		{"a missing listener", nil, nil, mkTransportServer("ns1", "new", 5, "nope", "svc-0"), []string{model.ReasonInvalid}, true},
		{"a listener of another protocol", nil, nil, wrongProto, []string{model.ReasonInvalid}, true},
		{"an invalid upstream", nil, nil, badUpstream, []string{model.ReasonInvalid}, true},
		{"a missing Service", nil, nil, mkTransportServer("ns3", "new", 5, "tcp-c", "later"), []string{model.ReasonInvalid}, true},
		{"a missing Service on a listener of its own", func(s *source.Snapshot) { s.TransportServers = s.TransportServers[:1] }, nil,
			mkTransportServer("ns3", "new", 5, "tcp-b", "later"), []string{model.ReasonMissingService}, true},
		{"an unknown GlobalConfiguration", func(s *source.Snapshot) { s.GlobalConfigurations = nil }, nil,
			mkTransportServer("ns1", "new", 5, "tcp-b", "svc-0"), []string{model.ReasonInvalid}, true},
		{"no GlobalConfiguration configured", nil, func(o *build.Options) { o.GlobalConfiguration = "" },
			mkTransportServer("ns1", "new", 5, "tcp-b", "svc-0"), []string{model.ReasonInvalid}, true},
		{"another class is not ours", nil, nil, foreign, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			if tc.opts != nil {
				tc.opts(&o)
			}
			world := base()
			if tc.world != nil {
				tc.world(world)
			}
			r := NewReviewer(o, nil, nil)
			r.Update(world)
			got, ours, err := r.ReviewTransportServer(context.Background(), tc.ts)
			if err != nil {
				t.Fatal(err)
			}
			if ours != tc.ours {
				t.Fatalf("ours %v, want %v", ours, tc.ours)
			}
			// The full build of the world with the candidate in place.
			full := *world
			full.TransportServers = nil
			for _, ts := range world.TransportServers {
				if ts.Namespace != tc.ts.Namespace || ts.Name != tc.ts.Name {
					full.TransportServers = append(full.TransportServers, ts)
				}
			}
			full.TransportServers = append(full.TransportServers, tc.ts)
			_, all := build.Build(&full, o)
			var want []model.Problem
			if ours {
				for _, p := range all {
					if p.Object.Kind == "TransportServer" && p.Object.Namespace == tc.ts.Namespace && p.Object.Name == tc.ts.Name {
						want = append(want, p)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("review %v\nfull build %v", got, want)
			}
			var reasons []string
			for _, p := range got {
				reasons = append(reasons, p.Reason)
			}
			if !slices.Equal(reasons, tc.want) {
				t.Errorf("reasons %v (%v), want %v", reasons, got, tc.want)
			}
		})
	}
	r := NewReviewer(opts, nil, nil)
	if _, _, err := r.ReviewTransportServer(context.Background(), owner); err != ErrNotSynced {
		t.Fatalf("before the first snapshot: err %v, want ErrNotSynced", err)
	}
}

// namespaces is a Scope serving the namespaces listed.
type namespaces []string

func (n namespaces) Watches(ns string) bool { return slices.Contains(n, ns) }

// TestReviewScope: an object in a namespace the controller does not serve
// (--watch-namespace, --watch-namespace-selector) is not ours to review,
// whatever its class and however it would collide: another installation
// of the same class serves it.
func TestReviewScope(t *testing.T) {
	svc, es := service("ns1", "svc-0")
	older := mkIngress("ns1", "older", 0, nil, rule("a.test", path("/", "Prefix", "svc-0")))
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{older},
		Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{es}}
	r := NewReviewer(testOpts, nil, namespaces{"ns1"})
	r.Update(snap)
	ctx := context.Background()
	badPolicy := func(ns string) *nicv1.Policy {
		return &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{}}}
	}
	badVS := func(ns string) *nicv1.VirtualServer {
		return &nicv1.VirtualServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cafe"},
			Spec: nicv1.VirtualServerSpec{Host: "cafe.test", Routes: []nicv1.Route{{Path: "/", Action: &nicv1.Action{Pass: "nope"}}}}}
	}
	badTS := func(ns string) *nicv1.TransportServer {
		return &nicv1.TransportServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ts"},
			Spec: nicv1.TransportServerSpec{Listener: nicv1.TransportServerListener{Name: "nope", Protocol: "TCP"}}}
	}
	badVSR := func(ns string) *nicv1.VirtualServerRoute {
		return &nicv1.VirtualServerRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "menu"},
			Spec: nicv1.VirtualServerRouteSpec{Host: "loose.test", Subroutes: []nicv1.Route{{Path: "/menu", Action: &nicv1.Action{Pass: "nope"}}}}}
	}
	for _, tc := range []struct {
		kind   string
		review func(ns string) ([]model.Problem, bool, error)
	}{
		{"Ingress", func(ns string) ([]model.Problem, bool, error) {
			return r.Review(ctx, mkIngress(ns, "new", 5, nil, rule("a.test", path("/", "Prefix", "svc-0"))))
		}},
		{"VirtualServer", func(ns string) ([]model.Problem, bool, error) { return r.ReviewVirtualServer(ctx, badVS(ns)) }},
		{"TransportServer", func(ns string) ([]model.Problem, bool, error) { return r.ReviewTransportServer(ctx, badTS(ns)) }},
		{"VirtualServerRoute", func(ns string) ([]model.Problem, bool, error) { return r.ReviewVirtualServerRoute(ctx, badVSR(ns)) }},
		{"Policy", func(ns string) ([]model.Problem, bool, error) { return r.ReviewPolicy(ctx, badPolicy(ns)) }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ps, ours, err := tc.review("ns1")
			if err != nil || !ours || len(ps) == 0 {
				t.Errorf("served namespace: ours %v, problems %v, err %v; want ours with problems", ours, ps, err)
			}
			ps, ours, err = tc.review("elsewhere")
			if err != nil || ours || len(ps) > 0 {
				t.Errorf("namespace not served: ours %v, problems %v, err %v; want not ours", ours, ps, err)
			}
		})
	}
}
