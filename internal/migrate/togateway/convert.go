// Package togateway converts Ingresses written for ingress-nginx, with
// their annotations and the controller's ConfigMap, into Gateway API
// objects: one Gateway, HTTPRoutes, GRPCRoutes, TLSRoutes and
// ReferenceGrants. It is pure: objects in, typed objects and a report
// out. The report names, per Ingress, every annotation and field it read
// and the Rule it applied (rules.go), so nothing is dropped silently.
//
// An ssl-passthrough Ingress adds a TLSRoute per host, on a TLS listener
// of its own.
//
// Granularity: one HTTPRoute (or GRPCRoute) per Ingress and host, named
// "<ingress>-<host>" ("*" spelled "wildcard"), in the Ingress's namespace.
// A route per host, rather than per Ingress, is what lets a host with TLS
// attach to its own HTTPS listener and, with ssl-redirect, leave the HTTP
// listener to a redirecting twin ("<route>-redirect"), host by host, as
// ingress-nginx decides it. Rules of the Ingress without a host go to
// "<ingress>-any-host", spec.defaultBackend to "<ingress>-default-backend".
//
// The output stays typed (Output) so that a test can build Causeway's
// model from an Ingress and from its conversion and compare them.
package togateway

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/frontend/configmap"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// Defaults of Options.
const (
	DefaultGatewayClass     = "causeway"
	DefaultGatewayName      = "causeway"
	DefaultGatewayNamespace = "default"
)

// Input is what Convert reads.
type Input struct {
	Ingresses []*networkingv1.Ingress
	// ConfigMaps are every ConfigMap read: custom-headers and the
	// ConfigMap key proxy-set-headers name one of them.
	ConfigMaps []*corev1.ConfigMap
	// Controller is the ingress-nginx controller's ConfigMap (its
	// defaults apply); nil for none.
	Controller *corev1.ConfigMap
}

// Options say how to convert.
type Options struct {
	// AnnotationsPrefix is ingress-nginx's prefix; "" means
	// annotations.DefaultPrefix.
	AnnotationsPrefix string
	// GatewayClass, GatewayName and GatewayNamespace name the Gateway
	// written; "" means the defaults above.
	GatewayClass, GatewayName, GatewayNamespace string
	// IngressClasses, when not empty, are the classes converted;
	// Ingresses naming another are skipped.
	IngressClasses []string
	// WithoutClass converts the Ingresses naming no class even when
	// IngressClasses is set.
	WithoutClass bool
	// AllowInsecure writes the routes of Ingresses whose protection
	// (authentication, address lists) cannot be converted.
	AllowInsecure bool
}

// Output is the converted objects, sorted by namespace and name.
type Output struct {
	Gateways        []*gwv1.Gateway
	HTTPRoutes      []*gwv1.HTTPRoute
	GRPCRoutes      []*gwv1.GRPCRoute
	TLSRoutes       []*gwv1.TLSRoute
	ReferenceGrants []*gwv1.ReferenceGrant
}

// Convert converts the Ingresses. The result does not depend on the order
// of in's slices.
func Convert(in Input, opts Options) (Output, Report) {
	opts = withDefaults(opts)
	c := &converter{
		opts:   opts,
		cfg:    model.DefaultConfig(),
		in:     in,
		routes: map[routeKey]*route{},
		names:  map[string]bool{},

		regexHosts:    map[string]bool{},
		hostIngresses: map[string]int{},
		index:         map[pathKey][]ruleRef{},
		secrets:       map[string]tlsHost{},

		passthrough:      map[string]*gwv1.TLSRoute{},
		passthroughOwner: map[string]string{},
	}
	if in.Controller != nil {
		c.cfg, _ = configmap.Parse(in.Controller)
		c.controllerFindings()
	}
	ings := slices.Clone(in.Ingresses)
	slices.SortFunc(ings, func(a, b *networkingv1.Ingress) int {
		if d := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); d != 0 {
			return d
		}
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})

	var work []*ingressWork
	for _, ing := range ings {
		if w := c.prepare(ing); w != nil {
			work = append(work, w)
		}
	}
	// Passthrough and TLS first: whether a host has TLS decides where
	// every route of it attaches, whichever Ingress names it.
	for _, w := range work {
		if w.tr.Annotations.Canary == nil {
			c.sslPassthrough(w)
		}
	}
	for _, w := range work {
		c.tls(w)
		if w.tr.Annotations.Canary == nil && w.tr.Annotations.UseRegex {
			for _, r := range w.tr.Rules {
				c.regexHosts[r.Host] = true
			}
		}
		if w.tr.Annotations.Canary == nil {
			for _, r := range w.tr.Rules {
				c.hostIngresses[r.Host]++
			}
		}
	}
	for _, w := range work {
		if w.tr.Annotations.Canary == nil {
			c.routesOf(w)
		}
	}
	for _, w := range work {
		if w.tr.Annotations.Canary != nil {
			c.canary(w)
		}
	}
	c.works = work
	c.finish()
	return c.out, c.report()
}

func withDefaults(o Options) Options {
	o.AnnotationsPrefix = cmp.Or(o.AnnotationsPrefix, annotations.DefaultPrefix)
	o.GatewayClass = cmp.Or(o.GatewayClass, DefaultGatewayClass)
	o.GatewayName = cmp.Or(o.GatewayName, DefaultGatewayName)
	o.GatewayNamespace = cmp.Or(o.GatewayNamespace, DefaultGatewayNamespace)
	return o
}

// ControllerConfigMap picks the controller's ConfigMap among cms as
// `causeway migrate check` does: the one named namespace/name, or (name
// "") the first by namespace named defaultName.
func ControllerConfigMap(cms []*corev1.ConfigMap, namespace, name, defaultName string) *corev1.ConfigMap {
	var found *corev1.ConfigMap
	for _, cm := range cms {
		want := cm.Name == defaultName
		if name != "" {
			want = cm.Namespace == namespace && cm.Name == name
		}
		if want && (found == nil || cm.Namespace < found.Namespace) {
			found = cm
		}
	}
	return found
}

// converter holds one conversion's state.
type converter struct {
	opts Options
	cfg  model.Config
	in   Input
	out  Output

	reports []*IngressReport
	// routes are the HTTPRoutes and GRPCRoutes by Ingress and host.
	routes map[routeKey]*route
	// names are the route names taken, "namespace/name".
	names map[string]bool
	// regexHosts are the hosts in regex mode: some Ingress of the host
	// sets use-regex (or rewrite-target).
	regexHosts map[string]bool
	// hostIngresses count the rules of a host, Ingress by Ingress (a
	// canary's not counted).
	hostIngresses map[string]int
	// index finds the HTTPRoute rules of a host and path, for canaries.
	index map[pathKey][]ruleRef
	// secrets are the TLS hosts, by host.
	secrets map[string]tlsHost
	// passthrough are the TLSRoutes of the hosts passed through, and
	// passthroughOwner the Ingress ("namespace/name") of each, by host.
	passthrough      map[string]*gwv1.TLSRoute
	passthroughOwner map[string]string
	// cmFindings are about the controller's ConfigMap.
	cmFindings []Finding
	notes      []string
	// works are the Ingresses being converted.
	works []*ingressWork
}

// ingressWork is one Ingress being converted.
type ingressWork struct {
	ing *networkingv1.Ingress
	tr  *ingress.Translation
	rep *IngressReport
	// ann are its annotations under our families, by full key.
	ann map[string]annotationKey
	// handled are the full keys a rule has reported.
	handled map[string]bool
}

// annotationKey is one annotation of ours.
type annotationKey struct {
	family annotations.AnnotationFamily
	name   string
}

// className is the class an Ingress names, as migrate check reads it:
// spec.ingressClassName, else the legacy annotation.
func className(ing *networkingv1.Ingress) string {
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName
	}
	return ing.Annotations[ingress.LegacyClassAnnotation]
}

// prepare reads one Ingress: class, rejection, annotations. It returns
// nil for an Ingress not converted.
func (c *converter) prepare(ing *networkingv1.Ingress) *ingressWork {
	rep := &IngressReport{Namespace: ing.Namespace, Name: ing.Name}
	c.reports = append(c.reports, rep)
	if len(c.opts.IngressClasses) > 0 {
		class := className(ing)
		switch {
		case class == "" && !c.opts.WithoutClass:
			rep.Skipped = "it names no class (convert those with --watch-ingress-without-class)"
			return nil
		case class != "" && !slices.Contains(c.opts.IngressClasses, class):
			rep.Skipped = "its class " + class + " is not converted (--ingress-class)"
			return nil
		}
	}
	defaults := c.cfg.Defaults
	tr, _, err := ingress.Translate(ing, c.opts.AnnotationsPrefix, &defaults)
	if err != nil {
		rep.Rejected = err.Error()
		rep.Findings = append(rep.Findings, Finding{Rule: ruleRejected.ID, Input: "spec", Outcome: ruleRejected.Outcome, Message: err.Error()})
		return nil
	}
	w := &ingressWork{ing: ing, tr: tr, rep: rep, ann: map[string]annotationKey{}, handled: map[string]bool{}}
	for k := range ing.Annotations {
		if f, name, ours := annotations.Split(k, c.opts.AnnotationsPrefix, "Ingress"); ours {
			w.ann[k] = annotationKey{family: f, name: name}
		}
	}
	if len(c.opts.IngressClasses) > 0 {
		from := "spec.ingressClassName"
		if ing.Spec.IngressClassName == nil {
			from = ingress.LegacyClassAnnotation
		}
		w.find(ruleClass, from, className(ing), "")
	}
	if w.security() {
		if c.opts.AllowInsecure {
			rep.Insecure = true
			return w
		}
		rep.Refused = true
		w.rest()
		return nil
	}
	return w
}

// key is the full key of an ingress-nginx annotation.
func (c *converter) key(name string) string { return c.opts.AnnotationsPrefix + "/" + name }

// has reports whether the Ingress sets the ingress-nginx annotation name.
func (w *ingressWork) has(c *converter, name string) bool {
	_, ok := w.ing.Annotations[c.key(name)]
	return ok
}

func isFalse(v string) bool {
	b, err := model.ParseBool(v)
	return err == nil && !b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
