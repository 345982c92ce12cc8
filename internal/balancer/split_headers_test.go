package balancer_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/balancer"
)

// echoBackend answers with its name (X-Backend) and, for each header of
// names, the values it got (X-Seen-<name>, "|"-joined; "-" for none).
func echoBackend(t *testing.T, ip, name string, names ...string) balancer.Endpoint {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", name)
		for _, n := range names {
			v := strings.Join(r.Header.Values(n), "|")
			if v == "" {
				v = "-"
			}
			w.Header().Set("X-Seen-"+n, v)
		}
		io.WriteString(w, name)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return balancer.Endpoint{Address: ip, Port: ln.Addr().(*net.TCPAddr).Port, Ready: true}
}

// A split whose targets edit request headers of their own (Gateway API's
// backendRef RequestHeaderModifier): the access hook picks the backend
// and sets the edited headers' variables (balancer.HeaderVariable), which
// the location sends, starting from what the location set them to before
// the hook (the client's header, or a rule's edit), which a header the
// picked target does not edit keeps. A weight
// change is a push. An edit of a header the configuration does not send
// is skipped and logged.
func TestSplitHeaders(t *testing.T) {
	const choice = "choice@ns/route.0123456789ab"
	names := []string{"Backend", "X-Add", "X-Gone", "X_U.d", "X-Rule"}
	lines := "access_by_lua_block { require(\"causeway.balancer\").access() }\n"
	for _, h := range names {
		v := balancer.HeaderVariable(h)
		client := "$http_" + strings.ToLower(strings.ReplaceAll(h, "-", "_"))
		switch h {
		case "X_U.d":
			client = `""`
		case "X-Rule": // what a rule's own edit would send
			client = `"r"`
		}
		lines += "            set $" + v + " " + client + ";\n            proxy_set_header " + h + " $" + v + ";\n"
	}
	n := startNginx(t, nginxOptions{keys: []string{choice}, editConf: func(c string) string {
		return strings.Replace(c, "        location /0/ {\n", "        location /0/ {\n            "+lines, 1)
	}})
	backends := []balancer.Backend{
		{Key: "ns/a/80", Endpoints: []balancer.Endpoint{echoBackend(t, "127.0.0.2", "a", names...)}},
		{Key: "ns/b/80", Endpoints: []balancer.Endpoint{echoBackend(t, "127.0.0.3", "b", names...)}},
	}
	sets := [][]balancer.HeaderEdit{
		{{Name: "Backend", Action: "set", Value: "a"}, {Name: "x-add", Action: "add", Value: "one"}, {Name: "X-Gone", Action: "remove"},
			{Name: "X_U.d", Action: "set", Value: "u d"}, {Name: "X-Rule", Action: "add", Value: "one"}},
		{{Name: "Backend", Action: "set", Value: "b"}},
	}
	state := func(gen int64, wa, wb int, sets [][]balancer.HeaderEdit) balancer.State {
		return balancer.State{Generation: gen, Backends: append(append([]balancer.Backend{}, backends...), balancer.Backend{
			Key: choice, Endpoints: []balancer.Endpoint{}, Split: &balancer.Split{Headers: sets,
				Targets: []balancer.Target{{Backend: "ns/a/80", Weight: wa, Headers: 1}, {Backend: "ns/b/80", Weight: wb, Headers: 2}}}})}
	}
	n.replace(t, state(1, 50, 50, sets))
	want := map[string]map[string]string{
		"a": {"Backend": "a", "X-Add": "c,one", "X-Gone": "-", "X_U.d": "u d", "X-Rule": "r,one"},
		"b": {"Backend": "b", "X-Add": "c", "X-Gone": "g", "X_U.d": "-", "X-Rule": "r"},
	}
	c := &http.Client{Timeout: 5 * time.Second}
	client := map[string]string{"Backend": "client", "X-Add": "c", "X-Gone": "g"}
	seen := map[string]int{}
	for range 60 {
		r := n.get(t, c, n.url(0, "/"), client)
		seen[r.backend]++
		w, ok := want[r.backend]
		if r.status != 200 || !ok {
			t.Fatalf("status %d from %q", r.status, r.backend)
		}
		for h, v := range w {
			if got := r.header.Get("X-Seen-" + h); got != v {
				t.Errorf("%s saw %s: %q, want %q", r.backend, h, got, v)
			}
		}
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Errorf("served %v, want both", seen)
	}
	// An add without the client's header is the value alone.
	n.replace(t, state(2, 100, 0, sets))
	for range 4 {
		r := n.get(t, c, n.url(0, "/"), nil)
		if r.backend != "a" || r.header.Get("X-Seen-X-Add") != "one" || r.header.Get("X-Seen-Backend") != "a" {
			t.Errorf("got %s %v", r.backend, r.header)
		}
	}
	// Weights are state: b alone now, no reload.
	n.replace(t, state(3, 0, 1, sets))
	for range 4 {
		if r := n.get(t, c, n.url(0, "/"), client); r.backend != "b" || r.header.Get("X-Seen-Backend") != "b" {
			t.Errorf("got %s %v", r.backend, r.header)
		}
	}
	// A header the configuration does not send: skipped, logged, served.
	n.replace(t, state(4, 0, 1, [][]balancer.HeaderEdit{sets[0], {{Name: "X-Unknown", Action: "set", Value: "v"}, {Name: "Backend", Action: "set", Value: "b2"}}}))
	if r := n.get(t, c, n.url(0, "/"), client); r.status != 200 || r.header.Get("X-Seen-Backend") != "b2" {
		t.Errorf("got %d %v", r.status, r.header)
	}
	if !strings.Contains(n.logs(), "cannot set $causeway_header_x_hunknown") {
		t.Errorf("no log of the unknown header:\n%s", n.logs())
	}
}

func TestHeaderVariable(t *testing.T) {
	for in, want := range map[string]string{
		"Backend": "causeway_header_backend", "X-A": "causeway_header_x_ha", "x_a": "causeway_header_x_ua", "X.9": "causeway_header_x_d9",
	} {
		if got := balancer.HeaderVariable(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
