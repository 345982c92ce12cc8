package render

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source/files"
)

// hopIngress is an Ingress of host with the lua-shared case's paths (/
// and /api), to Services root and api.
func hopIngress(name, host, root, api string, annotations ...string) string {
	ann := ""
	if len(annotations) > 0 {
		ann = "\n  annotations: {" + strings.Join(annotations, ", ") + "}"
	}
	return `
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ` + name + `
  namespace: team` + ann + `
spec:
  ingressClassName: causeway
  rules:
    - host: ` + host + `
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: ` + root + `, port: {number: 80}}}}
          - {path: /api, pathType: Prefix, backend: {service: {name: ` + api + `, port: {number: 80}}}}
`
}

// hopAdded are two Ingresses of lua-shared's shapes with new hosts: g
// (with an alias) and a TLS host with the shape's secret.
var hopAdded = hopIngress("g", "g.example.com", "a", "b", `nginx.ingress.kubernetes.io/server-alias: "g2.example.com"`) + `
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: tls2, namespace: team}
spec:
  ingressClassName: causeway
  tls:
    - hosts: [h.example.com]
      secretName: shared-tls
  rules:
    - host: h.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`

// hopOff is the ConfigMap that turns hop servers off.
const hopOff = `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: causeway, namespace: causeway}
data: {reload-free-hosts: "false"}
`

// hopRender renders the lua-shared case plus extra manifests in dynamic
// mode, with the running configuration's hop state.
func hopRender(t *testing.T, extra string, hop *HopState) *Output {
	t.Helper()
	m, params := hopModel(t, extra, nil)
	params.Hop = hop
	out, err := Render(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hopModel builds the lua-shared case plus extra manifests in dynamic
// mode, with only the Ingresses keep keeps when it is not nil, and the
// Params hopRender renders it with.
func hopModel(t *testing.T, extra string, keep func(name string) bool) (*model.Model, Params) {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("testdata", "lua-shared", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "input.yaml")
	if err := os.WriteFile(path, append(base, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	snap, err := files.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if keep != nil {
		snap.Ingresses = slices.DeleteFunc(snap.Ingresses, func(ing *networkingv1.Ingress) bool { return !keep(ing.Name) })
	}
	opts := goldenOpts
	opts.LuaAvailable = true
	m, _ := build.Build(snap, opts)
	params := goldenParams
	params.Dynamic = &Dynamic{Modules: []string{"/usr/lib/nginx/modules/ngx_http_lua_module.so"}}
	return m, params
}

// mapEntries reads every map on $host of the shared servers, in their
// files and merged (layout.MapsFile): variable -> host -> value.
func mapEntries(t *testing.T, fs Files) map[string]map[string]string {
	t.Helper()
	block := regexp.MustCompile(`(?s)map \$host \$(\S+) \{\n(.*?)\n\}`)
	entry := regexp.MustCompile(`(?m)^\s+"([^"]+)" "([^"]*)";$`)
	out := map[string]map[string]string{}
	for name, text := range fs {
		if !strings.Contains(name, "_shared-") && name != layout.MapsFile {
			continue
		}
		for _, b := range block.FindAllSubmatch(text, -1) {
			out[string(b[1])] = map[string]string{}
			for _, e := range entry.FindAllSubmatch(b[2], -1) {
				out[string(b[1])][string(e[1])] = string(e[2])
			}
		}
	}
	return out
}

// TestHopLeavesNewHostsToTheTable: a new host of a shape with a hop server
// renders the running files byte for byte, and its entry in the table
// holds exactly the values the maps would give it once rendered into the
// files; its aliases and a TLS host with the shape's secret too.
func TestHopLeavesNewHostsToTheTable(t *testing.T) {
	run := hopRender(t, "", nil)
	if len(run.Hosts) != 0 {
		t.Fatalf("hosts without a hop state: %+v", run.Hosts)
	}
	if len(run.Hop.Shapes) != 2 {
		t.Fatalf("shapes with a hop server: %v, want the two shared ones", run.Hop.Shapes)
	}
	for id := range run.Hop.Shapes {
		text := string(run.Files["servers/_shared-"+id+".conf"])
		if !strings.Contains(text, "listen unix:/var/lib/causeway/sockets/hop-"+id+".sock;") ||
			!strings.Contains(text, `require("causeway.hosts").arrive("`+id+`")`) {
			t.Errorf("shared file %s has no hop server:\n%s", id, text)
		}
	}
	def := string(run.Files["servers/_default.conf"])
	if !strings.Contains(def, `require("causeway.hosts").hop()`) || !strings.Contains(def, "location @causeway_hop") ||
		!strings.Contains(def, `require("causeway.certs").serve_table("/var/lib/causeway/secrets/_default.pem")`) {
		t.Errorf("the catch-all server does not hand hosts over:\n%s", def)
	}
	wild := string(run.Files["servers/_wildcard.example.com-47287a8f16ec.conf"])
	if !strings.Contains(wild, `require("causeway.hosts").hop()`) {
		t.Errorf("the wildcard server does not hand hosts over:\n%s", wild)
	}

	extra := hopAdded
	hopped := hopRender(t, extra, &run.Hop)
	if hopped.Version != run.Version || !maps.EqualFunc(hopped.Files, run.Files, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("a new host of a shape with a hop server changed the files")
	}
	full := hopRender(t, extra, nil)
	want := mapEntries(t, full.Files)
	got := map[string]balancer.Host{}
	for _, h := range hopped.Hosts {
		got[h.Name] = h
	}
	if len(got) != 3 {
		t.Fatalf("table: %+v, want g, its alias and h", hopped.Hosts)
	}
	for _, name := range []string{"g.example.com", "g2.example.com", "h.example.com"} {
		h, ok := got[name]
		if !ok {
			t.Fatalf("%s is not in the table", name)
		}
		if !run.Hop.Shapes[h.Shape] || h.Hop != "/var/lib/causeway/sockets/hop-"+h.Shape+".sock" {
			t.Errorf("%s: shape %s on %s", name, h.Shape, h.Hop)
		}
		n := 0
		for variable, hosts := range want {
			value, ok := hosts[name]
			if !ok {
				continue
			}
			n++
			if h.Vars[variable] != value {
				t.Errorf("%s: $%s is %q in the table, %q in the files", name, variable, h.Vars[variable], value)
			}
		}
		if n == 0 || n != len(h.Vars) {
			t.Errorf("%s: table %v, files give %d values", name, h.Vars, n)
		}
	}
	if got["h.example.com"].Cert != "/var/lib/causeway/secrets/team_shared-tls.pem" || got["g.example.com"].Cert != "" {
		t.Errorf("certificates: h %q, g %q", got["h.example.com"].Cert, got["g.example.com"].Cert)
	}
	if full.Version == run.Version || len(full.Hosts) != 0 {
		t.Errorf("without a hop state the hosts are not in the files")
	}

	// Once in the files, the host is the files' again; a changed one
	// (served at the last reload) is never left to the table.
	again := hopRender(t, extra, &full.Hop)
	if again.Version != full.Version || len(again.Hosts) != 0 {
		t.Errorf("a host in the running files was left to the table: %+v", again.Hosts)
	}
	changed := hopRender(t, strings.Replace(extra, "name: a, port", "name: api, port", 1), &full.Hop)
	if len(changed.Hosts) != 0 {
		t.Errorf("a served host's change was left to the table: %+v", changed.Hosts)
	}
}

// TestHopRendersEverythingWhenTheTableCannot: a host whose values the hop
// server's maps cannot hold, or whose shape has no hop server, is
// rendered into the files.
func TestHopRendersEverythingWhenTheTableCannot(t *testing.T) {
	// p and q send both paths to one Service each: one map serves both
	// locations, so a host with two Services does not fit it.
	// (A timeout of their own keeps them apart from lua-shared's shape.)
	slow := `nginx.ingress.kubernetes.io/proxy-read-timeout: "30"`
	base := hopIngress("p", "p.example.com", "a", "a", slow) + hopIngress("q", "q.example.com", "b", "b", slow)
	run := hopRender(t, base, nil)
	if len(run.Hop.Shapes) != 3 {
		t.Fatalf("shapes with a hop server: %v", run.Hop.Shapes)
	}
	extra := base + hopIngress("r", "r.example.com", "a", "b", slow)
	got := hopRender(t, extra, &run.Hop)
	full := hopRender(t, extra, nil)
	if len(got.Hosts) != 0 || got.Version != full.Version {
		t.Errorf("a host the maps cannot hold was left to the table: %+v", got.Hosts)
	}
	fits := hopRender(t, base+hopIngress("s", "s.example.com", "api", "api", slow), &run.Hop)
	if len(fits.Hosts) != 1 || fits.Version != run.Version {
		t.Errorf("a host that fits was not left to the table: %+v", fits.Hosts)
	}

	// External authentication's X-Original-URL takes the scheme from
	// the hand-over in a hop server.
	auth := `nginx.ingress.kubernetes.io/auth-url: "http://auth.example.com/check"`
	run = hopRender(t, hopIngress("p", "p.example.com", "a", "a", auth)+hopIngress("q", "q.example.com", "b", "b", auth), nil)
	if len(run.Hop.Shapes) != 3 {
		t.Errorf("shapes with a hop server: %v, want lua-shared's two and the authenticated one", run.Hop.Shapes)
	}
	for id := range run.Hop.Shapes {
		text := string(run.Files["servers/_shared-"+id+".conf"])
		if !strings.Contains(text, "X-Original-URL") {
			continue
		}
		_, hopText, _ := strings.Cut(text, "listen unix:")
		if !strings.Contains(hopText, "X-Original-URL $causeway_hop_scheme://") || strings.Contains(hopText, "$scheme") {
			t.Errorf("the hop server's authentication reads the socket's scheme:\n%s", hopText)
		}
	}

	// reload-free-hosts: "false": no hop server, no hand-over, and a new
	// host goes into the files.
	off := hopOff
	run = hopRender(t, off, nil)
	if len(run.Hop.Shapes) != 0 || strings.Contains(string(run.Files["servers/_default.conf"]), "causeway_hop") {
		t.Errorf("reload-free-hosts false: shapes with a hop server %v", run.Hop.Shapes)
	}
	if got := hopRender(t, off+hopIngress("r", "r.example.com", "a", "b"), &run.Hop); len(got.Hosts) != 0 {
		t.Errorf("reload-free-hosts false: a host was left to the table: %+v", got.Hosts)
	}

	// gRPC needs HTTP/2 end to end: no hop server.
	grpc := `nginx.ingress.kubernetes.io/backend-protocol: "GRPC"`
	base = hopIngress("p", "p.example.com", "a", "a", grpc) + hopIngress("q", "q.example.com", "b", "b", grpc)
	run = hopRender(t, base, nil)
	if len(run.Hop.Shapes) != 2 {
		t.Errorf("shapes with a hop server: %v, want lua-shared's two only", run.Hop.Shapes)
	}
	got = hopRender(t, base+hopIngress("r", "r.example.com", "api", "api", grpc), &run.Hop)
	if len(got.Hosts) != 0 {
		t.Errorf("a gRPC host was left to the table: %+v", got.Hosts)
	}
}

func TestHopForbidden(t *testing.T) {
	for _, tc := range []struct {
		text string
		ok   bool
	}{
		{"    set $causeway_backend \"a\";\n", true},
		{"    return 301 $scheme://$host;\n", false},
		{"    add_header X-Where \"${scheme}|$uri\";\n", false},
		{"    set $x \"$uri$realip_remote_addr\";\n", false},
		{"    set $x $schemes;\n", true},
		{"    if ($https = \"on\") {\n", false},
		{"    proxy_set_header X-Forwarded-Port $server_port;\n", false},
		{"    proxy_set_header X-Client-Cert $ssl_client_escaped_cert;\n", false},
		{"    set $x $request_id;\n", false},
		{"    set $x $request_uri;\n", true},
		{"    set $x $http_x_forwarded_proto;\n", true},
		{"    set $x $http2;\n", false},
		{"        grpc_pass grpc://causeway_balancer;\n", false},
		{"        mirror /_mirror;\n", false},
		{"        modsecurity on;\n", false},
		{"    server_name \"mirror.example.com\";\n", true},
	} {
		if got := hopForbidden([]byte(tc.text)) == ""; got != tc.ok {
			t.Errorf("%q: allowed %v, want %v", tc.text, got, tc.ok)
		}
	}
}

// TestHopServerIsItsSharedServer: a hop server's text is its shared
// server's but for what the hand-over replaces (listeners, names,
// certificates, its prelude and external authentication's scheme), for
// shapes whose locations name variables of their own (CORS, external
// authentication, rewrites, snippets).
func TestHopServerIsItsSharedServer(t *testing.T) {
	drop := regexp.MustCompile(`^\s*(listen|server_name|ssl_certificate|ssl_certificate_key|ssl_certificate_by_lua_block|set_real_ip_from|real_ip_header|real_ip_recursive)\b|^\s*#|` +
		`^\s*set \$causeway_(forwarded_proto|forwarded_host|forwarded_port|forwarded_for|hop_scheme|hsts) \$http_x_causeway_hop_|causeway\.hosts"\)\.arrive`)
	for name, ann := range map[string][]string{
		"cors listed origin": {`nginx.ingress.kubernetes.io/enable-cors: "true"`, `nginx.ingress.kubernetes.io/cors-allow-origin: "https://app.example.com"`},
		"external auth":      {`nginx.ingress.kubernetes.io/auth-url: "http://auth.example.com/check"`, `nginx.ingress.kubernetes.io/auth-signin: "https://login.example.com/"`},
		"rewrite":            {`nginx.ingress.kubernetes.io/rewrite-target: "/v2"`, `nginx.ingress.kubernetes.io/x-forwarded-prefix: "/p"`},
		"allow list":         {`nginx.ingress.kubernetes.io/whitelist-source-range: "10.0.0.0/8"`},
	} {
		t.Run(name, func(t *testing.T) {
			out := hopRender(t, hopIngress("p", "p.example.com", "a", "a", ann...)+hopIngress("q", "q.example.com", "b", "b", ann...), nil)
			if len(out.Hop.Shapes) != 3 {
				t.Fatalf("shapes with a hop server: %v", out.Hop.Shapes)
			}
			for id := range out.Hop.Shapes {
				text := string(out.Files["servers/_shared-"+id+".conf"])
				if !strings.Contains(text, "p.example.com") {
					continue
				}
				shared, hop, ok := strings.Cut(text, "\nserver {\n    listen unix:")
				if !ok {
					t.Fatalf("no hop server:\n%s", text)
				}
				_, shared, _ = strings.Cut(shared, "\nserver {\n")
				keep := func(s string) string {
					var lines []string
					for _, l := range strings.Split(s, "\n") {
						if !drop.MatchString(l) {
							lines = append(lines, strings.ReplaceAll(l, "$causeway_hop_scheme://", "$scheme://"))
						}
					}
					return strings.TrimSpace(strings.Join(lines, "\n"))
				}
				_, hop, _ = strings.Cut(hop, "\n")
				hop = strings.Replace(hop, "    if ($causeway_hop) {\n        return 404;\n    }\n", "", 1)
				if a, b := keep(shared), keep(hop); a != b {
					t.Errorf("hop server differs from its shared server:\n--- shared\n%s\n--- hop\n%s", a, b)
				}
			}
		})
	}
}

// TestHopHostsFromTheChangedObjectsAlone: HopHosts, given a model of the
// new Ingresses alone (the cluster's other objects, none of its other
// Ingresses), lists exactly the entries a render of the whole cluster
// leaves to the table, with their objects and metrics series; whatever it
// answers for a row of the table below equals the whole render's, and the
// rows it must leave to the full render get ErrNotHop.
func TestHopHostsFromTheChangedObjectsAlone(t *testing.T) {
	render := func(extra string, hop *HopState, keep func(string) bool) (*model.Model, Params, *Output) {
		t.Helper()
		m, params := hopModel(t, extra, keep)
		params.Metrics = &goldenMetrics
		params.Hop = hop
		out, err := Render(m, params)
		if err != nil {
			t.Fatal(err)
		}
		return m, params, out
	}
	_, _, run := render("", nil, nil)
	added := hopAdded
	byName := func(a, b balancer.Host) int { return strings.Compare(a.Name, b.Name) }
	// same checks HopHosts' answer for the Ingresses keep keeps against
	// the whole render; false when HopHosts answered ErrNotHop.
	same := func(name, extra string, keep func(string) bool) bool {
		t.Helper()
		_, _, whole := render(extra, &run.Hop, nil)
		m, params, _ := render(extra, nil, keep)
		params.Hop = &run.Hop
		got, err := HopHosts(m, params)
		if errors.Is(err, ErrNotHop) {
			return false
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := slices.SortedFunc(slices.Values(whole.Hosts), byName)
		if have := slices.SortedFunc(slices.Values(got.Hosts), byName); !reflect.DeepEqual(have, want) {
			t.Errorf("%s: HopHosts:\n%+v\nthe whole render's table:\n%+v", name, have, want)
		}
		if !reflect.DeepEqual(got.Sources, whole.HostSources) {
			t.Errorf("%s: sources %v, the whole render's %v", name, got.Sources, whole.HostSources)
		}
		if len(got.Series) != len(whole.Series)-len(run.Series) {
			t.Errorf("%s: %d new series, the whole render has %d more than the running one", name, len(got.Series), len(whole.Series)-len(run.Series))
		}
		for key, labels := range got.Series {
			if w := whole.Series[key]; w == nil || *w != *labels {
				t.Errorf("%s: series %s: %+v, the whole render's %+v", name, key, labels, whole.Series[key])
			}
		}
		return true
	}
	if !same("two Ingresses, an alias and TLS", added, func(name string) bool { return name == "g" || name == "tls2" }) {
		t.Fatal("HopHosts left the new hosts to the full render")
	}
	r := func(name string) bool { return name == "r" }
	if !same("an alias the running files serve (dropped, as the whole render drops it)",
		hopIngress("r", "r.example.com", "a", "b", `nginx.ingress.kubernetes.io/server-alias: "a.example.com"`), r) {
		t.Error("HopHosts left a host with a taken alias to the full render")
	}
	if !same("one Service on both paths", hopIngress("r", "r.example.com", "a", "a"), r) {
		t.Error("HopHosts left a host with one Service on both paths to the full render")
	}

	slow := `nginx.ingress.kubernetes.io/proxy-read-timeout: "30"`
	off := hopOff
	for _, c := range []struct{ name, extra string }{
		{"a host the running files serve", hopIngress("r", "a.example.com", "a", "b")},
		{"a shape without a hop server", hopIngress("r", "r.example.com", "a", "b", slow)},
		{"a wildcard host", hopIngress("r", `"*.r.example.com"`, "a", "b")},
		{"reload-free-hosts false", off + hopIngress("r", "r.example.com", "a", "b")},
		{"gRPC", hopIngress("r", "r.example.com", "a", "b", `nginx.ingress.kubernetes.io/backend-protocol: "GRPC"`)},
	} {
		if same(c.name, c.extra, r) {
			t.Errorf("%s: HopHosts answered; want ErrNotHop", c.name)
		}
	}
	m, params := hopModel(t, hopIngress("r", "r.example.com", "a", "b"), r)
	for name, hop := range map[string]*HopState{"no running configuration": nil,
		"a HopState no render made": {Shapes: run.Hop.Shapes, Names: run.Hop.Names}} {
		params.Hop = hop
		if got, err := HopHosts(m, params); !errors.Is(err, ErrNotHop) {
			t.Errorf("%s: %+v, %v; want ErrNotHop", name, got, err)
		}
	}
}

// TestHopSocketsFit: a state directory whose hop sockets would not fit a
// unix socket's address renders no hop server (every new host reloads),
// and HopSocketsFit, which the controller warns by at start, says so: at
// 107 bytes a socket fits, at 108 not.
func TestHopSocketsFit(t *testing.T) {
	socketFor := func(dir string) string { return HopSocketExample(layout.Dir(dir)) }
	short := "/var/lib/causeway"
	fill := func(n int) string { // a directory whose hop socket is n bytes
		return "/" + strings.Repeat("d", n-len(socketFor("/d"))+1)
	}
	if n := len(fill(107)); n != 77 {
		t.Errorf("the longest state directory with hop servers is %d bytes; docs/kubernetes.md says 77", n)
	}
	for _, c := range []struct {
		dir  string
		fits bool
	}{{short, true}, {fill(107), true}, {fill(108), false}} {
		if c.dir != short && len(socketFor(c.dir)) != map[bool]int{true: 107, false: 108}[c.fits] {
			t.Fatalf("fill: a %d-byte socket", len(socketFor(c.dir)))
		}
		if got := HopSocketsFit(layout.Dir(c.dir)); got != c.fits {
			t.Errorf("%d-byte socket: HopSocketsFit = %v, want %v", len(socketFor(c.dir)), got, c.fits)
		}
		m, params := hopModel(t, "", nil)
		params.StateDir = layout.Dir(c.dir)
		out, err := Render(m, params)
		if err != nil {
			t.Fatal(err)
		}
		if hops := len(out.Hop.Shapes); (hops > 0) != c.fits {
			t.Errorf("%d-byte socket: %d shapes with a hop server, want them only when the socket fits", len(socketFor(c.dir)), hops)
		}
	}
}
