package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
)

func ptrTo[T any](v T) *T { return &v }

// selfSigned returns a certificate and its key in PEM, good as a client
// certificate and as its own CA.
func selfSigned(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "backend-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// emptyCRL returns a PEM CRL, revoking nothing, signed by the
// certificate and key selfSigned returned.
func emptyCRL(t *testing.T, certPEM, keyPEM []byte) []byte {
	t.Helper()
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		t.Fatal("selfSigned returned no PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1),
		ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(time.Hour)}, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

// policyModel is baseModel with every Policy and ServerPolicy field set:
// on safe.test (Servers[1]), on the two alike hosts (Servers[2] and [3],
// which share one Policy and so one server block in the Lua data plane),
// and on an added regex server (Servers[4]).
func policyModel(t *testing.T) *model.Model {
	m := baseModel(t)
	cert, key := selfSigned(t)
	m.ProxySecrets = []*model.ProxySecret{{Namespace: "ns", Name: "backend-tls", Cert: cert, PrivateKey: key, CA: cert},
		{Namespace: "ns", Name: "client-ca", CA: cert, CRL: emptyCRL(t, cert, key)}}
	// One user, "u" with password "secret".
	m.AuthFiles = []*model.AuthFile{{Namespace: "ns", Name: "users", Data: []byte("u:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n")}}
	safe := m.Servers[1]
	safe.Policy = &model.ServerPolicy{Aliases: []string{"alias.safe.test"}, WWWRedirect: true, AppRoot: "/app", ForceSSLRedirect: true}
	safe.ClientTLS = &model.ClientTLS{Secret: "ns/client-ca", Verify: model.VerifyOptional, Depth: 2,
		ErrorPage: "https://safe.test/certificate-error", PassCertificate: true, MatchCN: "CN=client-[a-z]+", Source: safe.Sources[0]}
	safe.Locations[0].Policy = &model.Policy{
		Rewrite:          &model.Rewrite{Target: "/new"},
		XForwardedPrefix: ptrTo(model.HeaderValue("/old")),
		Protocol:         model.ProtocolHTTPS,
		UpstreamTLS: &model.UpstreamTLS{Secret: "ns/backend-tls", Verify: true, VerifyDepth: 2, Name: "svc.internal",
			ServerName: true, Protocols: []string{"TLSv1.2", "TLSv1.3"}, Ciphers: "HIGH:!aNULL"},
		UpstreamHost: ptrTo(model.HeaderValue("svc.internal")),
		Timeouts:     model.Timeouts{Connect: 2 * time.Second, Send: 500 * time.Millisecond, Read: time.Minute},
		Buffering: model.Buffering{Request: ptrTo(false), Response: ptrTo(true), BodySize: ptrTo(model.Size(8 << 20)),
			ClientBodyBuffer: ptrTo(model.Size(16 << 10)), Buffers: 8, BufferSize: ptrTo(model.Size(8 << 10)),
			BusyBuffers: ptrTo(model.Size(56 << 10)), MaxTempFile: ptrTo(model.Size(1 << 30))},
		Retry:           model.Retry{On: []string{"error", "timeout", "http_503"}, Timeout: 5 * time.Second, Tries: 2},
		HTTPVersion:     "1.1",
		CookieDomain:    &model.Replace{From: "svc.internal", To: "safe.test"},
		CookiePath:      &model.Replace{From: "/internal/", To: "/"},
		RedirectRewrite: &model.Replace{From: "https://svc.internal/", To: "/"},
		ResponseHeaders: []model.Header{{Name: "X-Frame-Options", Value: "DENY"}},
		CORS: &model.CORS{Origins: []string{"https://app.safe.test", "https://*.safe.test:8443"}, Methods: []string{"GET", "POST"},
			Headers: []string{"Content-Type"}, ExposeHeaders: []string{"X-Total"}, Credentials: true, MaxAge: time.Hour},
		AccessLog: ptrTo(false),
		Errors:    &model.ErrorPages{Codes: []int{404, 503}, Backend: "ns/svc2/80"},
		Mirrors:   []model.Mirror{{URL: "http://127.0.0.1:9/mirror", Host: "mirror.safe.test", RequestBody: true, Percent: 100}},
		Limits: &model.Limits{RPS: 5, BurstRPS: 25, RPM: 100, BurstRPM: 500, Connections: 4,
			Rate: ptrTo(model.Size(100 << 10)), RateAfter: ptrTo(model.Size(1 << 20)),
			Exempt: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}},
		Access: &model.AccessList{Deny: []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32")},
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}},
		BasicAuth: &model.BasicAuth{Realm: "Safe zone", File: m.AuthFiles[0].Key()},
		Satisfy:   model.SatisfyAny,
		ExternalAuth: &model.ExternalAuth{URL: "http://127.0.0.1:9/auth?x=1", Host: "127.0.0.1", Method: "GET",
			SigninURL: "https://login.safe.test/start?a=b", RedirectParam: "rd", ResponseHeaders: []string{"X-User", "X-Groups"},
			RequestRedirect: "https://safe.test/", AlwaysSetCookie: true,
			ProxySetHeaders: []model.Header{{Name: "X-Required-Group", Value: "admins"}},
			Cache: &model.AuthCache{Key: []model.AuthCacheKeyPart{{Var: "http_authorization"}, {Literal: "|"}, {Var: "cookie_sid"}},
				Valid: model.DefaultAuthCacheValid}},
	}
	// Peer limits (a VirtualServer upstream's max-fails, fail-timeout and
	// max-conns): server parameters in the plain data plane.
	m.Backends[0].Limits = model.PeerLimits{MaxFails: 3, FailTimeout: 90 * time.Second, MaxConns: 100}
	m.Config.BlockCIDRs = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32")}
	m.Config.BlockUserAgents, _ = model.ParseHeaderMatches(`Bad Bot/1.0 (compatible; x), ~^curl/, ~*(scanner|crawl) v\d`)
	m.Config.BlockReferers, _ = model.ParseHeaderMatches(`~*^https?://spam\.example/`)
	safe.Locations = append(safe.Locations, &model.Location{
		Match:  model.Match{Type: model.Exact, Path: "/moved"},
		Action: model.Action{Redirect: &model.Redirect{Code: 308, URL: "https://safe.test/new"}},
		Source: safe.Sources[0],
	})
	// Auth URL templates (oauth2-proxy's recipe): the loop to the
	// request's own host, and a literal host with variables through an
	// upstream with a pool.
	safe.Locations = append(safe.Locations, &model.Location{
		Match: model.Match{Type: model.Exact, Path: "/sso"}, Action: model.ProxyTo("ns/svc/80"), Source: safe.Sources[0],
		Policy: &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "${scheme}://${host}/oauth2/auth", RedirectParam: "rd",
			SigninURL: "https://${best_http_host}/oauth2/start?rd=${scheme}://${host}${request_uri}&u=${http_x_user}"}},
	}, &model.Location{
		Match: model.Match{Type: model.Exact, Path: "/tpl"}, Action: model.ProxyTo("ns/svc/80"), Source: safe.Sources[0],
		Policy: &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://127.0.0.1:9/check?u=${http_x_user}&a=${arg_a}", Host: "127.0.0.1",
			RedirectParam: "rd", Keepalive: &model.AuthKeepalive{Connections: 2, Requests: 10, Timeout: time.Second}}},
	})
	shared := &model.Policy{
		CORS:            &model.CORS{Origins: []string{"https://*.twin.test"}},
		Mirrors:         []model.Mirror{{URL: "http://127.0.0.1:9$request_uri", Percent: 100}},
		ResponseHeaders: []model.Header{{Name: "X-Twin", Value: "yes"}},
		Protocol:        model.ProtocolGRPC,
	}
	for i, s := range m.Servers[2:4] {
		s.Locations[0].Policy = shared
		s.Policy = &model.ServerPolicy{Aliases: []string{fmt.Sprintf("alias-%d.twin.test", i)}, WWWRedirect: true, ForceSSLRedirect: true}
	}
	m.Servers = append(m.Servers, &model.Server{
		Host: "regex.test", Regex: true, Sources: safe.Sources,
		Locations: []*model.Location{
			{Match: model.Match{Type: model.Regex, Path: "/api/(v[0-9]+)/(.*)$"}, Action: model.ProxyTo("ns/svc/80"), Source: safe.Sources[0],
				Policy: &model.Policy{Rewrite: &model.Rewrite{Target: "/$2"}, XForwardedPrefix: ptrTo(model.HeaderValue("/api")),
					Protocol: model.ProtocolGRPCS, UpstreamTLS: &model.UpstreamTLS{Name: "grpc.internal", ServerName: true}}},
			{Match: model.Match{Type: model.Prefix, Path: "/plain.path"}, Action: model.ProxyTo("ns/svc/80"), Source: safe.Sources[0],
				Policy: &model.Policy{CORS: &model.CORS{AllowAnyOrigin: true}}},
		},
		Default: &model.Location{Match: model.Match{Type: model.Prefix, Path: "/"}, Action: model.ProxyTo("ns/svc/80")},
	})
	return m
}

// withProxySecrets adds the files the runtime writes for proxy secrets
// and password files.
func withProxySecrets(out render.Files, m *model.Model) render.Files {
	all := render.Files{}
	maps.Copy(all, out)
	for _, s := range m.ProxySecrets {
		all[layout.ProxyCertFile(s.Namespace, s.Name)] = slices.Concat(s.Cert, s.PrivateKey)
		all[layout.ProxyCAFile(s.Namespace, s.Name)] = s.CA
		if len(s.CRL) > 0 {
			all[layout.ProxyCRLFile(s.Namespace, s.Name)] = s.CRL
		}
	}
	for _, f := range m.AuthFiles {
		all[layout.AuthFile(f.Namespace, f.Name, f.Kind())] = f.Data
	}
	return all
}

// TestPolicyRendersAndPasses: a Model with every policy field set renders
// a configuration nginx accepts, on both data planes.
func TestPolicyRendersAndPasses(t *testing.T) {
	t.Parallel()
	for _, plane := range dataPlanes {
		t.Run(plane, func(t *testing.T) {
			m := policyModel(t)
			out := mustRenderFor(t, m, plane)
			if plane == "lua" && !slices.ContainsFunc(out.Names(), func(n string) bool { return strings.HasPrefix(n, "servers/_shared-") }) {
				t.Fatalf("the alike hosts render no shared server block: %v", out.Names())
			}
			all := strings.Join(slices.Collect(maps.Values(mapStrings(out))), "\n")
			for _, want := range []string{"proxy_ssl_verify on;", "grpc_pass grpcs://", "rewrite \"(?i)^/api/(v[0-9]+)/(.*)\\\\z\" \"/$2\" break;",
				"error_page 503 = @causeway_err_0_503;", "limit_req zone=causeway_req_5r_s burst=25 nodelay;", "limit_conn_zone $causeway_limit_key", "mirror_request_body on;", "return 302 \"${scheme}://${http_host}/app\";",
				"server_name \"www.safe.test\";", "server_name \"alias-1.twin.test\";", "if ($http_origin ~* \"^https://",
				"deny 203.0.113.0/24;\n        deny 2001:db8::/32;\n        deny 10.0.0.7;\n        allow 127.0.0.0/8;\n        allow ::1;\n        deny all;",
				"\"~*(scanner|crawl) v\\\\d\" 1;", "if ($causeway_block_referer) {",
				"satisfy any;", "auth_basic \"Safe zone\";", "ssl_verify_client optional;", "ssl_verify_depth 2;", "ssl_crl ",
				"auth_request \"/_causeway_auth_0\";", "proxy_cache causeway_auth;", "proxy_cache_path "} {
				if !strings.Contains(all, want) {
					t.Errorf("no %q in the rendered files", want)
				}
			}
			if plane == "plain" && !strings.Contains(all, " max_fails=3 fail_timeout=90s max_conns=100;") {
				t.Error("no peer limits on the first backend's servers")
			}
			nginxTest(t, withProxySecrets(out, m), m)
		})
	}
}

func mapStrings(f render.Files) map[string]string {
	out := map[string]string{}
	for k, v := range f {
		out[k] = string(v)
	}
	return out
}

// policyMutations put a hostile value into every string of the policy
// model, bypassing validation.
var policyMutations = map[string]func(m *model.Model, v string){
	"rewrite target":   func(m *model.Model, v string) { safePolicy(m).Rewrite.Target = v },
	"rewrite capture":  func(m *model.Model, v string) { regexPolicy(m).Rewrite.Target = "/$1" + v },
	"forwarded prefix": func(m *model.Model, v string) { safePolicy(m).XForwardedPrefix = ptrTo(model.HeaderValue(v)) },
	"protocol":         func(m *model.Model, v string) { safePolicy(m).Protocol = model.BackendProtocol(v) },
	"proxy secret": func(m *model.Model, v string) {
		m.ProxySecrets[0].Name = v
		safePolicy(m).UpstreamTLS.Secret = "ns/" + v
	},
	"tls name":        func(m *model.Model, v string) { safePolicy(m).UpstreamTLS.Name = v },
	"tls protocol":    func(m *model.Model, v string) { safePolicy(m).UpstreamTLS.Protocols[1] = v },
	"ciphers":         func(m *model.Model, v string) { safePolicy(m).UpstreamTLS.Ciphers = v },
	"upstream host":   func(m *model.Model, v string) { safePolicy(m).UpstreamHost = ptrTo(model.HeaderValue(v)) },
	"http version":    func(m *model.Model, v string) { safePolicy(m).HTTPVersion = v },
	"next upstream":   func(m *model.Model, v string) { safePolicy(m).Retry.On[1] = v },
	"cookie domain":   func(m *model.Model, v string) { safePolicy(m).CookieDomain.From = v },
	"cookie domain 2": func(m *model.Model, v string) { safePolicy(m).CookieDomain.To = v },
	"cookie path":     func(m *model.Model, v string) { safePolicy(m).CookiePath.From = v },
	"cookie path 2":   func(m *model.Model, v string) { safePolicy(m).CookiePath.To = v },
	"proxy redirect":  func(m *model.Model, v string) { safePolicy(m).RedirectRewrite.From = v },
	"proxy redirect 2": func(m *model.Model, v string) {
		safePolicy(m).RedirectRewrite.To = v
	},
	"header name":     func(m *model.Model, v string) { safePolicy(m).ResponseHeaders[0].Name = v },
	"header value":    func(m *model.Model, v string) { safePolicy(m).ResponseHeaders[0].Value = model.HeaderValue(v) },
	"cors origin":     func(m *model.Model, v string) { safePolicy(m).CORS.Origins[1] = v },
	"cors method":     func(m *model.Model, v string) { safePolicy(m).CORS.Methods[1] = v },
	"cors header":     func(m *model.Model, v string) { safePolicy(m).CORS.Headers[0] = v },
	"cors expose":     func(m *model.Model, v string) { safePolicy(m).CORS.ExposeHeaders[0] = v },
	"error backend":   func(m *model.Model, v string) { safePolicy(m).Errors.Backend = "ns/" + v + "/80" },
	"mirror url":      func(m *model.Model, v string) { safePolicy(m).Mirrors[0].URL = "http://127.0.0.1:9/" + v },
	"mirror url host": func(m *model.Model, v string) { safePolicy(m).Mirrors[0].URL = "http://" + v + "/m" },
	"mirror host":     func(m *model.Model, v string) { safePolicy(m).Mirrors[0].Host = model.HeaderValue(v) },
	"auth url":        func(m *model.Model, v string) { safePolicy(m).ExternalAuth.URL = "http://127.0.0.1:9/" + v },
	"auth url host":   func(m *model.Model, v string) { safePolicy(m).ExternalAuth.URL = "http://" + v + "/a" },
	"auth host":       func(m *model.Model, v string) { safePolicy(m).ExternalAuth.Host = model.HeaderValue(v) },
	"auth method":     func(m *model.Model, v string) { safePolicy(m).ExternalAuth.Method = v },
	"auth signin":     func(m *model.Model, v string) { safePolicy(m).ExternalAuth.SigninURL = "https://login.safe.test/" + v },
	"auth template query": func(m *model.Model, v string) {
		templatePolicy(m, "/tpl").ExternalAuth.URL = "http://127.0.0.1:9/check?u=${http_x_user}&a=" + v
	},
	"auth template path": func(m *model.Model, v string) {
		templatePolicy(m, "/sso").ExternalAuth.URL = "${scheme}://${host}/" + v
	},
	"auth template host": func(m *model.Model, v string) {
		templatePolicy(m, "/sso").ExternalAuth.URL = "https://" + v + "/oauth2/auth"
	},
	"auth template signin": func(m *model.Model, v string) {
		templatePolicy(m, "/sso").ExternalAuth.SigninURL = "https://${best_http_host}/oauth2/start?rd=" + v
	},
	"auth redirect param": func(m *model.Model, v string) { safePolicy(m).ExternalAuth.RedirectParam = v },
	"auth request redirect": func(m *model.Model, v string) {
		safePolicy(m).ExternalAuth.RequestRedirect = model.HeaderValue(v)
	},
	"auth response header":   func(m *model.Model, v string) { safePolicy(m).ExternalAuth.ResponseHeaders[1] = v },
	"auth proxy header name": func(m *model.Model, v string) { safePolicy(m).ExternalAuth.ProxySetHeaders[0].Name = v },
	"auth proxy header value": func(m *model.Model, v string) {
		safePolicy(m).ExternalAuth.ProxySetHeaders[0].Value = model.HeaderValue(v)
	},
	"auth cache literal":  func(m *model.Model, v string) { safePolicy(m).ExternalAuth.Cache.Key[1].Literal = v },
	"auth cache variable": func(m *model.Model, v string) { safePolicy(m).ExternalAuth.Cache.Key[0].Var = v },
	"source namespace":    func(m *model.Model, v string) { m.Servers[1].Locations[0].Source.Namespace = v },
	"source name":         func(m *model.Model, v string) { m.Servers[1].Locations[0].Source.Name = v },
	"service name":        func(m *model.Model, v string) { m.Backends[0].Service = v },
	"service port":        func(m *model.Model, v string) { m.Backends[0].Port = v },
	"redirect url":        func(m *model.Model, v string) { m.Servers[1].Locations[1].Action.Redirect.URL = v },
	"regex path":          func(m *model.Model, v string) { m.Servers[4].Locations[0].Match.Path = v },
	"regex path tail":     func(m *model.Model, v string) { m.Servers[4].Locations[0].Match.Path = "/x" + v },
	"regex prefix":        func(m *model.Model, v string) { m.Servers[4].Locations[1].Match.Path = v },
	"alias":               func(m *model.Model, v string) { m.Servers[1].Policy.Aliases[0] = v },
	"app root":            func(m *model.Model, v string) { m.Servers[1].Policy.AppRoot = "/" + v },
	"app root 2":          func(m *model.Model, v string) { m.Servers[1].Policy.AppRoot = v },
	// The alike hosts share a Policy: mutating it keeps them alike.
	"shared cors origin": func(m *model.Model, v string) { m.Servers[2].Locations[0].Policy.CORS.Origins[0] = v },
	"shared mirror url":  func(m *model.Model, v string) { m.Servers[2].Locations[0].Policy.Mirrors[0].URL = v },
	"shared header": func(m *model.Model, v string) {
		m.Servers[2].Locations[0].Policy.ResponseHeaders[0].Value = model.HeaderValue(v)
	},
	"shared alias": func(m *model.Model, v string) { m.Servers[3].Policy.Aliases[0] = v },
	"auth realm":   func(m *model.Model, v string) { safePolicy(m).BasicAuth.Realm = v },
	"auth file": func(m *model.Model, v string) {
		m.AuthFiles[0].Name = v
		safePolicy(m).BasicAuth.File = m.AuthFiles[0].Key()
	},
	"client ca": func(m *model.Model, v string) { m.ProxySecrets[1].Name = v; m.Servers[1].ClientTLS.Secret = "ns/" + v },
	"client cn": func(m *model.Model, v string) { m.Servers[1].ClientTLS.MatchCN = "CN=" + v },
	"client error page": func(m *model.Model, v string) {
		m.Servers[1].ClientTLS.ErrorPage = "https://safe.test/" + v
	},
	"client verify": func(m *model.Model, v string) { m.Servers[1].ClientTLS.Verify = model.ClientVerify(v) },
}

// fileSkeleton is skeleton with the server files' directives included
// (skeleton renames a server file before reading it, so it compares none).
// A shared server's file is named after its shape, which any value
// changes, so that name is left out.
func fileSkeleton(files render.Files) string {
	var b strings.Builder
	for _, name := range files.Names() {
		if strings.HasPrefix(name, "servers/_shared-") {
			b.WriteString("== servers/_shared-*\n")
		} else {
			b.WriteString("== " + name + "\n")
		}
		for _, d := range directives(string(files[name])) {
			b.WriteString(d + "\n")
		}
	}
	return b.String()
}

func safePolicy(m *model.Model) *model.Policy { return m.Servers[1].Locations[0].Policy }

// templatePolicy is the policy of safe.test's location with path p.
func templatePolicy(m *model.Model, p string) *model.Policy {
	for _, l := range m.Servers[1].Locations {
		if l.Match.Path == p {
			return l.Policy
		}
	}
	panic("no location " + p)
}
func regexPolicy(m *model.Model) *model.Policy { return m.Servers[4].Locations[0].Policy }

// grammatical reports whether a mutated field holds a value its model
// grammar returns unchanged, whose shape may differ from the baseline's:
// an auth URL that became a URL template (such as one ending in ${host})
// goes through an upstream of its own. nginx must still accept it.
func grammatical(field string, m *model.Model) bool {
	if field != "auth url" {
		return false
	}
	u := safePolicy(m).ExternalAuth.URL
	got, _, err := model.ParseAuthURL(u)
	return err == nil && got == u && strings.Contains(u, "${")
}

// TestPolicyHostileValuesCannotInject: every hostile value in every
// policy string is either refused by Render or leaves the directive
// structure unchanged (or is grammatical) and passes nginx -t.
func TestPolicyHostileValuesCannotInject(t *testing.T) {
	t.Parallel()
	for _, plane := range dataPlanes {
		baseline := fileSkeleton(mustRenderFor(t, policyModel(t), plane))
		for field, mutate := range policyMutations {
			for i, v := range hostile {
				t.Run(fmt.Sprintf("%s/%s/%d", plane, field, i), func(t *testing.T) {
					t.Parallel() // 2,304 of them, 466 running nginx -t
					m := policyModel(t)
					mutate(m, v)
					res, err := render.Render(m, renderParamsFor(plane))
					if err != nil {
						return // refused: safe
					}
					if got := fileSkeleton(res.Files); got != baseline && !grammatical(field, m) {
						t.Fatalf("value %q in %s changed the directive structure:\n%s", v, field, diffLines(baseline, got))
					}
					nginxTest(t, withProxySecrets(res.Files, m), m)
				})
			}
		}
	}
}
