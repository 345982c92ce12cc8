package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/balancer"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
	"github.com/causeway/causeway/internal/source/files"
	"github.com/causeway/causeway/internal/testcorpus"
)

// hostile are values crafted to break out of a directive or inject one.
var hostile = []string{
	`"`, `'`, `{`, `}`, `;`, "\n", `$`, `#`, `\`,
	`x"; return 200 "pwned`,
	"x;}\nserver { listen 9999; }\n#",
	`${host}`, `\"; deny all; #`,
	"ünï\u202ecödé", "\x00", "\r\n",
	strings.Repeat("a", 5000),
	strings.Repeat("/a", 3000),
}

// baseModel builds a small valid Model from manifests.
func baseModel(t *testing.T) *model.Model {
	t.Helper()
	// Servers: [0] the default, [1] safe.test with TLS, [2] and [3] two
	// hosts alike, which the Lua data plane renders as one shared server
	// block with a map from host to backend per location.
	m := ingressClass + serviceYAML("ns", "svc", 80, &backend{IP: "127.0.0.2", Port: 8080}) +
		serviceYAML("ns", "svc2", 80, &backend{IP: "127.0.0.3", Port: 8080}) +
		serviceYAML("ns", "svc3", 80, &backend{IP: "127.0.0.4", Port: 8080}) +
		tlsSecretYAML(t, "ns", "tls", "safe.test", 0) +
		tlsIngressYAML("ns", "ing", "safe.test", "tls", "svc") +
		ingressYAML("ns", "twin-a", "twin-a.test", "Prefix / svc2") +
		ingressYAML("ns", "twin-b", "twin-b.test", "Prefix / svc3")
	mod, problems := buildManifests(t, m)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return mod
}

// buildManifests loads YAML through the files source into a Model.
func buildManifests(t *testing.T, manifests string) (*model.Model, []model.Problem) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := files.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return build.Build(snap, build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller"}})
}

// mutations put a hostile value into every user-controlled string of a
// Model, bypassing the model's validation, to prove the renderer is a wall
// of its own.
var mutations = map[string]func(m *model.Model, v string){
	"host": func(m *model.Model, v string) { m.Servers[1].Host = v },
	"path": func(m *model.Model, v string) { m.Servers[1].Locations[0].Match.Path = v },
	"exact path": func(m *model.Model, v string) {
		m.Servers[1].Locations[0].Match = model.Match{Type: model.Exact, Path: v}
	},
	"ingress name":      func(m *model.Model, v string) { m.Servers[1].Sources[0].Name = v },
	"ingress namespace": func(m *model.Model, v string) { m.Servers[1].Sources[0].Namespace = v },
	"backend key": func(m *model.Model, v string) {
		m.Backends[0].Key = "ns/" + v + "/80"
		m.Servers[1].Locations[0].Action = model.ProxyTo(m.Backends[0].Key)
	},
	"secret":           func(m *model.Model, v string) { m.Servers[1].TLS.Secret = "ns/" + v },
	"endpoint address": func(m *model.Model, v string) { m.Backends[0].Endpoints[0].Address = v },
	"ingress comment": func(m *model.Model, v string) {
		m.Servers[0].Sources = append(m.Servers[0].Sources, model.ObjectRef{Namespace: v, Name: v})
	},
	// In a shared server block a host is a server_name line and a map
	// key, and its backend key a map value.
	"shared host": func(m *model.Model, v string) { m.Servers[3].Host = v },
	"shared backend key": func(m *model.Model, v string) {
		m.Backends[2].Key = "ns/" + v + "/80"
		m.Servers[3].Locations[0].Action = model.ProxyTo(m.Backends[2].Key)
	},
	"shared ingress comment": func(m *model.Model, v string) {
		m.Servers[3].Sources = append(m.Servers[3].Sources, model.ObjectRef{Namespace: v, Name: v})
	},
	// block-user-agents and block-referers are map keys.
	"blocked user agent": func(m *model.Model, v string) {
		m.Config.BlockUserAgents = []model.HeaderMatch{{Value: v}}
	},
	"blocked user agent regex": func(m *model.Model, v string) {
		m.Config.BlockUserAgents = []model.HeaderMatch{{Value: v, Regex: true, Fold: true}}
	},
	"blocked referer regex": func(m *model.Model, v string) {
		m.Config.BlockReferers = []model.HeaderMatch{{Value: v, Regex: true}}
	},
}

// benignValues are harmless values for the mutations whose field must
// hold something specific to render at all; the others take "benign".
var benignValues = func() map[string]string {
	out := map[string]string{"endpoint address": "10.9.9.9", "path": "/benign", "exact path": "/benign"}
	for field := range mutations {
		if _, ok := out[field]; !ok {
			out[field] = "benign"
		}
	}
	return out
}()

// dataPlanes are the two ways a Model is rendered: plain upstreams, and
// the Lua data plane with its shared server blocks and maps.
var dataPlanes = []string{"plain", "lua"}

// TestHostileValuesCannotInject renders every hostile value in every
// user-controlled field. Each render must either fail, or produce a
// configuration that nginx -t accepts and whose directive structure is
// exactly that of the benign configuration.
func TestHostileValuesCannotInject(t *testing.T) {
	t.Parallel()
	for _, plane := range dataPlanes {
		out := mustRenderFor(t, baseModel(t), plane)
		if plane == "lua" && !slices.ContainsFunc(out.Names(), func(n string) bool { return strings.HasPrefix(n, "servers/_shared-") }) {
			t.Fatalf("the base model renders no shared server block: %v", out.Names())
		}
		for field, mutate := range mutations {
			// The mutation itself may change the structure (an Exact path
			// where a Prefix root was): compare with the same mutation
			// carrying a benign value.
			benign := baseModel(t)
			mutate(benign, benignValues[field])
			baseline := skeleton(t, mustRenderFor(t, benign, plane))
			for i, v := range hostile {
				t.Run(fmt.Sprintf("%s/%s/%d", plane, field, i), func(t *testing.T) {
					t.Parallel() // renders beside the others; nginxTest runs one nginx -t at a time
					m := baseModel(t)
					mutate(m, v)
					res, err := render.Render(m, renderParamsFor(plane))
					if err != nil {
						return // refused: safe
					}
					out := res.Files
					if got := skeleton(t, out); got != baseline {
						t.Fatalf("value %q in %s changed the directive structure:\n%s", v, field, diffLines(baseline, got))
					}
					nginxTest(t, out, m)
				})
			}
		}
	}
}

// extremes are valid objects at the limits of what the API and the model
// accept: each must render, pass nginx -t on both data planes, and give
// file names a file system takes. (A 253-character host once overflowed
// nginx's hash buckets and the 255-byte file name limit.)
var extremes = map[string]func() string{
	"maximum-length host": func() string {
		return ingressYAML("ns", "long", longHost("", 253), "Prefix / svc")
	},
	"maximum-length wildcard host": func() string {
		return ingressYAML("ns", "wild", longHost("*.", 253), "Prefix / svc")
	},
	"maximum-length hosts sharing a server block": func() string {
		var b strings.Builder
		for i := range 20 {
			b.WriteString(ingressYAML("ns", fmt.Sprintf("twin%d", i), longHost(fmt.Sprintf("t%02d", i), 253), "Prefix / svc"))
		}
		return b.String()
	},
	"63-character labels": func() string {
		l := strings.Repeat("q", 63)
		return ingressYAML("ns", "labels", l+"."+l+"."+l, "Prefix / svc")
	},
	"maximum-length path": func() string {
		return ingressYAML("ns", "path", "path.test", "Prefix /"+strings.Repeat("p", 1023)+" svc", "Exact /"+strings.Repeat("e", 1023)+" svc")
	},
	"thousands of paths": func() string {
		paths := make([]string, 3000)
		for i := range paths {
			paths[i] = fmt.Sprintf("Prefix /p%d svc", i)
		}
		return ingressYAML("ns", "paths", "paths.test", paths...)
	},
	"many hosts in one Ingress": func() string {
		var b strings.Builder
		b.WriteString("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: hosts, namespace: ns}\nspec:\n  ingressClassName: causeway\n  rules:\n")
		for i := range 1000 {
			fmt.Fprintf(&b, "  - host: h%d.%s\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}\n", i, longHost("", 200))
		}
		return b.String() + "---\n"
	},
}

func TestExtremeValidValuesRenderAndPass(t *testing.T) {
	t.Parallel()
	for name, manifest := range extremes {
		for _, plane := range dataPlanes {
			t.Run(name+"/"+plane, func(t *testing.T) {
				mod, problems := buildManifests(t, ingressClass+serviceYAML("ns", "svc", 80, &backend{IP: "127.0.0.2", Port: 8080})+manifest())
				for _, p := range problems {
					if p.Rejected {
						t.Fatalf("a valid object was rejected: %v", p)
					}
				}
				out := mustRenderFor(t, mod, plane)
				for _, n := range out.Names() {
					if len(filepath.Base(n)) > 100 {
						t.Errorf("file name of %d bytes: %s", len(filepath.Base(n)), n)
					}
				}
				nginxTest(t, out, mod)
			})
		}
	}
}

// TestHostileManifestsAreRejected sends hostile values through the whole
// pipeline from YAML: the model must reject each object, and the config it
// renders for the rest must pass nginx -t.
func TestHostileManifestsAreRejected(t *testing.T) {
	t.Parallel()
	for i, v := range hostile {
		for _, field := range []string{"host", "path", "service"} {
			t.Run(fmt.Sprintf("%s/%d", field, i), func(t *testing.T) {
				host, path, svc := "ok.test", "/ok", "svc"
				switch field {
				case "host":
					host = v
				case "path":
					path = "/" + v
				case "service":
					svc = v
				}
				ing := fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: evil, namespace: ns}\nspec:\n  ingressClassName: causeway\n  rules:\n  - host: %q\n    http:\n      paths:\n      - {path: %q, pathType: Prefix, backend: {service: {name: %q, port: {number: 80}}}}\n",
					host, path, svc)
				dir := t.TempDir()
				os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(ing), 0o644)
				snap, err := files.Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				if len(snap.Ingresses) == 0 {
					return // not even valid YAML: nothing reaches the model
				}
				m, problems := build.Build(snap, build.Options{Class: class.Options{IngressClass: "causeway"}})
				if len(problems) != 1 || !problems[0].Rejected || problems[0].Object.Name != "evil" {
					t.Fatalf("value %q as %s: problems %v, want the Ingress rejected", v, field, problems)
				}
				nginxTest(t, mustRender(t, m), m)
			})
		}
	}
}

// renderParamsFor renders into a fixed state directory that nginxTest
// rewrites; plane "lua" selects the Lua data plane.
func renderParamsFor(plane string) render.Params {
	return dataPlaneParams(render.Params{StateDir: layout.Dir("/var/lib/causeway-hostile"), HTTPPort: 80, HTTPSPort: 443}, plane == "lua")
}

func mustRender(t *testing.T, m *model.Model) render.Files {
	return mustRenderFor(t, m, "plain")
}

func mustRenderFor(t *testing.T, m *model.Model, plane string) render.Files {
	t.Helper()
	out, err := render.Render(m, renderParamsFor(plane))
	if err != nil {
		t.Fatal(err)
	}
	return out.Files
}

// skeleton is the sequence of directive names and block braces of a file
// set, ignoring arguments: an injection shows up as a difference.
func skeleton(t *testing.T, files render.Files) string {
	t.Helper()
	var b strings.Builder
	for _, name := range files.Names() {
		label := name
		if strings.HasPrefix(name, "servers/") {
			label = "servers/*" // host names differ by design
		}
		if strings.HasPrefix(name, "modsecurity/location-") {
			label = "modsecurity/location-*" // named by a digest of their content
		}
		fmt.Fprintf(&b, "== %s\n", label)
		if strings.HasPrefix(name, "modsecurity/") {
			b.WriteString(secDirectives(string(files[name])))
			continue
		}
		for _, d := range directives(string(files[name])) {
			b.WriteString(d + "\n")
		}
	}
	return b.String()
}

// directives tokenises nginx syntax (quotes, escapes, comments) and returns
// each directive's name followed by "{" , ";" or "}".
func directives(conf string) []string {
	var out []string
	var tok strings.Builder
	var words []string
	flush := func() {
		if tok.Len() > 0 {
			words = append(words, tok.String())
			tok.Reset()
		}
	}
	for i := 0; i < len(conf); i++ {
		ch := conf[i]
		switch {
		case ch == '#':
			for i < len(conf) && conf[i] != '\n' {
				i++
			}
		case ch == '"' || ch == '\'':
			q := ch
			tok.WriteByte('Q')
			for i++; i < len(conf) && conf[i] != q; i++ {
				if conf[i] == '\\' {
					i++
				}
			}
		case ch == ';' || ch == '{' || ch == '}':
			flush()
			name := ""
			if len(words) > 0 {
				name = words[0]
			}
			out = append(out, name+string(ch))
			words = nil
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			flush()
		default:
			tok.WriteByte(ch)
		}
	}
	return out
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: want %q, got %q", i, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(al), len(bl))
}

// nginxTest writes files into a state directory and runs nginx -t on it.
func nginxTest(t *testing.T, out render.Files, m *model.Model) {
	t.Helper()
	// A short directory: the render checks unix socket paths against the
	// state directory it renders for, which this one replaces below.
	tmp, err := os.MkdirTemp("", "nt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := layout.Dir(tmp)
	// Paths in the files point at the fixed render state dir; rewrite them
	// to this test's directory.
	for _, sub := range []string{"servers", "secrets", "run", "sockets", "tmp", "modsecurity"} {
		os.MkdirAll(dir.Path(sub), 0o755)
	}
	if err := runtime.EnsureDefaultCert(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The Lua data plane's init_by_lua runs under nginx -t too.
	if err := balancer.WriteLua(dir.LuaDir()); err != nil {
		t.Fatal(err)
	}
	all := render.Files{}
	for k, v := range out {
		all[k] = v
	}
	for k, v := range runtime.SecretFiles(m) {
		all[k] = v
	}
	for name, data := range all {
		data = []byte(strings.ReplaceAll(string(data), "/var/lib/causeway-hostile", string(dir)))
		if err := os.WriteFile(dir.Path(name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(dataPlane.binary, "-t", "-q", "-p", string(dir)+"/", "-e", "stderr", "-c", dir.MainConf())
	// nginx -t binds the configuration's listeners, ports 80 and 443 of
	// every address here: two at once would find them in use, and nginx
	// waits half a second before each of its retries.
	nginxTestMu.Lock()
	msg, err := cmd.CombinedOutput()
	nginxTestMu.Unlock()
	if err != nil {
		t.Fatalf("nginx -t failed: %v\n%s", err, msg)
	}
}

// nginxTestMu lets one nginxTest run nginx -t at a time.
var nginxTestMu sync.Mutex

// TestHostileRegexPaths sends the corpus as regex paths (use-regex, with
// a rewrite-target using a capture group), the shape of CVE-2021-25745 and
// CVE-2023-5043: each path is refused with the Ingress, or rendered inert,
// with the directive structure of a benign regex path and a configuration
// nginx accepts.
func TestHostileRegexPaths(t *testing.T) {
	t.Parallel()
	manifest := func(path string) string {
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: evil\n  namespace: ns\n  annotations:\n"+
			"    nginx.ingress.kubernetes.io/use-regex: \"true\"\n    nginx.ingress.kubernetes.io/rewrite-target: \"/$1\"\n"+
			"spec:\n  ingressClassName: causeway\n  rules:\n  - host: regex.test\n    http:\n      paths:\n"+
			"      - {path: %q, pathType: ImplementationSpecific, backend: {service: {name: svc, port: {number: 80}}}}\n", path)
	}
	buildFrom := func(t *testing.T, yaml string) (*model.Model, []model.Problem, bool) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(yaml), 0o644)
		snap, err := files.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Ingresses) == 0 {
			return nil, nil, false
		}
		m, problems := build.Build(snap, build.Options{Class: class.Options{IngressClass: "causeway"}})
		return m, problems, true
	}
	benign, _, _ := buildFrom(t, manifest("/benign(/|$)(.*)"))
	baseline := skeleton(t, mustRender(t, benign))
	for i, v := range slices.Concat(hostile, testcorpus.Injection) {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			m, problems, ok := buildFrom(t, manifest("/"+v))
			if !ok {
				return // not even valid YAML
			}
			rejected := len(problems) > 0 && problems[0].Rejected
			files := mustRender(t, m)
			if !rejected {
				if got := skeleton(t, files); got != baseline {
					t.Fatalf("regex path %q was accepted and changed the directive structure:\n%s", v, diffLines(baseline, got))
				}
			}
			nginxTest(t, files, m)
		})
	}
}
