package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// mirrorManifests: an HTTPRoute of mirror.test whose rule /m copies each
// request to shadow-a and shadow-b, with a RequestHeaderModifier, and
// whose rule /some copies 20% of the requests to shadow-a and 20% to
// shadow-b (independently), on a Gateway listener on port %[1]d.
const mirrorManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: http, port: %[1]d, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mirror, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [mirror.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /m}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: X-Header-Set, value: set-overwrites-values}]
        add: [{name: X-Header-Add-Append, value: header-val-2}]
        remove: [X-Header-Remove]
    - type: RequestMirror
      requestMirror: {backendRef: {name: shadow-a, port: 80}}
    - type: RequestMirror
      requestMirror: {backendRef: {name: shadow-b, port: 80}}
    backendRefs: [{name: primary, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /some}}]
    filters:
    - type: RequestMirror
      requestMirror: {backendRef: {name: shadow-a, port: 80}, percent: 20}
    - type: RequestMirror
      requestMirror: {backendRef: {name: shadow-b, port: 80}, fraction: {numerator: 1, denominator: 5}}
    backendRefs: [{name: primary, port: 80}]
---
`

// recorder is a backend that keeps what it was sent.
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	host, uri string
	header    http.Header
	body      int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n, _ := io.Copy(io.Discard, req.Body)
	r.mu.Lock()
	r.seen = append(r.seen, seenRequest{host: req.Host, uri: req.RequestURI, header: req.Header.Clone(), body: int(n)})
	r.mu.Unlock()
	w.Write([]byte("shadow\n"))
}

// find returns the requests for uri.
func (r *recorder) find(uri string) []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []seenRequest
	for _, s := range r.seen {
		if s.uri == uri {
			out = append(out, s)
		}
	}
	return out
}

// count returns how many requests had a URI for which keep is true.
func (r *recorder) count(keep func(uri string) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.seen {
		if keep(s.uri) {
			n++
		}
	}
	return n
}

// TestGatewayRequestMirrorAgainstNginx: an HTTPRoute rule with two
// RequestMirrors answers with its own backend's reply while both mirror
// backends get a copy of the request, with the rule's header changes and
// its body; mirrors of 20% get about a fifth of the requests each, drawn
// apart. In both data planes.
func TestGatewayRequestMirrorAgainstNginx(t *testing.T) {
	t.Parallel()
	for _, plane := range []string{"lua", "plain"} {
		t.Run(plane, func(t *testing.T) {
			primary := startBackend(t, "primary")
			var a, b recorder
			shadowA, shadowB := startHandlerBackend(t, "shadow-a", &a), startHandlerBackend(t, "shadow-b", &b)
			c := startController(t, map[string]string{
				"services.yaml": serviceYAML("default", "primary", 80, primary) + serviceYAML("default", "shadow-a", 80, shadowA) +
					serviceYAML("default", "shadow-b", 80, shadowB),
			}, "--dataplane", plane)
			port := freePort(t, c.IP)
			c.WriteManifest("gateway.yaml", fmt.Sprintf(mirrorManifests, port))
			addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
			send := func(path string, body int) (harness.Result, error) {
				method := http.MethodGet
				if body > 0 {
					method = http.MethodPost
				}
				return harness.Do(addr, harness.Request{Method: method, Scheme: "http", Host: "mirror.test", Path: path, Body: body,
					Header: map[string]string{"X-Header-Remove": "remove-val", "X-Header-Add-Append": "append-val-1"}})
			}
			eventually(t, 20*time.Second, func() error {
				got, err := send("/m/ready", 0)
				if err != nil {
					return err
				}
				if got.Status != 200 {
					return fmt.Errorf("/m/ready: %d", got.Status)
				}
				return nil
			})
			got, err := send("/m/copy?q=1", 1000)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != 200 || got.Reply.Service != "primary" {
				t.Fatalf("/m/copy: %d from %q, want 200 from primary", got.Status, got.Reply.Service)
			}
			for name, r := range map[string]*recorder{"shadow-a": &a, "shadow-b": &b} {
				var seen []seenRequest
				eventually(t, 5*time.Second, func() error {
					if seen = r.find("/m/copy?q=1"); len(seen) == 0 {
						return fmt.Errorf("%s has no copy of /m/copy?q=1", name)
					}
					return nil
				})
				s := seen[0]
				if len(seen) != 1 || s.host != "mirror.test" || s.body != 1000 {
					t.Errorf("%s: %d copies, Host %q, body %d bytes; want 1, mirror.test, 1000", name, len(seen), s.host, s.body)
				}
				h := s.header
				if h.Get("X-Header-Set") != "set-overwrites-values" || h.Get("X-Header-Add-Append") != "append-val-1,header-val-2" ||
					h.Get("X-Header-Remove") != "" {
					t.Errorf("%s: headers %v, want the rule's header changes", name, h)
				}
			}
			// 20% each: 300 requests give 60 copies each on average
			// (standard deviation 7); both or neither would tell a shared
			// draw.
			const n = 300
			for i := range n {
				got, err := send("/some/"+strconv.Itoa(i), 0)
				if err != nil || got.Status != 200 || got.Reply.Service != "primary" {
					t.Fatalf("/some/%d: %v %d %q", i, err, got.Status, got.Reply.Service)
				}
			}
			time.Sleep(500 * time.Millisecond) // the last copies
			some := func(uri string) bool { return len(uri) > 6 && uri[:6] == "/some/" }
			ca, cb := a.count(some), b.count(some)
			both := 0
			for i := range n {
				uri := "/some/" + strconv.Itoa(i)
				if len(a.find(uri)) > 0 && len(b.find(uri)) > 0 {
					both++
				}
			}
			// Independent draws: 12 requests copied to both on average.
			if ca < 30 || ca > 90 || cb < 30 || cb > 90 || both > 30 {
				t.Errorf("copies of %d requests: %d to shadow-a, %d to shadow-b, %d to both; want 30 to 90 each, at most 30 to both", n, ca, cb, both)
			}
			t.Logf("%s: %d to shadow-a, %d to shadow-b, %d to both", plane, ca, cb, both)
		})
	}
}
