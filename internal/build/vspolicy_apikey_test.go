package build

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// buildPolicyVS builds a VirtualServer cafe.test with routes /a and /b
// whose spec.policies (or, with route, /a's policies) name the Policy
// pol of spec.
func buildPolicyVS(t *testing.T, spec nicv1.PolicySpec, secrets []*corev1.Secret, withTLS, route bool, opts Options, extra ...func(*source.Snapshot)) (*model.Model, *model.Server, []model.Problem) {
	t.Helper()
	snap := world(2)
	snap.Secrets = secrets
	snap.Policies = []*nicv1.Policy{mkPolicy("pol", spec)}
	vs := mkVirtualServer("cafe", "cafe.test", 0, pass("/a", "a"), pass("/b", "b"))
	if withTLS {
		vs.Spec.TLS = &nicv1.TLS{}
	}
	ref := []nicv1.PolicyReference{{Name: "pol"}}
	if route {
		vs.Spec.Routes[0].Policies = ref
	} else {
		vs.Spec.Policies = ref
	}
	snap.VirtualServers = []*nicv1.VirtualServer{vs}
	for _, f := range extra {
		f(snap)
	}
	m, problems := Build(snap, opts)
	return m, server(m, "cafe.test"), problems
}

// TestVirtualServerAPIKey: an apiKey Policy's Secret becomes a hashed key
// file in the model while a route uses it; a Secret that cannot be used,
// or a data plane without Lua, makes the routes answer 500.
func TestVirtualServerAPIKey(t *testing.T) {
	spec := nicv1.PolicySpec{APIKey: &nicv1.APIKey{ClientSecret: "keys", SuppliedIn: &nicv1.SuppliedIn{Header: []string{"X-API-Key"}, Query: []string{"apikey"}}}}
	keys := func(typ corev1.SecretType, data map[string][]byte) []*corev1.Secret {
		return []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "keys"}, Type: typ, Data: data}}
	}
	good := keys("nginx.org/apikey", map[string][]byte{"client-a": []byte("key-a"), "client-b": []byte("key-b")})
	noLua := testOpts
	noLua.LuaAvailable = false
	for _, tc := range []struct {
		name    string
		secrets []*corev1.Secret
		opts    Options
		ok      bool
		reasons []string
	}{
		{name: "good Secret", secrets: good, opts: testOpts, ok: true},
		{name: "missing Secret", opts: testOpts, reasons: []string{model.ReasonMissingSecret, model.ReasonMissingSecret}},
		{name: "Secret of another type", secrets: keys(corev1.SecretTypeOpaque, map[string][]byte{"a": []byte("k")}), opts: testOpts,
			reasons: []string{model.ReasonInvalidSecret, model.ReasonInvalidSecret}},
		{name: "two clients with one key", secrets: keys("nginx.org/apikey", map[string][]byte{"a": []byte("k"), "b": []byte("k")}), opts: testOpts,
			reasons: []string{model.ReasonInvalidSecret, model.ReasonInvalidSecret}},
		{name: "no Lua data plane", secrets: good, opts: noLua, reasons: []string{model.ReasonInvalid, model.ReasonInvalid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, srv, problems := buildPolicyVS(t, spec, tc.secrets, false, false, tc.opts)
			for _, path := range []string{"/a", "/b"} {
				l := srv.Match(path)
				if !tc.ok {
					if l.Action.Return == nil || l.Action.Return.Status != 500 {
						t.Errorf("%s: %+v, want 500", path, l.Action)
					}
					continue
				}
				want := &model.APIKeyAuth{Headers: []string{"X-API-Key"}, Query: []string{"apikey"}, File: "default/keys/apikey"}
				if l.Backend() == "" || l.Policy == nil || !reflect.DeepEqual(l.Policy.APIKey, want) {
					t.Errorf("%s: %+v policy %+v, want proxied with %+v", path, l.Action, l.Policy, want)
				}
			}
			var files []string
			for _, f := range m.AuthFiles {
				files = append(files, f.Key())
				if strings.Contains(string(f.Data), "key-a") || !strings.HasPrefix(string(f.Data), "client-a:") {
					t.Errorf("file %q", f.Data)
				}
			}
			if want := []string{"default/keys/apikey"}; tc.ok != slices.Equal(files, want) || !tc.ok && len(files) > 0 {
				t.Errorf("auth files %v", files)
			}
			if got := reasonsOf(problems, "VirtualServer", "cafe"); !slices.Equal(got, tc.reasons) {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}

// TestVirtualServerCORS: a cors Policy is the location's model.CORS, the
// VirtualServer's on every route unless a route has its own.
func TestVirtualServerCORS(t *testing.T) {
	spec := nicv1.PolicySpec{CORS: &nicv1.CORS{AllowOrigin: []string{"https://a.example"}, MaxAge: ptr.To(60)}}
	want := &model.CORS{Origins: []string{"https://a.example"}, MaxAge: time.Minute}
	for _, route := range []bool{false, true} {
		_, srv, problems := buildPolicyVS(t, spec, nil, false, route, testOpts)
		for _, path := range []string{"/a", "/b"} {
			l := srv.Match(path)
			var got *model.CORS
			if l.Policy != nil {
				got = l.Policy.CORS
			}
			if w := want; route && path == "/b" {
				if got != nil {
					t.Errorf("route policy: /b has CORS %+v", got)
				}
			} else if !reflect.DeepEqual(got, w) {
				t.Errorf("route %v: %s CORS %+v, want %+v", route, path, got, w)
			}
		}
		if len(problems) > 0 {
			t.Errorf("problems %v", problems)
		}
	}
}

// TestVirtualServerHSTS: an hsts Policy among the VirtualServer's own is
// its server's HSTS; it needs TLS unless behindProxy; on a route, or
// without TLS, the routes answer 500; add-headers' own
// Strict-Transport-Security keeps it out, with a Problem.
func TestVirtualServerHSTS(t *testing.T) {
	h := func(proxy bool) nicv1.PolicySpec {
		return nicv1.PolicySpec{HSTS: &nicv1.HSTS{MaxAge: ptr.To(600), IncludeSubDomains: true, BehindProxy: proxy}}
	}
	value := func(proxy bool) *model.ServerHSTS {
		return &model.ServerHSTS{HSTS: model.HSTS{Enabled: true, MaxAge: 600, IncludeSubdomains: true}, BehindProxy: proxy}
	}
	addSTS := func(s *source.Snapshot) {
		s.ConfigMaps = []*corev1.ConfigMap{configMap("causeway", "config", map[string]string{"add-headers": "causeway/add"}),
			configMap("causeway", "add", map[string]string{"Strict-Transport-Security": "max-age=1"})}
	}
	for _, tc := range []struct {
		name       string
		spec       nicv1.PolicySpec
		tls, route bool
		extra      []func(*source.Snapshot)
		want       *model.ServerHSTS
		status500  []string
		reasons    []string
	}{
		{name: "with TLS", spec: h(false), tls: true, want: value(false)},
		{name: "behind a proxy, without TLS", spec: h(true), want: value(true)},
		{name: "without TLS", spec: h(false), status500: []string{"/a", "/b"}, reasons: []string{model.ReasonInvalid}},
		{name: "on a route", spec: h(false), tls: true, route: true, status500: []string{"/a"}, reasons: []string{model.ReasonInvalid}},
		{name: "add-headers sets it", spec: h(false), tls: true, extra: []func(*source.Snapshot){addSTS}, reasons: []string{model.ReasonUnsupported}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv, problems := buildPolicyVS(t, tc.spec, nil, tc.tls, tc.route, testOpts, tc.extra...)
			var got *model.ServerHSTS
			if srv.Policy != nil {
				got = srv.Policy.HSTS
				if got != nil && srv.Policy.Source.Kind != "VirtualServer" {
					t.Errorf("server policy source %v", srv.Policy.Source)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("HSTS %+v, want %+v", got, tc.want)
			}
			for _, path := range []string{"/a", "/b"} {
				l := srv.Match(path)
				if is500 := l.Action.Return != nil && l.Action.Return.Status == 500; is500 != slices.Contains(tc.status500, path) {
					t.Errorf("%s: %+v", path, l.Action)
				}
			}
			if got := reasonsOf(problems, "VirtualServer", "cafe"); !slices.Equal(got, tc.reasons) {
				t.Errorf("problems %v, want reasons %v", problems, tc.reasons)
			}
		})
	}
}
