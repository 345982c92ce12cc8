package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// bigServiceYAML is Service name with n endpoints (on addresses nothing
// listens on), spread over EndpointSlices of at most 1,000 as the
// EndpointSlice controller does, plus an Ingress for host.
func bigServiceYAML(ns, name, host string, n int) string {
	var b strings.Builder
	b.WriteString(svcOnlyYAML(ns, name))
	b.WriteString(ingressYAML(ns, name, host, "Prefix / "+name))
	for s := 0; s*1000 < n; s++ {
		fmt.Fprintf(&b, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s-%d\n  namespace: %s\n  labels: {kubernetes.io/service-name: %s}\naddressType: IPv4\nports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n",
			name, s, ns, name)
		for i := s * 1000; i < min(n, (s+1)*1000); i++ {
			fmt.Fprintf(&b, "- addresses: [\"10.77.%d.%d\"]\n", i>>8, i&255)
		}
		b.WriteString("---\n")
	}
	return b.String()
}

// TestServiceOverEndpointLimit runs one Service with 10,001 endpoints,
// one more than the Lua balancer takes for a backend, next to a normal
// Service. The big one is left out of the pushed state (its paths answer
// 503) with a Problem naming it; the normal one's endpoint changes still
// go live within seconds, and the big one is pushed once it is back at
// the limit.
func TestServiceOverEndpointLimit(t *testing.T) {
	t.Parallel()
	ab := startBackends(t, "web", 2)
	a, b := ab[0], ab[1]
	c := startController(t, map[string]string{
		"web.yaml":   ingressClass + svcOnlyYAML("default", "web") + ingressYAML("default", "web", "web.test", "Prefix / web"),
		"slice.yaml": sliceYAML("default", "web", addr(a)),
		"big.yaml":   bigServiceYAML("default", "big", "big.test", 10001),
	})
	if r := c.Get("big.test", "/"); r.Status != 503 {
		t.Fatalf("big.test: status %d, want 503", r.Status)
	}
	if got := keys(servedBy(c, "web.test", 4)); got != addr(a) {
		t.Fatalf("web.test served by %s", got)
	}
	eventually(t, 5*time.Second, func() error {
		for _, want := range []string{"reason=EndpointsOverLimit", "object=default/big", "10001 endpoints, more than the limit of 10000"} {
			if !strings.Contains(c.log.String(), want) {
				return fmt.Errorf("no %q in the log", want)
			}
		}
		return nil
	})
	if got := c.Metric("causeway_object_problems", `reason="EndpointsOverLimit"`); got != 2 { // the Service and its Ingress
		t.Errorf("causeway_object_problems{reason=\"EndpointsOverLimit\"} = %v, want 2", got)
	}

	start := time.Now()
	c.WriteManifest("slice.yaml", sliceYAML("default", "web", addr(b)))
	eventually(t, 5*time.Second, func() error {
		if got := keys(servedBy(c, "web.test", 4)); got != addr(b) {
			return fmt.Errorf("web.test served by %s, want %s", got, addr(b))
		}
		return nil
	})
	t.Logf("the normal Service's change was live in %s", time.Since(start).Round(time.Millisecond))
	if r := c.Get("big.test", "/"); r.Status != 503 {
		t.Fatalf("big.test: status %d, want 503", r.Status)
	}
	if log := c.log.String(); strings.Contains(log, "pushing endpoints to nginx failed") {
		t.Fatalf("a push was refused:\n%s", log)
	}

	// At the limit it goes live (not requested: nothing listens there).
	c.WriteManifest("big.yaml", bigServiceYAML("default", "big", "big.test", 10000))
	eventually(t, 10*time.Second, func() error {
		if n := len(c.nginxState()["default/big/80"]); n != 10000 {
			return fmt.Errorf("nginx has %d endpoints for default/big/80, want 10000", n)
		}
		return nil
	})
	if got := c.Metric("causeway_object_problems", `reason="EndpointsOverLimit"`); got != 0 {
		t.Errorf("the problem outlived its cause: causeway_object_problems{reason=\"EndpointsOverLimit\"} = %v", got)
	}
}
