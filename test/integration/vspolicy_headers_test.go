package integration

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// policyVirtualServerYAML is a VirtualServer for host whose spec.policies
// name policies, with one route / to the Service app; tls names a
// kubernetes.io/tls Secret, "" for none.
func policyVirtualServerYAML(name, host, tls string, policies ...string) string {
	refs := []string{}
	for _, p := range policies {
		refs = append(refs, "{name: "+p+"}")
	}
	t := ""
	if tls != "" {
		t = "\n  tls: {secret: " + tls + "}"
	}
	return fmt.Sprintf(`apiVersion: k8s.nginx.org/v1
kind: VirtualServer
metadata: {name: %s, namespace: default}
spec:
  host: %s%s
  policies: [%s]
  upstreams: [{name: app, service: app, port: 80}]
  routes: [{path: /, action: {pass: app}}]
---
`, name, host, t, strings.Join(refs, ", "))
}

// apiKeySecretYAML is an nginx.org/apikey Secret of client ID, key pairs.
func apiKeySecretYAML(name string, kv ...string) string {
	s := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ntype: nginx.org/apikey\ndata:\n", name)
	for i := 0; i+1 < len(kv); i += 2 {
		s += fmt.Sprintf("  %s: %s\n", kv[i], base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return s + "---\n"
}

// TestVirtualServerAPIKeyAgainstNginx: an apiKey Policy lets requests
// with a client's key in the header or the query argument through, answers
// 401 without a key and 403 with a wrong one; the key file is 0600 and
// holds no key; a changed Secret applies; a Policy whose Secret is
// missing makes the routes answer 500.
func TestVirtualServerAPIKeyAgainstNginx(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	policies := `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: keys, namespace: default}
spec:
  apiKey: {suppliedIn: {header: [X-API-Key], query: [apikey]}, clientSecret: api-keys}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: missing, namespace: default}
spec:
  apiKey: {suppliedIn: {header: [X-API-Key]}, clientSecret: no-such-keys}
---
`
	base := ingressClass + serviceYAML("default", "app", 80, app) + policies +
		policyVirtualServerYAML("keyed", "keyed.vs.test", "", "keys") + policyVirtualServerYAML("missing", "missing.vs.test", "", "missing")
	c := startController(t, map[string]string{"vs.yaml": base + apiKeySecretYAML("api-keys", "client-a", "key-a", "client-b", "key-b")})
	get := func(host, path string, hdr ...string) int {
		t.Helper()
		req := harness.Request{Method: "GET", Host: host, Path: path, Header: map[string]string{}}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header[hdr[i]] = hdr[i+1]
		}
		r := c.do(req)
		if r.Status == 200 && r.Reply.Service != "app" {
			t.Errorf("%s%s: answered by %q", host, path, r.Reply.Service)
		}
		return r.Status
	}
	for _, tc := range []struct {
		name, host, path string
		hdr              []string
		want             int
	}{
		{"the right key in the header", "keyed.vs.test", "/", []string{"X-API-Key", "key-a"}, 200},
		{"another client's key in the query", "keyed.vs.test", "/?apikey=key-b", nil, 200},
		{"no key: 401", "keyed.vs.test", "/", nil, 401},
		{"an empty key: 401", "keyed.vs.test", "/?apikey=", []string{"X-API-Key", ""}, 401},
		{"a wrong key in the header: 403", "keyed.vs.test", "/", []string{"X-API-Key", "key-c"}, 403},
		{"a wrong key in the query: 403", "keyed.vs.test", "/?apikey=key", nil, 403},
		{"a key in another header: 401", "keyed.vs.test", "/", []string{"Authorization", "key-a"}, 401},
		{"missing Secret: closed", "missing.vs.test", "/", []string{"X-API-Key", "key-a"}, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(tc.host, tc.path, tc.hdr...); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
	file := filepath.Join(c.StateDir, "secrets", "default_api-keys_apikey.htpasswd")
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", st, err)
	}
	if data, err := os.ReadFile(file); err != nil || strings.Contains(string(data), "key-a") || !strings.HasPrefix(string(data), "client-a:") {
		t.Errorf("key file %q, %v: want hashes, never keys", data, err)
	}

	// A changed Secret applies: client-a's key changes.
	c.WriteManifest("vs.yaml", base+apiKeySecretYAML("api-keys", "client-a", "key-new"))
	waitStatus(t, func() int { return get("keyed.vs.test", "/", "X-API-Key", "key-new") }, 200)
	for _, old := range []string{"key-a", "key-b"} {
		waitEveryWorker(t, "a key no longer in the Secret", func() int { return get("keyed.vs.test", "/", "X-API-Key", old) }, 403)
	}
	// A removed Secret closes the routes, and its file goes.
	c.WriteManifest("vs.yaml", base)
	waitStatus(t, func() int { return get("keyed.vs.test", "/", "X-API-Key", "key-new") }, 500)
	eventually(t, 5*time.Second, func() error {
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			return fmt.Errorf("key file of a removed Secret: %v", err)
		}
		return nil
	})
}

// TestVirtualServerHSTSPolicyAgainstNginx: an hsts Policy replaces the
// ConfigMap's Strict-Transport-Security on its VirtualServer's HTTPS
// responses and sends none over plain HTTP; with behindProxy, a request
// that says X-Forwarded-Proto: https gets it; other hosts keep the
// ConfigMap's, also when it turns HSTS off. The backend's own header
// never reaches a client of the Policy's hosts, as in NIC, and reaches
// the other hosts' clients only with the ConfigMap's HSTS off.
func TestVirtualServerHSTSPolicyAgainstNginx(t *testing.T) {
	t.Parallel()
	app := startHeaderBackend(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) + `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: hsts, namespace: default}
spec:
  hsts: {maxAge: 600, includeSubDomains: true}
---
apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: hsts-proxy, namespace: default}
spec:
  hsts: {maxAge: 300, behindProxy: true}
---
` + tlsSecretYAML(t, "default", "own-tls", "own.hsts.test", 0) + tlsSecretYAML(t, "default", "other-tls", "other.hsts.test", 0) +
		policyVirtualServerYAML("own", "own.hsts.test", "own-tls", "hsts") +
		policyVirtualServerYAML("proxied", "proxied.hsts.test", "", "hsts-proxy") +
		policyVirtualServerYAML("other", "other.hsts.test", "other-tls")
	c := startController(t, map[string]string{"vs.yaml": m, "config.yaml": configMapYAML(map[string]string{"ssl-redirect": "false"})})
	sts := func(scheme, host string, hdr ...string) (string, error) {
		req := harness.Request{Method: "GET", Scheme: scheme, Host: host, Path: "/", Header: map[string]string{}}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header[hdr[i]] = hdr[i+1]
		}
		r := c.do(req)
		if r.Status != 200 {
			return "", fmt.Errorf("%s://%s: status %d", scheme, host, r.Status)
		}
		return strings.Join(r.Header.Values("Strict-Transport-Security"), " | "), nil
	}
	check := func(configMaps, otherHTTP string) error {
		for _, tc := range []struct {
			scheme, host string
			hdr          []string
			want         string
		}{
			{"https", "own.hsts.test", nil, "max-age=600; includeSubDomains"},
			{"http", "own.hsts.test", nil, ""},
			{"http", "own.hsts.test", []string{"X-Forwarded-Proto", "https"}, ""},
			{"http", "proxied.hsts.test", []string{"X-Forwarded-Proto", "https"}, "max-age=300"},
			{"http", "proxied.hsts.test", nil, ""},
			{"https", "other.hsts.test", nil, configMaps},
			{"http", "other.hsts.test", nil, otherHTTP},
		} {
			got, err := sts(tc.scheme, tc.host, tc.hdr...)
			if err != nil {
				return err
			}
			if got != tc.want {
				return fmt.Errorf("%s://%s %v: Strict-Transport-Security %q, want %q", tc.scheme, tc.host, tc.hdr, got, tc.want)
			}
		}
		return nil
	}
	if err := check("max-age=31536000; includeSubDomains", ""); err != nil {
		t.Fatal(err)
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-redirect": "false", "hsts": "false"}))
	eventually(t, 10*time.Second, func() error { return check(backendHSTS, backendHSTS) })
}

// TestVirtualServerCORSPolicyAgainstNginx: a cors Policy answers a
// preflight from an allowed origin with 204 and its headers, adds the
// origin to a simple request's answer, and leaves a refused origin's
// requests without them.
func TestVirtualServerCORSPolicyAgainstNginx(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	m := ingressClass + serviceYAML("default", "app", 80, app) + `apiVersion: k8s.nginx.org/v1
kind: Policy
metadata: {name: cors, namespace: default}
spec:
  cors:
    allowOrigin: ["https://app.example.com", "https://*.example.org"]
    allowMethods: [GET, POST]
    allowHeaders: [X-Token]
    exposeHeaders: [X-Request-Id]
    allowCredentials: true
    maxAge: 600
---
` + policyVirtualServerYAML("cors", "cors.vs.test", "", "cors")
	c := startController(t, map[string]string{"vs.yaml": m})
	for _, tc := range []struct {
		name, method, origin string
		status               int
		want                 map[string]string // "" for absent
	}{
		{"preflight from an allowed origin", "OPTIONS", "https://app.example.com", 204, map[string]string{
			"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Allow-Methods": "GET, POST",
			"Access-Control-Allow-Headers": "X-Token", "Access-Control-Max-Age": "600", "Access-Control-Allow-Credentials": "true"}},
		{"preflight from a wildcard origin", "OPTIONS", "https://a.example.org", 204, map[string]string{
			"Access-Control-Allow-Origin": "https://a.example.org"}},
		{"preflight from a refused origin goes on to the backend", "OPTIONS", "https://evil.example.net", 200, map[string]string{
			"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""}},
		{"simple request from an allowed origin", "GET", "https://app.example.com", 200, map[string]string{
			"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": "X-Request-Id",
			"Access-Control-Allow-Credentials": "true", "Access-Control-Allow-Methods": ""}},
		{"simple request from a refused origin", "GET", "https://app.example.com.evil.net", 200, map[string]string{
			"Access-Control-Allow-Origin": "", "Access-Control-Allow-Credentials": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(harness.Request{Method: tc.method, Host: "cors.vs.test", Path: "/", Header: map[string]string{"Origin": tc.origin}})
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
			for k, v := range tc.want {
				if got := strings.Join(r.Header.Values(k), ","); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
}
