package balancer_test

import (
	"net/http"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
)

// A target list with affinity (model.SplitRule.Affinity, Gateway API's
// session persistence over several backendRefs): a request whose cookie
// names a peer of one of its sticky backends goes to that backend
// whatever the weights, even 0; a request without one is drawn by
// weight. Without affinity the weights decide, cookie or not. The same
// holds for a rule's targets.
func TestSplitAffinity(t *testing.T) {
	const choice = "choice@ns/route.0123456789ab"
	n := startNginx(t, nginxOptions{keys: []string{choice}})
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	sticky := &balancer.StickyOptions{Cookie: "sess"}
	gen := int64(0)
	push := func(wa, wb int, affinity bool, rule bool) {
		gen++
		targets := []balancer.Target{{Backend: "ns/a/80@session-1", Weight: wa}, {Backend: "ns/b/80@session-1", Weight: wb}}
		split := &balancer.Split{Targets: targets, Affinity: affinity}
		if rule {
			split = &balancer.Split{
				Rules: []balancer.Rule{{Conditions: []balancer.Condition{{Kind: "header", Name: "X-Rule", Match: "exact", Value: "1"}},
					Targets: targets, Affinity: affinity}},
				Targets: targets,
			}
		}
		n.replace(t, balancer.State{Generation: gen, Backends: []balancer.Backend{
			{Key: "ns/a/80@session-1", Method: balancer.Sticky, Sticky: sticky, Endpoints: []balancer.Endpoint{a.endpoint()}},
			{Key: "ns/b/80@session-1", Method: balancer.Sticky, Sticky: sticky, Endpoints: []balancer.Endpoint{b.endpoint()}},
			{Key: choice, Endpoints: []balancer.Endpoint{}, Split: split},
		}})
	}
	cookieOf := func(r reply) string {
		t.Helper()
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == "sess" {
				return c.Value
			}
		}
		t.Fatalf("no sess cookie in %v", r.header)
		return ""
	}
	onB := ""
	for _, rule := range []bool{false, true} {
		hdr := map[string]string{}
		if rule {
			hdr["X-Rule"] = "1"
		}
		push(0, 1, true, rule)
		onB = cookieOf(n.get(t, n.http, n.url(0, "/"), hdr))
		push(1, 0, true, rule)
		withCookie := map[string]string{"Cookie": "x=1; sess=" + onB}
		for k, v := range hdr {
			withCookie[k] = v
		}
		if got := n.counts(t, n.url(0, "/"), 8, 2, func(int) map[string]string { return withCookie }); got["b"] != 8 {
			t.Errorf("rule %v: b's cookie, b at weight 0, with affinity: served %v, want all by b", rule, got)
		}
		if got := n.counts(t, n.url(0, "/"), 8, 2, func(int) map[string]string { return hdr }); got["a"] != 8 {
			t.Errorf("rule %v: no cookie, b at weight 0: served %v, want all by a", rule, got)
		}
		push(1, 0, false, rule)
		if got := n.counts(t, n.url(0, "/"), 8, 2, func(int) map[string]string { return withCookie }); got["a"] != 8 {
			t.Errorf("rule %v: b's cookie, b at weight 0, without affinity: served %v, want all by a", rule, got)
		}
	}
	// A rule's affinity is its own: the default targets, without it,
	// draw by weight.
	push(1, 0, true, true)
	if got := n.counts(t, n.url(0, "/"), 8, 2, func(int) map[string]string { return map[string]string{"Cookie": "sess=" + onB} }); got["a"] != 8 {
		t.Errorf("default targets without affinity, b's cookie: served %v, want all by a", got)
	}
}
