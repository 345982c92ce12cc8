package integration

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/testcert"
)

// startHeaderBackend runs a backend that answers with a Server, an
// X-Powered-By and a Strict-Transport-Security header of its own and
// reports the request headers it got as JSON.
func startHeaderBackend(t *testing.T) *backend {
	t.Helper()
	return startHandlerBackend(t, "hdr", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "backend/1.0")
		w.Header().Set("X-Powered-By", "PHP/5")
		w.Header().Set("X-Frame-Options", "ALLOWALL")
		w.Header().Set("Strict-Transport-Security", backendHSTS)
		_ = json.NewEncoder(w).Encode(r.Header)
	}))
}

// backendHSTS is the Strict-Transport-Security startHeaderBackend sends.
const backendHSTS = "max-age=1"

// TestHSTSReplacesBackendHeader: with hsts on, an HTTPS client sees one
// Strict-Transport-Security, the controller's, not the backend's beside
// it (ingress-nginx replaces it, NGINX Ingress Controller hides it); with
// hsts off, the backend's own passes unchanged.
func TestHSTSReplacesBackendHeader(t *testing.T) {
	t.Parallel()
	be := startHeaderBackend(t)
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "hdr", 80, be) +
			tlsSecretYAML(t, "default", "hdr-tls", "hdr.tls.test", 0) + tlsIngressYAML("default", "hdr", "hdr.tls.test", "hdr-tls", "hdr"),
		"config.yaml": configMapYAML(map[string]string{"ssl-redirect": "false"}),
	})
	check := func(want string) error {
		r, err := c.get("https", "hdr.tls.test", "/")
		if err != nil {
			return err
		}
		if got := r.Header.Values("Strict-Transport-Security"); r.Status != 200 || len(got) != 1 || got[0] != want {
			return fmt.Errorf("HTTPS: %d Strict-Transport-Security %q, want %q alone", r.Status, got, want)
		}
		return nil
	}
	if err := check("max-age=31536000; includeSubDomains"); err != nil {
		t.Fatal(err)
	}
	c.WriteManifest("config.yaml", configMapYAML(map[string]string{"ssl-redirect": "false", "hsts": "false"}))
	eventually(t, 10*time.Second, func() error { return check(backendHSTS) })
}

func secretYAML(ns, name, key string, data []byte) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + ns + "}\nstringData:\n  " + key + ": |\n")
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String() + "---\n"
}

// TestConfigMapHeaders checks on the wire: hide-headers hides, add-headers
// adds (replacing the backend's value), proxy-set-headers reaches the
// backend, and the backend's Server header shows only with
// allow-backend-server-header and server-tokens, as in ingress-nginx.
func TestConfigMapHeaders(t *testing.T) {
	t.Parallel()
	be := startHeaderBackend(t)
	refs := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: add, namespace: causeway}\ndata: {X-Frame-Options: DENY, X-Added: \"yes; really\"}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: set, namespace: other}\ndata: {X-Tenant: blue}\n---\n"
	cm := map[string]string{"hide-headers": "X-Powered-By", "add-headers": "causeway/add", "proxy-set-headers": "other/set",
		"allow-backend-server-header": "true", "server-tokens": "true"}
	c := startController(t, map[string]string{
		"app.yaml":    ingressClass + serviceYAML("default", "hdr", 80, be) + ingressYAML("default", "hdr", "hdr.test", "Prefix / hdr"),
		"refs.yaml":   refs,
		"config.yaml": configMapYAML(cm),
	})
	res := c.do(harness.Request{Host: "hdr.test", Path: "/"})
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	if v := res.Header.Values("X-Powered-By"); len(v) != 0 {
		t.Errorf("hidden X-Powered-By reached the client: %q", v)
	}
	if v := res.Header.Values("X-Frame-Options"); len(v) != 1 || v[0] != "DENY" {
		t.Errorf("X-Frame-Options %q, want add-headers' DENY alone", v)
	}
	if v := res.Header.Get("X-Added"); v != "yes; really" {
		t.Errorf("X-Added %q, want add-headers' value", v)
	}
	if v := res.Header.Get("Server"); v != "backend/1.0" {
		t.Errorf("Server %q, want the backend's", v)
	}
	var seen http.Header
	if err := json.Unmarshal([]byte(res.Body), &seen); err != nil {
		t.Fatalf("backend reply %q: %v", res.Body, err)
	}
	if v := seen.Values("X-Tenant"); len(v) != 1 || v[0] != "blue" {
		t.Errorf("the backend got X-Tenant %q, want proxy-set-headers' blue", v)
	}
	// A 404 nginx makes itself carries add-headers' headers too.
	if nf := c.do(harness.Request{Host: "unknown.test", Path: "/"}); nf.Header.Get("X-Added") != "yes; really" {
		t.Errorf("nginx's own 404 lacks X-Added: %v", nf.Header)
	}

	// Without server-tokens, as in ingress-nginx, no Server header shows,
	// the backend's or nginx's (and a Problem says why); a bad entry in a
	// referenced ConfigMap is left out while the rest applies.
	cm["server-tokens"] = "false"
	c.WriteManifest("refs.yaml", strings.Replace(refs, "X-Tenant: blue", "X-Tenant: blue, Bad Name: x", 1))
	c.WriteManifest("config.yaml", configMapYAML(cm))
	// Without headers-more (the vendored Angie), nginx's own Server
	// header stays, without the version.
	server := ""
	if !optionalModule(t, "ngx_http_headers_more_filter_module.so") {
		server = serverProduct()
	}
	harness.Eventually(t, 10*time.Second, func() error {
		r := c.do(harness.Request{Host: "hdr.test", Path: "/"})
		if r.Status != 200 || r.Header.Get("Server") != server || r.Header.Get("X-Added") != "yes; really" {
			return fmt.Errorf("status %d, headers %v; want Server %q, X-Added kept", r.Status, r.Header, server)
		}
		return nil
	})
}

// TestSSLDHParam: a valid dhparam.pem is written 0600 and loaded, and a
// TLS 1.2 DHE handshake works; a malformed one is reported, DHE is off
// and HTTPS keeps working.
func TestSSLDHParam(t *testing.T) {
	t.Parallel()
	be := startBackend(t, "web")
	cm := map[string]string{"ssl-dh-param": "causeway/dh", "ssl-ciphers": "DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"}
	c := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, be) + tlsSecretYAML(t, "default", "tls", "dh.test", 2048) +
			tlsIngressYAML("default", "web", "dh.test", "tls", "web"),
		"dh.yaml":     secretYAML("causeway", "dh", "dhparam.pem", testcert.DHParams2048),
		"config.yaml": configMapYAML(cm),
	})
	file := filepath.Join(c.StateDir, layout.DHParamFile("causeway", "dh"))
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("DH parameters file: %v, %v; want mode 0600", st, err)
	}
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort))
	dhe := func() (string, error) {
		out, err := exec.Command("openssl", "s_client", "-connect", addr, "-servername", "dh.test", "-tls1_2",
			"-cipher", "DHE-RSA-AES128-GCM-SHA256").CombinedOutput()
		return string(out), err
	}
	if _, err := exec.LookPath("openssl"); err == nil {
		if out, err := dhe(); err != nil || !strings.Contains(out, "DHE-RSA-AES128-GCM-SHA256") {
			t.Fatalf("TLS 1.2 DHE handshake: %v\n%s", err, out)
		}
	}

	c.WriteManifest("dh.yaml", secretYAML("causeway", "dh", "dhparam.pem", []byte("-----BEGIN DH PARAMETERS-----\nZ2FyYmFnZQ==\n-----END DH PARAMETERS-----\n")))
	harness.Eventually(t, 10*time.Second, func() error {
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			return fmt.Errorf("the malformed DH parameters' file is still there (%v)", err)
		}
		return nil
	})
	if _, err := exec.LookPath("openssl"); err == nil {
		if out, err := dhe(); err == nil && strings.Contains(out, "Cipher is DHE") {
			t.Errorf("DHE still offered without DH parameters:\n%s", out)
		}
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "dh.test", InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("HTTPS after the malformed DH parameters: %v", err)
	}
	conn.Close()
}
