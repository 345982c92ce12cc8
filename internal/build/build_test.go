package build

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/model"
	discoveryv1 "k8s.io/api/discovery/v1"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/causeway/causeway/test/spec"
)

func TestPathTable(t *testing.T) {
	for _, tc := range spec.PathTable {
		t.Run(tc.Name, func(t *testing.T) {
			snap := world(len(tc.Paths))
			var paths []networkingv1.HTTPIngressPath
			for i, p := range tc.Paths {
				paths = append(paths, path(p.Path, p.Type, svcName(i), 80))
			}
			snap.Ingresses = append(snap.Ingresses, mkIngress("default", "web", 0, rule("example.com", paths...)))
			m, problems := Build(snap, testOpts)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			got := server(m, "example.com").Match(tc.Request)
			if tc.Want < 0 {
				if got != nil {
					t.Fatalf("request %q matched %s %q, want no match", tc.Request, got.Match.Type, got.Match.Path)
				}
				return
			}
			want := "default/" + svcName(tc.Want) + "/80"
			if got == nil || got.Backend() != want {
				t.Fatalf("request %q routed to %+v, want backend %s", tc.Request, got, want)
			}
		})
	}
}

func TestHostTable(t *testing.T) {
	for _, tc := range spec.HostTable {
		t.Run(tc.Name, func(t *testing.T) {
			if got := model.HostMatches(tc.Rule, tc.Request); got != tc.Match {
				t.Fatalf("HostMatches(%q, %q) = %v, want %v", tc.Rule, tc.Request, got, tc.Match)
			}
		})
	}
}

func TestClassSelection(t *testing.T) {
	ours := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: networkingv1.IngressClassSpec{Controller: "causeway.io/ingress-controller"}}
	oursDefault := ours.DeepCopy()
	oursDefault.Annotations = map[string]string{class.DefaultAnnotation: "true"}
	theirs := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Annotations: map[string]string{class.DefaultAnnotation: "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	opts := class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"}
	withoutClass := opts
	withoutClass.WatchWithoutClass = true

	for _, tc := range []struct {
		name      string
		opts      class.Options
		classes   []*networkingv1.IngressClass
		className *string
		legacy    string
		want      bool
	}{
		{"class names our IngressClass", opts, []*networkingv1.IngressClass{ours}, ptr.To("mine"), "", true},
		{"class names another controller's IngressClass", opts, []*networkingv1.IngressClass{theirs}, ptr.To("nginx"), "", false},
		{"class names the --ingress-class flag without an object", opts, nil, ptr.To("causeway"), "", true},
		{"class names an unknown class", opts, nil, ptr.To("other"), "", false},
		{"legacy annotation names our class", opts, []*networkingv1.IngressClass{ours}, nil, "mine", true},
		{"legacy annotation names another", opts, nil, nil, "nginx", false},
		{"spec class wins over legacy annotation", opts, []*networkingv1.IngressClass{ours}, ptr.To("nginx"), "mine", false},
		{"no class and no default is not ours", opts, []*networkingv1.IngressClass{ours}, nil, "", false},
		{"no class with our default class is ours", opts, []*networkingv1.IngressClass{oursDefault}, nil, "", true},
		{"no class with another controller's default is not ours", opts, []*networkingv1.IngressClass{theirs}, nil, "", false},
		{"no class with --watch-ingress-without-class is ours", withoutClass, nil, nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ing := mkIngress("default", "x", 0)
			ing.Spec.IngressClassName = tc.className
			if tc.legacy != "" {
				ing.Annotations = map[string]string{ingress.LegacyClassAnnotation: tc.legacy}
			}
			if got := ingress.Class.IsOurs(class.NewFilter(tc.opts, tc.classes), ing); got != tc.want {
				t.Fatalf("ingress.Class.IsOurs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCollisionOldestWins(t *testing.T) {
	snap := world(2)
	young := mkIngress("default", "young", 10, rule("a.com", path("/x", "Prefix", svcName(1), 80)))
	old := mkIngress("other", "old", 5, rule("a.com", path("/x", "Prefix", svcName(0), 80)))
	snap.Services = append(snap.Services, service("other", svcName(0), 80, "http"))
	snap.Ingresses = append(snap.Ingresses, young, old)
	m, problems := Build(snap, testOpts)
	if got := server(m, "a.com").Match("/x").Backend(); got != "other/svc-a/80" {
		t.Fatalf("winner backend %q, want the older Ingress's other/svc-a/80", got)
	}
	if len(problems) != 1 || problems[0].Object.Name != "young" || problems[0].Reason != model.ReasonCollision {
		t.Fatalf("problems = %v, want one Collision on young", problems)
	}

	// Equal creation times: the greater namespace/name wins, as in
	// ingress-nginx, whatever the UIDs (random, so a tie would otherwise
	// go either way from one cluster to the next).
	young.CreationTimestamp = old.CreationTimestamp
	for _, uids := range [][2]string{{"uid-1", "uid-2"}, {"uid-2", "uid-1"}} {
		young.UID, old.UID = types.UID(uids[0]), types.UID(uids[1])
		m, _ = Build(snap, testOpts)
		if got := server(m, "a.com").Match("/x").Backend(); got != "other/svc-a/80" {
			t.Fatalf("UIDs %v: on a tie other/old must win over default/young, got %q", uids, got)
		}
	}
	// The namespace counts before the name.
	old.Namespace, old.Name = "default", "zz"
	snap.Services = append(snap.Services, service("default", svcName(0), 80, "http"))
	m, _ = Build(snap, testOpts)
	if got := server(m, "a.com").Match("/x").Backend(); got != "default/svc-a/80" {
		t.Fatalf("on a tie default/zz must win over default/young, got %q", got)
	}
}

func TestSeveralIngressesShareAHost(t *testing.T) {
	snap := world(2)
	snap.Ingresses = append(snap.Ingresses,
		mkIngress("default", "one", 0, rule("a.com", path("/one", "Prefix", svcName(0), 80))),
		mkIngress("default", "two", 1, rule("a.com", path("/two", "Exact", svcName(1), 80))))
	m, problems := Build(snap, testOpts)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	s := server(m, "a.com")
	if s.Match("/one/x").Backend() != "default/svc-a/80" || s.Match("/two").Backend() != "default/svc-b/80" {
		t.Fatalf("both Ingresses must contribute: %+v", s.Locations)
	}
	if len(s.Sources) != 2 {
		t.Fatalf("server must list both Ingresses, got %v", s.Sources)
	}
}

func TestEndpointsReadyOnly(t *testing.T) {
	s := world(0)
	s.Services = append(s.Services, service("default", "web", 80, "http"))
	s.EndpointSlices = append(s.EndpointSlices, slice("default", "web", "http", 8080,
		ep{addr: "10.0.0.1"},                                                  // nil ready means ready
		ep{addr: "10.0.0.2", ready: ptr.To(true)},                             // ready
		ep{addr: "10.0.0.3", ready: ptr.To(false)},                            // not ready
		ep{addr: "10.0.0.4", ready: ptr.To(false), terminating: ptr.To(true)}, // terminating
		ep{addr: "10.0.0.5", ready: ptr.To(true), terminating: ptr.To(true)},  // serving but terminating
		ep{addr: "not-an-ip"},
	))
	s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("", path("/", "Prefix", "web", 80))))
	m, _ := Build(s, testOpts)
	if len(m.Backends) != 1 {
		t.Fatalf("backends = %v", m.Backends)
	}
	want := []model.Endpoint{{Address: "10.0.0.1", Port: 8080}, {Address: "10.0.0.2", Port: 8080}}
	if !reflect.DeepEqual(m.Backends[0].Endpoints, want) {
		t.Fatalf("endpoints = %v, want %v", m.Backends[0].Endpoints, want)
	}
}

// An address and port that several slices list (in different zones, say,
// during a slice handover) is one endpoint, with the smallest zone, in
// whatever order the slices come.
func TestEndpointsOncePerAddressAndPort(t *testing.T) {
	zoned := func(name, zone string, addrs ...string) *discoveryv1.EndpointSlice {
		es := slice("default", "web", "http", 8080)
		es.Name = name
		for _, a := range addrs {
			es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Zone: ptr.To(zone)})
		}
		return es
	}
	a := zoned("web-a", "zone-b", "10.0.0.1", "10.0.0.2")
	b := zoned("web-b", "zone-a", "10.0.0.1", "10.0.0.3")
	want := []model.Endpoint{{Address: "10.0.0.1", Port: 8080, Zone: "zone-a"}, {Address: "10.0.0.2", Port: 8080, Zone: "zone-b"},
		{Address: "10.0.0.3", Port: 8080, Zone: "zone-a"}}
	for _, order := range [][]*discoveryv1.EndpointSlice{{a, b}, {b, a}} {
		s := world(0)
		s.Services = append(s.Services, service("default", "web", 80, "http"))
		s.EndpointSlices = order
		s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("", path("/", "Prefix", "web", 80))))
		m, _ := Build(s, testOpts)
		if got := m.Backends[0].Endpoints; !reflect.DeepEqual(got, want) {
			t.Fatalf("slices %s, %s: endpoints = %v, want %v", order[0].Name, order[1].Name, got, want)
		}
	}
}

func TestServicePortByName(t *testing.T) {
	s := world(0)
	s.Services = append(s.Services, service("default", "web", 80, "http"))
	s.EndpointSlices = append(s.EndpointSlices, slice("default", "web", "http", 9090, ep{addr: "10.0.0.9"}))
	p := networkingv1.HTTPIngressPath{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Name: "http"}}}}
	s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("", p)))
	m, problems := Build(s, testOpts)
	if len(problems) != 0 || len(m.Backends) != 1 || m.Backends[0].Key != "default/web/http" || m.Backends[0].Endpoints[0].Port != 9090 {
		t.Fatalf("backends %+v problems %v", m.Backends, problems)
	}
}

func TestMissingServiceAnswers503(t *testing.T) {
	s := world(0)
	s.Ingresses = append(s.Ingresses, mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", "gone", 80))))
	m, problems := Build(s, testOpts)
	if l := server(m, "a.com").Match("/"); l == nil || (l.Action.Return == nil || l.Action.Return.Status != 503) {
		t.Fatalf("location %+v, want status 503", l)
	}
	if len(problems) != 1 || problems[0].Reason != model.ReasonMissingService || problems[0].Rejected {
		t.Fatalf("problems = %v", problems)
	}
}

func TestDefaultBackends(t *testing.T) {
	s := world(2)
	ing := mkIngress("default", "web", 0, rule("a.com", path("/app", "Prefix", svcName(0), 80)))
	ing.Spec.DefaultBackend = svcBackend(svcName(1), 80)
	s.Ingresses = append(s.Ingresses, ing)
	m, _ := Build(s, testOpts)
	if d := server(m, "a.com").Default; d.Backend() != "default/svc-b/80" {
		t.Fatalf("host default = %+v", d)
	}
	if d := server(m, "").Default; d.Backend() != "default/svc-b/80" {
		t.Fatalf("catch-all default = %+v", d)
	}

	// Without any defaultBackend the controller answers 404 itself.
	s.Ingresses[0].Spec.DefaultBackend = nil
	m, _ = Build(s, testOpts)
	if d := server(m, "").Default; (d.Action.Return == nil || d.Action.Return.Status != 404) || d.Backend() != "" {
		t.Fatalf("own default = %+v, want 404", d)
	}
}

// TestDisableCatchAll: with --disable-catch-all an Ingress with a
// spec.defaultBackend is refused whole with a Problem, the others served.
func TestDisableCatchAll(t *testing.T) {
	s := world(2)
	catchAll := mkIngress("default", "catch-all", 0, rule("a.com", path("/app", "Prefix", svcName(0), 80)))
	catchAll.Spec.DefaultBackend = svcBackend(svcName(1), 80)
	s.Ingresses = append(s.Ingresses, catchAll, mkIngress("default", "web", 1, rule("b.com", path("/", "Prefix", svcName(0), 80))))
	opts := testOpts
	opts.DisableCatchAll = true
	m, problems := Build(s, opts)
	if len(problems) != 1 || !problems[0].Rejected || problems[0].Object.Name != "catch-all" || !strings.Contains(problems[0].Message, "--disable-catch-all") {
		t.Fatalf("problems = %v, want catch-all rejected", problems)
	}
	if server(m, "a.com") != nil {
		t.Error("a.com is served")
	}
	if d := server(m, "").Default; d.Backend() != "" {
		t.Errorf("catch-all default = %+v, want the controller's own", d)
	}
	if server(m, "b.com").Match("/").Backend() != "default/svc-a/80" {
		t.Error("b.com is not served")
	}
}

func TestHostlessRulesServeEveryHost(t *testing.T) {
	s := world(2)
	s.Ingresses = append(s.Ingresses,
		mkIngress("default", "any", 0, rule("", path("/shared", "Prefix", svcName(0), 80), path("/x", "Exact", svcName(0), 80))),
		mkIngress("default", "host", 1, rule("a.com", path("/x", "Exact", svcName(1), 80))))
	m, _ := Build(s, testOpts)
	a := server(m, "a.com")
	if a.Match("/shared/y").Backend() != "default/svc-a/80" {
		t.Fatal("a host-less rule must also serve named hosts")
	}
	if a.Match("/x").Backend() != "default/svc-b/80" {
		t.Fatal("a host's own rule must win over the same host-less path")
	}
}

func TestInvalidIngressIsRejectedOthersKept(t *testing.T) {
	for _, tc := range []struct{ name, host, path string }{
		{"quote in path", "a.com", `/a"b`},
		{"brace in path", "a.com", "/a{b"},
		{"semicolon in path", "a.com", "/a;return 200"},
		{"newline in path", "a.com", "/a\nreturn 200 x;"},
		{"dollar in path", "a.com", "/$host"},
		{"hash in path", "a.com", "/a#b"},
		{"space in path", "a.com", "/a b"},
		{"unicode in path", "a.com", "/ü"},
		{"relative path", "a.com", "a"},
		{"dot segment", "a.com", "/a/../b"},
		{"double slash", "a.com", "/a//b"},
		{"very long path", "a.com", "/" + strings.Repeat("a", 2000)},
		{"upper-case host", "A.com", "/"},
		{"host with space", "a .com", "/"},
		{"host with brace", "a{.com", "/"},
		{"host with quote", `a".com`, "/"},
		{"host that is an IP", "10.0.0.1", "/"},
		{"double wildcard", "*.*.com", "/"},
		{"unicode host", "ü.com", "/"},
		{"very long host", strings.Repeat("a", 300) + ".com", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			s.Ingresses = append(s.Ingresses,
				mkIngress("default", "bad", 0, rule(tc.host, path(tc.path, "Prefix", svcName(0), 80))),
				mkIngress("default", "good", 1, rule("good.com", path("/", "Prefix", svcName(0), 80))))
			m, problems := Build(s, testOpts)
			if len(problems) != 1 || problems[0].Object.Name != "bad" || !problems[0].Rejected {
				t.Fatalf("problems = %v, want bad rejected", problems)
			}
			if server(m, "good.com") == nil {
				t.Fatal("the valid Ingress must still be served")
			}
			for _, srv := range m.Servers {
				for _, ing := range srv.Sources {
					if ing.Name == "bad" {
						t.Fatalf("rejected Ingress contributes to %q", srv.Host)
					}
				}
			}
		})
	}
}

func TestTLS(t *testing.T) {
	crt, key := selfSigned(t, "a.com")
	good := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": crt, "tls.key": key}}
	wrongType := good.DeepCopy()
	wrongType.Name, wrongType.Type = "opaque", corev1.SecretTypeOpaque
	broken := good.DeepCopy()
	broken.Name, broken.Data["tls.key"] = "broken", []byte("junk")

	for _, tc := range []struct {
		name       string
		secret     string
		configMap  map[string]string
		wantSecret string
		wantReason string
		redirect   bool
	}{
		{"valid secret serves its certificate and redirects", "a-tls", nil, "default/a-tls", "", true},
		{"redirect can be turned off", "a-tls", map[string]string{"ssl-redirect": "false"}, "default/a-tls", "", false},
		{"missing secret uses the default certificate", "gone", nil, "", model.ReasonMissingSecret, true},
		{"wrong type uses the default certificate", "opaque", nil, "", model.ReasonInvalidSecret, true},
		{"unparsable key uses the default certificate", "broken", nil, "", model.ReasonInvalidSecret, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := world(1)
			s.Secrets = append(s.Secrets, good, wrongType, broken)
			if tc.configMap != nil {
				s.ConfigMaps = append(s.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: tc.configMap})
			}
			ing := mkIngress("default", "web", 0, rule("a.com", path("/", "Prefix", svcName(0), 80)))
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"a.com"}, SecretName: tc.secret}}
			s.Ingresses = append(s.Ingresses, ing)
			m, problems := Build(s, testOpts)
			srv := server(m, "a.com")
			if srv.TLS == nil || srv.TLS.Secret != tc.wantSecret || srv.SSLRedirect != tc.redirect {
				t.Fatalf("TLS = %+v redirect %v", srv.TLS, srv.SSLRedirect)
			}
			if tc.wantReason == "" && len(problems) != 0 || tc.wantReason != "" && (len(problems) != 1 || problems[0].Reason != tc.wantReason) {
				t.Fatalf("problems = %v, want %q", problems, tc.wantReason)
			}
			if want := tc.wantSecret != ""; want != (len(m.Secrets) == 1) {
				t.Fatalf("secrets = %v", m.Secrets)
			}
		})
	}
}

func TestConfigMapProblems(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"},
		Data: map[string]string{"worker-shutdown-timeout": "30s", "proxy-body-size": "1m;evil", "no-such-key": "1"}}
	cfg, problems := configmap.Parse(cm)
	if cfg.WorkerShutdownTimeout != 30*time.Second {
		t.Fatalf("worker-shutdown-timeout = %v", cfg.WorkerShutdownTimeout)
	}
	if cfg.ProxyBodySize != 1<<20 {
		t.Fatalf("a bad value must keep the default, got %d", cfg.ProxyBodySize)
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %v, want two (unknown key, bad value)", problems)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	s := world(3)
	for i, h := range []string{"c.com", "a.com", "*.b.com"} {
		s.Ingresses = append(s.Ingresses, mkIngress("default", "i"+h[:1], i, rule(h, path("/", "Prefix", svcName(i), 80), path("/z", "Exact", svcName(0), 80))))
	}
	first, _ := Build(s, testOpts)
	for i := 0; i < 20; i++ {
		// Reverse input order: the output must not depend on it.
		for l, r := 0, len(s.Ingresses)-1; l < r; l, r = l+1, r-1 {
			s.Ingresses[l], s.Ingresses[r] = s.Ingresses[r], s.Ingresses[l]
		}
		again, _ := Build(s, testOpts)
		if !reflect.DeepEqual(first, again) {
			t.Fatal("Build output depends on input order")
		}
	}
}

func selfSigned(t *testing.T, host string) (crtPEM, keyPEM []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(k)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// TestBuildIsDeterministic: host-less paths are copied into every named
// host before any server turns to regex mode, so the Model and Problems
// never depend on map order. (They once did: a regex catch-all rewrote its
// locations in place while other hosts were copying them.)
func TestBuildIsDeterministicWithRegexCatchAll(t *testing.T) {
	snap := world(3)
	regex := mkIngress("default", "catchall", 0, rule("", path("/a/b", "ImplementationSpecific", svcName(0), 80),
		path("/", "Prefix", svcName(0), 80)))
	regex.Annotations = map[string]string{"nginx.ingress.kubernetes.io/use-regex": "true"}
	snap.Ingresses = append(snap.Ingresses, regex,
		mkIngress("default", "b", 1, rule("b.test", path("/a/b", "Exact", svcName(1), 80), path("/a", "Exact", svcName(1), 80))),
		mkIngress("default", "c", 1, rule("c.test", path("/a", "Prefix", svcName(2), 80))),
		mkIngress("default", "d", 2, rule("", path("/a/b", "Exact", svcName(2), 80), path("/a", "Exact", svcName(2), 80))))
	first, firstProblems := Build(snap, testOpts)
	for range 50 {
		m, problems := Build(snap, testOpts)
		if !reflect.DeepEqual(m, first) || !reflect.DeepEqual(problems, firstProblems) {
			t.Fatalf("two builds of one snapshot differ:\n%v\n%v", problems, firstProblems)
		}
	}
}
