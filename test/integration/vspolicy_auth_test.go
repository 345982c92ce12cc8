package integration

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// startSigninAuthService is an authentication Service on a loopback
// address: "Bearer good" gets 200 with a cookie, "Bearer banned" 403,
// anything else 401; its sign-in page /oauth2/signin answers 200 naming
// the URI it got.
func startSigninAuthService(t *testing.T) *backend {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{Service: "auth", IP: l.Addr().(*net.TCPAddr).IP.String(), Port: l.Addr().(*net.TCPAddr).Port}
	b.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth2/signin" {
			w.Header().Set("X-Signin-URI", r.URL.RequestURI())
			w.WriteHeader(200)
			fmt.Fprint(w, "sign in")
			return
		}
		if r.URL.Path != "/check" {
			w.WriteHeader(404)
			return
		}
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			w.Header().Set("Set-Cookie", "session=s1; Path=/")
			w.WriteHeader(200)
		case "Bearer banned":
			w.WriteHeader(403)
		default:
			w.WriteHeader(401)
		}
	})}
	go b.srv.Serve(l)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

// TestVirtualServerExternalAuthAgainstNginx: an externalAuth Policy asks
// its Service through the balancer: a 2xx passes to the route's own
// upstream (the subrequest must not redirect it to the auth Service), 401
// and 403 reach the client, authSigninURI answers a 401 with the sign-in
// page, served by the Service; a Policy naming a missing Service makes
// the routes answer 500.
func TestVirtualServerExternalAuthAgainstNginx(t *testing.T) {
	t.Parallel()
	app, auth := startBackend(t, "app"), startSigninAuthService(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) + serviceYAML("default", "auth", 8080, auth) + `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: ext, namespace: default}
spec:
  externalAuth: {authServiceName: auth, authServicePorts: [8080], authURI: /check}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: signin, namespace: default}
spec:
  externalAuth: {authServiceName: default/auth, authServicePorts: [8080], authURI: /check, authSigninURI: /oauth2/signin}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: missing, namespace: default}
spec:
  externalAuth: {authServiceName: nobody, authURI: /check}
---
`
	for _, v := range []struct{ name, host, policy string }{
		{"ext", "ext.vs.test", "ext"}, {"signin", "signin.vs.test", "signin"}, {"missing", "missing.vs.test", "missing"}} {
		m += fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: %s, namespace: default}
spec:
  host: %s
  policies: [{name: %s}]
  upstreams: [{name: app, service: app, port: 80}]
  routes: [{path: /, action: {pass: app}}]
---
`, v.name, v.host, v.policy)
	}
	c := startController(t, map[string]string{"manifests.yaml": m})
	for _, tc := range []struct {
		name, host, path, authz string
		want                    int
	}{
		{"good token: the route's upstream answers", "ext.vs.test", "/orders", "Bearer good", 200},
		{"no token: 401", "ext.vs.test", "/orders", "", 401},
		{"banned: 403", "ext.vs.test", "/orders", "Bearer banned", 403},
		{"missing Service: closed", "missing.vs.test", "/orders", "Bearer good", 500},
		{"sign-in: a 401 gets the sign-in page", "signin.vs.test", "/orders?id=1", "", 200},
		{"sign-in: a good token passes", "signin.vs.test", "/orders", "Bearer good", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.authGet(t, tc.host, tc.path, tc.authz)
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d (body %q)", r.Status, tc.want, r.Body)
			}
			if tc.want != 200 {
				return
			}
			if tc.authz == "" {
				// An internal redirect to the sign-in path, asked of the Service.
				if r.Body != "sign in" || r.Header.Get("X-Signin-URI") != "/oauth2/signin" {
					t.Errorf("sign-in answer %q with X-Signin-URI %q", r.Body, r.Header.Get("X-Signin-URI"))
				}
				return
			}
			if r.Reply.Service != "app" || r.Header.Get("Set-Cookie") != "session=s1; Path=/" {
				t.Errorf("answered by %q with cookie %q", r.Reply.Service, r.Header.Get("Set-Cookie"))
			}
		})
	}
	// The sign-in pages themselves are the Service's, without authentication.
	if r := c.authGet(t, "signin.vs.test", "/oauth2/signin", ""); r.Status != 200 || r.Body != "sign in" {
		t.Errorf("/oauth2/signin: %d %q", r.Status, r.Body)
	}
}
