package annotations

import (
	"fmt"
	"github.com/causeway/causeway/internal/model"
	"slices"
	"sort"
	"strings"
)

// This file holds the one registry of annotations Causeway knows: the
// groups implemented by a parser (one file per group, listed in groups)
// and the rows of those not implemented yet. An
// annotation under the ingress-nginx prefix or causeway.io/ is checked
// against it on every Ingress of ours and every Service those Ingresses
// route to: unknown, not yet supported, misplaced or invalid annotations
// each become a Problem, and the security annotations of ingress-nginx fail
// closed. Annotations under any other prefix belong to someone else and are
// ignored. docs/annotations.md is generated from it (TestAnnotationsDocs).

// DefaultPrefix is ingress-nginx's annotation prefix, which
// Options.AnnotationsPrefix defaults to.
const DefaultPrefix = "nginx.ingress.kubernetes.io"

// CausewayPrefix is the prefix of Causeway's own annotations.
const CausewayPrefix = "causeway.io"

// AnnotationFamily says which prefix an annotation lives under.
type AnnotationFamily string

const (
	// FamilyIngressNginx annotations use Options.AnnotationsPrefix.
	FamilyIngressNginx AnnotationFamily = "ingress-nginx"
	// FamilyCauseway annotations use causeway.io/.
	FamilyCauseway AnnotationFamily = "causeway"
)

// AnnotationStatus says what Causeway does with a known annotation.
type AnnotationStatus string

const (
	// AnnotationSupported annotations are implemented; an invalid value is
	// an InvalidAnnotation Problem.
	AnnotationSupported AnnotationStatus = "supported"
	// AnnotationNotYetSupported annotations are ignored with an
	// UnsupportedAnnotation Problem.
	AnnotationNotYetSupported AnnotationStatus = "not yet supported"
	// AnnotationFailClosed annotations protect paths. Until one is
	// implemented, and whenever its value is invalid, every path of the
	// Ingress carrying it answers 503: serving it unprotected would fail
	// open.
	AnnotationFailClosed AnnotationStatus = "fail closed"
)

// Annotation is one row of the table.
type Annotation struct {
	Family AnnotationFamily
	// Name is the part after the prefix and "/".
	Name string
	// Kind is the object the annotation is read from: "Ingress" or
	// "Service".
	Kind string
	// Group names the feature, and the parser that will implement it.
	Group  string
	Status AnnotationStatus
	// Instead, if set, says what to use in Causeway today.
	Instead string
	// Off, when set on a fail-closed row, reports whether a value asks
	// for nothing (app-protect-enable: "False"): such a value is reported
	// as ignored and closes nothing.
	Off func(value string) bool `json:"-"`
	// Scope is where a supported annotation applies.
	Scope Scope
	// Default, Grammar and Difference document a supported annotation:
	// its value when absent, the values it accepts, and how Causeway's
	// behaviour differs from ingress-nginx's (from NGINX Ingress
	// Controller's for an nginx.org one; "" for none).
	Default, Grammar, Difference string
	// SameAs, for an nginx.org annotation, is the ingress-nginx
	// annotation that sets the same value; it wins when both are set.
	SameAs string
	// Names is the kind of object the annotation's value names
	// (model.KindSecret, KindConfigMap, KindService), "" for none. Every
	// annotation whose parser names an object must say so here
	// (TestReferencesDeclared): References lists them, the kube source
	// watches them and the admission review looks them up.
	Names string
}

// Scope says where an annotation applies.
type Scope string

const (
	// ScopeLocation annotations apply to the Ingress's own paths.
	ScopeLocation Scope = "location"
	// ScopeServer annotations apply to the whole host; the oldest
	// Ingress of the host wins a disagreement.
	ScopeServer Scope = "server"
	// ScopeBackend annotations apply to the Service a path routes to.
	ScopeBackend Scope = "backend"
)

// Group is one parser and the annotations it reads.
type Group struct {
	Name        string
	Annotations []Annotation
	// Parse reads the group's annotations (with r.Get and friends) into
	// res. It runs only when at least one of them is set.
	Parse func(r *Reader, res *Result)
}

// groups are the implemented annotation groups, one file each.
var groups = []Group{rewriteGroup, redirectGroup, proxyGroup, headersGroup, corsGroup, backendGroup, balanceGroup, errorsGroup, mirrorGroup, limitsGroup, accessGroup, authGroup, authTLSGroup, canaryGroup, extAuthGroup, snippetsGroup, passthroughGroup, wafGroup, tracingGroup, serverTLSGroup}

// groupsOf gives each annotation name the indexes in groups of the groups
// that list it: an Ingress's few annotations find their parsers without
// a pass over the whole catalogue.
var groupsOf = func() map[string][]int {
	out := map[string][]int{}
	for i, g := range groups {
		for _, a := range g.Annotations {
			if n := out[a.Name]; len(n) == 0 || n[len(n)-1] != i {
				out[a.Name] = append(n, i)
			}
		}
	}
	return out
}()

// supported builds the rows of an implemented group.
func supported(group string, rows ...Annotation) []Annotation {
	for i := range rows {
		rows[i].Family, rows[i].Kind, rows[i].Group, rows[i].Status = FamilyIngressNginx, "Ingress", group, AnnotationSupported
	}
	return rows
}

// Closes reports whether the annotation, set to value, closes the paths
// of its Ingress: a fail-closed row, unless its Off says the value asks
// for nothing.
func (a Annotation) Closes(value string) bool {
	return a.Status == AnnotationFailClosed && (a.Off == nil || !a.Off(value))
}

// Key is the full annotation key under the given ingress-nginx prefix.
func (a Annotation) Key(prefix string) string {
	switch a.Family {
	case FamilyCauseway:
		return CausewayPrefix + "/" + a.Name
	case FamilyNIC:
		return NICPrefix + "/" + a.Name
	case FamilyNICPlus:
		return NICPlusPrefix + "/" + a.Name
	case FamilyAppProtect:
		return AppProtectPrefix + "/" + a.Name
	case FamilyAppProtectDoS:
		return AppProtectDoSPrefix + "/" + a.Name
	}
	return prefix + "/" + a.Name
}

// Split says which family of ours an annotation key of an object of kind
// belongs to, and its name there; ok is false for a key that is not ours.
// NGINX Ingress Controller's families are read from Ingresses only.
func Split(key, prefix, kind string) (f AnnotationFamily, name string, ok bool) {
	for _, c := range []struct {
		prefix  string
		family  AnnotationFamily
		ingress bool
	}{
		{prefix, FamilyIngressNginx, false}, {CausewayPrefix, FamilyCauseway, false},
		{NICPrefix, FamilyNIC, true}, {NICPlusPrefix, FamilyNICPlus, true},
		{AppProtectPrefix, FamilyAppProtect, true}, {AppProtectDoSPrefix, FamilyAppProtectDoS, true},
	} {
		if name, found := strings.CutPrefix(key, c.prefix+"/"); found && (!c.ingress || kind == "Ingress") {
			return c.family, name, true
		}
	}
	return "", "", false
}

// rows builds table rows that share family, kind, group and status.
func rows(f AnnotationFamily, kind, group string, st AnnotationStatus, names ...string) []Annotation {
	out := make([]Annotation, len(names))
	for i, n := range names {
		out[i] = Annotation{Family: f, Name: n, Kind: kind, Group: group, Status: st}
	}
	return out
}

func ingressNginx(group string, st AnnotationStatus, names ...string) []Annotation {
	return rows(FamilyIngressNginx, "Ingress", group, st, names...)
}

// annotationTable is every known annotation. The ingress-nginx names are
// those of its annotation reference; security ones are listed under
// "auth" with AnnotationFailClosed.
var annotationTable = concat(append([][]Annotation{pending, nicRows, nicPlusRows, appProtectRows}, groupRows()...)...)

func groupRows() [][]Annotation {
	out := make([][]Annotation, len(groups))
	for i, g := range groups {
		out[i] = g.Annotations
	}
	return out
}

// pending are the rows not implemented by a group parser.
var pending = concat(
	// Causeway's own, on the Service because balancing is a property of the
	// backend (see balance.go and docs/load-balancing.md).
	rows(FamilyCauseway, "Service", "balance", AnnotationSupported,
		"load-balance", "hash-key", "sticky-cookie", "sticky-path", "sticky-max-age",
		"sticky-samesite", "sticky-secure", "proxy-next-upstream-tries"),

	ingressNginx("rewrite", AnnotationNotYetSupported, "enable-rewrite-log"),
	// ingress-nginx counts these in memcached, shared by its replicas.
	ingressNginx("limits", AnnotationNotYetSupported,
		"global-rate-limit", "global-rate-limit-window", "global-rate-limit-key", "global-rate-limit-ignored-cidrs"),
	ingressNginx("headers", AnnotationNotYetSupported, "connection-proxy-header"),
	// The Lua balancer has no subset hashing, no legacy canary affinity
	// (it always keeps an affinitized request on its side, ingress-nginx's
	// default) and no cookie Domain or user-agent-dependent SameSite.
	ingressNginx("balance", AnnotationNotYetSupported,
		"upstream-hash-by-subset", "upstream-hash-by-subset-size", "affinity-canary-behavior",
		"session-cookie-domain", "session-cookie-conditional-samesite-none"),
	ingressNginx("errors", AnnotationNotYetSupported, "disable-proxy-intercept-errors"),
	ingressNginx("server", AnnotationNotYetSupported, "http2-push-preload"),
	ingressNginx("snippets", AnnotationNotYetSupported, "stream-snippet"),
	ingressNginx("observability", AnnotationNotYetSupported,
		"enable-opentracing",
		"opentracing-trust-incoming-span", "enable-influxdb", "influxdb-measurement", "influxdb-port",
		"influxdb-host", "influxdb-server-name"),
)

// insteadOf says what Causeway offers today in place of some ingress-nginx
// annotations.
var insteadOf = map[string]string{
	"upstream-hash-by-subset": "use upstream-hash-by alone, which hashes over every endpoint",
	"global-rate-limit":       "limit-rps and limit-rpm limit per replica, without memcached",
	"stream-snippet":          "the stream servers (tcp-services, udp-services and TransportServers, docs/layer4.md) take no raw configuration; their settings are ingress-nginx's defaults",
}

// plural names a kind in the plural: "Ingresses", "Services".
func plural(kind string) string {
	if strings.HasSuffix(kind, "s") {
		return kind + "es"
	}
	return kind + "s"
}

func concat(sets ...[]Annotation) []Annotation {
	var out []Annotation
	for _, g := range sets {
		for _, a := range g {
			if a.Family == FamilyIngressNginx {
				a.Instead = insteadOf[a.Name]
			}
			out = append(out, a)
		}
	}
	return out
}

type annotationID struct {
	family AnnotationFamily
	name   string
}

// annotationIndex finds a row by family and name. A name listed twice is a
// programming error caught at start-up.
var annotationIndex = func() map[annotationID]Annotation {
	idx := make(map[annotationID]Annotation, len(annotationTable))
	for _, a := range annotationTable {
		id := annotationID{a.Family, a.Name}
		if _, dup := idx[id]; dup {
			panic("model: annotation listed twice: " + a.Name)
		}
		idx[id] = a
	}
	return idx
}()

// Lookup finds the row of an annotation by family and name.
func Lookup(f AnnotationFamily, name string) (Annotation, bool) {
	a, ok := annotationIndex[annotationID{f, name}]
	return a, ok
}

// Known returns the table, sorted by family then name, for documentation
// and migration checks.
func Known() []Annotation {
	out := append([]Annotation(nil), annotationTable...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Family != out[j].Family {
			return out[i].Family < out[j].Family
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// MaxProblems bounds the Problems one object's annotations raise;
// the rest are counted in one last Problem. The files source skips the API
// server's size limits, so an object may carry thousands.
const MaxProblems = 20

// Checked is what checkAnnotations found on one object.
type Checked struct {
	Problems []model.Problem
	// FailClosed are the full keys of security annotations present, sorted.
	FailClosed []string
}

// Check classifies every annotation of ours on an object of the
// given kind ("Ingress" or "Service"). Supported annotations are left to
// their parsers, which report invalid values.
func Check(ref model.ObjectRef, annotations map[string]string, prefix string) Checked {
	var c Checked
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dropped := 0
	report := func(reason, format string, args ...any) {
		if len(c.Problems) >= MaxProblems {
			dropped++
			return
		}
		c.Problems = append(c.Problems, model.Problem{Object: ref, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	for _, k := range keys {
		family, name, ours := Split(k, prefix, ref.Kind)
		if !ours {
			continue
		}
		id := annotationID{family, name}
		a, known := annotationIndex[id]
		switch {
		case !known:
			report(model.ReasonUnknownAnnotation, "annotation %q is unknown and ignored", model.Truncate(k))
		case a.Kind != ref.Kind:
			report(model.ReasonUnsupportedAnnotation, "annotation %s is read from %s, not from %s; ignored", k, plural(a.Kind), plural(ref.Kind))
		case a.Status == AnnotationFailClosed && !a.Closes(annotations[k]):
			report(model.ReasonUnsupportedAnnotation, "annotation %s is %q, which asks for nothing; ignored", k, model.Truncate(annotations[k]))
		case a.Status == AnnotationFailClosed:
			c.FailClosed = append(c.FailClosed, k)
			// Always reported: it explains why paths answer 503.
			why := "is not supported yet"
			if a.Instead != "" {
				why = "is not supported (" + a.Instead + ")"
			}
			c.Problems = append(c.Problems, model.Problem{Object: ref, Reason: model.ReasonSecurityAnnotation, Message: fmt.Sprintf(
				"security annotation %s %s; every path of this Ingress answers 503 rather than being served without it", k, why)})
		case a.Status == AnnotationNotYetSupported:
			msg := fmt.Sprintf("annotation %s is not supported yet and is ignored", k)
			if a.Instead != "" {
				msg += "; " + a.Instead
			}
			report(model.ReasonUnsupportedAnnotation, "%s", msg)
		}
	}
	if dropped > 0 {
		c.Problems = append(c.Problems, model.Problem{Object: ref, Reason: model.ReasonUnsupportedAnnotation,
			Message: fmt.Sprintf("%d more unknown or unsupported annotations are ignored", dropped)})
	}
	return c
}

// ParseIngress checks every annotation of ours on an Ingress and runs the
// parser of each implemented group that has one set, starting from the
// ConfigMap's defaults (nil for none; defaults.go). A value a parser
// cannot use is a Problem and drops that setting only: the default
// stands.
func ParseIngress(ref model.ObjectRef, values map[string]string, prefix string, defaults *model.Defaults) (Result, []model.Problem) {
	c := Check(ref, values, prefix)
	res := Result{FailClosed: c.FailClosed}
	res.startFrom(defaults)
	problems := c.Problems
	r := newReader(ref, prefix, values)
	r.defaults = defaults
	canary := isCanary(r)
	if canary {
		// A canary borrows its main Ingress's locations: only its own
		// and its Service's balancing annotations apply.
		res.FailClosed, problems = nil, withoutSecurity(problems)
		ignoredOnCanary(r)
	}
	set := make([]bool, len(groups))
	for name := range r.values {
		for _, i := range groupsOf[name] {
			set[i] = true
		}
	}
	for i, g := range groups {
		if !set[i] {
			continue
		}
		if canary && !slices.Contains(canaryKeeps, g.Name) {
			continue
		}
		g.Parse(r, &res)
	}
	if nr := newReader(ref, NICPrefix, values); len(nr.values) > 0 {
		if canary {
			ignoredOnCanaryNIC(nr)
		} else {
			parseNIC(r, nr, &res)
		}
		res.FailClosed = append(res.FailClosed, nr.closed...)
		problems = append(problems, nr.problems...)
	}
	res.FailClosed = append(res.FailClosed, r.closed...)
	sort.Strings(res.FailClosed)
	res.Defaulted = r.defaulted(defaults)
	return res, append(problems, r.problems...)
}
