// Package equivalence proves a conversion of `causeway migrate
// to-gateway`: it builds Causeway's model (internal/build) from the
// Ingresses and, separately, from the Gateway API objects the converter
// wrote, answers the same requests from both, and lists per Ingress every
// way the two differ: where the request goes (served or not, redirect,
// answer, backends and weights), the location's policy (headers, CORS,
// rewrite, timeouts, authentication ...), the host's and the backend's
// settings. A difference is explained when a finding of the report that is
// not "converted" covers it (explain.go); any other is unexpected: a
// conversion that is not what its report says.
//
// The requests are made from each Ingress's rules: per host (a wildcard's
// name, or a host no rule names for a rule without host), per path the
// path itself, with a trailing slash, one element below (with and without
// a trailing slash), and the path
// followed by more characters (which tells a prefix of path elements from
// a string prefix), the literal start of a regular expression in its
// place; over HTTP, and over HTTPS for a host with a certificate.
package equivalence

import (
	"cmp"
	"regexp/syntax"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/migrate/togateway"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// anyHost is the request host for a rule without host: one no rule names.
const anyHost = "any-host.invalid"

// Check compares every converted Ingress of in with its conversion out
// and fills rep's Equivalence fields; world is as for Models (nil: the
// assumed world).
func Check(in togateway.Input, opts togateway.Options, out togateway.Output, rep *togateway.Report, world *source.Snapshot) {
	opts = withDefaults(opts)
	byName := map[string]*networkingv1.Ingress{}
	for _, i := range in.Ingresses {
		byName[i.Namespace+"/"+i.Name] = i
	}
	m1, m2, _ := Models(in, opts, out, *rep, world)
	c := &checker{a: newSide(m1, false), b: newSide(m2, true), prefix: opts.AnnotationsPrefix,
		findings: map[string][]togateway.Finding{}, global: rep.ConfigMap}
	for _, ir := range rep.Ingresses {
		c.findings[ir.Namespace+"/"+ir.Name] = ir.Findings
	}

	s := &togateway.EquivalenceSummary{}
	for n := range rep.Ingresses {
		ir := &rep.Ingresses[n]
		e := &togateway.Equivalence{}
		switch {
		case ir.Skipped != "":
			continue
		case ir.Rejected != "":
			e.NotCompared = "Causeway rejects it"
		case ir.Refused:
			e.NotCompared = "its routes are not written (refused)"
		default:
			c.compare(byName[ir.Namespace+"/"+ir.Name], e)
		}
		ir.Equivalence = e
		switch {
		case e.NotCompared != "":
			s.NotCompared++
		case e.Equivalent:
			s.Equivalent++
		case slices.ContainsFunc(e.Differences, func(d togateway.Difference) bool { return d.Unexpected }):
			s.Unexpected++
		default:
			s.Explained++
		}
	}
	rep.Equivalence = s
}

// Models are Causeway's models of the Ingresses rep says were converted
// (neither skipped nor rejected) and of their conversion out, and the
// Problems of the second. They are built with world's Services,
// EndpointSlices and Secrets; with world nil, in the world Check assumes
// (every Service named has an endpoint, every TLS Secret named a
// certificate). The Gateway side's HTTP servers are those of Gateway
// listeners; the Ingress side's those of the controller's own ports.
func Models(in togateway.Input, opts togateway.Options, out togateway.Output, rep togateway.Report, world *source.Snapshot) (ing, gw *model.Model, problems []model.Problem) {
	byName := map[string]bool{}
	for _, ir := range rep.Ingresses {
		byName[ir.Namespace+"/"+ir.Name] = ir.Skipped == "" && ir.Rejected == ""
	}
	var converted []*networkingv1.Ingress
	for _, i := range in.Ingresses {
		if byName[i.Namespace+"/"+i.Name] {
			converted = append(converted, i)
		}
	}
	return models(in, withDefaults(opts), out, converted, world)
}

func models(in togateway.Input, opts togateway.Options, out togateway.Output, converted []*networkingv1.Ingress, world *source.Snapshot) (ing, gw *model.Model, problems []model.Problem) {
	ingSnap, gwSnap := snapshots(in, opts, out, converted, world)
	bopts := buildOptions(in, opts.AnnotationsPrefix)
	// In the assumed world each Gateway has its Service, and its ports.
	bopts.GatewayServices = world == nil
	ing, _ = build.Build(ingSnap, bopts)
	gw, problems = build.Build(gwSnap, bopts)
	return ing, gw, problems
}

func withDefaults(o togateway.Options) togateway.Options {
	o.AnnotationsPrefix = cmp.Or(o.AnnotationsPrefix, "nginx.ingress.kubernetes.io")
	o.GatewayClass = cmp.Or(o.GatewayClass, togateway.DefaultGatewayClass)
	return o
}

// checker holds both sides and the report's findings.
type checker struct {
	a, b   *side
	prefix string
	// findings are the report's, by Ingress "namespace/name"; global
	// the ConfigMap's, which concern every Ingress.
	findings map[string][]togateway.Finding
	global   []togateway.Finding
}

// request is one request both sides answer.
type request struct {
	scheme, host, path string
}

func (r request) String() string { return r.scheme + "://" + r.host + r.path }

// compare answers the Ingress's requests from both sides.
func (c *checker) compare(ing *networkingv1.Ingress, e *togateway.Equivalence) {
	ref := model.ObjectRef{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
	seen := map[string]int{}
	for _, r := range c.requests(ing) {
		e.Requests++
		for _, d := range c.differences(r) {
			key := d.Aspect + "\x00" + d.Ingress + "\x00" + d.Gateway
			if i, ok := seen[key]; ok {
				e.Differences[i].Requests++
				continue
			}
			d.Request, d.Requests = r.String(), 1
			d.ExplainedBy = c.explain(d.Aspect, r.host, ref, d.sources)
			d.Unexpected = len(d.ExplainedBy) == 0
			seen[key] = len(e.Differences)
			e.Differences = append(e.Differences, d.Difference)
		}
	}
	slices.SortStableFunc(e.Differences, func(x, y togateway.Difference) int { return cmp.Compare(x.Aspect, y.Aspect) })
	e.Equivalent = len(e.Differences) == 0
}

// requests are the requests made of an Ingress's rules.
func (c *checker) requests(ing *networkingv1.Ingress) []request {
	regex := ing.Annotations[c.prefix+"/use-regex"] == "true" || ing.Annotations[c.prefix+"/rewrite-target"] != ""
	var out []request
	seen := map[request]bool{}
	add := func(host, path string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		for _, scheme := range []string{"http", "https"} {
			r := request{scheme, host, path}
			if seen[r] || scheme == "https" && !c.hasCertificate(host) {
				continue
			}
			seen[r] = true
			out = append(out, r)
		}
	}
	if ing.Spec.DefaultBackend != nil {
		add(anyHost, "/no-rule-matches")
	}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		host := strings.ToLower(rule.Host)
		switch {
		case host == "":
			host = anyHost
		case strings.HasPrefix(host, "*."):
			host = "wildcard" + host[1:]
		}
		for _, p := range rule.HTTP.Paths {
			path := cmp.Or(p.Path, "/")
			if regex {
				path = literalPrefix(path)
			}
			add(host, path)
			if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact && !regex {
				add(host, strings.TrimSuffix(path, "/")+"/")
				continue
			}
			base := strings.TrimSuffix(path, "/")
			add(host, base+"/")
			add(host, base+"/below")
			add(host, base+"/below/")
			if !strings.HasSuffix(path, "/") {
				add(host, path+"more")
			}
		}
	}
	return out
}

// hasCertificate reports whether the Ingress side serves host over
// HTTPS with a certificate of its own: only then is an HTTPS request
// compared (ingress-nginx answered every host over HTTPS, with a default
// certificate clients refuse), or passes its TLS through.
func (c *checker) hasCertificate(host string) bool {
	if _, ok := c.a.passthrough[host]; ok {
		return true
	}
	srv := c.a.server("https", host)
	return srv != nil && srv.TLS != nil && srv.TLS.Secret != "" && srv.Host != ""
}

// literalPrefix is the start every match of a regular expression shares
// ("/api" of "/api(/|$)(.*)"); the expression itself when it does not
// parse.
func literalPrefix(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return expr
	}
	re = re.Simplify()
	var b strings.Builder
	var lit func(r *syntax.Regexp) bool
	lit = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
			return true
		case syntax.OpConcat:
			for _, s := range r.Sub {
				if !lit(s) {
					return false
				}
			}
			return true
		case syntax.OpBeginText, syntax.OpBeginLine:
			return true
		case syntax.OpCapture:
			return lit(r.Sub[0])
		}
		return false
	}
	lit(re)
	return b.String()
}

// difference is a Difference and the objects whose findings may explain
// it beside the Ingress's own: those of the Ingress side's location.
type difference struct {
	togateway.Difference
	sources []model.ObjectRef
}

// differences compares how both sides answer r.
func (c *checker) differences(r request) []difference {
	x, y := c.a.answer(r), c.b.answer(r)
	var out []difference
	var sources []model.ObjectRef
	if x.loc != nil {
		sources = append(sources, x.loc.Source)
		if p := x.loc.Action.Proxy; p != nil && p.Split != nil {
			sources = append(sources, p.Split.Source)
		}
	}
	add := func(aspect, a, b string) {
		out = append(out, difference{togateway.Difference{Aspect: aspect, Ingress: a, Gateway: b}, sources})
	}
	if x.what != y.what {
		add("route", x.what, y.what)
		return out
	}
	if x.srv != nil && y.srv != nil {
		grouped("server.", diffFields(serverOf(x.srv, r.scheme), serverOf(y.srv, r.scheme)), add)
	}
	if x.loc == nil || y.loc == nil || x.loc.Action.Proxy == nil {
		return out
	}
	va, pa := viewOf(c.a.m, x.srv, x.loc, r)
	vb, pb := viewOf(c.b.m, y.srv, y.loc, r)
	grouped("policy.", diffFields(va, vb), add)
	grouped("policy.", diffFields(pa, pb), add)
	ba, bb := c.a.backends[x.loc.Backend()], c.b.backends[y.loc.Backend()]
	grouped("backend.", diffFields(backendOf(ba), backendOf(bb)), add)
	return out
}
