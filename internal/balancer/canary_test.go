package balancer_test

import (
	"math"
	"net/http"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/model"
)

// canarySplit is the payload of the canary split of ns/main/80 by
// ns/canary/80 under rule r, keyed key.
func canarySplit(key string, r model.CanaryRule) balancer.Backend {
	b := balancer.SplitOf(r.Split(model.ObjectRef{Kind: "Ingress", Namespace: "ns", Name: "c"}, "ns/main/80", "ns/canary/80"))
	if b.Key != key {
		panic("canarySplit: key " + b.Key + ", want " + key)
	}
	return b
}

// A split request that fails on a canary endpoint is retried within the
// canary: its choice is kept, not drawn again. At weight 50, with the
// canary's first endpoint dead, the canary serves half the requests; were
// the weight drawn again on retry, it would serve 37.5 %.
func TestSplitKeepsItsChoiceOnRetry(t *testing.T) {
	const split, total = "split@ns/c@ns/main/80@ns/canary/80", 1000
	n := startNginx(t, nginxOptions{keys: []string{split}})
	main := startBackend(t, "127.0.0.2", "main")
	canary := startBackend(t, "127.0.0.3", "canary")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{
		{Key: "ns/main/80", Endpoints: []balancer.Endpoint{main.endpoint()}},
		// Round robin over [dead, live]: every other first attempt fails.
		{Key: "ns/canary/80", Endpoints: []balancer.Endpoint{deadEndpoint(t, "127.0.0.4"), canary.endpoint()}},
		canarySplit(split, model.CanaryRule{Weight: 50, WeightTotal: 100}),
	}})
	got := n.counts(t, n.url(0, "/"), total, 4, nil)
	t.Logf("%v", got)
	// Binomial(1000, 0.5): 5 standard deviations (79 requests) either side;
	// 375, the count a redraw would give on average, is 8 away.
	sd := math.Sqrt(total * 0.25)
	if got["main"]+got["canary"] != total || math.Abs(float64(got["canary"])-total/2) > 5*sd {
		t.Fatalf("served %v; want %d requests, half (± %.0f) by the canary", got, total, 5*sd)
	}
}

// The rule's precedence in the balancer itself: header, then cookie, then
// weight; a canary without endpoints leaves the request to the primary.
func TestSplitPrecedence(t *testing.T) {
	const split = "split@ns/c@ns/main/80@ns/canary/80"
	n := startNginx(t, nginxOptions{keys: []string{split}})
	main := startBackend(t, "127.0.0.2", "main")
	canary := startBackend(t, "127.0.0.3", "canary")
	push := func(gen int64, canaryEps []balancer.Endpoint, r model.CanaryRule) {
		n.replace(t, balancer.State{Generation: gen, Backends: []balancer.Backend{
			{Key: "ns/main/80", Endpoints: []balancer.Endpoint{main.endpoint()}},
			{Key: "ns/canary/80", Endpoints: canaryEps},
			canarySplit(split, r),
		}})
	}
	live := []balancer.Endpoint{canary.endpoint()}
	for i, tc := range []struct {
		name string
		eps  []balancer.Endpoint
		rule model.CanaryRule
		hdr  map[string]string
		want string
	}{
		{"header always", live, model.CanaryRule{Header: "X-Canary", WeightTotal: 100}, map[string]string{"X-Canary": "always"}, "canary"},
		{"header never over cookie and weight", live, model.CanaryRule{Header: "X-Canary", Cookie: "c", Weight: 100, WeightTotal: 100},
			map[string]string{"X-Canary": "never", "Cookie": "c=always"}, "main"},
		{"other header value falls through to the cookie", live, model.CanaryRule{Header: "X-Canary", Cookie: "c", WeightTotal: 100},
			map[string]string{"X-Canary": "maybe", "Cookie": "c=always"}, "canary"},
		{"header value", live, model.CanaryRule{Header: "X-Canary", HeaderValue: "v2", WeightTotal: 100}, map[string]string{"X-Canary": "v2"}, "canary"},
		{"header value: always is a value", live, model.CanaryRule{Header: "X-Canary", HeaderValue: "v2", WeightTotal: 100}, map[string]string{"X-Canary": "always"}, "main"},
		{"header pattern", live, model.CanaryRule{Header: "X-Canary", HeaderPattern: `^v[2-3]\.`, WeightTotal: 100}, map[string]string{"X-Canary": "v3.1"}, "canary"},
		{"header pattern, no match", live, model.CanaryRule{Header: "X-Canary", HeaderPattern: `^v[2-3]\.`, WeightTotal: 100}, map[string]string{"X-Canary": "v4.1"}, "main"},
		{"cookie never over weight", live, model.CanaryRule{Cookie: "c", Weight: 100, WeightTotal: 100}, map[string]string{"Cookie": "a=b; c=never"}, "main"},
		{"weight total", live, model.CanaryRule{Weight: 7, WeightTotal: 7}, nil, "canary"},
		{"canary without endpoints", []balancer.Endpoint{}, model.CanaryRule{Header: "X-Canary", WeightTotal: 100}, map[string]string{"X-Canary": "always"}, "main"},
	} {
		push(int64(i+1), tc.eps, tc.rule)
		got := n.counts(t, n.url(0, "/"), 8, 2, func(int) map[string]string { return tc.hdr })
		if got[tc.want] != 8 {
			t.Errorf("%s: served %v, want all by %s", tc.name, got, tc.want)
		}
	}
}

// An affinitized request stays where it was, before any rule, as in
// ingress-nginx (whose canary inherits the main's affinity): a client
// sent to the canary keeps going there after the weight drops to 0, and
// one on the main stays there at weight 100.
func TestSplitKeepsAffinity(t *testing.T) {
	const split = "split@ns/c@ns/main/80@ns/canary/80"
	n := startNginx(t, nginxOptions{keys: []string{split}})
	main := startBackend(t, "127.0.0.2", "main")
	canary := startBackend(t, "127.0.0.3", "canary")
	sticky := &balancer.StickyOptions{Cookie: "route"}
	push := func(gen int64, weight int, header string) {
		n.replace(t, balancer.State{Generation: gen, Backends: []balancer.Backend{
			{Key: "ns/main/80", Method: balancer.Sticky, Sticky: sticky, Endpoints: []balancer.Endpoint{main.endpoint()}},
			{Key: "ns/canary/80", Method: balancer.Sticky, Sticky: sticky, Endpoints: []balancer.Endpoint{canary.endpoint()}},
			canarySplit(split, model.CanaryRule{Header: header, Weight: weight, WeightTotal: 100}),
		}})
	}
	cookieOf := func(r reply) string {
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == "route" {
				return c.Value
			}
		}
		t.Fatalf("no route cookie in %v", r.header)
		return ""
	}
	push(1, 100, "")
	first := n.get(t, n.http, n.url(0, "/"), nil)
	if first.backend != "canary" {
		t.Fatalf("weight 100: served by %q", first.backend)
	}
	onCanary := map[string]string{"Cookie": "route=" + cookieOf(first)}
	push(2, 0, "")
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.backend != "main" {
		t.Fatalf("weight 0 without a cookie: served by %q", r.backend)
	}
	onMain := map[string]string{"Cookie": "route=" + cookieOf(n.get(t, n.http, n.url(0, "/"), nil))}
	for i := range 4 {
		if r := n.get(t, n.http, n.url(0, "/"), onCanary); r.backend != "canary" {
			t.Fatalf("request %d affinitized to the canary, at weight 0: served by %q", i, r.backend)
		}
	}
	push(3, 100, "")
	for i := range 4 {
		if r := n.get(t, n.http, n.url(0, "/"), onMain); r.backend != "main" {
			t.Fatalf("request %d affinitized to the main, at weight 100: served by %q", i, r.backend)
		}
	}
	// Nor does a header rule override it, as in ingress-nginx.
	push(4, 0, "X-Canary")
	if r := n.get(t, n.http, n.url(0, "/"), map[string]string{"Cookie": "x=1; " + onMain["Cookie"], "X-Canary": "always"}); r.backend != "main" {
		t.Fatalf("affinitized to the main, header always: served by %q", r.backend)
	}
	if r := n.get(t, n.http, n.url(0, "/"), map[string]string{"X-Canary": "always"}); r.backend != "canary" {
		t.Fatalf("no affinity, header always: served by %q", r.backend)
	}
}
