package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/causeway/causeway/test/dnstest"
	"github.com/causeway/causeway/test/echo"
)

// externalNameYAML is an ExternalName Service for name, with port 80
// whose targetPort is the backends' port, and an Ingress for host routing
// to it with upstream-vhost.
func externalNameYAML(name string, port int, host, vhost string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: ext, namespace: default}
spec:
  type: ExternalName
  externalName: %q
  ports: [{name: http, port: 80, targetPort: %d}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ext
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/upstream-vhost: %q}
spec:
  ingressClassName: causeway
  rules:
  - host: %q
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: ext, port: {number: 80}}}}
---
`, name, port, vhost, host)
}

// externalNameCase is a controller serving ext.test from the
// ExternalName db.ext.test, which the test's DNS server resolves to
// backend one; two listens on the same port, for a new answer.
type externalNameCase struct {
	c        *controller
	zone     *dnstest.Server
	one, two *backend
	// served checks that want answered, with upstream-vhost's Host.
	served func(want string) error
}

func startExternalName(t *testing.T, args ...string) externalNameCase {
	x := externalNameCase{one: startBackend(t, "one")}
	x.two = startBackendAt(t, "two", loopbackIP(), x.one.Port)
	x.zone = dnstest.Start(t, loopbackIP())
	x.zone.Set("db.ext.test. A", "db.ext.test. 1 IN A "+x.one.IP)
	x.c = startController(t, map[string]string{
		"config.yaml": configMapYAML(map[string]string{"resolver-addresses": x.zone.Addr.String()}),
		"app.yaml":    ingressClass + externalNameYAML("db.ext.test", x.one.Port, "ext.test", "db.ext.test"),
	}, args...)
	x.served = func(want string) error {
		r := x.c.Get("ext.test", "/")
		var reply echo.Reply
		if r.Status != 200 || json.Unmarshal([]byte(r.Body), &reply) != nil || reply.Service != want {
			return fmt.Errorf("status %d, body %.80q; want %s", r.Status, r.Body, want)
		}
		if reply.Host != "db.ext.test" {
			return fmt.Errorf("the backend got Host %q, want upstream-vhost's", reply.Host)
		}
		return nil
	}
	return x
}

// TestExternalNameBackend: an ExternalName Service's name is resolved by
// the servers of resolver-addresses (a DNS server in this test on
// 127.0.0.x, answering with loopback addresses); requests reach what it
// names with upstream-vhost's Host; a new address by TTL moves the
// traffic without a reload; a name that stops resolving answers 503 and a
// Problem, and an invalid name is a Problem at once.
func TestExternalNameBackend(t *testing.T) {
	t.Parallel()
	x := startExternalName(t)
	c, zone, one, two, served := x.c, x.zone, x.one, x.two, x.served
	eventually(t, 10*time.Second, func() error { return served("one") })
	if c.Metric("causeway_dataplane_mode", `mode="lua"`) != 1 {
		t.Skip("the rest needs the Lua balancer")
	}
	reloads := c.Metric("causeway_nginx_reloads_total")

	zone.Set("db.ext.test. A", "db.ext.test. 1 IN A "+two.IP)
	eventually(t, 10*time.Second, func() error { return served("two") })
	if got := c.Metric("causeway_nginx_reloads_total"); got != reloads {
		t.Fatalf("a new address reloaded nginx: reloads %v -> %v", reloads, got)
	}

	zone.Rcode("db.ext.test.", dns.RcodeNameError)
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("ext.test", "/"); r.Status != 503 {
			return fmt.Errorf("status %d after NXDOMAIN, want 503", r.Status)
		}
		if !strings.Contains(c.log.String(), "ExternalNameUnresolved") {
			return fmt.Errorf("no ExternalNameUnresolved Problem logged")
		}
		return nil
	})
	zone.Rcode("db.ext.test.", dns.RcodeSuccess)
	eventually(t, 10*time.Second, func() error { return served("two") })

	c.WriteManifest("app.yaml", ingressClass+externalNameYAML("localhost", one.Port, "ext.test", "db.ext.test"))
	eventually(t, 10*time.Second, func() error {
		if r := c.Get("ext.test", "/"); r.Status != 503 {
			return fmt.Errorf("status %d for externalName localhost, want 503", r.Status)
		}
		if !strings.Contains(c.log.String(), "localhost names the node's own loopback") {
			return fmt.Errorf("no Problem for localhost logged")
		}
		return nil
	})
}

// TestExternalNamePlain: without the Lua balancer the resolved addresses
// are the upstream's servers, and a new one reloads nginx.
func TestExternalNamePlain(t *testing.T) {
	t.Parallel()
	x := startExternalName(t, "--dataplane", "plain")
	eventually(t, 10*time.Second, func() error { return x.served("one") })
	x.zone.Set("db.ext.test. A", "db.ext.test. 1 IN A "+x.two.IP)
	eventually(t, 10*time.Second, func() error { return x.served("two") })
}
