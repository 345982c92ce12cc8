package nic

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

func vs(spec nicv1.VirtualServerSpec) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cafe", UID: "u1"}, Spec: spec}
}

func baseSpec() nicv1.VirtualServerSpec {
	return nicv1.VirtualServerSpec{Host: "cafe.example.com",
		Upstreams: []nicv1.Upstream{{Name: "tea", Service: "tea-svc", Port: 80}},
		Routes:    []nicv1.Route{{Path: "/tea", Action: &nicv1.Action{Pass: "tea"}}}}
}

// TestTranslateVirtualServer: a row per rule. err is a fragment of the
// rejection; problems are fragments, one per expected Problem.
func TestTranslateVirtualServer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   func(*nicv1.VirtualServerSpec)
		err      string
		problems []string
		check    func(*testing.T, *VirtualServer)
	}{
		{name: "a prefix route passes to its upstream", check: func(t *testing.T, v *VirtualServer) {
			if len(v.Routes) != 1 || v.Routes[0].Match != (model.Match{Type: model.StringPrefix, Path: "/tea"}) || v.Routes[0].Action.Upstream != "tea" {
				t.Errorf("routes %+v", v.Routes)
			}
			if u := v.Upstreams["tea"]; u == nil || u.Service != "tea-svc" || u.Port != 80 || u.Policy != nil {
				t.Errorf("upstream %+v", u)
			}
		}},
		{name: "host is required", change: func(s *nicv1.VirtualServerSpec) { s.Host = "" }, err: "spec.host is required"},
		{name: "an invalid host rejects", change: func(s *nicv1.VirtualServerSpec) { s.Host = "Bad_Host" }, err: "spec.host"},
		{name: "an IP address is no host", change: func(s *nicv1.VirtualServerSpec) { s.Host = "10.0.0.1" }, err: "DNS name"},
		{name: "a wildcard host", change: func(s *nicv1.VirtualServerSpec) { s.Host = "*.example.com" }},
		{name: "upstream names are unique", change: func(s *nicv1.VirtualServerSpec) {
			s.Upstreams = append(s.Upstreams, nicv1.Upstream{Name: "tea", Service: "other", Port: 80})
		}, err: `name "tea" is used by another upstream`},
		{name: "an upstream name is a DNS-1035 label", change: func(s *nicv1.VirtualServerSpec) { s.Upstreams[0].Name = "Tea" }, err: "spec.upstreams[0].name"},
		{name: "an upstream needs a port", change: func(s *nicv1.VirtualServerSpec) { s.Upstreams[0].Port = 0 }, err: "port is required"},
		{name: "an upstream type is http or grpc", change: func(s *nicv1.VirtualServerSpec) { s.Upstreams[0].Type = "tcp" }, err: "want http or grpc"},
		{name: "a subselector label key is a qualified name", change: func(s *nicv1.VirtualServerSpec) {
			s.Upstreams[0].Subselector = map[string]string{"bad key": "v"}
		}, err: `spec.upstreams[0] (tea).subselector: label key "bad key"`},
		{name: "a subselector label value is a label value", change: func(s *nicv1.VirtualServerSpec) {
			s.Upstreams[0].Subselector = map[string]string{"version": "v2;evil"}
		}, err: `label version value "v2;evil"`},
		{name: "an empty subselector value is a valid label value", change: func(s *nicv1.VirtualServerSpec) {
			s.Upstreams[0].Subselector = map[string]string{"canary": ""}
		}},
		{name: "grpc with TLS is GRPCS", change: func(s *nicv1.VirtualServerSpec) {
			s.Upstreams[0].Type = "grpc"
			s.Upstreams[0].TLS.Enable = true
		}, check: func(t *testing.T, v *VirtualServer) {
			if p := v.Upstreams["tea"].Policy; p == nil || p.Protocol != model.ProtocolGRPCS {
				t.Errorf("policy %+v", p)
			}
		}},
		{name: "upstream proxy settings become the route's policy", change: func(s *nicv1.VirtualServerSpec) {
			u := &s.Upstreams[0]
			u.ConnectTimeout, u.ReadTimeout, u.SendTimeout, u.ClientMaxBodySize = "5s", "1m", "30", "8m"
			u.Buffering, u.NextUpstreamTries = ptr.To(false), 3
		}, check: func(t *testing.T, v *VirtualServer) {
			p := v.Upstreams["tea"].Policy
			if p == nil || p.Timeouts.Connect.Seconds() != 5 || p.Timeouts.Read.Seconds() != 60 || p.Timeouts.Send.Seconds() != 30 ||
				p.Buffering.BodySize == nil || *p.Buffering.BodySize != 8<<20 || p.Buffering.Response == nil || *p.Buffering.Response || p.Retry.Tries != 3 {
				t.Errorf("policy %+v", p)
			}
		}},
		{name: "a bad timeout drops that setting", change: func(s *nicv1.VirtualServerSpec) { s.Upstreams[0].ReadTimeout = "1m30s" },
			problems: []string{"read-timeout \"1m30s\""}},
		{name: "a route has exactly one of action, splits, matches and route", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Route = "shop/tea-routes"
		}, err: "exactly one of action, splits, route and routeSelector"},
		{name: "a route without any", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Action = nil }, err: "exactly one of"},
		{name: "an action has exactly one kind", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action.Return = &nicv1.ActionReturn{Code: 200}
		}, err: "exactly one of pass, redirect, return and proxy"},
		{name: "pass names a defined upstream", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Action.Pass = "coffee" },
			err: `upstream "coffee", which spec.upstreams does not define`},
		{name: "paths are unique", change: func(s *nicv1.VirtualServerSpec) { s.Routes = append(s.Routes, s.Routes[0]) }, err: "used by another route"},
		{name: "an exact route", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Path = "=/tea" }, check: func(t *testing.T, v *VirtualServer) {
			if v.Routes[0].Match != (model.Match{Type: model.Exact, Path: "/tea"}) {
				t.Errorf("match %+v", v.Routes[0].Match)
			}
		}},
		{name: "a case-insensitive regex anchored with ^", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Path = "~* ^/tea/[a-z]+$" },
			check: func(t *testing.T, v *VirtualServer) {
				if v.Routes[0].Match != (model.Match{Type: model.Regex, Path: "/tea/[a-z]+$"}) {
					t.Errorf("match %+v", v.Routes[0].Match)
				}
			}},
		{name: "a regex without ^ is anchored, and says so", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Path = "~*/tea" },
			problems: []string{"matched from the start of the path"}, check: func(t *testing.T, v *VirtualServer) {
				if v.Routes[0].Match != (model.Match{Type: model.Regex, Path: "/tea"}) {
					t.Errorf("match %+v", v.Routes[0].Match)
				}
			}},
		{name: "a regex that does not start with a path rejects", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Path = "~* \\.php$" },
			err: "spec.routes[0].path"},
		{name: "a case-sensitive regex is not supported yet", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Path = "~ /Tea" },
			problems: []string{"case-sensitive regular expressions"}, check: noRoutes},
		{name: "a path with nginx syntax rejects", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].Path = "/tea;return 200" }, err: "spec.routes[0].path"},
		{name: "a redirect defaults to 301", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.com/tea"}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if r := v.Routes[0].Action.Redirect; r == nil || r.Code != 301 || r.URL != "https://example.com/tea" {
				t.Errorf("redirect %+v", r)
			}
		}},
		{name: "a redirect code is 301, 302, 307 or 308", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = &nicv1.Action{Redirect: &nicv1.ActionRedirect{URL: "https://example.com/", Code: 303}}
		}, err: "want 301, 302, 307 or 308"},
		{name: "a return of a status", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = &nicv1.Action{Return: &nicv1.ActionReturn{Code: 204}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if r := v.Routes[0].Action.Return; r == nil || r.Status != 204 {
				t.Errorf("return %+v", r)
			}
		}},
		{name: "one split is invalid", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = nil
			s.Routes[0].Splits = []nicv1.Split{{Weight: 100, Action: &nicv1.Action{Pass: "tea"}}}
		}, err: "at least 2 splits"},
		{name: "split weights sum to 100", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = nil
			s.Routes[0].Splits = []nicv1.Split{{Weight: 50, Action: &nicv1.Action{Pass: "tea"}}, {Weight: 40, Action: &nicv1.Action{Pass: "tea"}}}
		}, err: "sum to 90"},
		{name: "a split action names a defined upstream", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = nil
			s.Routes[0].Splits = []nicv1.Split{{Weight: 50, Action: &nicv1.Action{Pass: "tea"}}, {Weight: 50, Action: &nicv1.Action{Pass: "nope"}}}
		}, err: "does not define"},
		{name: "matches without an action or splits", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Action = nil
			s.Routes[0].Matches = []nicv1.Match{{Conditions: []nicv1.Condition{{Header: "x", Value: "y"}}, Action: &nicv1.Action{Pass: "tea"}}}
		}, err: "exactly one of action, splits, route and routeSelector"},
		{name: "a condition has exactly one subject", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0].Matches = []nicv1.Match{{Conditions: []nicv1.Condition{{Header: "x", Cookie: "c", Value: "y"}}, Action: &nicv1.Action{Pass: "tea"}}}
		}, err: "exactly one of header, cookie, argument and variable"},
		{name: "Plus-only fields are reported as such", change: func(s *nicv1.VirtualServerSpec) {
			s.Upstreams[0].HealthCheck = &nicv1.HealthCheck{Enable: true}
			s.Upstreams[0].SlowStart = "10s"
		}, problems: []string{"healthCheck: needs NGINX Plus", "slow-start: needs NGINX Plus"}},
		{name: "unimplemented fields are reported", change: func(s *nicv1.VirtualServerSpec) {
			s.Policies = []nicv1.PolicyReference{{Name: "p"}}
			s.Upstreams[0].LBMethod = "random"
		}, problems: []string{"lb-method \"random\""}},
		{name: "add-header-inherit of the server and of a route", change: func(s *nicv1.VirtualServerSpec) {
			s.AddHeaderInherit = "off"
			s.Routes[0].AddHeaderInherit = "on"
		}, check: func(t *testing.T, v *VirtualServer) {
			if v.HeaderInherit != model.HeaderInheritOff || v.Routes[0].HeaderInherit != model.HeaderInheritOn {
				t.Errorf("server %q, route %q", v.HeaderInherit, v.Routes[0].HeaderInherit)
			}
		}},
		{name: "add-header-inherit that is no mode", change: func(s *nicv1.VirtualServerSpec) { s.Routes[0].AddHeaderInherit = "always" },
			problems: []string{"add-header-inherit \"always\": want on, off or merge"}},
		{name: "tls.cert-manager asks for the Secret's Certificate", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", CertManager: &nicv1.CertManager{ClusterIssuer: "le"}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if v.TLS == nil || !v.TLS.CertManager || v.TLS.Secret != "cafe-tls" {
				t.Errorf("tls %+v", v.TLS)
			}
		}},
		{name: "an invalid tls.cert-manager is reported, the VirtualServer served", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", CertManager: &nicv1.CertManager{Issuer: "a", ClusterIssuer: "b"}}
		}, problems: []string{"spec.tls.cert-manager: issuer and cluster-issuer may not both be set; no Certificate is requested"}},
		{name: "externalDNS asks for a DNSEndpoint", change: func(s *nicv1.VirtualServerSpec) {
			s.ExternalDNS = nicv1.ExternalDNS{Enable: true, RecordTTL: 60}
		}, check: func(t *testing.T, v *VirtualServer) {
			if !v.ExternalDNS {
				t.Error("no DNSEndpoint asked for")
			}
		}},
		{name: "an invalid externalDNS is reported, the VirtualServer served", change: func(s *nicv1.VirtualServerSpec) {
			s.ExternalDNS = nicv1.ExternalDNS{Enable: true, RecordType: "BOGUS"}
		}, problems: []string{"spec.externalDNS: recordType \"BOGUS\""}},
		{name: "tls.cert-manager needs a secret", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{CertManager: &nicv1.CertManager{Issuer: "x"}}
		}, problems: []string{"needs spec.tls.secret"}},
		{name: "policy references default to the namespace", change: func(s *nicv1.VirtualServerSpec) {
			s.Policies = []nicv1.PolicyReference{{Name: "allow"}, {Name: "rl", Namespace: "ops"}}
			s.Routes[0].Policies = []nicv1.PolicyReference{{Name: "auth"}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if !slices.Equal(v.Policies, []string{"shop/allow", "ops/rl"}) || !slices.Equal(v.Routes[0].Policies, []string{"shop/auth"}) {
				t.Errorf("policies %v, route %v", v.Policies, v.Routes[0].Policies)
			}
		}},
		{name: "an invalid policy reference rejects", change: func(s *nicv1.VirtualServerSpec) {
			s.Policies = []nicv1.PolicyReference{{Name: "Bad Name"}}
		}, err: "spec.policies[0].name"},
		{name: "server-snippets and location-snippets are read by package snippet", change: func(s *nicv1.VirtualServerSpec) {
			s.ServerSnippets = `add_header X-Host a;`
			s.Routes[0].LocationSnippets = `proxy_set_header X-Route "tea";`
		}, check: func(t *testing.T, v *VirtualServer) {
			if sn := v.ServerSnippet; sn == nil || sn.Err != nil || sn.Field != "spec.server-snippets" || sn.Object.Name != "cafe" || len(sn.Snippet.AddHeaders) != 1 {
				t.Errorf("server snippet %+v", sn)
			}
			if sn := v.Routes[0].Snippet; sn == nil || sn.Err != nil || sn.Field != "spec.routes[0] (path /tea).location-snippets" || len(sn.Snippet.ProxySetHeaders) != 1 {
				t.Errorf("location snippet %+v", sn)
			}
		}},
		{name: "a snippet the parser refuses keeps its error for the builder", change: func(s *nicv1.VirtualServerSpec) {
			s.ServerSnippets = "}\nserver { listen 9999; }"
			s.Routes[0].LocationSnippets = `access_by_lua_block { ngx.exit(403) }`
		}, check: func(t *testing.T, v *VirtualServer) {
			if sn := v.ServerSnippet; sn == nil || sn.Err == nil || sn.Snippet != nil || sn.Denies {
				t.Errorf("server snippet %+v", sn)
			}
			if sn := v.Routes[0].Snippet; sn == nil || sn.Err == nil || !strings.Contains(sn.Err.Error(), "access_by_lua_block") || !sn.Denies {
				t.Errorf("location snippet %+v, want refused and denying", sn)
			}
		}},
		{name: "a delegating route's location-snippets are kept for its subroutes", change: func(s *nicv1.VirtualServerSpec) {
			s.Routes[0] = nicv1.Route{Path: "/tea", Route: "tea", LocationSnippets: `add_header X a;`}
		}, check: func(t *testing.T, v *VirtualServer) {
			if sn := v.Routes[0].Snippet; sn == nil || sn.Snippet == nil {
				t.Errorf("route %+v", v.Routes[0])
			}
		}},
		{name: "http-snippets are read in the http context", change: func(s *nicv1.VirtualServerSpec) {
			s.HTTPSnippets = `add_header X-A a;`
			s.ServerSnippets = `map $a $b { default 1; }`
		}, check: func(t *testing.T, v *VirtualServer) {
			if sn := v.HTTPSnippet; sn == nil || sn.Snippet == nil || sn.Field != "spec.http-snippets" || v.ServerSnippet.Err == nil {
				t.Errorf("http %+v server %+v", v.HTTPSnippet, v.ServerSnippet)
			}
		}},
		{name: "TLS with a redirect", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", Redirect: &nicv1.TLSRedirect{Enable: true, Code: ptr.To(308)}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if v.TLS == nil || v.TLS.Secret != "cafe-tls" || v.TLS.Redirect == nil ||
				*v.TLS.Redirect != (model.HTTPSRedirect{Code: 308, BasedOn: model.RedirectOnScheme}) {
				t.Errorf("tls %+v", v.TLS)
			}
		}},
		{name: "a redirect is 301 on the scheme unless it says otherwise, as in NIC", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", Redirect: &nicv1.TLSRedirect{Enable: true}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if r := v.TLS.Redirect; r == nil || *r != (model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnScheme}) {
				t.Errorf("redirect %+v", r)
			}
		}},
		{name: "a redirect based on X-Forwarded-Proto", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", Redirect: &nicv1.TLSRedirect{Enable: true, BasedOn: "x-forwarded-proto", Code: ptr.To(302)}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if r := v.TLS.Redirect; r == nil || *r != (model.HTTPSRedirect{Code: 302, BasedOn: model.RedirectOnForwardedProto}) {
				t.Errorf("redirect %+v", r)
			}
		}},
		{name: "a disabled redirect", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", Redirect: &nicv1.TLSRedirect{Code: ptr.To(302)}}
		}, check: func(t *testing.T, v *VirtualServer) {
			if v.TLS.Redirect != nil {
				t.Errorf("redirect %+v", v.TLS.Redirect)
			}
		}},
		{name: "a redirect code or basis the CRD refuses is reported, and NIC's default used", change: func(s *nicv1.VirtualServerSpec) {
			s.TLS = &nicv1.TLS{Secret: "cafe-tls", Redirect: &nicv1.TLSRedirect{Enable: true, Code: ptr.To(200), BasedOn: "header"}}
		}, problems: []string{"spec.tls.redirect.code 200", `spec.tls.redirect.basedOn "header"`}, check: func(t *testing.T, v *VirtualServer) {
			if r := v.TLS.Redirect; r == nil || *r != (model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnScheme}) {
				t.Errorf("redirect %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			if tc.change != nil {
				tc.change(&s)
			}
			out := translates(t, s, tc.err, tc.problems)
			if out == nil {
				return
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// translates translates a VirtualServer of spec s: it must be rejected
// with err (nil is returned) or raise one Problem with each fragment of
// problems, in any order.
func translates(t *testing.T, s nicv1.VirtualServerSpec, err string, problems []string) *VirtualServer {
	t.Helper()
	out, got, e := TranslateVirtualServer(vs(s), nil)
	if err != "" {
		if e == nil || !strings.Contains(e.Error(), err) {
			t.Fatalf("err %v, want one with %q", e, err)
		}
		return nil
	}
	if e != nil {
		t.Fatal(e)
	}
	if len(got) != len(problems) {
		t.Fatalf("problems %v, want %d", got, len(problems))
	}
	for _, want := range problems {
		found := false
		for _, p := range got {
			found = found || strings.Contains(p.Message, want) && p.Object.Kind == "VirtualServer" && p.Object.Name == "cafe"
		}
		if !found {
			t.Errorf("problems %v: none naming VirtualServer cafe with %q", got, want)
		}
	}
	return out
}

func noRoutes(t *testing.T, v *VirtualServer) {
	if len(v.Routes) != 0 {
		t.Errorf("routes %+v, want the route left out", v.Routes)
	}
}

// TestRoutePathsRefuseInjection: no hostile path reaches the model.
func TestRoutePathsRefuseInjection(t *testing.T) {
	for _, v := range testcorpus.Injection {
		for _, p := range []string{"/" + v, "=/" + v, "~*" + v} {
			m, err := parseRoutePath(p)
			if err != nil {
				continue
			}
			bad := "\"';{}\n\r\x00#` \\$"
			if m.Type == model.Regex {
				bad = bad[:len(bad)-1] // "$" is the regex's end; a location regex expands no variable
			}
			if strings.ContainsAny(m.Path, bad) {
				t.Errorf("path %q became %+v", p, m)
			}
		}
	}
}

func FuzzRoutePath(f *testing.F) {
	for _, s := range []string{"/tea", "=/tea", "~* ^/t[a-z]+", "~ /T", "/a b", "~*(a|b", "=/"} {
		f.Add(s)
	}
	for _, v := range testcorpus.Injection {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, p string) {
		m, err := parseRoutePath(p)
		if err != nil || m.Type == "" {
			return
		}
		switch m.Type {
		case model.Regex:
			if _, err := model.ParseRegex(m.Path); err != nil {
				t.Fatalf("%q: regex %q does not parse: %v", p, m.Path, err)
			}
		default:
			if err := model.ValidatePath(m.Path); err != nil {
				t.Fatalf("%q: path %q invalid: %v", p, m.Path, err)
			}
		}
	})
}
