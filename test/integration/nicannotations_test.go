package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/test/harness"
)

// nicIngressYAML is an Ingress of ours with NGINX Ingress Controller's
// annotations and one rule; paths are "PATH SERVICE".
func nicIngressYAML(ns, name, created, host string, annotations map[string]string, paths ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: %s\n  creationTimestamp: %q\n  annotations:\n",
		name, ns, created)
	for k, v := range annotations {
		fmt.Fprintf(&b, "    %s: %q\n", k, v)
	}
	fmt.Fprintf(&b, "spec:\n  ingressClassName: causeway\n  rules:\n  - host: %q\n", host)
	if len(paths) > 0 {
		b.WriteString("    http:\n      paths:\n")
	}
	for _, p := range paths {
		f := strings.Fields(p)
		fmt.Fprintf(&b, "      - {path: %q, pathType: Prefix, backend: {service: {name: %s, port: {number: 80}}}}\n", f[0], f[1])
	}
	b.WriteString("---\n")
	return b.String()
}

// TestNICAnnotationsAgainstNginx serves NGINX Ingress Controller's
// annotations through real nginx, on a mergeable master and its minions
// in two namespaces: rewrites, ssl-services, redirect-to-https,
// server-tokens and lb-method, and a minion without a master.
func TestNICAnnotationsAgainstNginx(t *testing.T) {
	t.Parallel()
	tea, coffee := startBackend(t, "tea"), startBackend(t, "coffee")
	ip, port := startTLSBackend(t, "secure", "secure.test")
	secure := &backend{Service: "secure", IP: ip, Port: port}
	c := startController(t, map[string]string{
		"class.yaml": ingressClass,
		"services.yaml": serviceYAML("default", "tea", 80, tea) + serviceYAML("bar", "coffee", 80, coffee) +
			serviceYAML("default", "secure", 80, secure),
		"master.yaml": nicIngressYAML("default", "cafe", "2026-01-01T00:00:00Z", "cafe.test", map[string]string{
			"nginx.org/mergeable-ingress-type": "master", "nginx.org/redirect-to-https": "true", "nginx.org/server-tokens": "false",
			"nginx.org/lb-method": "least_conn"}),
		"tea.yaml": nicIngressYAML("default", "tea", "2026-01-02T00:00:00Z", "cafe.test", map[string]string{
			"nginx.org/mergeable-ingress-type": "minion", "nginx.org/rewrites": "serviceName=tea rewrite=/leaves/",
			"nginx.org/ssl-services": "secure"}, "/tea tea", "/secure secure"),
		"coffee.yaml": nicIngressYAML("bar", "coffee", "2026-01-03T00:00:00Z", "cafe.test", map[string]string{
			"nginx.org/mergeable-ingress-type": "minion"}, "/coffee coffee"),
		"orphan.yaml": nicIngressYAML("default", "orphan", "2026-01-04T00:00:00Z", "orphan.test", map[string]string{
			"nginx.org/mergeable-ingress-type": "minion"}, "/ tea"),
	})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	get := func(host, path string, header map[string]string) harness.Result {
		t.Helper()
		r, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: host, Path: path, Header: header})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// rewrites: the minion's path /tea is replaced by /leaves/.
	if r := get("cafe.test", "/tea/green?x=1", nil); r.Status != 200 || r.Reply.Service != "tea" || r.Reply.URI != "/leaves//green?x=1" {
		t.Errorf("/tea/green: %d from %q as %q, want tea as /leaves//green?x=1 (NIC's proxy_pass with a URI)", r.Status, r.Reply.Service, r.Reply.URI)
	}
	// A minion in another namespace serves its path of the same host.
	if r := get("cafe.test", "/coffee", nil); r.Status != 200 || r.Reply.Service != "coffee" {
		t.Errorf("/coffee: %d from %q, want coffee", r.Status, r.Reply.Service)
	}
	// ssl-services: HTTPS to the Service.
	if r := get("cafe.test", "/secure", nil); r.Status != 200 || !strings.HasPrefix(r.Body, "secure from ") {
		t.Errorf("/secure: %d %q, want the HTTPS backend's answer", r.Status, r.Body)
	}
	// server-tokens false: no version (with the ConfigMap's server-tokens
	// false, no Server header at all).
	if r := get("cafe.test", "/coffee", nil); strings.Contains(r.Header.Get("Server"), "/") {
		t.Errorf("Server header %q, want no version", r.Header.Get("Server"))
	}
	// redirect-to-https: X-Forwarded-Proto http is redirected with 301.
	if r := get("cafe.test", "/coffee/cup", map[string]string{"X-Forwarded-Proto": "http"}); r.Status != 301 || r.Location != "https://cafe.test/coffee/cup" {
		t.Errorf("redirect: %d to %q, want 301 to https://cafe.test/coffee/cup", r.Status, r.Location)
	}
	// A minion without a master is not served.
	if r := get("orphan.test", "/", nil); r.Status != 404 {
		t.Errorf("orphan minion: %d, want 404", r.Status)
	}
	for _, want := range []string{"needs a master Ingress", `default/orphan`} {
		if !strings.Contains(c.log.String(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}
