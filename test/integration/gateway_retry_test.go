package integration

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/test/harness"
)

// retryManifests: an HTTPRoute of retry.test whose rule /r retries 500s
// up to 3 times on Service flaky; /slow retries twice a try that takes
// longer than backendRequest 500ms; /bounded retries up to 10 times
// tries of 400ms within request 1s; /conn retries (once, the default) on
// Service conn, one of whose two endpoints refuses connections; a
// Gateway listener on port %[1]d.
const retryManifests = gatewayClassYAML + `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: causeway
  listeners:
  - {name: http, port: %[1]d, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retry, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [retry.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /r}}]
    retry: {codes: [500], attempts: 3}
    backendRefs: [{name: flaky, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /slow}}]
    retry: {attempts: 2}
    timeouts: {request: 10s, backendRequest: 500ms}
    backendRefs: [{name: flaky, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /bounded}}]
    retry: {attempts: 10}
    timeouts: {request: 1s, backendRequest: 400ms}
    backendRefs: [{name: flaky, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /conn}}]
    retry: {}
    backendRefs: [{name: conn, port: 80}]
---
`

// flakyHandler fails the first ?fail= tries of each ?id= with ?code=,
// then answers 200, as the conformance suite's echo-basic /retry/ does;
// the first ?slow= tries wait 2s before they answer.
type flakyHandler struct {
	mu    sync.Mutex
	tries map[string]int
}

func (f *flakyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fail, _ := strconv.Atoi(q.Get("fail"))
	slow, _ := strconv.Atoi(q.Get("slow"))
	code, _ := strconv.Atoi(q.Get("code"))
	f.mu.Lock()
	f.tries[q.Get("id")]++
	n := f.tries[q.Get("id")]
	f.mu.Unlock()
	if n <= slow {
		time.Sleep(2 * time.Second)
	}
	if n <= fail {
		w.WriteHeader(code)
		fmt.Fprintf(w, "failed try %d\n", n)
		return
	}
	fmt.Fprintf(w, "ok after %d\n", n)
}

func (f *flakyHandler) triesOf(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tries[id]
}

// TestGatewayRetryAgainstNginx: an HTTPRoute rule's retry tries its one
// endpoint again up to its attempts, passes the last failure through
// beyond them, does not retry a code it does not list, retries a POST,
// retries a try that outlasts timeouts.backendRequest and stops retrying
// after timeouts.request, and moves a request from an endpoint that
// refuses connections to one that answers.
func TestGatewayRetryAgainstNginx(t *testing.T) {
	t.Parallel()
	f := &flakyHandler{tries: map[string]int{}}
	flaky := startHandlerBackend(t, "flaky", f)
	live := startBackend(t, "conn")
	dead := &backend{Service: "conn", IP: loopbackIP(), Port: live.Port}
	c := startController(t, map[string]string{
		"services.yaml": serviceYAML("default", "flaky", 80, flaky) + serviceYAML("default", "conn", 80, dead, live),
	}, "--dataplane", "lua")
	port := freePort(t, c.IP)
	c.WriteManifest("gateway.yaml", fmt.Sprintf(retryManifests, port))
	addr := net.JoinHostPort(c.IP, strconv.Itoa(port))
	send := func(method, path string) (harness.Result, error) {
		body := 0
		if method == http.MethodPost {
			body = 100
		}
		return harness.Do(addr, harness.Request{Method: method, Scheme: "http", Host: "retry.test", Path: path, Body: body})
	}
	eventually(t, 20*time.Second, func() error {
		got, err := send(http.MethodGet, "/r/ready")
		if err != nil {
			return err
		}
		if got.Status != 200 {
			return fmt.Errorf("/r/ready: %d", got.Status)
		}
		return nil
	})
	for i, row := range []struct {
		name             string
		method, path     string
		fail, code, slow int
		want, wantTries  int
	}{
		{"within attempts", http.MethodGet, "/r", 3, 500, 0, 200, 4},
		{"beyond attempts", http.MethodGet, "/r", 4, 500, 0, 500, 4},
		{"code not listed", http.MethodGet, "/r", 2, 503, 0, 503, 1},
		{"POST", http.MethodPost, "/r", 2, 500, 0, 200, 3},
		// HTTPRouteRetryBackendTimeout: two tries time out, the third answers.
		{"backend timeout", http.MethodGet, "/slow", 0, 0, 2, 200, 3},
		// Tries at 0, 400ms and 800ms; none starts after 1s.
		{"request timeout", http.MethodGet, "/bounded", 0, 0, 10, 504, 3},
	} {
		t.Run(row.name, func(t *testing.T) {
			id := "row" + strconv.Itoa(i)
			got, err := send(row.method, fmt.Sprintf("%s/x?id=%s&fail=%d&code=%d&slow=%d", row.path, id, row.fail, row.code, row.slow))
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != row.want || f.triesOf(id) != row.wantTries {
				t.Errorf("status %d after %d tries, want %d after %d", got.Status, f.triesOf(id), row.want, row.wantTries)
			}
		})
	}
	t.Run("connection error", func(t *testing.T) {
		// Round robin sends every other request to the dead endpoint first.
		for i := range 10 {
			got, err := send(http.MethodGet, "/conn/"+strconv.Itoa(i))
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != 200 || got.Reply.Service != "conn" {
				t.Fatalf("/conn/%d: %d from %q, want 200 from conn", i, got.Status, got.Reply.Service)
			}
		}
	})
}
