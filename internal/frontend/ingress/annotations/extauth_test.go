package annotations

import (
	"reflect"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

func TestExtAuth(t *testing.T) {
	ext := func(kv ...string) map[string]string {
		m := map[string]string{"auth-url": "https://auth.example.com/check"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	want := func(f func(a *model.ExternalAuth)) *model.ExternalAuth {
		a := &model.ExternalAuth{URL: "https://auth.example.com/check", Host: "auth.example.com", RedirectParam: "rd"}
		if f != nil {
			f(a)
		}
		return a
	}
	cacheKey := []model.AuthCacheKeyPart{{Var: "remote_user"}, {Var: "http_authorization"}}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.ExternalAuth
		noGlobal bool
		problems []problem
	}{
		// good
		{"url", ext(), want(nil), false, nil},
		{"url rebuilt in lower case with a / path", map[string]string{"auth-url": "HTTP://Auth.Example.com:8080"},
			want(func(a *model.ExternalAuth) { a.URL, a.Host = "http://auth.example.com:8080/", "auth.example.com" }), false, nil},
		{"url with query", ext("auth-url", "http://10.0.0.1/oauth2/auth?allowed_groups=a,b"),
			want(func(a *model.ExternalAuth) {
				a.URL, a.Host = "http://10.0.0.1/oauth2/auth?allowed_groups=a,b", "10.0.0.1"
			}), false, nil},
		{"ipv6 url", ext("auth-url", "http://[::1]:9000/auth"),
			want(func(a *model.ExternalAuth) { a.URL, a.Host = "http://[::1]:9000/auth", "[::1]" }), false, nil},
		{"method", ext("auth-method", "POST"), want(func(a *model.ExternalAuth) { a.Method = "POST" }), false, nil},
		{"signin", ext("auth-signin", "https://login.example.com/oauth2/start"),
			want(func(a *model.ExternalAuth) { a.SigninURL = "https://login.example.com/oauth2/start" }), false, nil},
		{"signin redirect param", ext("auth-signin-redirect-param", "return_to"),
			want(func(a *model.ExternalAuth) { a.RedirectParam = "return_to" }), false, nil},
		{"response headers", ext("auth-response-headers", "X-Auth-Request-User, X-Auth-Request-Email,X_Groups"),
			want(func(a *model.ExternalAuth) {
				a.ResponseHeaders = []string{"X-Auth-Request-User", "X-Auth-Request-Email", "X_Groups"}
			}), false, nil},
		{"request redirect", ext("auth-request-redirect", "https://app.example.com/back"),
			want(func(a *model.ExternalAuth) { a.RequestRedirect = "https://app.example.com/back" }), false, nil},
		{"always set cookie", ext("auth-always-set-cookie", "true"), want(func(a *model.ExternalAuth) { a.AlwaysSetCookie = true }), false, nil},
		{"cache key with the default duration", ext("auth-cache-key", "$remote_user$http_authorization"),
			want(func(a *model.ExternalAuth) {
				a.Cache = &model.AuthCache{Key: cacheKey, Valid: model.DefaultAuthCacheValid}
			}), false, nil},
		{"cache key and durations", ext("auth-cache-key", "${cookie_session}|$host", "auth-cache-duration", "200 202 10m, 401 30s"),
			want(func(a *model.ExternalAuth) {
				a.Cache = &model.AuthCache{Key: []model.AuthCacheKeyPart{{Var: "cookie_session"}, {Literal: "|"}, {Var: "host"}},
					Valid: []model.AuthCacheValid{{Codes: []int{200, 202}, Duration: 10 * time.Minute}, {Codes: []int{401}, Duration: 30 * time.Second}}}
			}), false, nil},
		// oauth2-proxy's recipe: URL templates with variables.
		{"oauth2-proxy on the same host", map[string]string{"auth-url": "https://$host/oauth2/auth",
			"auth-signin": "https://$host/oauth2/start?rd=$escaped_request_uri", "auth-response-headers": "X-Auth-Request-User"},
			&model.ExternalAuth{URL: "https://${host}/oauth2/auth", RedirectParam: "rd",
				SigninURL: "https://${host}/oauth2/start?rd=${escaped_request_uri}", ResponseHeaders: []string{"X-Auth-Request-User"}}, false, nil},
		{"literal host with variables in the query", ext("auth-url", "http://auth.example.com/check?uri=$escaped_request_uri&t=$http_x_tenant"),
			want(func(a *model.ExternalAuth) {
				a.URL = "http://auth.example.com/check?uri=${escaped_request_uri}&t=${http_x_tenant}"
			}), false, nil},
		{"keepalive with $host is reported", map[string]string{"auth-url": "http://$host/oauth2/auth", "auth-keepalive": "8"},
			&model.ExternalAuth{URL: "http://${host}/oauth2/auth", RedirectParam: "rd"}, false, []problem{ignored("auth-keepalive")}},
		{"global auth off", map[string]string{"enable-global-auth": "false"}, nil, true, nil},
		{"global auth on", map[string]string{"enable-global-auth": "true"}, nil, false, nil},

		// edge: companions without auth-url do nothing and say so
		{"method alone", map[string]string{"auth-method": "GET"}, nil, false, []problem{ignored("auth-method")}},
		{"signin alone", map[string]string{"auth-signin": "https://login.example.com/"}, nil, false, []problem{ignored("auth-signin")}},
		{"duration without key", ext("auth-cache-duration", "200 1m"), want(nil), false, []problem{ignored("auth-cache-duration")}},

		// bad, security-relevant: fail closed
		{"empty url", ext("auth-url", ""), nil, false, []problem{closes("auth-url")}},
		{"relative url", ext("auth-url", "/auth"), nil, false, []problem{closes("auth-url")}},
		{"ftp url", ext("auth-url", "ftp://auth.example.com/"), nil, false, []problem{closes("auth-url")}},
		{"variable host refused in part", ext("auth-url", "http://auth.$host/auth"), nil, false, []problem{closes("auth-url")}},
		{"variable in the path a client controls", ext("auth-url", "http://$host/$http_x_tenant/auth"), nil, false, []problem{closes("auth-url")}},
		{"variable not allowed", ext("auth-url", "http://$host/auth?a=$remote_addr"), nil, false, []problem{closes("auth-url")}},
		{"port with $host", ext("auth-url", "http://$host:4180/oauth2/auth"), nil, false, []problem{closes("auth-url")}},
		{"user info", ext("auth-url", "http://u:p@auth.example.com/"), nil, false, []problem{closes("auth-url")}},
		{"CVE-2025-24514: a quote and a directive", ext("auth-url", `http://a.com/#;}}}location /x { return 200; } #`), nil, false, []problem{closes("auth-url")}},
		{"newline", ext("auth-url", "http://a.com/\nproxy_pass http://evil;"), nil, false, []problem{closes("auth-url")}},
		{"lower-case method", ext("auth-method", "post"), nil, false, []problem{closes("auth-method")}},
		{"unknown method", ext("auth-method", "PROPFIND"), nil, false, []problem{closes("auth-method")}},
		{"header with a dot", ext("auth-response-headers", "X.User"), nil, false, []problem{closes("auth-response-headers")}},
		{"header star", ext("auth-response-headers", "*"), nil, false, []problem{closes("auth-response-headers")}},
		{"header variable", ext("auth-response-headers", "X-User,$x"), nil, false, []problem{closes("auth-response-headers")}},

		// bad, shaping only: dropped
		{"signin with a variable the grammar refuses", ext("auth-signin", "https://$host/oauth2/start?rd=$uri"), want(nil), false, []problem{invalid("auth-signin")}},
		{"bad redirect param", ext("auth-signin-redirect-param", "r&d"), want(nil), false, []problem{invalid("auth-signin-redirect-param")}},
		{"request redirect variable", ext("auth-request-redirect", "$request_uri"), want(nil), false, []problem{invalid("auth-request-redirect")}},
		{"bad always set cookie", ext("auth-always-set-cookie", "yes"), want(nil), false, []problem{invalid("auth-always-set-cookie")}},
		{"cache key variable not allowed", ext("auth-cache-key", "$request_body"), want(nil), false, []problem{invalid("auth-cache-key")}},
		{"cache key upper case", ext("auth-cache-key", "$Remote_User"), want(nil), false, []problem{invalid("auth-cache-key")}},
		{"constant cache key", ext("auth-cache-key", "everyone"), want(nil), false, []problem{invalid("auth-cache-key")}},
		{"cache key quote", ext("auth-cache-key", `$remote_user"`), want(nil), false, []problem{invalid("auth-cache-key")}},
		{"cache key unclosed brace", ext("auth-cache-key", `${remote_user`), want(nil), false, []problem{invalid("auth-cache-key")}},
		{"bad duration keeps the default", ext("auth-cache-key", "$http_authorization", "auth-cache-duration", "200 5d"),
			want(func(a *model.ExternalAuth) {
				a.Cache = &model.AuthCache{Key: []model.AuthCacheKeyPart{{Var: "http_authorization"}}, Valid: model.DefaultAuthCacheValid}
			}), false, []problem{invalid("auth-cache-duration")}},
		{"code after duration", ext("auth-cache-key", "$http_authorization", "auth-cache-duration", "5m 200"),
			want(func(a *model.ExternalAuth) {
				a.Cache = &model.AuthCache{Key: []model.AuthCacheKeyPart{{Var: "http_authorization"}}, Valid: model.DefaultAuthCacheValid}
			}), false, []problem{invalid("auth-cache-duration")}},
		// auth-keepalive: a pool towards the service, defaults ingress-nginx's
		{"keepalive with the defaults", ext("auth-keepalive", "8"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 8, Requests: 1000, Timeout: time.Minute}
			}), false, nil},
		{"keepalive with requests and timeout", ext("auth-keepalive", "1024", "auth-keepalive-requests", "1000000", "auth-keepalive-timeout", "30s"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 1024, Requests: 1000000, Timeout: 30 * time.Second}
			}), false, nil},
		{"keepalive timeout in ingress-nginx's seconds", ext("auth-keepalive", "1", "auth-keepalive-timeout", "5"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 1, Requests: 1000, Timeout: 5 * time.Second}
			}), false, nil},
		{"keepalive 0 is off", ext("auth-keepalive", "0"), want(nil), false, nil},
		{"share-vars true is what the subrequest does", ext("auth-keepalive", "2", "auth-keepalive-share-vars", "true"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 2, Requests: 1000, Timeout: time.Minute}
			}), false, nil},
		{"share-vars false cannot be honoured", ext("auth-keepalive", "2", "auth-keepalive-share-vars", "false"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 2, Requests: 1000, Timeout: time.Minute}
			}),
			false, []problem{ignored("auth-keepalive-share-vars")}},
		{"keepalive settings without keepalive", ext("auth-keepalive-requests", "10", "auth-keepalive-timeout", "10"), want(nil), false,
			[]problem{ignored("auth-keepalive-requests"), ignored("auth-keepalive-timeout")}},
		{"keepalive settings with keepalive 0", ext("auth-keepalive", "0", "auth-keepalive-requests", "10"), want(nil), false,
			[]problem{ignored("auth-keepalive-requests")}},
		{"keepalive without auth-url", map[string]string{"auth-keepalive": "8"}, nil, false, []problem{ignored("auth-keepalive")}},
		{"negative keepalive", ext("auth-keepalive", "-1"), want(nil), false, []problem{invalid("auth-keepalive")}},
		{"keepalive above the bound", ext("auth-keepalive", "1025"), want(nil), false, []problem{invalid("auth-keepalive")}},
		{"keepalive with a directive", ext("auth-keepalive", "8; keepalive_time 1h"), want(nil), false, []problem{invalid("auth-keepalive")}},
		{"zero requests keep the default", ext("auth-keepalive", "4", "auth-keepalive-requests", "0"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 4, Requests: 1000, Timeout: time.Minute}
			}),
			false, []problem{invalid("auth-keepalive-requests")}},
		{"zero timeout keeps the default", ext("auth-keepalive", "4", "auth-keepalive-timeout", "0"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 4, Requests: 1000, Timeout: time.Minute}
			}),
			false, []problem{invalid("auth-keepalive-timeout")}},
		{"timeout in days", ext("auth-keepalive", "4", "auth-keepalive-timeout", "1d"),
			want(func(a *model.ExternalAuth) {
				a.Keepalive = &model.AuthKeepalive{Connections: 4, Requests: 1000, Timeout: time.Minute}
			}),
			false, []problem{invalid("auth-keepalive-timeout")}},
		{"bad share-vars", ext("auth-keepalive-share-vars", "yes"), want(nil), false, []problem{invalid("auth-keepalive-share-vars")}},

		{"bad enable-global-auth keeps it on", map[string]string{"enable-global-auth": "nope"}, nil, false, []problem{invalid("enable-global-auth")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.ExternalAuth, tc.want) {
				t.Fatalf("ExternalAuth = %+v, want %+v", res.Location.ExternalAuth, tc.want)
			}
			if res.NoGlobalAuth != tc.noGlobal {
				t.Fatalf("NoGlobalAuth = %v, want %v", res.NoGlobalAuth, tc.noGlobal)
			}
		})
	}
}

// TestExtAuthProxySetHeaders: auth-proxy-set-headers names a ConfigMap in
// the Ingress's namespace; anything else fails closed.
func TestExtAuthProxySetHeaders(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        *ObjectName
		problems    []problem
	}{
		{"name", "auth-headers", &ObjectName{"default", "auth-headers"}, nil},
		{"namespace/name", "default/auth-headers", &ObjectName{"default", "auth-headers"}, nil},
		{"other namespace", "kube-system/auth-headers", nil, []problem{closes("auth-proxy-set-headers")}},
		{"bad name", "Auth_Headers", nil, []problem{closes("auth-proxy-set-headers")}},
		{"empty", "", nil, []problem{closes("auth-proxy-set-headers")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(map[string]string{"auth-url": "http://auth.example.com/", "auth-proxy-set-headers": tc.value})
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.AuthProxySetHeaders, tc.want) {
				t.Fatalf("AuthProxySetHeaders = %v, want %v", res.AuthProxySetHeaders, tc.want)
			}
		})
	}
	res, problems := parseNames(map[string]string{"auth-proxy-set-headers": "auth-headers"})
	checkProblems(t, problems, []problem{ignored("auth-proxy-set-headers")})
	if res.AuthProxySetHeaders != nil {
		t.Fatalf("without auth-url: AuthProxySetHeaders = %v", res.AuthProxySetHeaders)
	}
}
