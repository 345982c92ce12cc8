package balancer_test

import (
	"context"
	"github.com/causeway/causeway/internal/balancer"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A rejected payload changes nothing: the Lua side answers 400 with a
// message naming the field, the generation stays, and the old endpoint
// keeps serving.
func TestMalformedPayloadRejectedOldEndpointsServe(t *testing.T) {
	const key = "default/web/80"
	n := startNginx(t, nginxOptions{keys: []string{key}})
	a := startBackend(t, "127.0.0.2", "a")
	n.replace(t, balancer.State{Generation: 7, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})

	// b is the endpoint every bad payload tries to switch to.
	b := startBackend(t, "127.0.0.3", "b")
	ep := `{"address":"127.0.0.3","port":` + strconv.Itoa(b.port) + `}`
	state := func(backend string) string {
		return `{"version":1,"generation":8,"backends":[` + backend + `]}`
	}
	withEP := func(fields string) string {
		return state(`{"key":"` + key + `",` + fields + `"endpoints":[` + ep + `]}`)
	}
	endpoint := func(e string) string {
		return state(`{"key":"` + key + `","endpoints":[` + e + `]}`)
	}

	tests := []struct {
		name, path, body, want string
	}{
		{"not JSON", "/v1/state", `{"version":1,`, "invalid JSON"},
		{"trailing data", "/v1/state", state("") + ` x`, "trailing data"},
		{"duplicate JSON key", "/v1/state", `{"version":1,"version":1,"generation":8,"backends":[]}`, "duplicate key"},
		{"empty body", "/v1/state", ``, "empty body"},
		{"array document", "/v1/state", `[]`, "payload: must be an object"},
		{"missing version", "/v1/state", `{"generation":8,"backends":[]}`, "version: is required"},
		{"wrong version", "/v1/state", `{"version":2,"generation":8,"backends":[]}`, "version: must be 1"},
		{"generation negative", "/v1/state", `{"version":1,"generation":-1,"backends":[]}`, "generation: must be an integer"},
		{"generation fractional", "/v1/state", `{"version":1,"generation":8.5,"backends":[]}`, "generation: must be an integer"},
		{"generation string", "/v1/state", `{"version":1,"generation":"8","backends":[]}`, "generation: must be an integer"},
		{"generation too large", "/v1/state", `{"version":1,"generation":9007199254740992,"backends":[]}`, "generation: must be an integer"},
		{"backends missing", "/v1/state", `{"version":1,"generation":8}`, "backends: is required"},
		{"backends object", "/v1/state", `{"version":1,"generation":8,"backends":{}}`, "backends: must be an array"},
		{"unknown top-level field", "/v1/state", `{"version":1,"generation":8,"backends":[],"extra":1}`, `unknown field "extra"`},
		{"delete in full state", "/v1/state", `{"version":1,"generation":8,"backends":[],"delete":[]}`, `unknown field "delete"`},
		{"backend not object", "/v1/state", state(`"x"`), "backends[0]: must be an object"},
		{"key missing", "/v1/state", state(`{"endpoints":[]}`), "backends[0].key: is required"},
		{"key with space", "/v1/state", state(`{"key":"a b","endpoints":[]}`), "backends[0].key: must be"},
		{"key with dollar", "/v1/state", state(`{"key":"a$b","endpoints":[]}`), "backends[0].key: must be"},
		{"key with quote", "/v1/state", state(`{"key":"a\"b","endpoints":[]}`), "backends[0].key: must be"},
		{"key empty", "/v1/state", state(`{"key":"","endpoints":[]}`), "backends[0].key: must be"},
		{"key too long", "/v1/state", state(`{"key":"` + strings.Repeat("k", 257) + `","endpoints":[]}`), "backends[0].key: must be"},
		{"duplicate key", "/v1/state", state(`{"key":"x","endpoints":[]},{"key":"x","endpoints":[]}`), "backends[1].key: duplicates backends[0]"},
		{"unknown backend field", "/v1/state", withEP(`"timeout":1,`), `backends[0]: unknown field "timeout"`},
		{"unknown method", "/v1/state", withEP(`"method":"random",`), "backends[0].method: must be one of"},
		{"method wrong case", "/v1/state", withEP(`"method":"Round_Robin",`), "backends[0].method: must be one of"},
		{"retries too many", "/v1/state", withEP(`"retries":6,`), "backends[0].retries: must be an integer from 0 to 5"},
		{"retries negative", "/v1/state", withEP(`"retries":-1,`), "backends[0].retries"},
		{"endpoints missing", "/v1/state", state(`{"key":"x"}`), "backends[0].endpoints: is required"},
		{"endpoints null", "/v1/state", state(`{"key":"x","endpoints":null}`), "backends[0].endpoints: must be an array, got null"},
		{"address missing", "/v1/state", endpoint(`{"port":80}`), "endpoints[0].address: is required"},
		{"address three octets", "/v1/state", endpoint(`{"address":"1.2.3","port":80}`), "endpoints[0].address: must be an IPv4 or IPv6 address"},
		{"address octet too big", "/v1/state", endpoint(`{"address":"256.0.0.1","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address leading zero", "/v1/state", endpoint(`{"address":"127.0.0.03","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address hostname", "/v1/state", endpoint(`{"address":"example.com","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address with port", "/v1/state", endpoint(`{"address":"127.0.0.3:80","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address IPv6 bracketed", "/v1/state", endpoint(`{"address":"[::1]","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address IPv6 zone", "/v1/state", endpoint(`{"address":"fe80::1%eth0","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address IPv6 two ::", "/v1/state", endpoint(`{"address":"1::2::3","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address IPv6 nine groups", "/v1/state", endpoint(`{"address":"1:2:3:4:5:6:7:8:9","port":80}`), "must be an IPv4 or IPv6 address"},
		{"address number", "/v1/state", endpoint(`{"address":2130706435,"port":80}`), "endpoints[0].address: must be a string"},
		{"port zero", "/v1/state", endpoint(`{"address":"127.0.0.3","port":0}`), "endpoints[0].port: must be an integer from 1 to 65535, got 0"},
		{"port too big", "/v1/state", endpoint(`{"address":"127.0.0.3","port":65536}`), "endpoints[0].port: must be an integer from 1 to 65535"},
		{"port string", "/v1/state", endpoint(`{"address":"127.0.0.3","port":"80"}`), "endpoints[0].port: must be an integer"},
		{"port fractional", "/v1/state", endpoint(`{"address":"127.0.0.3","port":80.5}`), "endpoints[0].port: must be an integer"},
		{"weight zero", "/v1/state", endpoint(`{"address":"127.0.0.3","port":80,"weight":0}`), "endpoints[0].weight: must be an integer from 1 to 100"},
		{"weight too big", "/v1/state", endpoint(`{"address":"127.0.0.3","port":80,"weight":101}`), "endpoints[0].weight"},
		{"ready string", "/v1/state", endpoint(`{"address":"127.0.0.3","port":80,"ready":"yes"}`), "endpoints[0].ready: must be a boolean"},
		{"zone bad", "/v1/state", endpoint(`{"address":"127.0.0.3","port":80,"zone":"a b"}`), "endpoints[0].zone"},
		{"unknown endpoint field", "/v1/state", endpoint(`{"address":"127.0.0.3","port":80,"hostname":"x"}`), `endpoints[0]: unknown field "hostname"`},
		{"duplicate endpoint", "/v1/state", endpoint(ep + `,` + ep), "endpoints[1]: duplicates endpoints[0]"},
		{"duplicate endpoint IPv6 spellings", "/v1/state", endpoint(`{"address":"::1","port":80},{"address":"0:0::1","port":80}`), "endpoints[1]: duplicates endpoints[0]"},
		{"chash without hash_key", "/v1/state", withEP(`"method":"chash",`), "backends[0].hash_key: is required"},
		{"hash_key without chash", "/v1/state", withEP(`"hash_key":"$request_uri",`), "backends[0].hash_key: is only allowed"},
		{"hash_key not a variable", "/v1/state", withEP(`"method":"chash","hash_key":"request_uri",`), "backends[0].hash_key: must be nginx variables"},
		{"hash_key with literal", "/v1/state", withEP(`"method":"chash","hash_key":"$host/$uri",`), "backends[0].hash_key: must be nginx variables"},
		{"hash_key braces", "/v1/state", withEP(`"method":"chash","hash_key":"${uri}",`), "backends[0].hash_key: must be nginx variables"},
		{"hash_key injection", "/v1/state", withEP(`"method":"chash","hash_key":"$uri;return 200",`), "backends[0].hash_key: must be nginx variables"},
		{"hash_key unknown variable", "/v1/state", withEP(`"method":"chash","hash_key":"$document_root",`), "variable $document_root is not allowed"},
		{"hash_key upper-case header", "/v1/state", withEP(`"method":"chash","hash_key":"$http_X_User",`), "variable $http_X_User is not allowed"},
		{"sticky options without sticky", "/v1/state", withEP(`"sticky":{},`), "backends[0].sticky: is only allowed"},
		{"sticky bad cookie name", "/v1/state", withEP(`"method":"sticky","sticky":{"cookie":"a=b"},`), "backends[0].sticky.cookie"},
		{"sticky relative path", "/v1/state", withEP(`"method":"sticky","sticky":{"path":"app"},`), "backends[0].sticky.path"},
		{"sticky path semicolon", "/v1/state", withEP(`"method":"sticky","sticky":{"path":"/a;Domain=evil"},`), "backends[0].sticky.path"},
		{"sticky max_age negative", "/v1/state", withEP(`"method":"sticky","sticky":{"max_age":-1},`), "backends[0].sticky.max_age"},
		{"sticky same_site lower case", "/v1/state", withEP(`"method":"sticky","sticky":{"same_site":"lax"},`), "backends[0].sticky.same_site"},
		{"sticky same_site None insecure", "/v1/state", withEP(`"method":"sticky","sticky":{"same_site":"None"},`), "only with secure: true"},
		{"sticky unknown option", "/v1/state", withEP(`"method":"sticky","sticky":{"domain":"x"},`), `backends[0].sticky: unknown field "domain"`},
		{"update bad delete key", "/v1/backends", `{"version":1,"generation":8,"delete":["a b"]}`, "delete[0]: must be a backend key"},
		{"update delete and upsert", "/v1/backends", `{"version":1,"generation":8,"backends":[{"key":"x","endpoints":[]}],"delete":["x"]}`, `delete[0]: "x" is also in backends[0]`},
		{"update bad endpoint", "/v1/backends", `{"version":1,"generation":8,"backends":[{"key":"` + key + `","endpoints":[{"address":"127.0.0.3","port":-5}]}]}`, "backends[0].endpoints[0].port"},
		{"update older generation", "/v1/backends", `{"version":1,"generation":6,"backends":[{"key":"` + key + `","endpoints":[` + ep + `]}]}`, "generation 6 is older than the current generation 7"},
		{"update bad base", "/v1/backends", `{"version":1,"generation":8,"base":"7","backends":[]}`, "base: must be an integer"},
		{"update on another base", "/v1/backends", `{"version":1,"generation":8,"base":6,"backends":[{"key":"` + key + `","endpoints":[` + ep + `]}]}`, "the state is at generation 7, not the base 6 of this update"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPut
			if tc.path == "/v1/backends" {
				method = http.MethodPost
			}
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			err := n.client.Do(ctxT(t), method, tc.path, body, nil)
			want := http.StatusBadRequest
			if strings.Contains(tc.want, "is older") || strings.Contains(tc.want, "not the base") {
				want = http.StatusConflict
			}
			if !isAPIError(err, want) {
				t.Fatalf("got %v, want HTTP %d", err, want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if gen, err := n.client.Generation(ctxT(t)); err != nil || gen != 7 {
				t.Errorf("generation = %d, %v; want 7", gen, err)
			}
			if r := n.get(t, n.http, n.url(0, "/"), nil); r.status != 200 || r.backend != "a" {
				t.Errorf("after rejection: status %d from %q, want 200 from a", r.status, r.backend)
			}
		})
	}
	if b.hits.Load() != 0 {
		t.Errorf("rejected endpoint b served %d requests", b.hits.Load())
	}
}

// The client turns a refusal into an *APIError carrying the Lua message.
func TestClientErrorsCarryLuaMessage(t *testing.T) {
	n := startNginx(t, nginxOptions{keys: []string{"k"}})
	err := n.client.Replace(ctxT(t), balancer.State{Generation: 1, Backends: []balancer.Backend{{
		Key: "k", Endpoints: []balancer.Endpoint{{Address: "10.0.0.256", Port: 80, Ready: true}},
	}}})
	if !isAPIError(err, 400) || !balancer.IsRejected(err) {
		t.Fatalf("got %v, want a 400 APIError", err)
	}
	const want = `balancer: replace state (generation 1): HTTP 400: backends[0].endpoints[0].address: must be an IPv4 or IPv6 address, got "10.0.0.256"`
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}

	// Unreachable socket: a transport error, not a refusal.
	c := balancer.NewClient(n.dir + "/missing.sock")
	_, err = c.Generation(ctxT(t))
	if err == nil || balancer.IsRejected(err) {
		t.Errorf("missing socket: got %v, want a transport error", err)
	}

	// Wrong method and unknown path are answered in JSON too.
	if err := n.client.Do(ctxT(t), http.MethodDelete, "/v1/state", nil, nil); !isAPIError(err, 405) {
		t.Errorf("DELETE /v1/state: %v, want 405", err)
	}
	if err := n.client.Do(ctxT(t), http.MethodGet, "/v1/nope", nil, nil); !isAPIError(err, 404) {
		t.Errorf("GET /v1/nope: %v, want 404", err)
	}
}

// Replace, Update, Delete and Generation, and the state read back as the
// Lua side normalised it.
func TestReplaceUpdateDeleteGeneration(t *testing.T) {
	n := startNginx(t, nginxOptions{keys: []string{"ns/a/80", "ns/b/80"}})
	a := startBackend(t, "127.0.0.2", "a")
	b := startBackend(t, "127.0.0.3", "b")
	ctx := ctxT(t)

	if gen, err := n.client.Generation(ctx); err != nil || gen != 0 {
		t.Fatalf("fresh nginx: generation %d, %v; want 0", gen, err)
	}
	n.replace(t, balancer.State{Generation: 10, Backends: []balancer.Backend{
		{Key: "ns/a/80", Endpoints: []balancer.Endpoint{a.endpoint()}},
		{Key: "ns/b/80", Endpoints: []balancer.Endpoint{b.endpoint()}},
	}})
	if gen, _ := n.client.Generation(ctx); gen != 10 {
		t.Fatalf("generation %d, want 10", gen)
	}
	if r := n.get(t, n.http, n.url(1, "/"), nil); r.backend != "b" {
		t.Fatalf("ns/b/80 served by %q", r.backend)
	}

	// Update touches only the named backend.
	if err := n.client.Update(ctx, 11, balancer.Backend{Key: "ns/b/80", Endpoints: []balancer.Endpoint{a.endpoint()}}); err != nil {
		t.Fatal(err)
	}
	if r := n.get(t, n.http, n.url(1, "/"), nil); r.backend != "a" {
		t.Errorf("after update ns/b/80 served by %q, want a", r.backend)
	}
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.backend != "a" {
		t.Errorf("ns/a/80 served by %q, want a (untouched)", r.backend)
	}
	// Delete makes the key unknown: 503.
	if err := n.client.Delete(ctx, 12, "ns/b/80", "never/existed/1"); err != nil {
		t.Fatal(err)
	}
	if r := n.get(t, n.http, n.url(1, "/"), nil); r.status != 503 {
		t.Errorf("deleted backend: status %d, want 503", r.status)
	}
	// The same generation again is accepted (an idempotent retry).
	if err := n.client.Update(ctx, 12, balancer.Backend{Key: "ns/b/80", Endpoints: []balancer.Endpoint{b.endpoint()}}); err != nil {
		t.Fatal(err)
	}

	// Normalisation: defaults, canonical IPv6, sorted endpoints.
	n.replace(t, balancer.State{Generation: 13, Backends: []balancer.Backend{
		{Key: "ns/a/80", Method: balancer.Sticky, Endpoints: []balancer.Endpoint{
			{Address: "0:0:0:0:0:0:0:1", Port: 9, Ready: false, Zone: "z1"},
			{Address: "127.0.0.2", Port: 80, Weight: 3, Ready: true},
		}},
		{Key: "ns/b/80"},
	}})
	got, err := n.client.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := balancer.State{Generation: 13, Backends: []balancer.Backend{
		{Key: "ns/a/80", Method: balancer.Sticky, Retries: new(1),
			Sticky: &balancer.StickyOptions{Cookie: "causeway_affinity", Path: "/", HTTPOnly: &yes},
			Endpoints: []balancer.Endpoint{
				{Address: "127.0.0.2", Port: 80, Weight: 3, Ready: true},
				{Address: "::1", Port: 9, Weight: 1, Ready: false, Zone: "z1"},
			}},
		{Key: "ns/b/80", Method: balancer.RoundRobin, Retries: new(1), Endpoints: []balancer.Endpoint{}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state read back\n got %+v\nwant %+v", got, want)
	}
}

// Go's Validate and the Lua validator agree, so the controller can drop a
// bad backend before pushing instead of having the push refused.
func TestValidationParityGoLua(t *testing.T) {
	n := startNginx(t, nginxOptions{workers: 1})
	ok := balancer.Endpoint{Address: "127.0.0.2", Port: 80, Ready: true}
	for i, tc := range validationCases() {
		b := tc.b
		if b.Endpoints == nil {
			b.Endpoints = []balancer.Endpoint{ok}
		}
		goErr := b.Validate()
		luaErr := n.client.Replace(ctxT(t), balancer.State{Generation: int64(i), Backends: []balancer.Backend{b}})
		if luaErr != nil && !isAPIError(luaErr, 400) {
			t.Fatalf("%s: unexpected error %v", tc.name, luaErr)
		}
		if (goErr == nil) != (luaErr == nil) || (goErr == nil) != tc.valid {
			t.Errorf("%s: Go says %v, Lua says %v; want valid=%v", tc.name, goErr, luaErr, tc.valid)
		}
	}
}

// Concurrent updates (landing on different workers) are serialised by the
// shared-dict lock: none is lost.
func TestConcurrentUpdatesAllLand(t *testing.T) {
	n := startNginx(t, nginxOptions{})
	const writers = 16
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		go func(i int) {
			// Separate clients, so separate connections (and workers).
			c := balancer.NewClient(n.dir + "/dynamic.sock")
			defer c.Close()
			b := balancer.Backend{Key: "ns/svc-" + strconv.Itoa(i) + "/80", Endpoints: []balancer.Endpoint{{Address: "127.0.0.2", Port: 1000 + i, Ready: true}}}
			errs <- c.Update(ctxT(t), 1, b)
		}(i)
	}
	for i := 0; i < writers; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	st, err := n.client.State(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Backends) != writers {
		t.Errorf("%d backends after %d concurrent updates", len(st.Backends), writers)
	}
}

// A state too large for the shared dict is refused with 507 and the
// previous state keeps serving.
func TestStateTooLargeForDict(t *testing.T) {
	const key = "ns/a/80"
	n := startNginx(t, nginxOptions{keys: []string{key}, dictSize: "1m"})
	a := startBackend(t, "127.0.0.2", "a")
	n.replace(t, balancer.State{Generation: 1, Backends: []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}})

	big := balancer.State{Generation: 2}
	for i := 0; i < 4; i++ {
		b := balancer.Backend{Key: "ns/big-" + strconv.Itoa(i) + "/80"}
		for j := 0; j < balancer.MaxEndpoints; j++ {
			b.Endpoints = append(b.Endpoints, balancer.Endpoint{Address: "10.1." + strconv.Itoa(j/250) + "." + strconv.Itoa(j%250), Port: 8080, Ready: true})
		}
		big.Backends = append(big.Backends, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := n.client.Replace(ctx, big)
	if !isAPIError(err, 507) || !strings.Contains(err.Error(), "cannot hold the new state") {
		t.Fatalf("got %v, want 507", err)
	}
	if gen, _ := n.client.Generation(ctxT(t)); gen != 1 {
		t.Errorf("generation %d after refusal, want 1", gen)
	}
	if r := n.get(t, n.http, n.url(0, "/"), nil); r.status != 200 || r.backend != "a" {
		t.Errorf("after refusal: status %d from %q", r.status, r.backend)
	}
	// The backends written before the dict ran out are taken back.
	if st, err := n.client.State(ctxT(t)); err != nil || len(st.Backends) != 1 || st.Backends[0].Key != key {
		t.Errorf("state after refusal: %+v, %v; want %s alone", st, err, key)
	}
	if err := n.client.Patch(ctxT(t), 1, 3, []balancer.Backend{{Key: key, Endpoints: []balancer.Endpoint{a.endpoint()}}}, nil); err != nil {
		t.Errorf("patch after refusal: %v", err)
	}
}
