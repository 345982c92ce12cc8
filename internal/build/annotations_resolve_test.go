package build

import (
	"slices"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/test/spec"
)

// buildRow builds the Model of a spec row's objects (every Service with
// one endpoint) and returns it with its Problems.
func buildRow(t *testing.T, c spec.AnnotationCase) (*model.Model, []model.Problem) {
	t.Helper()
	eps := map[string]spec.Endpoint{}
	for _, svc := range c.Services() {
		eps[svc] = spec.Endpoint{IP: "10.0.0.1", Port: 8080}
	}
	return Build(snapshotOf(t, c.Manifests(annotations.DefaultPrefix, eps)+controllerConfig(c.Config)), testOpts)
}

func findServer(m *model.Model, host string) *model.Server {
	for _, s := range m.Servers {
		if s.Host == host {
			return s
		}
	}
	return nil
}

// problemsNaming returns the reasons of the Problems whose message holds
// text.
func problemsNaming(problems []model.Problem, text string) []string {
	var out []string
	for _, p := range problems {
		if strings.Contains(p.Message, text) {
			out = append(out, p.Reason)
		}
	}
	return out
}

func TestServiceUpstreamUsesTheClusterIP(t *testing.T) {
	m, problems := buildRow(t, spec.AnnotationCase{Ingresses: []spec.Ingress{
		{Name: "via-ip", Host: "a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"service-upstream": "true"}},
		{Name: "direct", Host: "b.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}},
	}})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	a, b := findServer(m, "a.test").Locations[0], findServer(m, "b.test").Locations[0]
	if a.Backend() != "default/app/80@cluster-ip" || b.Backend() != "default/app/80" {
		t.Fatalf("backends %q and %q, want the cluster-IP variant for a.test only", a.Backend(), b.Backend())
	}
	for _, be := range m.Backends {
		if be.Key == a.Backend() && (len(be.Endpoints) != 1 || be.Endpoints[0].Address != "10.96.0.10" || be.Endpoints[0].Port != 80) {
			t.Fatalf("cluster-IP backend endpoints %v, want 10.96.0.10:80", be.Endpoints)
		}
	}
}

func TestIngressBalancingOldestWins(t *testing.T) {
	m, problems := buildRow(t, spec.AnnotationCase{Ingresses: []spec.Ingress{
		{Name: "old", Host: "a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"upstream-hash-by": "$remote_addr"}},
		{Name: "young", Host: "b.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"load-balance": "ewma"}},
	}})
	be := m.Backends[0]
	if be.Balance.Method != model.CHash || be.Balance.HashKey != "$remote_addr" {
		t.Fatalf("balance %+v, want chash on $remote_addr from the older Ingress", be.Balance)
	}
	if got := problemsNaming(problems, "already set differently"); !slices.Equal(got, []string{model.ReasonCollision}) {
		t.Fatalf("problems %v, want one Collision for the younger Ingress", problems)
	}
}

func TestAliasesAndTwinsNeverTakeAHost(t *testing.T) {
	m, problems := buildRow(t, spec.AnnotationCase{Ingresses: []spec.Ingress{
		{Name: "main", Host: "a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
			Annotations: map[string]string{"server-alias": "b.test, c.test", "from-to-www-redirect": "true"}},
		{Name: "other", Host: "b.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "other"}}},
		{Name: "www", Host: "www.a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "www"}}},
	}})
	p := findServer(m, "a.test").Policy
	if p == nil || !slices.Equal(p.Aliases, []string{"c.test"}) || p.WWWRedirect {
		t.Fatalf("policy %+v: want alias c.test only and no www redirect (both other names are hosts)", p)
	}
	if got := problemsNaming(problems, "a host of its own"); len(got) != 2 {
		t.Fatalf("problems %v, want two naming the hosts that keep their routes", problems)
	}
}

func TestCustomHeadersConfigMapProblems(t *testing.T) {
	row := spec.AnnotationCase{
		Ingresses:  []spec.Ingress{{Name: "web", Host: "a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"custom-headers": "default/hdrs"}}},
		ConfigMaps: map[string]map[string]string{"hdrs": {"X-Good": "yes", "X-Bad": "a$b", "bad name": "x", "X-Not-Allowed": "x"}},
		Config:     map[string]string{"global-allowed-response-headers": "X-Good, X-Bad"},
	}
	m, problems := buildRow(t, row)
	got := findServer(m, "a.test").Locations[0].Policy.ResponseHeaders
	if len(got) != 1 || got[0].Name != "X-Good" {
		t.Fatalf("headers %v, want only X-Good", got)
	}
	if r := problemsNaming(problems, "custom-headers"); len(r) != 3 {
		t.Fatalf("problems %v, want one per bad or disallowed entry", problems)
	}
	row.ConfigMaps = nil
	m, problems = buildRow(t, row)
	if l := findServer(m, "a.test").Locations[0]; l.Backend() == "" || (l.Policy != nil && len(l.Policy.ResponseHeaders) > 0) {
		t.Fatalf("a missing ConfigMap must leave the path served without headers: %+v", l)
	}
	if r := problemsNaming(problems, "not found"); len(r) != 1 {
		t.Fatalf("problems %v, want one for the missing ConfigMap", problems)
	}
}

func TestCustomErrorsNeedADefaultBackend(t *testing.T) {
	m, problems := buildRow(t, spec.AnnotationCase{Ingresses: []spec.Ingress{
		{Name: "web", Host: "a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}}, Annotations: map[string]string{"custom-http-errors": "404"}},
	}})
	if l := findServer(m, "a.test").Locations[0]; l.Policy != nil && l.Policy.Errors != nil {
		t.Fatalf("errors %+v without any default backend", l.Policy.Errors)
	}
	if r := problemsNaming(problems, "needs a default backend"); len(r) != 1 {
		t.Fatalf("problems %v, want one explaining the missing default backend", problems)
	}
}

// A name is the alias or www twin of one host only; the younger claim is
// left out with a Problem, never silently.
func TestAliasAndTwinClaimOneName(t *testing.T) {
	m, problems := buildRow(t, spec.AnnotationCase{Ingresses: []spec.Ingress{
		{Name: "a", Host: "a.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
			Annotations: map[string]string{"server-alias": "www.b.test"}},
		{Name: "b", Host: "b.test", Paths: []spec.Route{{Path: "/", Type: "Prefix", Service: "app"}},
			Annotations: map[string]string{"from-to-www-redirect": "true"}},
	}})
	if p := findServer(m, "a.test").Policy; p == nil || !slices.Equal(p.Aliases, []string{"www.b.test"}) {
		t.Fatalf("a.test policy %+v, want the alias", p)
	}
	if p := findServer(m, "b.test").Policy; p != nil && p.WWWRedirect {
		t.Fatal("b.test's www twin is a.test's alias: no redirect")
	}
	if got := problemsNaming(problems, "already names host"); len(got) != 1 {
		t.Fatalf("problems %v, want one naming the taken name", problems)
	}
}
