package model

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseAuthURLOnly is ParseAuthURL without the host, for the corpus
// tables.
func parseAuthURLOnly(s string) (string, error) {
	u, _, err := ParseAuthURL(s)
	return u, err
}

func TestParseAuthURL(t *testing.T) {
	for _, tc := range []struct{ in, url, host, err string }{
		{"https://auth.example.com/check", "https://auth.example.com/check", "auth.example.com", ""},
		{"HTTP://Auth.Example.COM:8080", "http://auth.example.com:8080/", "auth.example.com", ""},
		{"http://auth.example.com?x=1", "http://auth.example.com/?x=1", "auth.example.com", ""},
		{"http://10.0.0.1:80/oauth2/auth?allowed_groups=a,b", "http://10.0.0.1:80/oauth2/auth?allowed_groups=a,b", "10.0.0.1", ""},
		{"http://[2001:db8::1]/a", "http://[2001:db8::1]/a", "[2001:db8::1]", ""},
		{"http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth", "http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth", "oauth2-proxy.auth.svc.cluster.local", ""},
		{"", "", "", "absolute"},
		{"/oauth2/auth", "", "", "absolute"},
		{"ftp://a.example/", "", "", "http or https"},
		// Templates (oauth2-proxy's recipe): the request's own host, or a
		// literal host with variables in the query.
		{"http://$host/oauth2/auth", "http://${host}/oauth2/auth", "", ""},
		{"https://${HOST}", "https://${host}/", "", ""},
		{"$scheme://$best_http_host:$server_port?x=1", "${scheme}://${best_http_host}:${server_port}/?x=1", "", ""},
		{"https://a.example/auth?rd=$escaped_request_uri", "https://a.example/auth?rd=${escaped_request_uri}", "a.example", ""},
		{"http://auth.svc:8080$request_uri", "http://auth.svc:8080${request_uri}", "auth.svc", ""},
		{"http://a.example/$host/check?u=$http_x_user&a=$arg_a", "http://a.example/${host}/check?u=${http_x_user}&a=${arg_a}", "a.example", ""},
		{"http://$host:4180/oauth2/auth", "", "", "a port with $host"},
		{"$scheme://a.example/", "", "", "need the host to be $host"},
		{"http://a.example:$server_port/", "", "", "need the host to be $host"},
		{"http://$remote_addr/", "", "", "host may only be"},
		{"http://auth.$host/", "", "", "as a whole"},
		{"http://$host/$http_x_tenant/check", "", "", "only stand in the query"},
		{"http://$host/$arg_x", "", "", "only stand in the query"},
		{"http://$host/?x=$request_body", "", "", "not allowed"},
		{"http://$host/?x=$http_", "", "", "not allowed"},
		{"http://$host/?x=${http_x", "", "", "closing"},
		{"http://$host/?x=${a b}", "", "", "not a name"},
		{"http://$host/?x=$", "", "", "names no variable"},
		{"http://$host/?x=$http_x\"", "", "", "must not contain"},
		{"http://$host/?x=$http_x;return", "", "", "must not contain"},
		{"http://$host/?x=$http_x}", "", "", "must not contain"},
		{"http://$host/?x=$http_x#f", "", "", "fragment"},
		{"http://$host/a b", "", "", "must not contain"},
		{"http://$host$http_x", "", "", "want /, ? or $request_uri"},
		{"ftp://$host/", "", "", "http, https or $scheme"},
		{"$host://a.example/", "", "", "scheme may only be"},
		{"http://u@$host/", "", "", "as a whole"},
		{"http://u@a.example/?$host", "", "", "user name"},
		{"http://u:p@a.example/", "", "", "user name"},
		{"http://a.example/#x", "", "", "fragment"},
		{"http://a.example/\"; }", "", "", "must not contain"},
		{"http://a.example/a;b", "", "", "must not contain"},
		{"http://a.example/a b", "", "", "must not contain"},
		{"http://a.example/\n", "", "", "must not contain"},
		{"http://a.example:0/", "", "", "port"},
		{"http://127.1/", "", "", "dotted quad"},
	} {
		u, h, err := ParseAuthURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseAuthURL(%q) = %q, %v; want an error with %q", tc.in, u, err, tc.err)
			}
			continue
		}
		if err != nil || u != tc.url || string(h) != tc.host {
			t.Errorf("ParseAuthURL(%q) = %q, %q, %v; want %q, %q", tc.in, u, h, err, tc.url, tc.host)
		}
	}
}

func TestParseAuthCacheKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []AuthCacheKeyPart
		err  string
	}{
		{"$remote_user$http_authorization", []AuthCacheKeyPart{{Var: "remote_user"}, {Var: "http_authorization"}}, ""},
		{"user:${remote_user}|$cookie__oauth2_proxy", []AuthCacheKeyPart{{Literal: "user:"}, {Var: "remote_user"}, {Literal: "|"}, {Var: "cookie__oauth2_proxy"}}, ""},
		{"$host$request_uri$http_x_api_key", []AuthCacheKeyPart{{Var: "host"}, {Var: "request_uri"}, {Var: "http_x_api_key"}}, ""},
		{"", nil, "1 to 256"},
		{strings.Repeat("$host", 52), nil, "1 to 256"},
		{"constant", nil, "at least one variable"},
		{"$remote_user", nil, "at least one variable"},
		{"$host$request_uri", nil, "at least one variable"},
		{"$request_body", nil, "not allowed"},
		{"$remote_addr$http_x", nil, "not allowed"},
		{"$http_", nil, "not allowed"},
		{"$cookie_A", nil, "not allowed"},
		{"$", nil, "not allowed"},
		{"${host", nil, "closing"},
		{"${ho st}", nil, "not allowed"},
		{"$http_x;", nil, "not ';'"},
		{`$http_x"`, nil, "want letters"},
		{"$http_x{x}", nil, "want letters"},
		{"$http_x\n", nil, "want letters"},
		{"$http_x#", nil, "want letters"},
		{"$http_x x", nil, "want letters"},
	} {
		got, err := ParseAuthCacheKey(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseAuthCacheKey(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseAuthCacheKey(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseAuthCacheDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []AuthCacheValid
		ok   bool
	}{
		{"200 202 401 5m", DefaultAuthCacheValid, true},
		{"200 10m, 401 30s", []AuthCacheValid{{Codes: []int{200}, Duration: 10 * time.Minute}, {Codes: []int{401}, Duration: 30 * time.Second}}, true},
		{"1h", []AuthCacheValid{{Duration: time.Hour}}, true},
		{" 200  5m ,, ", []AuthCacheValid{{Codes: []int{200}, Duration: 5 * time.Minute}}, true},
		{"", nil, false},
		{"200", nil, false},
		{"5m 200", nil, false},
		{"200 0s", nil, false},
		{"200 1d", nil, false},
		{"099 5m", nil, false},
		{"600 5m", nil, false},
		{"200 25h", nil, false},
		{"200 5m;", nil, false},
		{"200 5m\n", []AuthCacheValid{{Codes: []int{200}, Duration: 5 * time.Minute}}, true}, // Fields splits on the newline; nothing is kept raw
		{"any 5m", nil, false},
		{strings.Repeat("200 1m,", 17), nil, false},
	} {
		got, err := ParseAuthCacheDuration(tc.in)
		if (err == nil) != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseAuthCacheDuration(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestExtAuthSmallGrammars(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(string) error
		in    string
		ok    bool
	}{
		{"method", func(s string) error { _, err := ParseAuthMethod(s); return err }, "GET", true},
		{"method", func(s string) error { _, err := ParseAuthMethod(s); return err }, "OPTIONS", true},
		{"method", func(s string) error { _, err := ParseAuthMethod(s); return err }, "get", false},
		{"method", func(s string) error { _, err := ParseAuthMethod(s); return err }, "GET;", false},
		{"method", func(s string) error { _, err := ParseAuthMethod(s); return err }, "", false},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, "rd", true},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, "return_to.url-x", true},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, "", false},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, "r=d", false},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, "r&d", false},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, "$rd", false},
		{"param", func(s string) error { _, err := ParseQueryParam(s); return err }, strings.Repeat("r", 65), false},
		{"headers", func(s string) error { _, err := ParseAuthResponseHeaders(s); return err }, "X-User, X-Email,X_Groups", true},
		{"headers", func(s string) error { _, err := ParseAuthResponseHeaders(s); return err }, "*", false},
		{"headers", func(s string) error { _, err := ParseAuthResponseHeaders(s); return err }, "X.User", false},
		{"headers", func(s string) error { _, err := ParseAuthResponseHeaders(s); return err }, "X-User,", false},
		{"headers", func(s string) error { _, err := ParseAuthResponseHeaders(s); return err }, "X-User;", false},
		{"headers", func(s string) error { _, err := ParseAuthResponseHeaders(s); return err }, strings.Repeat("H,", 32) + "H", false}, // counted as written
		{"no-auth", func(s string) error { _, err := ParseNoAuthLocations(s); return err }, "/.well-known/acme-challenge, /health", true},
		{"no-auth", func(s string) error { _, err := ParseNoAuthLocations(s); return err }, "", true},
		{"no-auth", func(s string) error { _, err := ParseNoAuthLocations(s); return err }, "health", false},
		{"no-auth", func(s string) error { _, err := ParseNoAuthLocations(s); return err }, "/a b", false},
		{"no-auth", func(s string) error { _, err := ParseNoAuthLocations(s); return err }, "/$x", false},
	} {
		if err := tc.parse(tc.in); (err == nil) != tc.ok {
			t.Errorf("%s %q: %v, want ok %v", tc.name, tc.in, err, tc.ok)
		}
	}
}

func FuzzParseAuthURL(f *testing.F) {
	seedValues(f, "ParseAuthURL", "https://auth.example.com/check", "HTTP://A.Example:8080", "http://[2001:db8::1]:4180/oauth2/auth?x=%2F", "http://a.example?",
		"https://$host/oauth2/auth", "$scheme://${best_http_host}:$server_port?rd=$escaped_request_uri", "http://auth.svc$request_uri", "http://a.example/x?u=$http_x_user&a=$arg_a")
	f.Fuzz(func(t *testing.T, s string) {
		out, host, err := ParseAuthURL(s)
		if err != nil {
			return
		}
		checkFuzzOutput(t, "ParseAuthURL", s, out)
		if host == "" {
			// The request's own host.
			if !strings.Contains(out, "://${host}") && !strings.Contains(out, "://${best_http_host}") {
				t.Fatalf("ParseAuthURL(%q) gave no host for %q", s, out)
			}
		} else if _, err := ParseHeaderValue(string(host)); err != nil || !strings.Contains(out, "://"+string(host)) {
			t.Fatalf("ParseAuthURL(%q) gave host %q for %q", s, host, out)
		}
		if rest := strings.SplitN(out, "://", 2)[1]; !strings.Contains(rest, "/") && !strings.Contains(rest, "${request_uri}") {
			t.Fatalf("ParseAuthURL(%q) = %q, without a path", s, out)
		}
		if strings.Contains(out, "$") {
			checkTemplate(t, s, out, true)
		}
	})
}

// FuzzParseSigninURL: what ParseSigninURL accepts is a URL or a template
// that parses to itself.
func FuzzParseSigninURL(f *testing.F) {
	seedValues(f, "ParseSigninURL", "https://login.example.com/start", "https://$host/oauth2/start?rd=$escaped_request_uri",
		"$scheme://$best_http_host/start?rd=$scheme://$host$request_uri", "https://a.example$request_uri", "https://$host:$server_port/s?x=$arg_x&h=$http_x_h")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseSigninURL(s)
		if err != nil {
			return
		}
		checkFuzzOutput(t, "ParseSigninURL", s, out)
		if strings.Contains(out, "$") {
			checkTemplate(t, s, out, false)
		}
	})
}

// checkTemplate checks a template a parser returned: it parses to a
// template that prints as out, its variables are allowlisted, and those
// a client controls freely stand in the query only.
func checkTemplate(t *testing.T, in, out string, auth bool) {
	t.Helper()
	tm, err := ParseURLTemplate(out)
	if err != nil || tm.String() != out {
		t.Fatalf("%q gave %q, which parses as %q, %v", in, out, tm.String(), err)
	}
	if auth {
		if a, err := AuthURLTemplate(out); err != nil || a.String() != out {
			t.Fatalf("%q gave %q, which AuthURLTemplate reads as %q, %v", in, out, a.String(), err)
		}
	}
	inQuery := false
	for _, p := range tm.Rest {
		switch {
		case p.Var == "":
			if strings.ContainsAny(p.Literal, `${}\"' ;#`) {
				t.Fatalf("%q gave literal %q", in, p.Literal)
			}
			inQuery = inQuery || strings.Contains(p.Literal, "?")
		case !URLTemplateVar(p.Var):
			t.Fatalf("%q gave variable %q", in, p.Var)
		case !inQuery && !pathVar(p.Var):
			t.Fatalf("%q gave $%s in the path of %q", in, p.Var, out)
		case p.Var == URLVarRequestURI:
			inQuery = true
		}
	}
}

func FuzzParseAuthCacheKey(f *testing.F) {
	seedValues(f, "ParseAuthCacheKey", "$remote_user$http_authorization", "k:${cookie_s}|$host", "$http_x")
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := ParseAuthCacheKey(s)
		if err != nil {
			return
		}
		for _, p := range parts {
			if p.Var != "" && !AuthCacheVar(p.Var) || p.Var == "" && (p.Literal == "" || strings.IndexFunc(p.Literal, func(r rune) bool { return r > 0x7e || !cacheKeyLiteral(byte(r)) }) >= 0) {
				t.Fatalf("ParseAuthCacheKey(%q) gave part %+v", s, p)
			}
		}
	})
}

func TestAuthKeepalive(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"60", time.Minute, true}, // ingress-nginx's seconds
		{"30s", 30 * time.Second, true},
		{"500ms", 500 * time.Millisecond, true},
		{"1h", time.Hour, true},
		{"0", 0, false},   // ingress-nginx turns keepalive off
		{"61m", 0, false}, // above the bound
		{"-1", 0, false},
		{"1d", 0, false},
		{"60s;", 0, false},
		{"", 0, false},
	} {
		d, err := ParseAuthKeepaliveTimeout(tc.in)
		if (err == nil) != tc.ok || d != tc.want {
			t.Errorf("ParseAuthKeepaliveTimeout(%q) = %v, %v; want %v, ok %v", tc.in, d, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		k  AuthKeepalive
		ok bool
	}{
		{AuthKeepalive{1, 1, time.Millisecond}, true},
		{AuthKeepalive{MaxAuthKeepalive, MaxAuthKeepaliveRequests, MaxAuthKeepaliveTimeout}, true},
		{AuthKeepalive{0, 1000, time.Minute}, false},
		{AuthKeepalive{MaxAuthKeepalive + 1, 1000, time.Minute}, false},
		{AuthKeepalive{1, 0, time.Minute}, false},
		{AuthKeepalive{1, MaxAuthKeepaliveRequests + 1, time.Minute}, false},
		{AuthKeepalive{1, 1000, 0}, false},
		{AuthKeepalive{1, 1000, MaxAuthKeepaliveTimeout + time.Second}, false},
	} {
		if err := tc.k.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v, want ok %v", tc.k, err, tc.ok)
		}
	}
}
