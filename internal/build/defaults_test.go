package build

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// defaultsWorld is world(2) (svc-a and svc-b, each with a cluster IP)
// with the controller's ConfigMap holding keys, and an Ingress "web" for
// web.test / to svc-a with annotations (names after the prefix).
func defaultsWorld(keys, ann map[string]string) *source.Snapshot {
	snap := world(2)
	for i, s := range snap.Services {
		s.Spec.ClusterIP = "10.96.0." + string(rune('1'+i))
	}
	if keys != nil {
		snap.ConfigMaps = append(snap.ConfigMaps, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "config"}, Data: keys})
	}
	ing := mkIngress("default", "web", 0, rule("web.test", path("/", "Prefix", svcName(0), 80)))
	ing.Annotations = map[string]string{}
	for k, v := range ann {
		ing.Annotations["nginx.ingress.kubernetes.io/"+k] = v
	}
	snap.Ingresses = append(snap.Ingresses, ing)
	return snap
}

func onlyLocation(t *testing.T, m *model.Model, host string) *model.Location {
	t.Helper()
	srv := server(m, host)
	if srv == nil || len(srv.Locations) != 1 {
		t.Fatalf("host %s: %+v, want one location", host, srv)
	}
	return srv.Locations[0]
}

// TestConfigDefaultsPrecedence: a row per rule. The ConfigMap's key is
// the default of the annotation of the same name: the key alone applies,
// the annotation alone applies, and with both the annotation wins.
func TestConfigDefaultsPrecedence(t *testing.T) {
	buffering := func(m *model.Model) any {
		if p := onlyLocationOf(m, "web.test").Policy; p != nil && p.Buffering.Response != nil {
			return *p.Buffering.Response
		}
		return nil
	}
	force := func(m *model.Model) any {
		srv := server(m, "web.test")
		return srv.SSLRedirect && srv.Policy != nil && srv.Policy.ForceSSLRedirect
	}
	slash := func(m *model.Model) any {
		p := server(m, "web.test").Policy
		return p != nil && p.PreserveTrailingSlash
	}
	clusterIP := func(m *model.Model) any {
		return strings.HasSuffix(onlyLocationOf(m, "web.test").Backend(), clusterIPSuffix)
	}
	errs := func(m *model.Model) any {
		if p := onlyLocationOf(m, "web.test").Policy; p != nil && p.Errors != nil {
			return p.Errors.Codes
		}
		return nil
	}
	opts := testOpts
	opts.DefaultBackendService = "default/" + svcName(1)
	for _, tc := range []struct {
		key        string
		configMap  string
		annotation string
		get        func(*model.Model) any
		none       any // neither set
		fromKey    any
		fromAnn    any
	}{
		{"proxy-buffering", "on", "off", buffering, nil, true, false},
		{"force-ssl-redirect", "true", "false", force, false, true, false},
		{"preserve-trailing-slash", "true", "false", slash, false, true, false},
		{"service-upstream", "true", "false", clusterIP, false, true, false},
		{"custom-http-errors", "404,503", "500", errs, nil, []int{404, 503}, []int{500}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			for _, c := range []struct {
				name      string
				keys, ann map[string]string
				want      any
			}{
				{"neither", nil, nil, tc.none},
				{"the key only", map[string]string{tc.key: tc.configMap}, nil, tc.fromKey},
				{"the annotation only", nil, map[string]string{tc.key: tc.annotation}, tc.fromAnn},
				{"both: the annotation wins", map[string]string{tc.key: tc.configMap}, map[string]string{tc.key: tc.annotation}, tc.fromAnn},
			} {
				m, problems := Build(defaultsWorld(c.keys, c.ann), opts)
				if got := tc.get(m); !equalAny(got, c.want) {
					t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				}
				if len(problems) > 0 {
					t.Errorf("%s: problems %v", c.name, problems)
				}
			}
		})
	}
}

func onlyLocationOf(m *model.Model, host string) *model.Location {
	if srv := server(m, host); srv != nil && len(srv.Locations) == 1 {
		return srv.Locations[0]
	}
	return &model.Location{}
}

func equalAny(a, b any) bool {
	if x, ok := a.([]int); ok {
		y, ok := b.([]int)
		return ok && slices.Equal(x, y)
	}
	return a == b
}

// TestConfigDefaultsUnset: a ConfigMap that spells out what applies
// anyway sets no location's or host's policy, so the rendered
// configuration does not change.
func TestConfigDefaultsUnset(t *testing.T) {
	keys := map[string]string{
		"proxy-buffering": "off", "proxy-request-buffering": "on", "proxy-buffer-size": "4k", "proxy-buffers-number": "4",
		"client-body-buffer-size": "8k", "proxy-http-version": "1.1", "proxy-max-temp-file-size": "1024m",
		"proxy-next-upstream": "error timeout", "proxy-next-upstream-timeout": "0", "proxy-cookie-domain": "off",
		"proxy-cookie-path": "off", "proxy-redirect-from": "default", "proxy-redirect-to": "off",
		"force-ssl-redirect": "false", "preserve-trailing-slash": "false", "service-upstream": "false",
	}
	opts := testOpts
	opts.DefaultBackendService = "default/" + svcName(1)
	m, problems := Build(defaultsWorld(keys, nil), opts)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	if loc := onlyLocation(t, m, "web.test"); loc.Policy != nil {
		t.Errorf("location policy %+v, want none", *loc.Policy)
	}
	if srv := server(m, "web.test"); srv.Policy != nil || srv.SSLRedirect {
		t.Errorf("host policy %+v, redirect %v; want none", srv.Policy, srv.SSLRedirect)
	}
	if d := server(m, "").Default; d.Policy != nil {
		t.Errorf("default backend policy %+v, want none", *d.Policy)
	}
}

// TestConfigDefaultErrors: the ConfigMap's custom-http-errors, rendered
// by the Ingress's default-backend annotation's Service if it has one,
// else by --default-backend-service, which also renders its own; without
// either, the key applies to no Ingress and says so once, on the
// ConfigMap.
func TestConfigDefaultErrors(t *testing.T) {
	keys := map[string]string{"custom-http-errors": "404", "proxy-buffering": "on"}
	global := "default/" + svcName(1) + "/80"
	t.Run("the default backend renders them", func(t *testing.T) {
		opts := testOpts
		opts.DefaultBackendService = "default/" + svcName(1)
		m, problems := Build(defaultsWorld(keys, nil), opts)
		if len(problems) > 0 {
			t.Fatalf("problems %v", problems)
		}
		if e := onlyLocation(t, m, "web.test").Policy.Errors; e == nil || e.Backend != global || !slices.Equal(e.Codes, []int{404}) {
			t.Errorf("errors %+v, want 404 to %s", e, global)
		}
		// The default backend's own location: the ConfigMap's proxy
		// settings and error pages, as ingress-nginx's default server.
		d := server(m, "").Default
		if d.Backend() != global || d.Policy == nil || d.Policy.Errors == nil || d.Policy.Errors.Backend != global ||
			d.Policy.Buffering.Response == nil || !*d.Policy.Buffering.Response {
			t.Errorf("default backend location %+v", d)
		}
	})
	t.Run("a default-backend annotation renders them", func(t *testing.T) {
		m, problems := Build(defaultsWorld(keys, map[string]string{"default-backend": svcName(1)}), testOpts)
		if e := onlyLocation(t, m, "web.test").Policy.Errors; e == nil || e.Backend != global {
			t.Errorf("errors %+v, want 404 to %s", e, global)
		}
		if got := reasonsOf(problems, "ConfigMap", "config"); !slices.Equal(got, []string{model.ReasonInvalidConfig}) {
			t.Errorf("problems on the ConfigMap %v, want one saying the key needs a default backend", problems)
		}
	})
	t.Run("without a default backend", func(t *testing.T) {
		m, problems := Build(defaultsWorld(keys, nil), testOpts)
		if p := onlyLocation(t, m, "web.test").Policy; p == nil || p.Errors != nil {
			t.Errorf("policy %+v: want the proxy settings without error pages", p)
		}
		if len(problems) != 1 || problems[0].Object.Kind != "ConfigMap" || !strings.Contains(problems[0].Message, `"custom-http-errors" needs a default backend`) {
			t.Errorf("problems %v, want one on the ConfigMap", problems)
		}
	})
}

// TestConfigDefaultServiceUpstream: a Service without a cluster IP under
// the ConfigMap's service-upstream keeps its endpoints, and the Problem
// names the key.
func TestConfigDefaultServiceUpstream(t *testing.T) {
	snap := defaultsWorld(map[string]string{"service-upstream": "true"}, nil)
	snap.Services[0].Spec.ClusterIP = corev1.ClusterIPNone
	m, problems := Build(snap, testOpts)
	if b := onlyLocation(t, m, "web.test").Backend(); strings.HasSuffix(b, clusterIPSuffix) {
		t.Errorf("backend %s, want the endpoints", b)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].Message, "the ConfigMap's service-upstream: Service default/svc-a has no cluster IP") {
		t.Fatalf("problems %v", problems)
	}
}

// TestConfigDefaultsVirtualServers: a VirtualServer route starts from the
// ConfigMap's buffering and retry keys, which its upstream's own fields
// override; ingress-nginx's other per-location keys do not apply to it.
func TestConfigDefaultsVirtualServers(t *testing.T) {
	keys := map[string]string{
		"proxy-buffering": "on", "proxy-next-upstream": "error timeout http_502", "proxy-busy-buffers-size": "8k",
		"proxy-http-version": "1.0", "proxy-cookie-path": "/a/ /", "custom-http-errors": "404", "force-ssl-redirect": "true",
		"service-upstream": "true",
	}
	opts := testOpts
	opts.DefaultBackendService = "default/" + svcName(1)
	for _, tc := range []struct {
		name    string
		up      func(u *nicv1.Upstream)
		want    model.Policy
		reasons []string
	}{
		{name: "the keys the upstream has fields for", want: model.Policy{
			Buffering: model.Buffering{Response: new(true), BusyBuffers: new(model.Size(8 << 10))},
			Retry:     model.Retry{On: []string{"error", "timeout", "http_502"}}}},
		{name: "the upstream's own fields win", up: func(u *nicv1.Upstream) {
			u.Buffering = new(false)
			u.NextUpstream = "off"
		}, want: model.Policy{
			Buffering: model.Buffering{Response: new(false), BusyBuffers: new(model.Size(8 << 10))},
			Retry:     model.Retry{On: []string{"off"}}}},
		{name: "a busy size its buffers no longer fit falls back to nginx's", up: func(u *nicv1.Upstream) { u.BufferSize = "16k" }, want: model.Policy{
			Buffering: model.Buffering{Response: new(true), BufferSize: new(model.Size(16 << 10))},
			Retry:     model.Retry{On: []string{"error", "timeout", "http_502"}}},
			reasons: []string{model.ReasonUnsupported}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := defaultsWorld(keys, nil)
			snap.Ingresses = nil
			vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/", "a"))
			if tc.up != nil {
				tc.up(&vs.Spec.Upstreams[0])
			}
			snap.VirtualServers = append(snap.VirtualServers, vs)
			m, problems := Build(snap, opts)
			loc := onlyLocation(t, m, "cafe.test")
			if loc.Policy == nil || !equalPolicy(*loc.Policy, tc.want) {
				t.Errorf("policy %+v, want %+v", loc.Policy, tc.want)
			}
			if strings.HasSuffix(loc.Backend(), clusterIPSuffix) {
				t.Errorf("backend %s: service-upstream applied to a VirtualServer", loc.Backend())
			}
			if srv := server(m, "cafe.test"); srv.SSLRedirect {
				t.Error("force-ssl-redirect applied to a VirtualServer")
			}
			if got := reasonsOf(problems, "VirtualServer", "cafe"); !slices.Equal(got, tc.reasons) {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}

// equalPolicy compares the fields the ConfigMap's defaults may set.
func equalPolicy(a, b model.Policy) bool {
	ptrEq := func(x, y *model.Size) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	boolEq := func(x, y *bool) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return boolEq(a.Buffering.Response, b.Buffering.Response) && boolEq(a.Buffering.Request, b.Buffering.Request) &&
		ptrEq(a.Buffering.BufferSize, b.Buffering.BufferSize) && ptrEq(a.Buffering.BusyBuffers, b.Buffering.BusyBuffers) &&
		ptrEq(a.Buffering.MaxTempFile, b.Buffering.MaxTempFile) && a.Buffering.Buffers == b.Buffering.Buffers &&
		slices.Equal(a.Retry.On, b.Retry.On) && a.Retry.Timeout == b.Retry.Timeout && a.HTTPVersion == b.HTTPVersion &&
		a.CookiePath == nil && b.CookiePath == nil && a.Errors == nil && b.Errors == nil
}

// TestConfigDefaultsDefaultBackend: each key marked DefaultBackend, and
// no other, gives the --default-backend-service's location a policy.
func TestConfigDefaultsDefaultBackend(t *testing.T) {
	opts := testOpts
	opts.DefaultBackendService = "default/" + svcName(1)
	pair := map[string]string{"proxy-redirect-from": "proxy-redirect-to", "proxy-redirect-to": "proxy-redirect-from"}
	examples := map[string]string{}
	for _, k := range annotations.DefaultKeys() {
		examples[k.Name] = k.Example
	}
	for _, k := range annotations.DefaultKeys() {
		keys := map[string]string{k.Name: k.Example}
		if other := pair[k.Name]; other != "" {
			keys[other] = examples[other]
		}
		m, _ := Build(defaultsWorld(keys, nil), opts)
		if got := server(m, "").Default.Policy != nil; got != k.DefaultBackend {
			t.Errorf("%s %q: the default backend has a policy: %v, want %v", k.Name, k.Example, got, k.DefaultBackend)
		}
	}
}
