package integration

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// fakeOAuth2Proxy behaves as oauth2-proxy does behind ingress-nginx:
// /oauth2/auth answers 202 with X-Auth-Request-User and -Email when the
// session cookie is present and 401 without it; /oauth2/start signs the
// user in (sets the cookie) and redirects to rd. It remembers the Host
// and loop header of the last /oauth2/auth request.
type fakeOAuth2Proxy struct {
	*backend
	mu                  sync.Mutex
	authHost, authLoop  string
	authCalls, starts   int
	lastRD, lastAuthURI string
}

const oauth2Cookie = "_oauth2_proxy"

func startFakeOAuth2Proxy(t *testing.T) *fakeOAuth2Proxy {
	t.Helper()
	f := &fakeOAuth2Proxy{}
	f.backend = startHandlerBackend(t, "oauth2-proxy", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		switch r.URL.Path {
		case "/oauth2/auth":
			f.authCalls++
			f.authHost, f.authLoop, f.lastAuthURI = r.Host, r.Header.Get("Causeway-Auth-Loop"), r.URL.RequestURI()
			if c, err := r.Cookie(oauth2Cookie); err == nil && c.Value == "alice" {
				w.Header().Set("X-Auth-Request-User", "alice")
				w.Header().Set("X-Auth-Request-Email", "alice@example.com")
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
		case "/oauth2/start":
			f.starts++
			f.lastRD = r.URL.Query().Get("rd")
			http.SetCookie(w, &http.Cookie{Name: oauth2Cookie, Value: "alice", Path: "/"})
			w.Header().Set("Location", f.lastRD)
			w.WriteHeader(http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	return f
}

func (f *fakeOAuth2Proxy) seen() (host, loop, uri string, calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authHost, f.authLoop, f.lastAuthURI, f.authCalls
}

// oauth2IngressesYAML is the common oauth2-proxy setup for host: the
// application's Ingress asks https or http://$host/oauth2/auth, and
// another Ingress of the same host sends /oauth2 to oauth2-proxy.
func oauth2IngressesYAML(host, scheme string, tls bool) string {
	spec := ""
	if tls {
		spec = fmt.Sprintf("  tls:\n  - hosts: [%q]\n", host)
	}
	name := strings.ReplaceAll(host, ".", "-")
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s-app
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/auth-url: "%[3]s://$host/oauth2/auth"
    nginx.ingress.kubernetes.io/auth-signin: "%[3]s://$host/oauth2/start?rd=$escaped_request_uri"
    nginx.ingress.kubernetes.io/auth-response-headers: "X-Auth-Request-User, X-Auth-Request-Email"
spec:
  ingressClassName: causeway
%[4]s  rules:
  - host: %[2]q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s-oauth2, namespace: default}
spec:
  ingressClassName: causeway
%[4]s  rules:
  - host: %[2]q
    http:
      paths:
      - {path: /oauth2, pathType: Prefix, backend: {service: {name: oauth2-proxy, port: {number: 80}}}}
---
`, name, host, scheme, spec)
}

// TestExternalAuthOAuth2ProxyFlow runs oauth2-proxy's recipe as written
// for ingress-nginx (auth-url https://$host/oauth2/auth, auth-signin
// https://$host/oauth2/start?rd=$escaped_request_uri) through real nginx:
// without the cookie the client is sent to the sign-in with rd the
// escaped original URI, the sign-in sets the cookie and sends it back, and
// then the backend answers with the user's headers. The subrequest goes
// back to this nginx's server for the host, over HTTP and over HTTPS,
// whatever DNS would say of the host (nothing resolves these names).
func TestExternalAuthOAuth2ProxyFlow(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	proxy := startFakeOAuth2Proxy(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) + serviceYAML("default", "oauth2-proxy", 80, proxy.backend) +
		oauth2IngressesYAML("sso.test", "http", false) + oauth2IngressesYAML("tls.test", "https", true)
	c := startController(t, map[string]string{"manifests.yaml": m})

	for _, tc := range []struct{ scheme, host string }{{"http", "sso.test"}, {"https", "tls.test"}} {
		t.Run(tc.scheme, func(t *testing.T) {
			port := c.HTTPPort
			if tc.scheme == "https" {
				port = c.HTTPSPort
			}
			do := func(path string, hdr map[string]string) harness.Result {
				t.Helper()
				r, err := harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(port)),
					harness.Request{Method: "GET", Scheme: tc.scheme, Host: tc.host, Path: path, Header: hdr})
				if err != nil {
					t.Fatalf("GET %s%s: %v", tc.host, path, err)
				}
				return r
			}
			// Unauthenticated: a 302 to the sign-in, rd the escaped URI;
			// a forged user header does not help.
			const original = "/dash/a b?x=1&y=2"
			r := do("/dash/a%20b?x=1&y=2", map[string]string{"X-Auth-Request-User": "mallory"})
			want := tc.scheme + "://" + tc.host + "/oauth2/start?rd=%2Fdash%2Fa%2520b%3Fx%3D1%26y%3D2"
			if r.Status != http.StatusFound || r.Location != want {
				t.Fatalf("without the cookie: %d, Location %q; want 302 to %q", r.Status, r.Location, want)
			}
			if host, loop, uri, _ := proxy.seen(); host != tc.host || loop != "1" || uri != "/oauth2/auth" {
				t.Errorf("oauth2-proxy was asked %s with Host %q, loop header %q; want /oauth2/auth of %s over the loop", uri, host, loop, tc.host)
			}
			// The sign-in, through the other Ingress: a cookie and a
			// redirect to the original URI.
			u, err := url.Parse(r.Location)
			if err != nil {
				t.Fatal(err)
			}
			r = do(u.RequestURI(), nil)
			cookie := r.Header.Get("Set-Cookie")
			if rd, _ := url.QueryUnescape(strings.TrimPrefix(u.RawQuery, "rd=")); r.Status != http.StatusFound || r.Location != rd ||
				!strings.HasPrefix(rd, "/dash/a%20b?") || !strings.HasPrefix(cookie, oauth2Cookie+"=alice") {
				t.Fatalf("sign-in: %d, Location %q, Set-Cookie %q; want 302 to %q with the session cookie", r.Status, r.Location, cookie, rd)
			}
			if want := "/dash/a%20b?x=1&y=2"; r.Location != want || strings.ReplaceAll(want, "%20", " ") != original {
				t.Fatalf("rd came back as %q, want %q", r.Location, want)
			}
			// Signed in: the backend answers, with the service's headers,
			// not the client's.
			r = do(r.Location, map[string]string{"Cookie": oauth2Cookie + "=alice", "X-Auth-Request-User": "mallory"})
			if r.Status != http.StatusOK || r.Reply.Service != "app" || r.Reply.Headers["X-Auth-Request-User"] != "alice" ||
				r.Reply.Headers["X-Auth-Request-Email"] != "alice@example.com" || r.Reply.URI != "/dash/a%20b?x=1&y=2" {
				t.Fatalf("with the cookie: %d from %q for %q, headers %v; want 200 from app with alice's", r.Status, r.Reply.Service, r.Reply.URI, r.Reply.Headers)
			}
		})
	}

	// The loop cannot recurse: a host whose only Ingress protects / with
	// $host authentication (so /oauth2/auth is protected too) answers
	// 500 at once, asking oauth2-proxy nothing.
	_, _, _, before := proxy.seen()
	c.WriteManifest("loop.yaml", annotatedIngressYAML("loop", "loop.test", "oauth2-proxy", "auth-url", "http://$host/oauth2/auth"))
	eventually(t, 20*time.Second, func() error {
		if r := c.Get("loop.test", "/x"); r.Status != http.StatusInternalServerError {
			return fmt.Errorf("a protected /oauth2/auth: %d, want 500", r.Status)
		}
		return nil
	})
	if _, _, _, after := proxy.seen(); after != before {
		t.Errorf("oauth2-proxy was asked %d times through the recursing host", after-before)
	}

	// $host in a rule without host names whatever the client sends: 503
	// with a Problem, the named hosts keep working.
	c.WriteManifest("catchall.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: catchall
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/auth-url: "http://$host/oauth2/auth"}
spec:
  ingressClassName: causeway
  rules:
  - http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
`)
	eventually(t, 20*time.Second, func() error {
		if r := c.Get("unknown.test", "/"); r.Status != http.StatusServiceUnavailable {
			return fmt.Errorf("the catch-all rule: %d, want 503", r.Status)
		}
		if log := c.log.String(); !strings.Contains(log, "default/catchall") || !strings.Contains(log, "names $host") {
			return fmt.Errorf("no Problem names default/catchall")
		}
		return nil
	})
	if r := c.Get("sso.test", "/"); r.Status != http.StatusFound {
		t.Errorf("sso.test after the catch-all rule: %d, want 302", r.Status)
	}
}
