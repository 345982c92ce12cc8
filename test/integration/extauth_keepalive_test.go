package integration

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingAuthService lets every request in with an answer without a
// body, counts the TCP connections nginx opens to it, and remembers the
// X-Request-ID of the requests it got.
type countingAuthService struct {
	URL   string
	conns atomic.Int64
	mu    sync.Mutex
	ids   []string
}

func startCountingAuthService(t *testing.T) *countingAuthService {
	t.Helper()
	a := &countingAuthService{}
	l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	a.URL = "http://" + l.Addr().String() + "/check"
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				a.conns.Add(1)
			}
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.mu.Lock()
			a.ids = append(a.ids, r.Header.Get("X-Request-ID"))
			a.mu.Unlock()
			w.WriteHeader(200) // Content-Length: 0
		})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return a
}

func (a *countingAuthService) lastID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ids) == 0 {
		return ""
	}
	return a.ids[len(a.ids)-1]
}

// TestExternalAuthKeepaliveAgainstNginx: with auth-keepalive, nginx asks
// the service over one connection for request after request; without it,
// over a new connection each time. The subrequest shares the request's
// variables, so the service and the backend see one X-Request-ID.
func TestExternalAuthKeepaliveAgainstNginx(t *testing.T) {
	t.Parallel()
	app := startBackend(t, "app")
	pooled, unpooled := startCountingAuthService(t), startCountingAuthService(t)
	m := ingressClass + serviceYAML("default", "app", 80, app) +
		annotatedIngressYAML("pooled", "pooled.test", "app", "auth-url", pooled.URL, "auth-keepalive", "2",
			"auth-keepalive-requests", "100", "auth-keepalive-timeout", "30", "auth-keepalive-share-vars", "true") +
		annotatedIngressYAML("unpooled", "unpooled.test", "app", "auth-url", unpooled.URL) +
		// One worker: each worker keeps its own pool.
		configMapYAML(map[string]string{"worker-processes": "1"})
	c := startController(t, map[string]string{"manifests.yaml": m})

	const n = 5
	for i := range n {
		r := c.authGet(t, "pooled.test", "/p"+strconv.Itoa(i), "")
		if r.Status != 200 || r.Reply.Service != "app" {
			t.Fatalf("pooled request %d: status %d from %q, want 200 from app", i, r.Status, r.Reply.Service)
		}
		if id := r.Reply.Headers["X-Request-ID"]; id == "" || id != pooled.lastID() {
			t.Errorf("pooled request %d: the backend saw X-Request-ID %q, the service %q; want one, shared", i, id, pooled.lastID())
		}
		if r := c.authGet(t, "unpooled.test", "/u"+strconv.Itoa(i), ""); r.Status != 200 {
			t.Fatalf("unpooled request %d: status %d, want 200", i, r.Status)
		}
	}
	if got := pooled.conns.Load(); got != 1 {
		t.Errorf("with auth-keepalive the service saw %d connections for %d requests, want 1", got, n)
	}
	if got := unpooled.conns.Load(); got != n {
		t.Errorf("without auth-keepalive the service saw %d connections for %d requests, want %d", got, n, n)
	}
}
