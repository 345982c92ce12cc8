package render

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// Policy golden cases: Models built by hand, as a front-end would fill
// them, rendered into testdata/policy-NAME (plain) and
// testdata/lua-policy-NAME (the Lua data plane).

func ptr[T any](v T) *T { return &v }

func testBackend(ns, svc, port, ip string) *model.Backend {
	return &model.Backend{
		Key: ns + "/" + svc + "/" + port, Namespace: ns, Service: svc, Port: port,
		Endpoints: []model.Endpoint{{Address: ip, Port: 8080}},
		Balance:   model.Balance{Method: model.RoundRobin},
	}
}

var ingA = model.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "a"}

// policyModel is a Model with the shop backends and servers.
func policyModel(servers ...*model.Server) *model.Model {
	for _, s := range servers {
		s.Sources = []model.ObjectRef{ingA}
	}
	return &model.Model{
		Config:  model.DefaultConfig(),
		Servers: servers,
		Backends: []*model.Backend{
			testBackend("shop", "errors", "80", "10.0.0.3"),
			testBackend("shop", "grpc", "grpc", "10.0.0.4"),
			testBackend("shop", "web", "80", "10.0.0.2"),
		},
	}
}

// loc is a location of ingA proxying to shop/web.
func loc(typ model.PathType, path string, pol *model.Policy) *model.Location {
	return &model.Location{Match: model.Match{Type: typ, Path: path}, Action: model.ProxyTo("shop/web/80"), Policy: pol, Source: ingA}
}

var policyCases = []struct {
	name   string
	planes []string
	model  func() *model.Model
}{
	{"regex-rewrite", []string{"plain", "lua"}, func() *model.Model {
		return policyModel(&model.Server{
			Host: "regex.example.com", Regex: true,
			Locations: []*model.Location{
				loc(model.Regex, "/api/v[0-9]+/(.*)$", &model.Policy{
					Rewrite: &model.Rewrite{Target: "/$1"}, XForwardedPrefix: ptr(model.HeaderValue("/api")),
				}),
				loc(model.Prefix, "/static.files", &model.Policy{Rewrite: &model.Rewrite{Target: "/assets"}}),
				loc(model.Exact, "/exact", nil),
			},
			Default: loc(model.Prefix, "/", nil),
		}, &model.Server{
			Host:      "rewrite.example.com",
			Locations: []*model.Location{loc(model.Prefix, "/old", &model.Policy{Rewrite: &model.Rewrite{Target: "/new"}})},
		})
	}},
	{"proxy-settings", []string{"plain"}, func() *model.Model {
		return policyModel(&model.Server{
			Host: "proxy.example.com",
			Locations: []*model.Location{loc(model.Prefix, "/", &model.Policy{
				UpstreamHost: ptr(model.HeaderValue("internal.example.com")),
				Timeouts:     model.Timeouts{Connect: 3 * time.Second, Send: 1500 * time.Millisecond, Read: 2 * time.Minute},
				Buffering: model.Buffering{
					Request: ptr(false), Response: ptr(true),
					BodySize: ptr(model.Size(8 << 20)), ClientBodyBuffer: ptr(model.Size(16 << 10)),
					Buffers: 8, BufferSize: ptr(model.Size(8 << 10)), BusyBuffers: ptr(model.Size(56 << 10)), MaxTempFile: ptr(model.Size(0)),
				},
				Retry:           model.Retry{On: []string{"error", "timeout", "http_502"}, Timeout: 10 * time.Second, Tries: 3},
				HTTPVersion:     "1.0",
				CookieDomain:    &model.Replace{From: "internal.example.com", To: "proxy.example.com"},
				CookiePath:      &model.Replace{Off: true},
				RedirectRewrite: &model.Replace{From: "http://internal.example.com/", To: "/"},
				ResponseHeaders: []model.Header{{Name: "X-Frame-Options", Value: "DENY"}, {Name: "X-Quoted", Value: `a "b" c`}},
				AccessLog:       ptr(false),
			})},
		}, &model.Server{
			Host: "two.example.com",
			Locations: []*model.Location{loc(model.Prefix, "/", &model.Policy{
				Buffering:       model.Buffering{Buffers: 2},
				RedirectRewrite: &model.Replace{Off: true},
				AccessLog:       ptr(true),
			})},
		}, &model.Server{
			// Busy buffers alone, against the http level's 4 4k.
			Host:      "busy.example.com",
			Locations: []*model.Location{loc(model.Prefix, "/", &model.Policy{Buffering: model.Buffering{BusyBuffers: ptr(model.Size(12 << 10))}})},
		})
	}},
	{"cors", []string{"plain", "lua"}, func() *model.Model {
		cors := func(host string) *model.Server {
			return &model.Server{Host: host, Locations: []*model.Location{
				loc(model.Prefix, "/any", &model.Policy{CORS: &model.CORS{
					Methods: []string{"GET", "POST"}, Headers: []string{"Content-Type"}, Credentials: true, MaxAge: 20 * 24 * time.Hour,
				}}),
				loc(model.Prefix, "/list", &model.Policy{
					CORS: &model.CORS{
						Origins: []string{"https://app.example.com", "https://*.example.org:8443"},
						Methods: []string{"GET", "PUT"}, Headers: []string{"*"}, ExposeHeaders: []string{"X-Total"}, MaxAge: time.Hour,
					},
					ResponseHeaders: []model.Header{{Name: "X-Frame-Options", Value: "DENY"}},
				}),
				loc(model.Prefix, "/same", &model.Policy{CORS: &model.CORS{Origins: []string{"https://app.example.com", "https://*.example.org:8443"}}}),
			}}
		}
		// Alike: the Lua data plane shares one server block between them.
		return policyModel(cors("a.example.com"), cors("b.example.com"))
	}},
	{"backend-tls", []string{"plain", "lua"}, func() *model.Model {
		m := policyModel(&model.Server{Host: "tls.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/grpc", &model.Policy{Protocol: model.ProtocolGRPC, Timeouts: model.Timeouts{Read: time.Hour}}),
			loc(model.Prefix, "/grpcs", &model.Policy{Protocol: model.ProtocolGRPCS, UpstreamHost: ptr(model.HeaderValue("grpc.internal")),
				UpstreamTLS: &model.UpstreamTLS{ServerName: true, Name: "grpc.internal"}}),
			loc(model.Prefix, "/https", &model.Policy{Protocol: model.ProtocolHTTPS, UpstreamTLS: &model.UpstreamTLS{
				Secret: "shop/backend-ca", Verify: true, VerifyDepth: 2, Name: "web.internal", ServerName: true,
				Protocols: []string{"TLSv1.2", "TLSv1.3"}, Ciphers: "HIGH:!aNULL:!MD5",
			}}),
			loc(model.Prefix, "/https-ca-only", &model.Policy{Protocol: model.ProtocolHTTPS, UpstreamTLS: &model.UpstreamTLS{Secret: "shop/ca-only", Verify: true}}),
			// egressMTLS: the client certificate and the CA in two Secrets.
			loc(model.Prefix, "/https-two-secrets", &model.Policy{Protocol: model.ProtocolHTTPS, UpstreamTLS: &model.UpstreamTLS{
				Secret: "shop/client", CASecret: "shop/ca-only", Verify: true}}),
		}})
		m.ProxySecrets = []*model.ProxySecret{
			{Namespace: "shop", Name: "backend-ca", Cert: []byte("cert"), PrivateKey: []byte("key"), CA: []byte("ca")},
			{Namespace: "shop", Name: "ca-only", CA: []byte("ca")},
			{Namespace: "shop", Name: "client", Cert: []byte("cert"), PrivateKey: []byte("key")},
		}
		return m
	}},
	{"client-tls", []string{"plain", "lua"}, func() *model.Model {
		// a. requires a certificate, with every option; b. asks for one
		// without a CA check; c. is b.'s twin without client TLS, so in
		// the Lua data plane it must not share b.'s server block.
		m := policyModel(
			&model.Server{Host: "a.example.com", TLS: &model.ServerTLS{Secret: "shop/a-tls"}, SSLRedirect: true,
				ClientTLS: &model.ClientTLS{Secret: "shop/client-ca", Verify: model.VerifyOn, Depth: 2,
					ErrorPage: "https://login.example.com/cert", PassCertificate: true, MatchCN: "CN=(client-a|client b)"},
				Locations: []*model.Location{
					loc(model.Prefix, "/", nil),
					loc(model.Prefix, "/grpc", &model.Policy{Protocol: model.ProtocolGRPC}),
					loc(model.Prefix, "/host", &model.Policy{UpstreamHost: ptr(model.HeaderValue("web.internal"))}),
				}},
			&model.Server{Host: "b.example.com", ClientTLS: &model.ClientTLS{Secret: "shop/ca-only", Verify: model.VerifyOptionalNoCA, Depth: 1},
				Locations: []*model.Location{loc(model.Prefix, "/", nil)}},
			&model.Server{Host: "c.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}},
		)
		m.Secrets = []*model.TLSSecret{{Namespace: "shop", Name: "a-tls", PEM: []byte("pem")}}
		m.ProxySecrets = []*model.ProxySecret{
			{Namespace: "shop", Name: "ca-only", CA: []byte("ca")},
			{Namespace: "shop", Name: "client-ca", CA: []byte("ca"), CRL: []byte("crl")},
		}
		return m
	}},
	{"custom-errors", []string{"plain", "lua"}, func() *model.Model {
		errs := &model.ErrorPages{Codes: []int{503, 404, 404}, Backend: "shop/errors/80"}
		other := &model.Location{Match: model.Match{Type: model.Prefix, Path: "/grpc"}, Action: model.ProxyTo("shop/grpc/grpc"),
			Policy: &model.Policy{Protocol: model.ProtocolGRPC, Errors: &model.ErrorPages{Codes: []int{500}, Backend: "shop/errors/80"}},
			Source: model.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "b"}}
		return policyModel(&model.Server{Host: "errors.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Errors: errs}),
			loc(model.Prefix, "/api", &model.Policy{Errors: errs}),
			other,
		}})
	}},
	{"mirror", []string{"plain"}, func() *model.Model {
		mirror := []model.Mirror{{URL: "http://10.0.9.9:8080/mirror", RequestBody: true, Percent: 100}}
		return policyModel(&model.Server{Host: "mirror.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Mirrors: mirror}),
			loc(model.Exact, "/_causeway_mirror_0", nil), // taken by a user: the mirror skips it
			loc(model.Prefix, "/a", &model.Policy{Mirrors: mirror}),
			loc(model.Prefix, "/b", &model.Policy{Mirrors: []model.Mirror{{URL: "https://10.0.9.9$request_uri", Host: "mirror.internal", Percent: 100}}}),
		}})
	}},
	{"server-policy", []string{"plain", "lua"}, func() *model.Model {
		m := policyModel(
			&model.Server{Host: "legacy.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)}},
			// Alike: the Lua data plane shares one server block.
			&model.Server{Host: "one.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)},
				Policy: &model.ServerPolicy{Aliases: []string{"uno.example.com", "legacy.example.com"}, WWWRedirect: true, ForceSSLRedirect: true}},
			&model.Server{Host: "shop.example.com", TLS: &model.ServerTLS{Secret: "shop/tls"}, SSLRedirect: true,
				Locations: []*model.Location{loc(model.Prefix, "/", nil)},
				Policy:    &model.ServerPolicy{AppRoot: "/app", PreserveTrailingSlash: true, WWWRedirect: true}},
			&model.Server{Host: "two.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)},
				Policy: &model.ServerPolicy{Aliases: []string{"dos.example.com"}, WWWRedirect: true, ForceSSLRedirect: true}},
			&model.Server{Host: "www.three.example.com", Locations: []*model.Location{loc(model.Prefix, "/", nil)},
				Policy: &model.ServerPolicy{WWWRedirect: true}},
		)
		m.Secrets = []*model.TLSSecret{{Namespace: "shop", Name: "tls", PEM: []byte("pem")}}
		return m
	}},
	{"limits", []string{"plain", "lua"}, func() *model.Model {
		size := model.Size(100 << 10)
		exempt := []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32"), netip.MustParsePrefix("10.0.0.0/8")}
		m := policyModel(&model.Server{Host: "limits.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Limits: &model.Limits{RPS: 2, BurstRPS: 10, Connections: 3}}),
			// The same rate: the same zone, other burst and exempt clients.
			loc(model.Prefix, "/api", &model.Policy{Limits: &model.Limits{RPS: 2, BurstRPS: 2, RPM: 30, BurstRPM: 150, Exempt: exempt}}),
			// Bandwidth only: no zone.
			loc(model.Prefix, "/download", &model.Policy{Limits: &model.Limits{Rate: &size, RateAfter: &size}}),
			// A rewrite ends the rewrite phase: the limits' sets come first.
			{Match: model.Match{Type: model.Prefix, Path: "/other"}, Action: model.ProxyTo("shop/web/80"), Source: model.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "b"},
				Policy: &model.Policy{Rewrite: &model.Rewrite{Target: "/"}, Limits: &model.Limits{RPM: 30, BurstRPM: 30}}},
		}})
		m.Config.LimitReqStatus, m.Config.LimitConnStatus = 429, 430
		m.Config.LimitRate, m.Config.LimitRateAfter = 1<<20, 512<<10
		return m
	}},
	{"nic-rate-limit", []string{"plain"}, func() *model.Model {
		size := model.Size(10 << 20)
		key := model.Template{{Variable: "http_x_api_key"}, {Literal: ":"}, {Variable: "uri"}}
		m := policyModel(&model.Server{Host: "limits.example.com", Locations: []*model.Location{
			// NIC's defaults: excess requests within the burst are spaced.
			loc(model.StringPrefix, "/", &model.Policy{Limits: &model.Limits{RPS: 10, BurstRPS: 5, Pacing: model.BurstPacing{Spaced: true}}}),
			// Its own zone, key, status, dry run and log level.
			loc(model.StringPrefix, "/api", &model.Policy{Limits: &model.Limits{RPS: 10, BurstRPS: 20, Key: key, Policy: model.ObjectRef{Kind: "Policy", Namespace: "shop", Name: "api"},
				Pacing: model.BurstPacing{Spaced: true, Delay: 8}, RejectCode: 429, DryRun: true, LogLevel: model.LogWarn, ZoneSize: &size}}),
			loc(model.StringPrefix, "/min", &model.Policy{Limits: &model.Limits{RPM: 60, ZoneSize: &size}}),
		}})
		return m
	}},
	{"access", []string{"plain", "lua"}, func() *model.Model {
		access := func(deny, allow string) *model.AccessList {
			a := &model.AccessList{}
			a.Deny, _ = model.ParseCIDRList(deny, 10)
			a.Allow, _ = model.ParseCIDRList(allow, 10)
			return a
		}
		// Two hosts alike but for their lists: they must not share a
		// server block in the Lua data plane. block-cidrs is printed at
		// the http level and repeated where a location has lists of its
		// own; /open inherits it.
		m := policyModel(&model.Server{Host: "a.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Access: access("10.0.0.7, 2001:db8::1", "10.0.0.0/8,2001:db8::/32,192.0.2.1")}),
			loc(model.Prefix, "/deny", &model.Policy{Access: access("198.51.100.0/24", "")}),
			loc(model.Prefix, "/open", nil),
		}}, &model.Server{Host: "b.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{Access: access("10.0.0.8", "10.0.0.0/8,2001:db8::/32,192.0.2.1")}),
			loc(model.Prefix, "/deny", &model.Policy{Access: access("198.51.100.0/24", "")}),
			loc(model.Prefix, "/open", nil),
		}})
		m.Config.BlockCIDRs = access("203.0.113.0/24,2001:db8:bad::/48", "").Deny
		m.Config.BlockUserAgents, _ = model.ParseHeaderMatches(`Bad Bot/1.0 (compatible; x), ~^curl/[0-9]+, ~*(scanner|crawl) v\d`)
		m.Config.BlockReferers, _ = model.ParseHeaderMatches(`~*^https?://spam\.example/`)
		return m
	}},
	{"basic-auth", []string{"plain", "lua"}, func() *model.Model {
		allow, _ := model.ParseCIDRList("10.0.0.0/8", 10)
		// One realm with characters Quote escapes, one empty; /any lets
		// listed clients in without credentials; /open has none.
		m := policyModel(&model.Server{Host: "auth.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{BasicAuth: &model.BasicAuth{Realm: "Staff only; {#1}", File: "default/users/auth"}}),
			loc(model.Prefix, "/any", &model.Policy{Access: &model.AccessList{Allow: allow}, Satisfy: model.SatisfyAny,
				BasicAuth: &model.BasicAuth{File: "default/users/authmap"}}),
			loc(model.Prefix, "/open", nil),
		}})
		m.AuthFiles = []*model.AuthFile{{Namespace: "default", Name: "users", Data: []byte("a:{SHA}x\n")},
			{Namespace: "default", Name: "users", Map: true, Data: []byte("b:{SHA}y\n")}}
		return m
	}},
	{"digest-auth", []string{"lua"}, func() *model.Model {
		// Digest on /, checked in Lua; basic on /basic, by nginx.
		m := policyModel(&model.Server{Host: "digest.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{BasicAuth: &model.BasicAuth{Realm: "Staff; {#1}", File: "default/users/htdigest", Digest: true}}),
			loc(model.Prefix, "/basic", &model.Policy{BasicAuth: &model.BasicAuth{File: "default/users/auth"}}),
		}})
		m.AuthFiles = []*model.AuthFile{{Namespace: "default", Name: "users", Digest: true, Data: []byte("a:Staff; {#1}:" + strings.Repeat("0", 32) + "\n")},
			{Namespace: "default", Name: "users", Data: []byte("a:{SHA}x\n")}}
		return m
	}},
	{"canary", []string{"plain", "lua"}, func() *model.Model {
		// /split names its split (and gets the log hook ewma needs on the
		// canary's side); /main has no canary. In plain mode both proxy
		// to the main backend.
		split := loc(model.Prefix, "/split", nil)
		rule := model.CanaryRule{Header: "X-Canary", Weight: 10, WeightTotal: 100}
		split.Action.Proxy.Split = rule.Split(ingA, split.Action.Proxy.Backend, "shop/grpc/grpc")
		m := policyModel(&model.Server{Host: "canary.example.com", Locations: []*model.Location{split, loc(model.Prefix, "/main", nil)}})
		m.Backends[1].Balance.Method = model.EWMA
		return m
	}},
	{"choice", []string{"plain", "lua"}, func() *model.Model {
		// /choose names its choice (and gets the log hook ewma needs on
		// one target's side); nothing of its matches or weights is
		// printed. In plain mode it proxies to its first backend.
		choose := loc(model.Prefix, "/choose", nil)
		choose.Action.Proxy.Split = &model.Split{Source: model.ObjectRef{Kind: "VirtualServer", Namespace: "shop", Name: "cafe"}, Route: "/choose",
			Rules: []model.SplitRule{{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "X-Version", Match: model.MatchCaseless, Value: "v2"}},
				Targets: []model.Target{{Backend: "shop/grpc/grpc", Weight: 100}}}},
			Default: []model.Target{{Backend: "shop/web/80", Weight: 60}, {Backend: "shop/errors/80", Weight: 40}}}
		m := policyModel(&model.Server{Host: "choice.example.com", Locations: []*model.Location{choose, loc(model.Prefix, "/main", nil)}})
		m.Backends[1].Balance.Method = model.EWMA
		return m
	}},
	{"choice-answers", []string{"lua"}, func() *model.Model {
		// /answer may pick a return or a redirect instead of a backend:
		// one access_by_lua block checks digest authentication, then
		// runs the choice's hook, which hands an answer to its named
		// location; those answer without the checks (they ran), and with
		// a return's own headers rather than the proxy's. Only the
		// answers are printed, never the weights. /only picks answers
		// only: it proxies to the balancer, which has nothing to pick.
		answer := loc(model.Prefix, "/answer", &model.Policy{Access: &model.AccessList{Deny: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}},
			BasicAuth:       &model.BasicAuth{Realm: "Staff", File: "default/users/htdigest", Digest: true},
			ResponseHeaders: []model.Header{{Name: "X-Proxied", Value: "yes"}}})
		answer.Action.Proxy.Split = &model.Split{Source: model.ObjectRef{Kind: "VirtualServer", Namespace: "shop", Name: "cafe"}, Route: "/answer",
			Default: []model.Target{{Backend: "shop/web/80", Weight: 50}, model.AnswerTarget(0, 25), model.AnswerTarget(1, 25)},
			Answers: []model.Answer{{Return: &model.Return{Status: 418, Body: model.Template{{Literal: "tea"}}},
				Headers: []model.Header{{Name: "X-Tea", Value: "hot"}}},
				{Redirect: &model.Redirect{Code: 302, URL: "https://example.com/elsewhere"}}}}
		only := &model.Location{Match: model.Match{Type: model.StringPrefix, Path: "/only"}, Source: answer.Source,
			Action: model.Action{Proxy: &model.Proxy{Split: &model.Split{Source: model.ObjectRef{Kind: "VirtualServer", Namespace: "shop", Name: "cafe"},
				Route: "/only",
				Rules: []model.SplitRule{{Conditions: []model.Condition{{Kind: model.ConditionHeader, Name: "X-Maintenance", Match: model.MatchCaseless, Value: "on"}},
					Targets: []model.Target{model.AnswerTarget(1, 100)}}},
				Default: []model.Target{model.AnswerTarget(0, 100)},
				Answers: []model.Answer{{Redirect: &model.Redirect{Code: 301, URL: "https://example.com/"}},
					{Return: &model.Return{Status: 503, Body: model.Template{{Literal: "down"}}}}}}}}}
		m := policyModel(&model.Server{Host: "answers.example.com", Locations: []*model.Location{answer, only}})
		m.AuthFiles = []*model.AuthFile{{Namespace: "default", Name: "users", Digest: true, Data: []byte("a:Staff:" + strings.Repeat("0", 32) + "\n")}}
		return m
	}},
	{"cache", []string{"lua"}, func() *model.Model {
		// A cache Policy: the zone at the http level with every
		// parameter, /pages with every location setting (the proxy
		// action's own ignored header on the same line as the cache's,
		// buffering turned back on), /plain with the least.
		key, _ := model.ParseCacheTemplate("$scheme$host$request_uri|$cookie_session")
		nocache, _ := model.ParseCacheTemplate("$cookie_nocache")
		bypass, _ := model.ParseCacheTemplate("$http_pragma")
		pages := loc(model.StringPrefix, "/pages", &model.Policy{ProxyIgnoreHeaders: []string{"X-Accel-Redirect"}, Cache: &model.ResponseCache{
			Zone: "cw_0123456789ab_pages", Key: key, Valid: []model.CacheValid{{Codes: []int{200, 404}, Duration: 5 * time.Minute}},
			Methods: []string{"GET", "HEAD", "POST"}, IgnoreHeaders: true, UseStale: []string{"error", "updating"}, Revalidate: true,
			BackgroundUpdate: true, MinUses: 2, Lock: true, LockTimeout: 5 * time.Second, LockAge: 10 * time.Second,
			NoCache: []model.Template{nocache}, Bypass: []model.Template{bypass, nocache}}})
		plain := loc(model.StringPrefix, "/plain", &model.Policy{Cache: &model.ResponseCache{Zone: "cw_ba9876543210_small",
			Key: model.DefaultCacheKey, Valid: []model.CacheValid{{Any: true, Duration: time.Minute}}}})
		m := policyModel(&model.Server{Host: "cache.example.com", Locations: []*model.Location{pages, plain}})
		m.CacheZones = []*model.CacheZone{
			{Name: "cw_0123456789ab_pages", Size: 10 << 20, Levels: "1:2", Inactive: time.Hour, MaxSize: 1 << 30, MinFree: 100 << 20,
				UseTempPath: true, ManagerFiles: 50, ManagerSleep: 50 * time.Millisecond, ManagerThreshold: time.Second},
			{Name: "cw_ba9876543210_small", Size: 1 << 20},
		}
		return m
	}},
	{"nic-actions", []string{"plain"}, func() *model.Model {
		// A body with variables, a quote, a newline and a type; headers on
		// a return; a redirect URL with variables.
		body, _ := model.ParseVariableTemplate(`\"${request_uri}\" is gone;\n{${http_x_user}}`, model.ReturnBodyVariables)
		url, _ := model.ParseRedirectTemplate("${scheme}://${host}/new${request_uri}", model.RedirectVariables)
		return policyModel(&model.Server{Host: "actions.example.com", Locations: []*model.Location{
			{Match: model.Match{Type: model.StringPrefix, Path: "/gone"}, Source: ingA,
				Action: model.Action{Return: &model.Return{Status: 410, Body: body, Type: "application/json"}},
				Policy: &model.Policy{ResponseHeaders: []model.Header{{Name: "X-Cafe", Value: "closed"}}}},
			{Match: model.Match{Type: model.StringPrefix, Path: "/plain"}, Source: ingA,
				Action: model.Action{Return: &model.Return{Status: 200, Body: model.Template{{Literal: "ok"}}}}},
			{Match: model.Match{Type: model.StringPrefix, Path: "/old"}, Source: ingA,
				Action: model.Action{Redirect: &model.Redirect{Code: 302, Template: url}}},
		}})
	}},
	{"nic-proxy", []string{"lua"}, func() *model.Model {
		// NGINX Ingress Controller's rewritePath on a prefix route (the
		// rest of the path kept) and on a regex route, its request and
		// response headers.
		set, _ := model.ParseVariableTemplate("${http_x_login} from ${remote_addr}", model.ProxyHeaderVariables)
		srv := &model.Server{Host: "proxy.example.com", Locations: []*model.Location{
			{Match: model.Match{Type: model.StringPrefix, Path: "/tea"}, Action: model.ProxyTo("shop/web/80"), Source: ingA,
				Policy: &model.Policy{Rewrite: &model.Rewrite{Target: "/coffee", Prefix: true}, NoRequestHeaders: true,
					ProxyPassHeaders: []string{"Server"}, ProxyIgnoreHeaders: []string{"Expires", "Vary"},
					Snippet: &model.Snippet{ProxySetHeaders: []model.TemplateHeader{{Name: "X-User", Value: set}},
						ProxyHideHeaders: []string{"X-Powered-By"},
						AddHeaders:       []model.TemplateHeader{{Name: "X-Cafe", Value: model.Template{{Literal: "open"}}, Always: true}}}}},
			{Match: model.Match{Type: model.Regex, Path: "/menu/([a-z]+)"}, Action: model.ProxyTo("shop/web/80"), Source: ingA,
				Policy: &model.Policy{Rewrite: &model.Rewrite{Target: "/v2/$1"}}},
		}}
		return policyModel(srv)
	}},
	{"header-inherit", []string{"plain", "lua"}, func() *model.Model {
		// add-header-inherit: the ConfigMap's add-headers and HSTS are the
		// http level's, server-snippets the server's.
		hdr := func(name string) []model.TemplateHeader {
			return []model.TemplateHeader{{Name: name, Value: model.Template{{Literal: "yes"}}, Always: true}}
		}
		route := func(path string, mode model.HeaderInherit, own ...model.Header) *model.Location {
			return loc(model.StringPrefix, path, &model.Policy{HeaderInherit: mode, ResponseHeaders: own})
		}
		x := model.Header{Name: "X-Route", Value: "r"}
		merge := &model.Server{Host: "merge.example.com",
			Policy: &model.ServerPolicy{Snippet: &model.Snippet{AddHeaders: hdr("X-Server")}},
			Locations: []*model.Location{route("/default", ""), route("/own", "", x), route("/on", model.HeaderInheritOn, x),
				route("/on-none", model.HeaderInheritOn), route("/off", model.HeaderInheritOff), route("/off-own", model.HeaderInheritOff, x)}}
		off := &model.Server{Host: "off.example.com",
			Policy:    &model.ServerPolicy{HeaderInherit: model.HeaderInheritOff, Snippet: &model.Snippet{AddHeaders: hdr("X-Server")}},
			Locations: []*model.Location{route("/", ""), route("/own", "", x)}}
		on := &model.Server{Host: "on.example.com", Policy: &model.ServerPolicy{HeaderInherit: model.HeaderInheritOn},
			Locations: []*model.Location{route("/", ""), {Match: model.Match{Type: model.StringPrefix, Path: "/bare"}, Action: model.ProxyTo("shop/web/80"), Source: ingA}}}
		offBare := &model.Server{Host: "off-bare.example.com", Policy: &model.ServerPolicy{HeaderInherit: model.HeaderInheritOff},
			Locations: []*model.Location{{Match: model.Match{Type: model.StringPrefix, Path: "/"}, Action: model.ProxyTo("shop/web/80"), Source: ingA}}}
		m := policyModel(merge, off, on, offBare)
		m.Config.AddHeaders = []model.Header{{Name: "X-Global", Value: "g"}}
		return m
	}},
	{"nic-error-pages", []string{"plain", "lua"}, func() *model.Model {
		// NGINX Ingress Controller's errorPages: a redirect with a
		// variable; a body keeping the status, shared by two locations;
		// one replacing it, with a header, on a return location.
		url, _ := model.ParseRedirectTemplate("${scheme}://example.com/missing", model.ErrorPageRedirectVariables)
		body, _ := model.ParseVariableTemplate(`{\"status\": ${upstream_status}}`, model.ErrorPageVariables)
		kept := model.ResponsePage{Codes: []int{502, 503}, Return: &model.Return{Body: body, Type: "application/json"}}
		pages := []model.ResponsePage{{Codes: []int{404}, Redirect: &model.Redirect{Code: 302, Template: url}}, kept}
		srv := &model.Server{Host: "pages.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ResponsePages: pages}),
			loc(model.Prefix, "/api", &model.Policy{ResponsePages: []model.ResponsePage{kept}}),
			{Match: model.Match{Type: model.Exact, Path: "/teapot"}, Action: model.ReturnStatus(418), Source: ingA,
				Policy: &model.Policy{ResponsePages: []model.ResponsePage{{Codes: []int{418}, Return: &model.Return{Status: 200,
					Body: model.Template{{Literal: "short and stout"}}}, Headers: []model.TemplateHeader{{Name: "X-Pot", Value: model.Template{{Literal: "tea"}}}}}}}},
		}}
		return policyModel(srv)
	}},
	{"external-auth", []string{"plain", "lua"}, func() *model.Model {
		// / asks with everything set and caches; /api has its own service,
		// a sign-in URL that already has the parameter and no cache; /open
		// asks nobody. A user location named like the first internal one
		// moves it on.
		all := &model.ExternalAuth{URL: "https://127.0.0.2:9443/check?a=1", Host: "127.0.0.2", Method: "POST",
			SigninURL: "https://login.example.com/start", RedirectParam: "return_to", ResponseHeaders: []string{"X-User", "X-Auth_Groups"},
			RequestRedirect: "https://app.example.com/", AlwaysSetCookie: true,
			ProxySetHeaders: []model.Header{{Name: "X-Auth-Required-Group", Value: `admins; "ops"`}},
			Snippet: &model.Snippet{Steps: []model.SnippetStep{{Set: &model.SetVariable{Name: "tenant", Value: model.Template{{Literal: "blue-"}, {Variable: "host"}}}}},
				ProxySetHeaders:  []model.TemplateHeader{{Name: "X-Tenant", Value: model.Template{{Variable: "tenant"}}}},
				ProxyHideHeaders: []string{"X-Debug"}},
			Cache: &model.AuthCache{Key: []model.AuthCacheKeyPart{{Var: "remote_user"}, {Literal: ":"}, {Var: "cookie_session"}},
				Valid: []model.AuthCacheValid{{Codes: []int{200, 202}, Duration: 5 * time.Minute}, {Duration: 30 * time.Second}}}}
		m := policyModel(&model.Server{Host: "auth.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ExternalAuth: all}),
			loc(model.Exact, "/api", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://127.0.0.1:9000/", Host: "127.0.0.1",
				SigninURL: "https://login.example.com/start?rd=https://app.example.com/", RedirectParam: "rd"}}),
			loc(model.Exact, "/_causeway_auth_0", nil),
			loc(model.Prefix, "/open", nil),
		}})
		m.Config.AddHeaders = []model.Header{{Name: "X-Frame-Options", Value: "DENY"}}
		// Resolved in nginx.conf, so that nginx blames the ConfigMap.
		m.Config.GlobalAuth = &model.ExternalAuth{URL: "https://[::1]/global", Host: "[::1]", RedirectParam: "rd"}
		return m
	}},
	{"external-auth-keepalive", []string{"plain", "lua"}, func() *model.Model {
		// Two hosts alike (one shared file with the Lua data plane, its
		// upstreams named after it) whose / keeps connections to an https
		// service on its default port, and whose /api asks another
		// service without a pool; a third host keeps connections to an
		// IPv6 service.
		pool := &model.AuthKeepalive{Connections: 8, Requests: 100, Timeout: 30 * time.Second}
		server := func(host string) *model.Server {
			return &model.Server{Host: host, Locations: []*model.Location{
				loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "https://127.0.0.2/check?a=1", Host: "127.0.0.2",
					RedirectParam: "rd", Keepalive: pool}}),
				loc(model.Exact, "/api", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://127.0.0.1:9000/", Host: "127.0.0.1", RedirectParam: "rd"}}),
			}}
		}
		v6 := &model.Server{Host: "v6.example.com", Locations: []*model.Location{
			loc(model.Prefix, "/", &model.Policy{ExternalAuth: &model.ExternalAuth{URL: "http://[::1]:9000/auth", Host: "[::1]", RedirectParam: "rd",
				Keepalive: &model.AuthKeepalive{Connections: 1, Requests: 1000, Timeout: 1500 * time.Millisecond}}}),
		}}
		return policyModel(server("a.example.com"), server("b.example.com"), v6)
	}},
	{"redirect", []string{"plain"}, func() *model.Model {
		return policyModel(&model.Server{Host: "redirect.example.com", Locations: []*model.Location{
			{Match: model.Match{Type: model.Prefix, Path: "/old"}, Action: model.Action{Redirect: &model.Redirect{Code: 301, URL: "https://new.example.com/"}}},
			{Match: model.Match{Type: model.Exact, Path: "/tmp"}, Action: model.Action{Redirect: &model.Redirect{Code: 307, URL: `https://new.example.com/a?b=c&d="e"`}},
				Policy: &model.Policy{CORS: &model.CORS{}}},
		}})
	}},
}

func TestPolicyGolden(t *testing.T) {
	for _, c := range policyCases {
		for _, plane := range c.planes {
			dir := "policy-" + c.name
			params := goldenParams
			if plane == "lua" {
				dir = "lua-" + dir
				params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
			}
			t.Run(dir, func(t *testing.T) {
				out, err := Render(c.model(), params)
				if err != nil {
					t.Fatal(err)
				}
				compareGolden(t, filepath.Join("testdata", dir, "golden"), out.Files)
			})
		}
	}
}

// compareGolden compares files with the golden directory, or rewrites it
// with -update.
func compareGolden(t *testing.T, golden string, files Files) {
	t.Helper()
	if *update {
		os.RemoveAll(golden)
		for name, data := range files {
			p := filepath.Join(golden, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	var want []string
	filepath.WalkDir(golden, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(golden, p)
			want = append(want, rel)
		}
		return nil
	})
	if strings.Join(want, ",") != strings.Join(files.Names(), ",") {
		t.Fatalf("files = %v, golden has %v (run go test ./internal/render -update)", files.Names(), want)
	}
	for _, name := range want {
		g, _ := os.ReadFile(filepath.Join(golden, name))
		if string(g) != string(files[name]) {
			t.Errorf("%s differs from golden (run go test ./internal/render -update and review the diff):\n%s", name, files[name])
		}
	}
}

// TestLocationHeadersRepeatHTTPLevel: a location that sets a request
// header inherits none from the http level, so it repeats them all.
func TestLocationHeadersRepeatHTTPLevel(t *testing.T) {
	m := policyModel(&model.Server{Host: "h.example.com", Locations: []*model.Location{
		loc(model.Prefix, "/", &model.Policy{UpstreamHost: ptr(model.HeaderValue("x"))}),
	}})
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	names := func(conf []byte) []string {
		var n []string
		for _, m := range regexp.MustCompile(`(?m)^\s*proxy_set_header (\S+)`).FindAllSubmatch(conf, -1) {
			n = append(n, string(m[1]))
		}
		slices.Sort(n)
		return n
	}
	http := names(out.Files["nginx.conf"])
	loc := names(out.Files[out.Files.Names()[1]])
	if len(http) == 0 || !slices.Equal(http, loc) {
		t.Fatalf("http level sets %v, the location %v", http, loc)
	}
}

// TestPolicyRefusals: values the model never produces are refused, not
// rendered.
func TestPolicyRefusals(t *testing.T) {
	for name, pol := range map[string]*model.Policy{
		"protocol":                   {Protocol: "FCGI"},
		"http version":               {HTTPVersion: "2"},
		"next upstream":              {Retry: model.Retry{On: []string{"error", "http_999"}}},
		"route retry and conditions": {Retry: model.Retry{On: []string{"error"}, Route: &model.RouteRetry{Attempts: 1}}},
		"route retry attempts":       {Retry: model.Retry{Route: &model.RouteRetry{}}},
		"route retry code":           {Retry: model.Retry{Route: &model.RouteRetry{Codes: []model.RetryCode{501}, Attempts: 1}}},
		"negative timeout":           {Timeouts: model.Timeouts{Read: -time.Second}},
		"verify without CA":          {UpstreamTLS: &model.UpstreamTLS{Verify: true}},
		"unknown proxy secret":       {UpstreamTLS: &model.UpstreamTLS{Secret: "shop/nope"}},
		"unknown CA secret":          {UpstreamTLS: &model.UpstreamTLS{CASecret: "shop/nope"}},
		"TLS protocol":               {UpstreamTLS: &model.UpstreamTLS{Protocols: []string{"SSLv3"}}},
		"ciphers":                    {UpstreamTLS: &model.UpstreamTLS{Ciphers: "HIGH; evil"}},
		"error status":               {Errors: &model.ErrorPages{Codes: []int{200}, Backend: "shop/errors/80"}},
		"header name":                {ResponseHeaders: []model.Header{{Name: "X Y", Value: "v"}}},
		"header value":               {ResponseHeaders: []model.Header{{Name: "X", Value: "$host"}}},
		"cors origin":                {CORS: &model.CORS{Origins: []string{"https://a.com/path"}}},
		"cors method":                {CORS: &model.CORS{Methods: []string{"GET;"}}},
		"rewrite target":             {Rewrite: &model.Rewrite{Target: "/$host"}},
		"strip to a path":            {Rewrite: &model.Rewrite{Target: "/a", Prefix: true, Strip: true}},
		"mirror URL":                 {Mirrors: []model.Mirror{{URL: "http://a/$host", Percent: 100}}},
		"cookie without source":      {CookieDomain: &model.Replace{To: "x"}},
		"busy buffers over all buffers but one": {Buffering: model.Buffering{Buffers: 3, BufferSize: ptr(model.Size(8 << 10)),
			BusyBuffers: ptr(model.Size(24 << 10))}},
		"busy buffers under the buffer size": {Buffering: model.Buffering{BusyBuffers: ptr(model.Size(2 << 10))}},
		// goldenParams is the plain data plane: no Lua to check digest.
		"digest without Lua":     {BasicAuth: &model.BasicAuth{File: "default/users/htdigest", Digest: true}},
		"digest file for basic":  {BasicAuth: &model.BasicAuth{File: "default/users/htdigest"}},
		"digest realm with a \"": {BasicAuth: &model.BasicAuth{File: "default/users/auth", Realm: `a"b`}},
		"limit reject code":      {Limits: &model.Limits{RPS: 1, RejectCode: 200}},
		"limit log level":        {Limits: &model.Limits{RPS: 1, LogLevel: "debug; evil"}},
		"limit zone size":        {Limits: &model.Limits{RPS: 1, ZoneSize: ptr(model.Size(1 << 10))}},
		"limit key variable":     {Limits: &model.Limits{RPS: 1, Key: model.Template{{Variable: "host;"}}}},
		"limit key and exempt":   {Limits: &model.Limits{RPS: 1, Key: model.Template{{Variable: "uri"}}, Exempt: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}},
		"negative limit delay":   {Limits: &model.Limits{RPS: 1, BurstRPS: 2, Pacing: model.BurstPacing{Spaced: true, Delay: -1}}},
	} {
		m := policyModel(&model.Server{Host: "h.example.com", Locations: []*model.Location{loc(model.Prefix, "/", pol)}})
		m.AuthFiles = []*model.AuthFile{{Namespace: "default", Name: "users", Digest: true, Data: []byte("a::" + strings.Repeat("0", 32) + "\n")},
			{Namespace: "default", Name: "users", Data: []byte("a:{SHA}x\n")}}
		if _, err := Render(m, goldenParams); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

// TestClientTLSRefused checks that render refuses client certificate
// settings that did not come through the annotation grammar.
func TestClientTLSRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    model.ClientTLS
	}{
		{"unknown mode", model.ClientTLS{Secret: "shop/ca", Verify: "on; return 200", Depth: 1}},
		{"depth 0", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn}},
		{"secret not in the model", model.ClientTLS{Secret: "shop/other", Verify: model.VerifyOn, Depth: 1}},
		{"CN without CN=", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn, Depth: 1, MatchCN: "a"}},
		{"CN with a quote", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn, Depth: 1, MatchCN: `CN=a") { return 200; } if ("`}},
		{"CN with a variable", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn, Depth: 1, MatchCN: "CN=$host"}},
		{"CN with a newline", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn, Depth: 1, MatchCN: "CN=a\n}"}},
		{"error page with a variable", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn, Depth: 1, ErrorPage: "https://a.example.com/$host"}},
		{"relative error page", model.ClientTLS{Secret: "shop/ca", Verify: model.VerifyOn, Depth: 1, ErrorPage: "/error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			m := policyModel(&model.Server{Host: "a.example.com", ClientTLS: &c, Locations: []*model.Location{loc(model.Prefix, "/", nil)}})
			m.ProxySecrets = []*model.ProxySecret{{Namespace: "shop", Name: "ca", CA: []byte("ca")}}
			if _, err := Render(m, goldenParams); err == nil {
				t.Fatal("rendered")
			}
		})
	}
}

// A choice that may answer runs in the access phase, which "satisfy any"
// cuts short once one check passes: the two are refused together.
func TestChoiceAnswersRefuseSatisfyAny(t *testing.T) {
	m := policyCaseModel(t, "choice-answers")
	l := m.Servers[0].Locations[0]
	l.Policy.Access = &model.AccessList{Allow: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}
	l.Policy.Satisfy = model.SatisfyAny
	params := goldenParams
	params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	if _, err := Render(m, params); err == nil || !strings.Contains(err.Error(), "satisfy any") {
		t.Fatalf("Render() = %v, want a refusal of satisfy any", err)
	}
}

// TestAuthFileContentKeepsTheVersion: a Secret's new users change the
// password file only (runtime.SecretFiles writes it), which nginx and the
// Lua checks read again by themselves, so the configuration version, and
// with it the decision to reload, stays.
func TestAuthFileContentKeepsTheVersion(t *testing.T) {
	m := policyCaseModel(t, "choice-answers")
	params := goldenParams
	params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	before, err := Render(m, params)
	if err != nil {
		t.Fatal(err)
	}
	m.AuthFiles[0].Data = []byte("b:Staff:" + strings.Repeat("1", 32) + "\n")
	after, err := Render(m, params)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version {
		t.Errorf("new users: version %s -> %s, want the same", before.Version, after.Version)
	}
}

func policyCaseModel(t *testing.T, name string) *model.Model {
	t.Helper()
	for _, c := range policyCases {
		if c.name == name {
			return c.model()
		}
	}
	t.Fatalf("no policy case %q", name)
	return nil
}
