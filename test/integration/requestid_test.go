package integration

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/causeway/causeway/test/echo"
)

// TestRequestIDOnePerRequest: a request keeps one X-Request-ID throughout,
// generated or the client's: its backend, its external auth check (a
// subrequest), the error page it ends in (a redirect to the default
// backend, which ingress-nginx documents as getting the backend's ID), the
// URI a backend's X-Accel-Redirect sends it to, and its access log line
// ($req_id, and $request_id as ingress-nginx has it) all see the same
// one, and the next request gets another.
func TestRequestIDOnePerRequest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	appSaw := map[string]string{} // path: the X-Request-ID the app got
	inner := echo.Handler("app", "app")
	app := startHandlerBackend(t, "app", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		appSaw[r.URL.Path] = r.Header.Get("X-Request-ID")
		mu.Unlock()
		if r.URL.Path == "/accel" {
			// nginx follows it with an internal redirect, which runs the
			// server's rewrite phase again.
			w.Header().Set("X-Accel-Redirect", "/after-accel")
			return
		}
		inner.ServeHTTP(w, r)
	}))
	errs := startBackend(t, "errors")
	auth := startAuthService(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) + serviceYAML("default", "errors", 80, errs) +
		annotatedIngressYAML("rid", "rid.test", "app", "auth-url", auth.URL("/check"),
			"custom-http-errors", "503", "default-backend", "errors") +
		// $request_id as ingress-nginx has it: the ID sent upstream when
		// the client sent none, nginx's own otherwise.
		configMapYAML(map[string]string{"log-format-upstream": "rid $request_uri $request_id $req_id"})
	c := startController(t, map[string]string{"manifests.yaml": m})
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)

	ids := map[string]bool{}
	for _, tc := range []struct {
		name, path, client, service string
	}{
		{"generated", "/ok", "", "app"},
		{"generated, through an error page", "/_status/503/x", "", "errors"},
		{"the client's", "/ok-client", "client-7", "app"},
		{"the client's, through an error page", "/_status/503/client", "client-8", "errors"},
		{"generated, through X-Accel-Redirect", "/accel", "", "app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{}
			if tc.client != "" {
				hdr = []string{"X-Request-ID", tc.client}
			}
			r := c.authGet(t, "rid.test", tc.path, "Bearer good", hdr...)
			if r.Status != 200 || r.Reply.Service != tc.service {
				t.Fatalf("status %d from %q, want 200 from %s", r.Status, r.Reply.Service, tc.service)
			}
			id := r.Reply.Headers["X-Request-ID"]
			switch {
			case tc.client != "" && id != tc.client:
				t.Errorf("%s got X-Request-ID %q, want the client's %q", tc.service, id, tc.client)
			case tc.client == "" && (!hex32.MatchString(id) || ids[id]):
				t.Errorf("%s got X-Request-ID %q, want 32 hex digits, new for this request", tc.service, id)
			}
			ids[id] = true
			mu.Lock()
			got, after := appSaw[tc.path], appSaw["/after-accel"]
			mu.Unlock()
			if got != id {
				t.Errorf("the app got X-Request-ID %q, %s %q", got, tc.service, id)
			}
			if tc.path == "/accel" && (r.Reply.URI != "/after-accel" || after != id) {
				t.Errorf("after X-Accel-Redirect the app got %s with X-Request-ID %q, want /after-accel with %q", r.Reply.URI, after, id)
			}
			if got := auth.lastRequest().Header.Get("X-Request-ID"); got != id {
				t.Errorf("the auth service got X-Request-ID %q, %s %q", got, tc.service, id)
			}
			line := c.logLine("rid "+tc.path+" ", func(string) bool { return true })
			f := strings.Fields(line)
			if len(f) != 4 || f[3] != id {
				t.Fatalf("access log line %q: want $req_id %q", line, id)
			}
			if tc.client == "" && f[2] != id || tc.client != "" && (!hex32.MatchString(f[2]) || f[2] == id) {
				t.Errorf("access log $request_id %q, X-Request-ID %q: want the same when generated, nginx's own else", f[2], id)
			}
		})
	}
}
