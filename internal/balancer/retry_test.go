package balancer_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/causeway/causeway/internal/balancer"
)

// flakyBackend answers status to its first fail requests, then 200,
// naming itself in X-Backend.
type flakyBackend struct {
	name   string
	ip     string
	port   int
	fail   int64
	status int
	hits   atomic.Int64
}

func startFlaky(t *testing.T, ip, name string, fail, status int) *flakyBackend {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	b := &flakyBackend{name: name, ip: ip, port: ln.Addr().(*net.TCPAddr).Port, fail: int64(fail), status: status}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Backend", b.name)
		if b.hits.Add(1) <= b.fail {
			w.WriteHeader(b.status)
		}
		io.WriteString(w, b.name)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b
}

func (b *flakyBackend) endpoint() balancer.Endpoint {
	return balancer.Endpoint{Address: b.ip, Port: b.port, Ready: true}
}

// routeRetryConf is what render prints in a location with a Gateway API
// retry of tries tries (model.RouteRetry), retrying on 500 and 503.
func routeRetryConf(tries int) string {
	return fmt.Sprintf("proxy_next_upstream error timeout http_500 http_503 non_idempotent;\nproxy_next_upstream_tries %d;\nset $%s %d;\n",
		tries, balancer.TriesVariable, tries)
}

// The http level's declaration of $causeway_tries (render's planRouteRetry).
var triesMap = fmt.Sprintf("geo $%s {\n    default \"\";\n}\n", balancer.TriesVariable)

// A Gateway API retry ($causeway_tries) tries again up to its tries,
// on an endpoint already tried once every endpoint was; a location
// without it keeps the backend's retries, each on another endpoint.
func TestRouteRetry(t *testing.T) {
	const key = "ns/flaky/80"
	ingressConf := "proxy_next_upstream error timeout http_500 http_503;\n"
	tests := []struct {
		name     string
		conf     string // the location's retry directives
		method   string
		limited  bool  // the backend has max_conns
		fails    []int // each endpoint's failures before it answers 200
		status   int   // the failures' status
		dead     bool  // a closed port before the endpoints
		want     int   // the client's status
		wantHits int   // the requests the endpoints saw in all
		every    bool  // every endpoint was tried
		// angie, when set, is why Angie is not held to the row.
		angie string
	}{
		{name: "one endpoint, within attempts", conf: routeRetryConf(4), fails: []int{3}, status: 500, want: 200, wantHits: 4},
		{name: "one endpoint, beyond attempts", conf: routeRetryConf(4), fails: []int{4}, status: 500, want: 500, wantHits: 4},
		{name: "one endpoint, 503", conf: routeRetryConf(2), fails: []int{1}, status: 503, want: 200, wantHits: 2},
		{name: "code not listed", conf: routeRetryConf(4), fails: []int{1}, status: 502, want: 502, wantHits: 1},
		// Both tried before the first is tried again.
		{name: "two endpoints, one twice", conf: routeRetryConf(3), fails: []int{1, 1}, status: 500, want: 200, wantHits: 3, every: true},
		{name: "two endpoints, beyond attempts", conf: routeRetryConf(3), fails: []int{2, 2}, status: 500, want: 500, wantHits: 3},
		{name: "POST", conf: routeRetryConf(3), method: http.MethodPost, fails: []int{2}, status: 500, want: 200, wantHits: 3},
		{name: "max_conns", conf: routeRetryConf(3), limited: true, fails: []int{2}, status: 500, want: 200, wantHits: 3},
		{name: "connection error", conf: routeRetryConf(2), dead: true, fails: []int{0}, want: 200, wantHits: 1},
		// Ingress: each endpoint at most once, up to the backend's retries (1).
		{name: "ingress, one endpoint", conf: ingressConf, fails: []int{1}, status: 500, want: 500, wantHits: 1},
		{name: "ingress, two endpoints", conf: ingressConf, fails: []int{5, 5}, status: 500, want: 500, wantHits: 2},
		{name: "ingress, POST", conf: ingressConf, method: http.MethodPost, fails: []int{1, 0}, status: 500, want: 500, wantHits: 1,
			angie: "Angie 1.12.1 holds a POST answered 500 under proxy_next_upstream http_500 without non_idempotent until proxy_read_timeout, then answers 504 (nginx 1.22 passes the 500 on)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.angie != "" && strings.Contains(filepath.Base(requireNginx(t).bin), "angie") {
				t.Skip(tc.angie)
			}
			n := startNginx(t, nginxOptions{keys: []string{key}, locationConf: map[string]string{key: tc.conf}, httpConf: triesMap})
			b := balancer.Backend{Key: key}
			if tc.limited {
				b.MaxConns = 10
			}
			if tc.dead {
				b.Endpoints = append(b.Endpoints, deadEndpoint(t, "127.0.0.2"))
			}
			var eps []*flakyBackend
			for i, f := range tc.fails {
				e := startFlaky(t, fmt.Sprintf("127.0.0.%d", i+3), fmt.Sprintf("e%d", i), f, tc.status)
				eps = append(eps, e)
				b.Endpoints = append(b.Endpoints, e.endpoint())
			}
			n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{b}})
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, n.url(0, "/"), strings.NewReader("body"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := n.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			hits := 0
			for _, e := range eps {
				h := int(e.hits.Load())
				hits += h
				if tc.every && h == 0 {
					t.Errorf("%s never tried", e.name)
				}
			}
			if resp.StatusCode != tc.want || hits != tc.wantHits {
				t.Errorf("status %d after %d tries, want %d after %d\n%s", resp.StatusCode, hits, tc.want, tc.wantHits, n.logs())
			}
			if strings.Contains(n.logs(), "uninitialized") {
				t.Errorf("nginx warned:\n%s", n.logs())
			}
		})
	}
}
