package integration

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
)

// TestBasicAuthTableAgainstNginx sends the basic authentication and
// satisfy rows to a real nginx; the build tests check the same rows on the
// Model.
func TestBasicAuthTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, spec.AuthTable)
}

// Hashes of "secret" in each format the htpasswd grammar accepts, made by
// openssl passwd and libcrypt; nginx must verify every one.
var basicAuthHashes = map[string]string{
	"sha":    spec.SHAHash("secret"),
	"apr1":   "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/",
	"md5":    "$1$abcdefgh$cHJi5PXp/ki/ktXzqlk6I1",
	"sha256": "$5$abcdefghijklmnop$i7zHaTeYqXlesRXJ8dXj6o.MEFQdzfIJpJpcWAtszs6",
	"sha512": "$6$abcdefgh$ltjgWl6579NluT/Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/cZ/1GM/O6IND4WQhG.",
	"rounds": "$5$rounds=6000$saltsalt$JYVzZ0FLiECKxAuiiRAXWC/CtGzKt0JEZwHkJcOigaB",
	"bcrypt": "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
}

// TestBasicAuthHashesAndSecretChange checks that nginx verifies every hash
// format the validator accepts, that the password file is 0600 under
// secrets/, and that a changed Secret applies without a reload and a removed one closes
// the paths and leaves no file behind.
func TestBasicAuthHashesAndSecretChange(t *testing.T) {
	t.Parallel()
	b := startBackend(t, "app")
	row := spec.AnnotationCase{Ingresses: []spec.Ingress{{Name: "web", Host: "hashes.test",
		Paths:       []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
		Annotations: map[string]string{"auth-type": "basic", "auth-secret": "users", "auth-secret-type": "auth-map"}}},
		Secrets: map[string]map[string]string{"users": basicAuthHashes}}
	manifests := row.Manifests("nginx.ingress.kubernetes.io", map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}})
	c := startController(t, map[string]string{"class.yaml": ingressClass, "auth.yaml": manifests})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	get := func(user, pw string) int {
		t.Helper()
		req := harness.Request{Method: "GET", Scheme: "http", Host: "hashes.test", Path: "/"}
		if user != "" {
			req.Header = spec.BasicCredentials(user, pw)
		}
		res, err := harness.Do(addr, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Status
	}
	for user := range basicAuthHashes {
		if s := get(user, "secret"); s != 200 {
			t.Errorf("%s with the right password: %d, want 200", user, s)
		}
		if s := get(user, "Secret"); s != 401 {
			t.Errorf("%s with a wrong password: %d, want 401", user, s)
		}
	}
	file := filepath.Join(c.StateDir, "secrets", "default_users_authmap.htpasswd")
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v, %v; want mode 0600", st, err)
	}

	// A changed Secret applies without a reload (nginx reads the file at
	// every request): sha's password changes.
	reloads := c.Metric("causeway_nginx_reloads_total")
	row.Secrets = map[string]map[string]string{"users": {"sha": spec.SHAHash("changed")}}
	c.WriteManifest("auth.yaml", row.Manifests("nginx.ingress.kubernetes.io", map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}}))
	waitStatus(t, func() int { return get("sha", "changed") }, 200)
	waitEveryWorker(t, "a user removed from the Secret", func() int { return get("apr1", "secret") }, 401)
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a changed password file reloaded nginx: %v reloads, were %v", got, reloads)
	}

	// A removed Secret closes the paths, and its file goes.
	row.Secrets = nil
	c.WriteManifest("auth.yaml", row.Manifests("nginx.ingress.kubernetes.io", map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}}))
	waitStatus(t, func() int { return get("sha", "changed") }, 503)
	// Unreferenced files go once nginx has the configuration without
	// them, which may be just after the new one answers.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := os.Stat(file)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("password file of a removed Secret: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitEveryWorker waits until ten requests in a row answer want: each
// nginx worker reads a changed credentials file on its own, so one
// answer from the new file says nothing of the others.
func waitEveryWorker(t *testing.T, what string, f func() int, want int) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		for range 10 {
			if got := f(); got != want {
				return fmt.Errorf("%s: %d, want %d", what, got, want)
			}
		}
		return nil
	})
}

func waitStatus(t *testing.T, f func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got int
	for time.Now().Before(deadline) {
		if got = f(); got == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("status %d, want %d within 15s", got, want)
}
