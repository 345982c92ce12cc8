package integration

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/snippet"
	"github.com/causeway/causeway/test/harness"
	"github.com/causeway/causeway/test/spec"
)

// TestSnippetTableAgainstNginx sends the snippet rows to a real nginx
// with allow-snippet-annotations true; the build tests check the same
// rows on the Model.
func TestSnippetTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, rowsForDataPlane(t, spec.SnippetTable))
}

// rowsForDataPlane leaves out, with a log line, the rows whose snippets
// use headers-more where the data plane under test cannot load it (the
// vendored Angie build): there the controller refuses them.
func rowsForDataPlane(t *testing.T, table []spec.AnnotationCase) []spec.AnnotationCase {
	t.Helper()
	if optionalModule(t, headersMoreModule) {
		return table
	}
	var out []spec.AnnotationCase
	for _, tc := range table {
		uses := strings.Contains(fmt.Sprint(tc.Config), "more_")
		for _, ing := range tc.Ingresses {
			uses = uses || strings.Contains(fmt.Sprint(ing.Annotations), "more_")
		}
		if uses {
			t.Logf("left out (uses headers-more): %s", tc.Name)
			continue
		}
		out = append(out, tc)
	}
	return out
}

// TestSnippetDefaultTableAgainstNginx: without allow-snippet-annotations,
// snippets are refused and the Ingress is served without them.
func TestSnippetDefaultTableAgainstNginx(t *testing.T) {
	t.Parallel()
	runAnnotationTable(t, spec.SnippetDefaultTable)
}

// TestSnippetConfigTableAgainstNginx sends the rows of the ConfigMap's
// snippets, each to a controller of its own.
func TestSnippetConfigTableAgainstNginx(t *testing.T) {
	t.Parallel()
	for _, tc := range rowsForDataPlane(t, spec.SnippetConfigTable) {
		t.Run(tc.Name, func(t *testing.T) { runAnnotationTable(t, []spec.AnnotationCase{tc}) })
	}
}

// TestSnippetCorpusAgainstNginx applies every hostile snippet of the
// corpus (internal/snippet/testdata/corpus/cve-*.conf) as the
// configuration-snippet of one Ingress and the server-snippet of another,
// next to a good Ingress whose snippet sets and clears headers, returns
// and rewrites. Every Ingress keeps serving from its backend (or, when its
// refused snippet was meant to refuse requests, answers 503), none of the
// hostile ones changes an answer or reaches a file, and the good one's
// directives take effect.
func TestSnippetCorpusAgainstNginx(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../internal/snippet/testdata/corpus/cve-*.conf")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	b := startBackend(t, "app")
	eps := map[string]spec.Endpoint{"app": {IP: b.IP, Port: b.Port}}
	// Without headers-more (the vendored Angie), the good snippet leaves
	// more_clear_headers out, which the controller would refuse there.
	more := optionalModule(t, headersMoreModule)
	clear := ""
	if more {
		clear = "more_clear_headers X-Echo-Endpoint;\n"
	}
	good := spec.Ingress{Name: "good", Host: "good.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
		Annotations: map[string]string{
			"configuration-snippet": "add_header X-Frame-Options \"DENY\" always;\n" + clear +
				"rewrite ^/old/(.*)$ /new/$1 break;\nproxy_set_header X-Tenant \"acme\";",
			"server-snippet": "rewrite ^/gone$ https://elsewhere.test/ permanent;",
		}}
	row := spec.AnnotationCase{Ingresses: []spec.Ingress{good}}
	// closed are the hosts whose refused snippet looks meant to refuse
	// requests: they fail closed.
	var hosts []string
	closed := map[string]bool{}
	for i, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"configuration-snippet", "server-snippet"} {
			host := fmt.Sprintf("h%02d-%s.test", i, strings.TrimSuffix(name, "-snippet"))
			hosts = append(hosts, host)
			closed[host] = snippet.Denies(string(src))
			row.Ingresses = append(row.Ingresses, spec.Ingress{Name: fmt.Sprintf("bad-%02d-%s", i, name[:6]), Host: host,
				Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{name: string(src)}})
		}
	}
	manifests := row.Manifests("nginx.ingress.kubernetes.io", eps) +
		spec.ConfigMapYAML("causeway", "config", map[string]string{"allow-snippet-annotations": "true"})
	c := startController(t, map[string]string{"class.yaml": ingressClass, "snippets.yaml": manifests})
	addr := net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPPort))
	do := func(host, path string) harness.Result {
		t.Helper()
		res, err := harness.Do(addr, harness.Request{Method: "GET", Scheme: "http", Host: host, Path: path, Header: map[string]string{"X-Tenant": "forged"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := do("good.test", "/old/page")
	if res.Status != 200 || res.Reply.Service != "app" || res.Reply.URI != "/new/page" {
		t.Fatalf("good: %d from %q for %q, want 200 from app for /new/page", res.Status, res.Reply.Service, res.Reply.URI)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || more && res.Header.Get("X-Echo-Endpoint") != "" || res.Reply.Headers["X-Tenant"] != "acme" {
		t.Fatalf("good: headers %v, upstream X-Tenant %q; want X-Frame-Options DENY, no X-Echo-Endpoint, X-Tenant acme", res.Header, res.Reply.Headers["X-Tenant"])
	}
	if res := do("good.test", "/gone"); res.Status != 301 || res.Location != "https://elsewhere.test/" {
		t.Fatalf("good /gone: %d to %q, want 301 to https://elsewhere.test/", res.Status, res.Location)
	}
	if len(closed) == 0 || !slices.Contains(slices.Collect(maps.Values(closed)), true) || !slices.Contains(slices.Collect(maps.Values(closed)), false) {
		t.Fatal("the corpus must hold snippets that deny and snippets that do not")
	}
	for _, host := range hosts {
		for _, path := range []string{"/", "/etc/passwd", "/x"} {
			res := do(host, path)
			if closed[host] {
				if res.Status != 503 || res.Reply.Service != "" {
					t.Errorf("%s%s: %d from %q, want 503: the refused snippet denies, so the paths fail closed", host, path, res.Status, res.Reply.Service)
				}
				continue
			}
			if res.Status != 200 || res.Reply.Service != "app" || res.Reply.URI != path || strings.Contains(res.Body, "root:") {
				t.Errorf("%s%s: %d from %q for %q (body %.80q), want 200 from app for the path", host, path, res.Status, res.Reply.Service, res.Reply.URI, res.Body)
			}
			if res.Header.Get("X-Echo-Endpoint") == "" || res.Header.Get("X-Frame-Options") != "" {
				t.Errorf("%s%s: headers %v: a refused snippet changed them", host, path, res.Header)
			}
		}
	}
}
