package integration

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"testing"

	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
)

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// htdigestLine is what `htdigest` writes for user in realm.
func htdigestLine(user, realm, password string) string {
	return user + ":" + realm + ":" + md5hex(user+":"+realm+":"+password) + "\n"
}

var digestNonce = regexp.MustCompile(`^Digest realm="Staff", qop="auth", algorithm=MD5, nonce="([^"]+)"(, stale=true)?$`)

// TestDigestAuth: auth-type digest against real nginx and the Lua check,
// with a client that computes RFC 7616 responses: the challenge, the
// right password with qop auth and without (RFC 2069), a wrong password, a
// forged nonce, credentials for another URI, and a changed Secret.
func TestDigestAuth(t *testing.T) {
	t.Parallel()
	b := startBackend(t, "app")
	row := spec.AnnotationCase{Ingresses: []spec.Ingress{{Name: "web", Host: "digest.test",
		Paths:       []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
		Annotations: map[string]string{"auth-type": "digest", "auth-secret": "users", "auth-realm": "Staff"}}},
		Secrets: map[string]map[string]string{"users": {"auth": htdigestLine("alice", "Staff", "wonderland") + htdigestLine("bob", "Other", "builder")}}}
	eps := map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}}
	c := startController(t, map[string]string{"class.yaml": ingressClass, "auth.yaml": row.Manifests("nginx.ingress.kubernetes.io", eps)}, "--dataplane", "lua")
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	do := func(path, auth string) harness.Result {
		t.Helper()
		req := harness.Request{Method: "GET", Scheme: "http", Host: "digest.test", Path: path}
		if auth != "" {
			req.Header = map[string]string{"Authorization": auth}
		}
		res, err := harness.Do(addr, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// challenge asks without credentials and returns the nonce.
	challenge := func() string {
		t.Helper()
		res := do("/", "")
		m := digestNonce.FindStringSubmatch(res.Header.Get("WWW-Authenticate"))
		if res.Status != 401 || m == nil {
			t.Fatalf("no credentials: %d, WWW-Authenticate %q; want 401 with a digest challenge", res.Status, res.Header.Get("WWW-Authenticate"))
		}
		return m[1]
	}
	answer := func(user, password, nonce, uri, reqURI string, qop bool) string {
		ha1 := md5hex(user + ":Staff:" + password)
		ha2 := md5hex("GET:" + uri)
		if !qop {
			return fmt.Sprintf(`Digest username="%s", realm="Staff", nonce="%s", uri="%s", response="%s"`, user, nonce, uri, md5hex(ha1+":"+nonce+":"+ha2))
		}
		resp := md5hex(ha1 + ":" + nonce + ":00000001:0a4f113b:auth:" + ha2)
		return fmt.Sprintf(`Digest username="%s", realm="Staff", nonce="%s", uri="%s", qop=auth, nc=00000001, cnonce="0a4f113b", response="%s", algorithm=MD5`,
			user, nonce, uri, resp)
	}
	nonce := challenge()
	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"qop auth", "/a?x=1", answer("alice", "wonderland", nonce, "/a?x=1", "/a?x=1", true), 200},
		{"RFC 2069, no qop", "/b", answer("alice", "wonderland", nonce, "/b", "/b", false), 200},
		{"a wrong password", "/a", answer("alice", "nope", nonce, "/a", "/a", true), 401},
		{"a user of another realm", "/a", answer("bob", "builder", nonce, "/a", "/a", true), 401},
		{"an unknown user", "/a", answer("carol", "wonderland", nonce, "/a", "/a", true), 401},
		{"a forged nonce", "/a", answer("alice", "wonderland", nonce[:len(nonce)-2]+"xx", "/a", "/a", true), 401},
		{"a nonce from the future", "/a", answer("alice", "wonderland", "99999999999-abc", "/a", "/a", true), 401},
		{"credentials for another URI", "/admin", answer("alice", "wonderland", nonce, "/a", "/a", true), 400},
		{"basic credentials", "/a", "Basic " + "YWxpY2U6d29uZGVybGFuZA==", 401},
		{"a repeated parameter", "/a", answer("alice", "wonderland", nonce, "/a", "/a", true) + `, username="bob"`, 401},
		{"an unterminated quote", "/a", `Digest username="alice, realm="Staff"`, 401},
	} {
		res := do(tc.path, tc.auth)
		if res.Status != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, res.Status, tc.want)
		}
		if tc.want == 200 && res.Reply.Service != "app" {
			t.Errorf("%s: answered by %q, want the backend", tc.name, res.Reply.Service)
		}
		if tc.want == 401 && !digestNonce.MatchString(res.Header.Get("WWW-Authenticate")) {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, res.Header.Get("WWW-Authenticate"))
		}
	}

	// A changed Secret applies without a reload (the workers read the
	// file again within a second): alice's password changes.
	reloads := c.Metric("causeway_nginx_reloads_total")
	row.Secrets = map[string]map[string]string{"users": {"auth": htdigestLine("alice", "Staff", "looking-glass")}}
	c.WriteManifest("auth.yaml", row.Manifests("nginx.ingress.kubernetes.io", eps))
	waitStatus(t, func() int { return do("/c", answer("alice", "looking-glass", challenge(), "/c", "/c", true)).Status }, 200)
	waitEveryWorker(t, "the old password after the change", func() int {
		return do("/c", answer("alice", "wonderland", challenge(), "/c", "/c", true)).Status
	}, 401)
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Errorf("a changed password file reloaded nginx: %v reloads, were %v", got, reloads)
	}
}
