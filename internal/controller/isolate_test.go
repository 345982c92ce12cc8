package controller

import (
	"reflect"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/source"
)

func TestCulprits(t *testing.T) {
	dir := layout.Dir("/var/lib/causeway")
	old := metav1.NewTime(time.Unix(100, 0))
	young := metav1.NewTime(time.Unix(200, 0))
	youngest := metav1.NewTime(time.Unix(300, 0))
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "old", CreationTimestamp: old}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "young", CreationTimestamp: young}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "y", CreationTimestamp: old}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "z", CreationTimestamp: youngest}},
	}}
	ref := func(ns, name string) model.ObjectRef {
		return model.ObjectRef{Kind: "Ingress", Namespace: ns, Name: name}
	}
	usesProxySecret := func(ns, name string) *model.Location {
		return &model.Location{Source: ref(ns, name), Policy: &model.Policy{UpstreamTLS: &model.UpstreamTLS{Secret: "ns/backend-tls"}}}
	}
	snap.TransportServers = []*nicv1.TransportServer{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "tcp", CreationTimestamp: old}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "udp", CreationTimestamp: young}},
	}
	snap.VirtualServers = []*nicv1.VirtualServer{{ObjectMeta: metav1.ObjectMeta{Namespace: "v", Name: "cafe", CreationTimestamp: old}}}
	vsRef := model.ObjectRef{Kind: "VirtualServer", Namespace: "v", Name: "cafe"}
	snap.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "tcp-services", CreationTimestamp: old}}}
	tsRef := func(name string) model.ObjectRef {
		return model.ObjectRef{Kind: "TransportServer", Namespace: "a", Name: name}
	}
	m := &model.Model{
		Servers: []*model.Server{
			{Host: "p.test", Locations: []*model.Location{usesProxySecret("a", "old"), usesProxySecret("b", "z")}},
			{Host: "cafe.test", Sources: []model.ObjectRef{vsRef}, Listeners: &model.ServerListeners{HTTP: &model.HTTPListener{Name: "http-8083", Port: 8083}}},
		},
		Streams: []*model.StreamServer{
			{Port: 9000, Protocol: model.StreamTCP, Source: tsRef("tcp")},
			{Port: 9000, Protocol: model.StreamUDP, Source: tsRef("udp")},
			{Port: 9001, Protocol: model.StreamTCP, Source: tsRef("tcp")},
			{Port: 9100, Protocol: model.StreamTCP, Source: model.ObjectRef{Kind: "ConfigMap", Namespace: "causeway", Name: "tcp-services"}},
		},
	}
	out := &render.Output{Sources: map[string][]model.ObjectRef{
		layout.ServerFile("x.test"):         {ref("a", "old"), ref("a", "young")},
		"servers/_shared-0123456789ab.conf": {ref("b", "y"), ref("b", "z")},
		layout.ServerFile("cafe.test"):      {vsRef},
	}}
	for _, tc := range []struct {
		name             string
		output           string
		secrets, objects []string
	}{
		{"refused certificate", `nginx: [emerg] SSL_CTX_use_certificate("/var/lib/causeway/secrets/ns_weak.tls.pem") failed (SSL: error:0A00018F:SSL routines::ee key too small)`,
			[]string{"ns/weak.tls"}, nil},
		{"refused server file blames the newest Ingress", `nginx: [emerg] invalid number of arguments in "location" directive in /var/lib/causeway/` + layout.ServerFile("x.test") + `:12`,
			nil, []string{"Ingress/a/young"}},
		{"refused shared server file blames the newest Ingress of all its hosts", `nginx: [emerg] invalid number of arguments in "location" directive in /var/lib/causeway/servers/_shared-0123456789ab.conf:7`,
			nil, []string{"Ingress/b/z"}},
		{"a refused backend certificate blames the newest Ingress using it", `nginx: [emerg] cannot load certificate "/var/lib/causeway/secrets/ns_backend-tls_proxy.pem"`,
			nil, []string{"Ingress/b/z"}},
		{"a file outside the state dir blames nothing", `nginx: [emerg] unknown directive in /etc/nginx/other.conf:1`, nil, nil},
		{"an unbindable port blames the newest object listening on it", "2026/11/26 12:00:00 [emerg] 7#7: bind() to 127.0.0.1:9000 failed (98: Address already in use)\n2026/11/26 12:00:02 [emerg] 7#7: still could not bind()\n",
			nil, []string{"TransportServer/a/udp"}},
		{"each unbindable port blames its newest object, once", "bind() to 127.0.0.1:9000 failed (98: Address already in use)\nbind() to 127.0.0.1:9100 failed (98: Address already in use)\nbind() to [::1]:9001 failed (99: Cannot assign requested address)\n",
			nil, []string{"TransportServer/a/udp", "ConfigMap/causeway/tcp-services", "TransportServer/a/tcp"}},
		{"an unbindable IPv6 address", "2026/11/26 12:00:00 [emerg] 7#7: bind() to [::1]:9001 failed (99: Cannot assign requested address)\n",
			nil, []string{"TransportServer/a/tcp"}},
		{"an unbindable port of the tcp-services ConfigMap", "2026/11/26 12:00:00 [emerg] 7#7: bind() to 10.0.0.1:9100 failed (98: Address already in use)\n",
			nil, []string{"ConfigMap/causeway/tcp-services"}},
		{"an unbindable HTTP listener blames its VirtualServer", "2026/11/26 12:00:00 [emerg] 7#7: bind() to 0.0.0.0:8083 failed (98: Address already in use)\n",
			nil, []string{"VirtualServer/v/cafe"}},
		{"a refused VirtualServer's server file blames it", `nginx: [emerg] invalid number of arguments in "location" directive in /var/lib/causeway/` + layout.ServerFile("cafe.test") + `:3`,
			nil, []string{"VirtualServer/v/cafe"}},
		{"an unbindable HTTP port blames nothing", "2026/11/26 12:00:00 [emerg] 7#7: bind() to 127.0.0.1:80 failed (98: Address already in use)\n", nil, nil},
		{"an unbindable unix socket blames nothing", "2026/11/26 12:00:00 [emerg] 7#7: bind() to unix:/var/lib/causeway/run/9000 failed (98: Address already in use)\n", nil, nil},
		{"the default certificate blames nothing", `SSL_CTX_use_certificate("/var/lib/causeway/secrets/_default.pem") failed`, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, i := culprits(tc.output, dir, out, m, snap)
			if !reflect.DeepEqual(s, tc.secrets) || !reflect.DeepEqual(i, tc.objects) {
				t.Fatalf("culprits = %v %v, want %v %v", s, i, tc.secrets, tc.objects)
			}
		})
	}
}

func TestExclusionsLapseWhenTheObjectChanges(t *testing.T) {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "bad", ResourceVersion: "1"}}
	snap := &source.Snapshot{Ingresses: []*networkingv1.Ingress{ing}}
	excl := map[string]exclusion{"Ingress/a/bad": {fingerprint: objectFingerprint(snap, "Ingress/a/bad"), reason: "nginx said no"}}
	if got := current(excl, snap, objectFingerprint); got["Ingress/a/bad"] != "nginx said no" {
		t.Fatalf("unchanged object must stay excluded: %v", got)
	}
	ing.ResourceVersion = "2" // a status write: still excluded
	if got := current(excl, snap, objectFingerprint); len(got) != 1 {
		t.Fatalf("a status-only change must not lift the exclusion: %v", got)
	}
	ing.Spec.IngressClassName = ptr.To("fixed")
	if got := current(excl, snap, objectFingerprint); len(got) != 0 || len(excl) != 0 {
		t.Fatalf("a changed object must be retried: %v", got)
	}
}

// TestModSecurityMainRefused: nginx's complaint about the http level's
// ModSecurity rules names their file first, then nginx.conf's line.
func TestModSecurityMainRefused(t *testing.T) {
	dir := layout.Dir("/var/lib/causeway")
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{`nginx: [emerg] "modsecurity_rules_file" directive Rules error. File: /var/lib/causeway/modsecurity/main.conf. Line: 4. Column: 12.  in /var/lib/causeway/nginx.conf:40`, true},
		// A location's own rules: the server file is to blame.
		{`nginx: [emerg] "modsecurity_rules_file" directive Rules error. File: /var/lib/causeway/modsecurity/location-0123456789abcdef.conf. Line: 2. in /var/lib/causeway/servers/a.com-1.conf:12`, false},
		{`nginx: [emerg] unknown directive "x" in /var/lib/causeway/nginx.conf:3`, false},
	} {
		if got := modSecurityMainRefused(tc.out, dir); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.out, got, tc.want)
		}
	}
}

// TestGatewayAPIExclusionsLapse: an excluded HTTPRoute stays excluded
// while unchanged, and is retried once its spec changes or it is gone.
func TestGatewayAPIExclusionsLapse(t *testing.T) {
	rt := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "bad"}}
	snap := &source.Snapshot{HTTPRoutes: []*gwv1.HTTPRoute{rt}}
	const key = "HTTPRoute/a/bad"
	excl := map[string]exclusion{key: {fingerprint: objectFingerprint(snap, key), reason: "nginx said no"}}
	if excl[key].fingerprint == "" {
		t.Fatal("an HTTPRoute has no fingerprint: its exclusion could never lapse")
	}
	if got := current(excl, snap, objectFingerprint); got[key] != "nginx said no" {
		t.Fatalf("unchanged route must stay excluded: %v", got)
	}
	rt.Spec.Hostnames = []gwv1.Hostname{"fixed.test"}
	if got := current(excl, snap, objectFingerprint); len(got) != 0 {
		t.Fatalf("a changed route must be retried: %v", got)
	}
}
