package integration

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
)

// authService is an authentication service on a loopback address: it
// lets "Bearer good" in (200, with X-Auth-User, X-Auth-Groups and a
// cookie) and "Bearer quiet" (200 alone), answers 403 to "Bearer banned"
// and 401 to anything else. On
// /global it wants "Bearer global" instead. It counts the requests it gets
// and remembers the last one's method and X-Original-URL.
type authService struct {
	IP    string
	Port  int
	calls atomic.Int64
	mu    sync.Mutex
	last  *http.Request
}

func startAuthService(t *testing.T) *authService {
	t.Helper()
	a := &authService{IP: loopbackIP()}
	l, err := net.Listen("tcp", net.JoinHostPort(a.IP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	a.Port = l.Addr().(*net.TCPAddr).Port
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.calls.Add(1)
		a.mu.Lock()
		a.last = r.Clone(r.Context())
		a.mu.Unlock()
		good := "Bearer good"
		if r.URL.Path == "/global" {
			good = "Bearer global"
		}
		switch r.Header.Get("Authorization") {
		case good:
			w.Header().Set("X-Auth-User", "alice")
			w.Header().Set("X-Auth-Groups", "staff")
			w.Header().Set("Set-Cookie", "session=s1; Path=/")
			w.WriteHeader(200)
		case "Bearer quiet":
			w.WriteHeader(200)
		case "Bearer banned":
			w.WriteHeader(403)
		default:
			w.WriteHeader(401)
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return a
}

func (a *authService) URL(path string) string {
	return "http://" + net.JoinHostPort(a.IP, strconv.Itoa(a.Port)) + path
}

func (a *authService) lastRequest() *http.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// do sends a request to the controller with the given Authorization.
func (c *controller) authGet(t *testing.T, host, path, authz string, hdr ...string) result {
	t.Helper()
	req := harness.Request{Method: "GET", Scheme: "http", Host: host, Path: path, Header: map[string]string{}}
	if authz != "" {
		req.Header["Authorization"] = authz
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header[hdr[i]] = hdr[i+1]
	}
	r, err := harness.Do(net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort)), req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", host, path, err)
	}
	return r
}

// TestExternalAuthAgainstNginx runs ingress-nginx's external
// authentication through real nginx against a real service: a 2xx passes
// with the answer's headers and cookie, 401 and 403 reach the client,
// auth-signin redirects with the original URL, auth-method and
// auth-proxy-set-headers are sent,
// auth-cache-key saves the second call, and the ConfigMap's
// global-auth-url covers the other Ingresses but those opting out and
// no-auth-locations.
func TestExternalAuthAgainstNginx(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	auth := startAuthService(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) +
		annotatedIngressYAML("ext", "ext.test", "app", "auth-url", auth.URL("/check"), "auth-response-headers", "X-Auth-User, X-Auth-Groups",
			"auth-proxy-set-headers", "auth-headers") +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: auth-headers, namespace: default}\ndata: {X-Required-Group: staff}\n---\n" +
		annotatedIngressYAML("method", "method.test", "app", "auth-url", auth.URL("/check"), "auth-method", "POST",
			"auth-snippet", `set $tenant "blue"; proxy_set_header X-Tenant $tenant;`) +
		annotatedIngressYAML("signin", "signin.test", "app", "auth-url", auth.URL("/check"), "auth-signin", "https://login.example.com/start?client=app") +
		annotatedIngressYAML("cache", "cache.test", "app", "auth-url", auth.URL("/check"), "auth-cache-key", "$http_authorization", "auth-cache-duration", "200 401 1m") +
		annotatedIngressYAML("global", "global.test", "app") +
		annotatedIngressYAML("optout", "optout.test", "app", "enable-global-auth", "false") +
		annotatedIngressYAML("corsauth", "corsauth.test", "app", "auth-url", auth.URL("/check"),
			"enable-cors", "true", "cors-allow-origin", "https://app.example.com") +
		ingressYAML("default", "acme", "global.test", "Prefix /.well-known/acme-challenge app") +
		configMapYAML(map[string]string{"global-auth-url": auth.URL("/global"), "global-auth-response-headers": "X-Auth-User",
			"allow-snippet-annotations": "true"})
	c := startController(t, map[string]string{"manifests.yaml": m})

	// 2xx passes, with the answer's headers replacing the client's.
	r := c.authGet(t, "ext.test", "/orders?id=1", "Bearer good", "X-Auth-User", "mallory")
	if r.Status != 200 || r.Reply.Service != "app" || r.Reply.Headers["X-Auth-User"] != "alice" || r.Reply.Headers["X-Auth-Groups"] != "staff" {
		t.Fatalf("good token: status %d, reply %+v; want 200 with X-Auth-User alice and X-Auth-Groups staff", r.Status, r.Reply)
	}
	if got := r.Header.Get("Set-Cookie"); got != "session=s1; Path=/" {
		t.Errorf("the service's cookie reached the client as %q", got)
	}
	if last := auth.lastRequest(); last.Method != "GET" || last.Header.Get("X-Original-Url") != "http://ext.test/orders?id=1" ||
		last.URL.Path != "/check" || last.Header.Get("X-Auth-Request-Redirect") != "/orders?id=1" || last.Header.Get("X-Required-Group") != "staff" {
		t.Errorf("the service got %s %s with X-Original-URL %q, X-Auth-Request-Redirect %q, X-Required-Group %q", last.Method, last.URL,
			last.Header.Get("X-Original-Url"), last.Header.Get("X-Auth-Request-Redirect"), last.Header.Get("X-Required-Group"))
	}
	// 401 and 403 reach the client, and the backend is never asked; a
	// client-sent X-Auth-User does not get in.
	if r := c.authGet(t, "ext.test", "/", "", "X-Auth-User", "alice"); r.Status != 401 || r.Reply.Service != "" {
		t.Errorf("no token: status %d from %q, want 401 from nginx", r.Status, r.Reply.Service)
	}
	if r := c.authGet(t, "ext.test", "/", "Bearer banned"); r.Status != 403 {
		t.Errorf("banned token: status %d, want 403", r.Status)
	}

	// With CORS for listed origins, an allowed origin's answer carries
	// the service's cookie too (the CORS if's add_header lines replace
	// the location's, so it repeats them all).
	for _, origin := range []string{"https://app.example.com", "https://other.example.com"} {
		r := c.authGet(t, "corsauth.test", "/", "Bearer good", "Origin", origin)
		allowed := ""
		if origin == "https://app.example.com" {
			allowed = origin
		}
		if r.Status != 200 || r.Header.Get("Set-Cookie") != "session=s1; Path=/" || r.Header.Get("Access-Control-Allow-Origin") != allowed {
			t.Errorf("CORS and auth, Origin %s: status %d, Set-Cookie %q, Access-Control-Allow-Origin %q; want 200, the service's cookie and %q",
				origin, r.Status, r.Header.Get("Set-Cookie"), r.Header.Get("Access-Control-Allow-Origin"), allowed)
		}
	}

	// auth-method, and auth-snippet's variable and header in the
	// subrequest.
	if r := c.authGet(t, "method.test", "/", "Bearer good"); r.Status != 200 || auth.lastRequest().Method != "POST" ||
		auth.lastRequest().Header.Get("X-Original-Uri") != "/" || auth.lastRequest().Header.Get("X-Tenant") != "blue" {
		t.Errorf("auth-method POST: status %d, the service got %s with X-Original-URI %q, X-Tenant %q", r.Status, auth.lastRequest().Method,
			auth.lastRequest().Header.Get("X-Original-Uri"), auth.lastRequest().Header.Get("X-Tenant"))
	}

	// auth-signin turns the 401 into a redirect carrying the original URL.
	r = c.authGet(t, "signin.test", "/a/b?x=1&y=2", "")
	if want := "https://login.example.com/start?client=app&rd=http%3A%2F%2Fsignin.test%2Fa%2Fb%3Fx%3D1%26y%3D2"; r.Status != 302 || r.Location != want {
		t.Errorf("sign-in: status %d, Location %q; want 302 to %q", r.Status, r.Location, want)
	}
	if r := c.authGet(t, "signin.test", "/", "Bearer banned"); r.Status != 403 {
		t.Errorf("sign-in with a banned token: %d, want 403 (only 401 redirects)", r.Status)
	}

	// auth-cache-key: the second request with the same key is decided
	// without the service, for 200 and 401 alike; another key asks again.
	// An answer that sets a cookie is not cached (nginx's rule, as in
	// ingress-nginx).
	for _, tc := range []struct {
		tok          string
		status, asks int64
	}{{"Bearer quiet", 200, 1}, {"Bearer nobody", 401, 1}, {"Bearer good", 200, 3}} {
		before := auth.calls.Load()
		for i := range 3 {
			if r := c.authGet(t, "cache.test", "/", tc.tok); int64(r.Status) != tc.status {
				t.Fatalf("%s, request %d: status %d, want %d", tc.tok, i, r.Status, tc.status)
			}
		}
		if n := auth.calls.Load() - before; n != tc.asks {
			t.Errorf("%s: the service was asked %d times for 3 requests, want %d", tc.tok, n, tc.asks)
		}
	}
	cacheDir := filepath.Join(c.StateDir, "tmp", "auth-cache")
	if _, err := os.Stat(cacheDir); err != nil {
		t.Errorf("cache directory: %v", err)
	}

	// Global authentication.
	if r := c.authGet(t, "global.test", "/", ""); r.Status != 401 {
		t.Errorf("global auth without a token: %d, want 401", r.Status)
	}
	if r := c.authGet(t, "global.test", "/", "Bearer good"); r.Status != 401 {
		t.Errorf("global auth with the per-Ingress token: %d, want 401", r.Status)
	}
	if r := c.authGet(t, "global.test", "/", "Bearer global"); r.Status != 200 || r.Reply.Headers["X-Auth-User"] != "alice" {
		t.Errorf("global auth with its token: %d, reply %+v; want 200 with X-Auth-User", r.Status, r.Reply)
	}
	if r := c.authGet(t, "ext.test", "/", "Bearer global"); r.Status != 401 {
		t.Errorf("an Ingress's own auth-url must win over the global one: %d, want 401", r.Status)
	}
	if r := c.authGet(t, "optout.test", "/", ""); r.Status != 200 {
		t.Errorf("enable-global-auth false: %d, want 200", r.Status)
	}
	if r := c.authGet(t, "global.test", "/.well-known/acme-challenge/token", ""); r.Status != 200 {
		t.Errorf("no-auth-locations: %d, want 200", r.Status)
	}
}

// TestExternalAuthInjectionAndUnresolvableHost: a hostile auth-url closes
// its Ingress and leaves no trace in nginx's configuration; an auth-url
// whose host nginx cannot resolve makes nginx refuse the configuration,
// and the controller leaves that Ingress out with a Problem. Other
// Ingresses keep serving throughout.
func TestExternalAuthInjectionAndUnresolvableHost(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	const hostile = "http://a.com/#;}}}location /pwned { return 200 \"pwned\"; } #"
	m := ingressClass + serviceYAML("default", "app", 80, app) +
		annotatedIngressYAML("evil", "evil.test", "app", "auth-url", hostile) +
		annotatedIngressYAML("other", "other.test", "app")
	c := startController(t, map[string]string{"manifests.yaml": m})
	if r := c.Get("evil.test", "/pwned"); r.Status != 503 {
		t.Errorf("hostile auth-url: /pwned answers %d, want 503", r.Status)
	}
	if r := c.Get("other.test", "/"); r.Status != 200 {
		t.Errorf("other Ingress: %d, want 200", r.Status)
	}
	conf := readConfig(t, c.StateDir)
	for _, trace := range []string{"pwned", "a.com", "auth_request"} {
		if strings.Contains(conf, trace) {
			t.Errorf("the configuration holds %q from the hostile auth-url", trace)
		}
	}
	eventually(t, 10*time.Second, func() error {
		if log := c.log.String(); !strings.Contains(log, "nginx.ingress.kubernetes.io/auth-url") || !strings.Contains(log, "default/evil") {
			return fmt.Errorf("the log names neither the annotation nor the Ingress")
		}
		return nil
	})

	// A name nginx cannot resolve: nginx -t fails on the server file and
	// the controller blames that host's Ingress.
	c.WriteManifest("unresolvable.yaml", annotatedIngressYAML("unres", "unres.test", "app", "auth-url", "http://no-such-host.invalid/auth"))
	c.WriteManifest("later.yaml", annotatedIngressYAML("later", "later.test", "app"))
	eventually(t, 20*time.Second, func() error {
		if r := c.Get("later.test", "/"); r.Status != 200 {
			return fmt.Errorf("an Ingress added beside the unresolvable one: %d, want 200", r.Status)
		}
		if log := c.log.String(); !strings.Contains(log, "default/unres") || !strings.Contains(log, "no-such-host.invalid") {
			return fmt.Errorf("the log does not blame default/unres for no-such-host.invalid")
		}
		return nil
	})
	if r := c.Get("unres.test", "/"); r.Status == 200 {
		t.Errorf("the Ingress whose auth-url cannot be resolved is served without authentication")
	}
	if r := c.Get("other.test", "/"); r.Status != 200 {
		t.Errorf("other Ingress after the refusal: %d, want 200", r.Status)
	}
}

// TestGlobalAuthUnresolvableHostFailsClosed: a global-auth-url whose host
// nginx cannot resolve makes nginx refuse nginx.conf; the controller falls
// back to the ConfigMap's defaults, which must close every path rather
// than serve it without authentication.
func TestGlobalAuthUnresolvableHostFailsClosed(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	auth := startAuthService(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) + annotatedIngressYAML("web", "web.test", "app")
	c := startController(t, map[string]string{"manifests.yaml": m, "config.yaml": configMapYAML(map[string]string{"global-auth-url": auth.URL("/global")})})
	if r := c.authGet(t, "web.test", "/", "Bearer global"); r.Status != 200 {
		t.Fatalf("global auth with its token: %d, want 200", r.Status)
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"global-auth-url": "http://no-such-host.invalid/auth"}))
	eventually(t, 20*time.Second, func() error {
		if r := c.authGet(t, "web.test", "/", "Bearer global"); r.Status != 503 {
			return fmt.Errorf("with an unresolvable global-auth-url: %d, want 503", r.Status)
		}
		if log := c.log.String(); !strings.Contains(log, `global-auth-url`) || !strings.Contains(log, "causeway/config") {
			return fmt.Errorf("the log does not name the ConfigMap and the key")
		}
		return nil
	})
	if r := c.authGet(t, "web.test", "/", ""); r.Status != 503 {
		t.Errorf("without a token: %d, want 503", r.Status)
	}
	// A resolvable URL again: the ConfigMap changed, so it is tried again.
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"global-auth-url": auth.URL("/global")}))
	eventually(t, 20*time.Second, func() error {
		if r := c.authGet(t, "web.test", "/", "Bearer global"); r.Status != 200 {
			return fmt.Errorf("after the fix: %d, want 200", r.Status)
		}
		return nil
	})
	if r := c.authGet(t, "web.test", "/", ""); r.Status != 401 {
		t.Errorf("after the fix, without a token: %d, want 401", r.Status)
	}
}

// TestExtAuthTableAgainstNginx sends the external authentication rows to
// a real nginx and the table's service; the build tests check the same
// rows on the Model.
func TestExtAuthTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, spec.ExtAuthTable)
}

// startSpecAuthService serves spec.AuthHandler on a loopback address.
func startSpecAuthService(t *testing.T) spec.Endpoint {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: spec.AuthHandler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	a := l.Addr().(*net.TCPAddr)
	return spec.Endpoint{IP: a.IP.String(), Port: a.Port}
}

// readConfig concatenates nginx.conf and the server files.
func readConfig(t *testing.T, stateDir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(stateDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".conf") {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
