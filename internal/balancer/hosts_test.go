package balancer_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/balancer"
)

// The two shapes of the test configuration, each with a hop server.
const (
	shapeA = "abcdefabcdef"
	shapeB = "0123456789ab"
	routeA = "causeway_route_" + shapeA + "_0"
	logA   = "causeway_log_" + shapeA + "_1"
	routeB = "causeway_route_" + shapeB + "_0"
)

type hostCase struct {
	name  string
	h     balancer.Host
	valid bool
}

// hostCases are the rules of a hosts table entry, one row each; every row
// is checked against ValidateHosts and against the Lua side.
func hostCases() []hostCase {
	ok := func(edit func(h *balancer.Host)) balancer.Host {
		h := balancer.Host{Name: "x.example.com", Shape: shapeA, Hop: "/run/causeway/sockets/hop-" + shapeA + ".sock",
			Vars: map[string]string{routeA: "team/x/80"}}
		edit(&h)
		return h
	}
	name := func(n string) balancer.Host { return ok(func(h *balancer.Host) { h.Name = n }) }
	shape := func(s string) balancer.Host { return ok(func(h *balancer.Host) { h.Shape = s }) }
	hop := func(p string) balancer.Host { return ok(func(h *balancer.Host) { h.Hop = p }) }
	cert := func(p string) balancer.Host { return ok(func(h *balancer.Host) { h.Cert = p }) }
	variable := func(n string) balancer.Host { return ok(func(h *balancer.Host) { h.Vars = map[string]string{n: "v"} }) }
	value := func(v string) balancer.Host {
		return ok(func(h *balancer.Host) { h.Vars = map[string]string{routeA: v} })
	}
	label := strings.Repeat("a", 61) + "."
	return []hostCase{
		{"minimal", ok(func(h *balancer.Host) {}), true},
		{"no vars", ok(func(h *balancer.Host) { h.Vars = nil }), true},
		{"route and log vars", ok(func(h *balancer.Host) { h.Vars = map[string]string{routeA: "team-a-80", logA: "x", routeB: "y"} }), true},
		{"var number 12", variable("causeway_log_" + shapeA + "_12"), true},
		{"single label", name("localhost"), true},
		{"digits and dashes", name("1-2.a--b.example.com"), true},
		{"five numbers", name("1.2.3.4.5"), true},
		{"number with leading zero", name("01.2.3.4"), true},
		{"name at 253", name(strings.Repeat(label, 4) + strings.Repeat("a", 253-4*len(label))), true},
		{"name of 254", name(strings.Repeat(label, 4) + strings.Repeat("a", 254-4*len(label))), false},
		{"name empty", name(""), false},
		{"name upper case", name("X.example.com"), false},
		{"name wildcard", name("*.example.com"), false},
		{"name star inside", name("a*.example.com"), false},
		{"name IPv4", name("10.0.0.1"), false},
		{"name with port", name("x.example.com:80"), false},
		{"name trailing dot", name("x.example.com."), false},
		{"name leading dot", name(".example.com"), false},
		{"name empty label", name("x..example.com"), false},
		{"name label starts with dash", name("x.-a.com"), false},
		{"name label ends with dash", name("x.a-.com"), false},
		{"name starts with dash", name("-x.com"), false},
		{"name underscore", name("a_b.example.com"), false},
		{"name space", name("a b.com"), false},
		{"name non-ASCII", name("é.example.com"), false},
		{"shape empty", shape(""), false},
		{"shape 11 digits", shape("abcdefabcde"), false},
		{"shape 13 digits", shape("abcdefabcdef0"), false},
		{"shape upper case", shape("ABCDEFABCDEF"), false},
		{"shape not hex", shape("abcdefabcdeg"), false},
		{"hop shortest", hop("/.sock"), true},
		{"hop all characters", hop("/a-b_c.D/9/x.sock"), true},
		{"hop at 107", hop("/" + strings.Repeat("h", 101) + ".sock"), true},
		{"hop of 108", hop("/" + strings.Repeat("h", 102) + ".sock"), false},
		{"hop empty", hop(""), false},
		{"hop relative", hop("run/hop.sock"), false},
		{"hop not .sock", hop("/run/hop"), false},
		{"hop .sock inside", hop("/run/x.sockx"), false},
		{"hop colon", hop("/run/a:b.sock"), false},
		{"hop space", hop("/run/a b.sock"), false},
		{"hop dollar", hop("/run/$x.sock"), false},
		{"cert", cert("/state/secrets/ns_name.pem"), true},
		{"cert at 4095", cert("/" + strings.Repeat("c", 4094)), true},
		{"cert of 4096", cert("/" + strings.Repeat("c", 4095)), false},
		{"cert relative", cert("secrets/x.pem"), false},
		{"cert root", cert("/"), false},
		{"cert semicolon", cert("/x.pem;"), false},
		{"cert quote", cert(`/x".pem`), false},
		{"var other kind", variable("causeway_other_" + shapeA + "_0"), false},
		{"var short shape", variable("causeway_route_abcdef_0"), false},
		{"var upper-case shape", variable("causeway_route_ABCDEFABCDEF_0"), false},
		{"var no number", variable("causeway_route_" + shapeA + "_"), false},
		{"var letter number", variable("causeway_route_" + shapeA + "_x"), false},
		{"var prefix", variable("x" + routeA), false},
		{"var suffix", variable(routeA + "x"), false},
		{"var with dollar", variable("$" + routeA), false},
		{"var builtin", variable("host"), false},
		{"value punctuation", value(`team/a-80:x@y.z!#%&'()*+,;<=>?[]^_{|}~ end`), true},
		{"value at 1024", value(strings.Repeat("v", 1024)), true},
		{"value of 1025", value(strings.Repeat("v", 1025)), false},
		{"value empty", value(""), true},
		{"value quote", value(`a"b`), false},
		{"value backslash", value(`a\b`), false},
		{"value dollar", value("$host"), false},
		{"value newline", value("a\nb"), false},
		{"value tab", value("a\tb"), false},
		{"value DEL", value("a\x7fb"), false},
		{"value non-ASCII", value("é"), false},
	}
}

func TestValidateHosts(t *testing.T) {
	for _, tc := range hostCases() {
		err := balancer.ValidateHosts([]balancer.Host{tc.h})
		if (err == nil) != tc.valid {
			t.Errorf("%s: ValidateHosts says %v, want valid=%v", tc.name, err, tc.valid)
		}
	}
	a := balancer.Host{Name: "a.example.com", Shape: shapeA, Hop: "/x.sock"}
	if err := balancer.ValidateHosts([]balancer.Host{a, a}); err == nil || !strings.Contains(err.Error(), "duplicates hosts[0]") {
		t.Errorf("duplicate name: %v", err)
	}
	if err := balancer.ValidateHosts(nil); err != nil {
		t.Errorf("empty table: %v", err)
	}
	many := make([]balancer.Host, balancer.MaxHosts+1)
	var le *balancer.LimitError
	if err := balancer.ValidateHosts(many); !errors.As(err, &le) || le.Limit != balancer.MaxHosts {
		t.Errorf("%d hosts: %v, want a LimitError", len(many), err)
	}
}

func FuzzValidateHosts(f *testing.F) {
	for _, tc := range hostCases() {
		for n, v := range tc.h.Vars {
			f.Add(tc.h.Name, tc.h.Shape, tc.h.Hop, tc.h.Cert, n, v)
		}
	}
	f.Fuzz(func(t *testing.T, name, shape, hop, cert, varName, value string) {
		h := balancer.Host{Name: name, Shape: shape, Hop: hop, Cert: cert, Vars: map[string]string{varName: value}}
		if balancer.ValidateHosts([]balancer.Host{h}) != nil {
			return
		}
		// What passes can sit in nginx syntax and a socket path as is.
		for _, s := range []string{name, shape, hop, cert, varName, value} {
			if strings.ContainsAny(s, "\"\\$\n\r\t\x00") {
				t.Fatalf("accepted %q", s)
			}
		}
		if len(hop) > 107 || strings.ContainsAny(name+hop+cert, " ;{}") {
			t.Fatalf("accepted host %+v", h)
		}
	})
}

// hopNginx is a test nginx with a catch-all server on front (and on tls,
// with TLS) that hops hosts of the table to the hop servers of shapes A
// and B, whose sockets are in dir.
type hopNginx struct {
	*testNginx
	dir        string
	front, tls int
}

// hopDir makes a directory for the hop sockets and certificates: short
// (a socket path holds at most 107 bytes) and readable by the workers.
func hopDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "cwh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (h *hopNginx) sock(shape string) string { return filepath.Join(h.dir, "hop-"+shape+".sock") }

// startHopNginx starts it; stateFile and dictSize as in nginxOptions.
func startHopNginx(t *testing.T, dir, stateFile, dictSize string) *hopNginx {
	t.Helper()
	h := &hopNginx{dir: dir, front: freePort(t), tls: freePort(t)}
	for _, s := range []string{shapeA, shapeB} {
		os.Remove(h.sock(s)) // left by an nginx killed before
	}
	def := filepath.Join(dir, "default.pem")
	if _, err := os.Stat(def); err != nil {
		writePEM(t, def, "default.test")
	}
	conf := fmt.Sprintf(`server {
    listen 127.0.0.1:%[1]d default_server;
    listen 127.0.0.1:%[2]d ssl default_server;
    server_name _;
    ssl_certificate %[3]s;
    ssl_certificate_key %[3]s;
    ssl_certificate_by_lua_block { require("causeway.certs").serve_table("%[3]s") }
    set_by_lua_block $causeway_hop { return require("causeway.hosts").hop() }
    if ($causeway_hop) { return 599; }
    error_page 599 = @causeway_hop;
    location @causeway_hop {
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Causeway-Hop-Client $remote_addr;
        proxy_pass http://unix:$causeway_hop:;
    }
    location / { return 404 "default\n"; }
}
map $host $%[4]s { default "-"; "a.example.com" "A"; }
map $host $%[5]s { default "-"; "a.example.com" "LA"; }
server {
    listen unix:%[6]s;
    set_real_ip_from unix:;
    real_ip_header X-Causeway-Hop-Client;
    set_by_lua_block $causeway_hop { return require("causeway.hosts").arrive("%[7]s") }
    if ($causeway_hop) { return 404; }
    location / { return 200 "shape=A route=$%[4]s log=$%[5]s host=$host uri=$request_uri hdr=$http_x_causeway_hop_client hsts=$http_x_causeway_hop_hsts addr=$remote_addr\n"; }
}
map $host $%[8]s { default "-"; "b.example.com" "B"; }
server {
    listen unix:%[9]s;
    set_real_ip_from unix:;
    real_ip_header X-Causeway-Hop-Client;
    set_by_lua_block $causeway_hop { return require("causeway.hosts").arrive("%[10]s") }
    if ($causeway_hop) { return 404; }
    location / { return 200 "shape=B route=$%[8]s host=$host\n"; }
}
`, h.front, h.tls, def, routeA, logA, h.sock(shapeA), shapeA, routeB, h.sock(shapeB), shapeB)
	h.testNginx = startNginx(t, nginxOptions{httpConf: conf, stateFile: stateFile, dictSize: dictSize})
	return h
}

// get requests / of host from the catch-all server and returns the
// status and body.
func (h *hopNginx) get(t *testing.T, host string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(h.front)+"/p?q=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// expect checks that host is answered with status and a body holding want.
func (h *hopNginx) expect(t *testing.T, host string, status int, want string) {
	t.Helper()
	code, body := h.get(t, host, nil)
	if code != status || !strings.Contains(body, want) {
		t.Errorf("%s: %d %q, want %d with %q", host, code, body, status, want)
	}
}

func (h *hopNginx) host(name, shape, value string) balancer.Host {
	v := map[string]string{routeA: value, logA: "L" + value}
	if shape == shapeB {
		v = map[string]string{routeB: value}
	}
	return balancer.Host{Name: name, Shape: shape, Hop: h.sock(shape), Vars: v}
}

func (h *hopNginx) replaceHosts(t *testing.T, hs ...balancer.Host) {
	t.Helper()
	if err := h.client.ReplaceHosts(ctxT(t), hs); err != nil {
		t.Fatal(err)
	}
}

// A host in the table reaches its shape's hop server, which takes its
// values from the table; the hop headers never pass the hop server.
// Replacing the table removes and adds hosts, and a host's entry is only
// good for the hop server of its shape.
func TestHostsTableHops(t *testing.T) {
	h := startHopNginx(t, hopDir(t), "", "")
	h.expect(t, "c.example.com", 404, "default")

	h.replaceHosts(t, h.host("c.example.com", shapeA, "C"), h.host("d.example.com", shapeB, "D"))
	code, body := h.get(t, "C.Example.com:8080", map[string]string{"X-Causeway-Hop-HSTS": "evil", "X-Causeway-Hop-Client": "10.9.9.9"})
	want := "shape=A route=C log=LC host=c.example.com uri=/p?q=1 hdr= hsts= addr=127.0.0.1\n"
	if code != 200 || body != want {
		t.Errorf("c.example.com: %d %q, want 200 %q", code, body, want)
	}
	h.expect(t, "d.example.com", 200, "shape=B route=D host=d.example.com")
	h.expect(t, "e.example.com", 404, "default")
	// The hop server's own hosts keep their maps' values.
	h.expect(t, "a.example.com", 404, "default") // not in the table: never hops

	// A replace removes c, moves d to shape A, adds e.
	h.replaceHosts(t, h.host("d.example.com", shapeA, "D2"), h.host("e.example.com", shapeB, "E"))
	h.expect(t, "c.example.com", 404, "default")
	h.expect(t, "d.example.com", 200, "shape=A route=D2 log=LD2 host=d.example.com")
	h.expect(t, "e.example.com", 200, "shape=B route=E host=e.example.com")

	// An entry naming the other shape's hop server is refused there.
	wrong := h.host("f.example.com", shapeB, "F")
	wrong.Hop = h.sock(shapeA)
	h.replaceHosts(t, wrong)
	code, body = h.get(t, "f.example.com", nil)
	if code != 404 || strings.Contains(body, "default") || strings.Contains(body, "route=") {
		t.Errorf("wrong shape: %d %q, want the hop server's 404", code, body)
	}
	h.expect(t, "d.example.com", 404, "default")

	// A variable this configuration does not define: refused, not a 500.
	undefined := h.host("g.example.com", shapeA, "G")
	undefined.Vars["causeway_route_"+shapeA+"_7"] = "x"
	h.replaceHosts(t, undefined)
	code, body = h.get(t, "g.example.com", nil)
	if code != 404 || strings.Contains(body, "default") {
		t.Errorf("undefined variable: %d %q, want the hop server's 404", code, body)
	}
	if !strings.Contains(h.logs(), "cannot set $causeway_route_"+shapeA+"_7") {
		t.Errorf("undefined variable not logged")
	}

	// Emptied.
	h.replaceHosts(t)
	h.expect(t, "f.example.com", 404, "default")
	if st, err := h.client.State(ctxT(t)); err != nil || st.Hosts != nil {
		t.Errorf("state after emptying the table: %+v, %v", st.Hosts, err)
	}
}

// The table rides with the full state: PUT /v1/state sets it (and without
// hosts empties it), GET /v1/state reads it back, a patch of backends
// leaves it alone, and the state file restores it when nginx starts.
func TestHostsTableWithState(t *testing.T) {
	dir := hopDir(t)
	stateFile := filepath.Join(dir, "state.json")
	h := startHopNginx(t, dir, stateFile, "")
	a := startBackend(t, "127.0.0.2", "a")
	backends := []balancer.Backend{{Key: "ns/a/80", Endpoints: []balancer.Endpoint{a.endpoint()}}}
	c := h.host("c.example.com", shapeA, "C")
	c.Cert = "/state/c.pem"
	d := h.host("d.example.com", shapeB, "D")
	h.replace(t, balancer.State{Generation: 1, Backends: backends, Hosts: []balancer.Host{d, c}})
	h.expect(t, "c.example.com", 200, "route=C")
	h.expect(t, "d.example.com", 200, "route=D")

	got, err := h.client.State(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := []balancer.Host{c, d}; !reflect.DeepEqual(got.Hosts, want) {
		t.Errorf("hosts read back\n got %+v\nwant %+v", got.Hosts, want)
	}

	if err := h.client.Patch(ctxT(t), 1, 2, backends, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.client.Update(ctxT(t), 3, balancer.Backend{Key: "ns/b/80"}); err != nil {
		t.Fatal(err)
	}
	h.expect(t, "c.example.com", 200, "route=C")
	h.expect(t, "d.example.com", 200, "route=D")

	// A raw update naming hosts is refused: only full states carry them.
	err = h.client.Do(ctxT(t), http.MethodPost, "/v1/backends", []byte(`{"version":1,"generation":4,"hosts":[]}`), nil)
	if !isAPIError(err, 400) || !strings.Contains(err.Error(), `unknown field "hosts"`) {
		t.Errorf("update with hosts: %v", err)
	}

	h.replace(t, balancer.State{Generation: 5, Backends: backends})
	h.expect(t, "c.example.com", 404, "default")
	h.expect(t, "d.example.com", 404, "default")

	// At start, nginx loads the state file, table included.
	body, err := balancer.EncodeState(balancer.State{Generation: 6, Backends: backends, Hosts: []balancer.Host{h.host("e.example.com", shapeB, "E")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stateFile, body, 0o644); err != nil {
		t.Fatal(err)
	}
	h.stop()
	h = startHopNginx(t, dir, stateFile, "")
	h.expect(t, "e.example.com", 200, "shape=B route=E host=e.example.com")
	h.expect(t, "c.example.com", 404, "default")
	if gen, err := h.client.Generation(ctxT(t)); err != nil || gen != 6 {
		t.Errorf("generation after restart: %d, %v; want 6", gen, err)
	}
}

// A bad table is refused whole with 400 naming the entry, and the table
// in force stays; Go's ValidateHosts agrees with the Lua side row by row.
func TestHostsTableValidation(t *testing.T) {
	h := startHopNginx(t, hopDir(t), "", "")
	base := h.host("c.example.com", shapeA, "C")
	h.replaceHosts(t, base)
	unchanged := func(t *testing.T) {
		t.Helper()
		h.expect(t, "c.example.com", 200, "route=C")
		h.expect(t, "x.example.com", 404, "default")
		if st, err := h.client.State(ctxT(t)); err != nil || len(st.Hosts) != 1 || st.Hosts[0].Name != base.Name {
			t.Errorf("table after a refusal: %+v, %v", st.Hosts, err)
		}
	}
	for _, tc := range hostCases() {
		t.Run(tc.name, func(t *testing.T) {
			row := tc.h
			if row.Hop == "/run/causeway/sockets/hop-"+shapeA+".sock" {
				row.Hop = h.sock(shapeA)
			}
			table := []balancer.Host{base, row}
			goErr := balancer.ValidateHosts(table)
			luaErr := h.client.ReplaceHosts(ctxT(t), table)
			if (goErr == nil) != tc.valid || (luaErr == nil) != tc.valid {
				t.Fatalf("Go says %v, Lua says %v; want valid=%v", goErr, luaErr, tc.valid)
			}
			if tc.valid {
				st, err := h.client.State(ctxT(t))
				if err != nil || len(st.Hosts) != 2 || (st.Hosts[0].Name != row.Name && st.Hosts[1].Name != row.Name) {
					t.Errorf("table read back: %+v, %v", st.Hosts, err)
				}
				h.replaceHosts(t, base)
				return
			}
			if !isAPIError(luaErr, 400) || !strings.Contains(luaErr.Error(), "hosts[1]") {
				t.Errorf("error %v: want 400 naming hosts[1]", luaErr)
			}
			unchanged(t)
		})
	}

	// What Go cannot send: strict JSON, for PUT /v1/hosts and in a state.
	entry := func(fields string) string {
		return `{"name":"x.example.com","shape":"` + shapeA + `","hop":"` + h.sock(shapeA) + `",` + fields + `}`
	}
	for _, tc := range []struct{ name, path, body, want string }{
		{"duplicate name", "/v1/hosts", `{"hosts":[` + entry(`"vars":{}`) + `,` + entry(`"vars":{}`) + `]}`, "hosts[1].name: duplicates hosts[0]"},
		{"hosts missing", "/v1/hosts", `{}`, "hosts: is required"},
		{"hosts null", "/v1/hosts", `{"hosts":null}`, "hosts: must be an array"},
		{"hosts object", "/v1/hosts", `{"hosts":{}}`, "hosts: must be an array"},
		{"unknown top-level field", "/v1/hosts", `{"hosts":[],"version":1}`, `payload: unknown field "version"`},
		{"duplicate JSON key", "/v1/hosts", `{"hosts":[],"hosts":[]}`, "duplicate key"},
		{"entry not object", "/v1/hosts", `{"hosts":["x"]}`, "hosts[0]: must be an object"},
		{"unknown entry field", "/v1/hosts", `{"hosts":[` + entry(`"vars":{},"port":80`) + `]}`, `hosts[0]: unknown field "port"`},
		{"name missing", "/v1/hosts", `{"hosts":[{"shape":"` + shapeA + `","hop":"/x.sock","vars":{}}]}`, "hosts[0].name: is required"},
		{"vars missing", "/v1/hosts", `{"hosts":[` + entry(`"cert":"/c.pem"`) + `]}`, "hosts[0].vars: is required"},
		{"vars null", "/v1/hosts", `{"hosts":[` + entry(`"vars":null`) + `]}`, "hosts[0].vars: must be an object"},
		{"vars array", "/v1/hosts", `{"hosts":[` + entry(`"vars":[]`) + `]}`, "hosts[0].vars: must be an object"},
		{"value number", "/v1/hosts", `{"hosts":[` + entry(`"vars":{"`+routeA+`":1}`) + `]}`, "hosts[0].vars: value of"},
		{"cert number", "/v1/hosts", `{"hosts":[` + entry(`"vars":{},"cert":1`) + `]}`, "hosts[0].cert: must be"},
		{"name number", "/v1/hosts", `{"hosts":[{"name":1,"shape":"` + shapeA + `","hop":"/x.sock","vars":{}}]}`, "hosts[0].name: must be"},
		{"state with a bad host", "/v1/state", `{"version":1,"generation":9,"backends":[],"hosts":[` + entry(`"vars":{"x":"y"}`) + `]}`, "hosts[0].vars: variable"},
		{"state with hosts null", "/v1/state", `{"version":1,"generation":9,"backends":[],"hosts":null}`, "hosts: must be an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := h.client.Do(ctxT(t), http.MethodPut, tc.path, []byte(tc.body), nil)
			if !isAPIError(err, 400) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want 400 with %q", err, tc.want)
			}
			unchanged(t)
		})
	}
	if gen, err := h.client.Generation(ctxT(t)); err != nil || gen != 0 {
		t.Errorf("generation %d, %v after refused states; want 0", gen, err)
	}
	// The empty entry set is {} on the wire, and the empty table [].
	if err := h.client.Do(ctxT(t), http.MethodPut, "/v1/hosts", []byte(`{"hosts":[`+entry(`"vars":{},"cert":""`)+`]}`), nil); err != nil {
		t.Errorf("entry without vars, empty cert: %v", err)
	}
	var reply struct{ Hosts int }
	if err := h.client.Do(ctxT(t), http.MethodPut, "/v1/hosts", []byte(`{"hosts":[]}`), &reply); err != nil || reply.Hosts != 0 {
		t.Errorf("empty table: %+v, %v", reply, err)
	}
}

// A request sees the old table or the new one, never a mixture: a host
// moving between shapes back and forth under load is always served, by
// one shape or the other with that shape's value, even when the same
// worker runs a whole replace between the request's hop and its arrival.
func TestHostsTableReplaceIsAtomic(t *testing.T) {
	h := startHopNginx(t, hopDir(t), "", "")
	others := make([]balancer.Host, 0, 200)
	for i := range 200 {
		others = append(others, h.host("h"+strconv.Itoa(i)+".example.com", shapeB, "O"))
	}
	tableA := append([]balancer.Host{h.host("m.example.com", shapeA, "MA")}, others...)
	tableB := append([]balancer.Host{h.host("m.example.com", shapeB, "MB")}, others...)
	h.replaceHosts(t, tableA...)

	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		mu      sync.Mutex
		bad     []string
		served  [2]atomic.Int64
		clients = 4
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 5 * time.Second}
			for !stop.Load() {
				req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(h.front)+"/", nil)
				req.Host = "m.example.com"
				resp, err := c.Do(req)
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch s := string(body); {
				case resp.StatusCode == 200 && strings.HasPrefix(s, "shape=A route=MA "):
					served[0].Add(1)
				case resp.StatusCode == 200 && strings.HasPrefix(s, "shape=B route=MB "):
					served[1].Add(1)
				default:
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%d %q", resp.StatusCode, s))
					mu.Unlock()
				}
			}
		}()
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		table := tableA
		if i%2 == 0 {
			table = tableB
		}
		if err := h.client.ReplaceHosts(ctxT(t), table); err != nil {
			t.Error(err)
			break
		}
		// A request finds the table its hop key came from as long as at
		// most one more replace commits before it reaches the hop server;
		// the pause keeps a loaded machine's scheduling out of the test.
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("%d requests got neither table, e.g. %v", len(bad), bad[:min(len(bad), 5)])
	}
	if served[0].Load() == 0 || served[1].Load() == 0 {
		t.Errorf("served by A %d, by B %d times: want both", served[0].Load(), served[1].Load())
	}
}

// A table the shared dict cannot hold is refused with 507, alone or in a
// state whose backends do not fit, and the table in force keeps serving.
func TestHostsTableTooLargeForDict(t *testing.T) {
	h := startHopNginx(t, hopDir(t), "", "1m")
	c := h.host("c.example.com", shapeA, "C")
	d := h.host("d.example.com", shapeB, "D")
	h.replaceHosts(t, c, d)
	unchanged := func() {
		t.Helper()
		h.expect(t, "c.example.com", 200, "shape=A route=C ")
		h.expect(t, "d.example.com", 200, "shape=B route=D ")
		h.expect(t, "h0.example.com", 404, "default")
	}

	// d moves to shape A and c is dropped in both refused tables: their
	// hop keys must be put back.
	big := []balancer.Host{h.host("d.example.com", shapeA, "D2")}
	for i := range 2000 {
		big = append(big, h.host("h"+strconv.Itoa(i)+".example.com", shapeB, strings.Repeat("v", balancer.MaxHostValueLen)))
	}
	err := h.client.ReplaceHosts(ctxT(t), big)
	if !isAPIError(err, 507) || !strings.Contains(err.Error(), "cannot hold the hosts table") {
		t.Fatalf("got %v, want 507", err)
	}
	unchanged()

	// The hosts fit, the backends do not.
	huge := balancer.State{Generation: 2, Hosts: big[:1]}
	for i := 0; i < 4; i++ {
		b := balancer.Backend{Key: "ns/big-" + strconv.Itoa(i) + "/80"}
		for j := 0; j < balancer.MaxEndpoints; j++ {
			b.Endpoints = append(b.Endpoints, balancer.Endpoint{Address: "10.1." + strconv.Itoa(j/250) + "." + strconv.Itoa(j%250), Port: 8080, Ready: true})
		}
		huge.Backends = append(huge.Backends, b)
	}
	err = h.client.Replace(ctxT(t), huge)
	if !isAPIError(err, 507) || !strings.Contains(err.Error(), "cannot hold the new state") {
		t.Fatalf("got %v, want 507", err)
	}
	unchanged()

	// And the table still moves on.
	h.replaceHosts(t, big[:1]...)
	h.expect(t, "d.example.com", 200, "shape=A route=D2 ")
	h.expect(t, "c.example.com", 404, "default")
}

// certs.serve serves a host of the table its own certificate by SNI, and
// the server's own to every other name.
func TestHostsTableCertificates(t *testing.T) {
	dir := hopDir(t)
	own := filepath.Join(dir, "c.pem")
	writePEM(t, own, "c.example.com")
	h := startHopNginx(t, dir, "", "")
	cn := func(sni string) string {
		t.Helper()
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.0.0.1:"+strconv.Itoa(h.tls),
			&tls.Config{ServerName: sni, InsecureSkipVerify: true, ClientSessionCache: nil})
		if err != nil {
			t.Fatalf("handshake for %s: %v", sni, err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := cn("c.example.com"); got != "default.test" {
		t.Errorf("before the table: %s, want default.test", got)
	}
	c := h.host("c.example.com", shapeA, "C")
	c.Cert = own
	h.replaceHosts(t, c, h.host("d.example.com", shapeA, "D"))
	for sni, want := range map[string]string{
		"c.example.com": "c.example.com", // its own
		"C.Example.COM": "c.example.com", // SNI is caseless
		"d.example.com": "default.test",  // in the table, no certificate of its own
		"x.example.com": "default.test",  // not in the table
	} {
		if got := cn(sni); got != want {
			t.Errorf("SNI %s: certificate of %s, want %s", sni, got, want)
		}
	}
	c.Cert = ""
	h.replaceHosts(t, c)
	if got := cn("c.example.com"); got != "default.test" {
		t.Errorf("after dropping its certificate: %s, want default.test", got)
	}
}

// writePEM writes a self-signed certificate for cn and its key to path.
func writePEM(t *testing.T, path, cn string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     []string{cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	data := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
