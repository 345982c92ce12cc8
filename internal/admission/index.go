package admission

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// index holds a snapshot's objects by the keys a review looks them up by.
type index struct {
	snap    *source.Snapshot
	opts    build.Options
	classes *class.Filter
	// byHost: Ingresses by every host their rules name ("" for rules
	// without a host and for spec.defaultBackend).
	byHost map[string][]*networkingv1.Ingress
	// byName: Ingresses by every server name they add to a host: their
	// server aliases and the www twins of their hosts.
	byName map[string][]*networkingv1.Ingress
	// regexHosts are the hosts of Ingresses that may turn them to regex
	// mode (they carry use-regex or rewrite-target, whatever the value).
	regexHosts map[string]bool
	// vsByHost: VirtualServers by host; a VirtualServer owns its host
	// against Ingresses.
	vsByHost map[string][]*nicv1.VirtualServer
	// delegators: the VirtualServers whose routes name each
	// VirtualServerRoute "namespace/name"; the first served one to ask
	// gets it.
	delegators map[string][]*nicv1.VirtualServer
	// balancers: the VirtualServers and VirtualServerRoutes
	// ("Kind/namespace/name") whose upstreams set a balancing (lb-method,
	// sessionCookie) for each Service "namespace/name"; crUsers all those
	// whose upstreams name it.
	balancers, crUsers map[string][]string
	// ptByHost: the TransportServers on the tls-passthrough listener by
	// host, which they own against Ingresses and VirtualServers.
	ptByHost map[string][]*nicv1.TransportServer
	// policies and vsrs by "namespace/name", for what VirtualServers name.
	policies map[string]*nicv1.Policy
	vsrs     map[string]*nicv1.VirtualServerRoute
	// tsByListener: TransportServers by spec.listener.name; one listener
	// belongs to one TransportServer.
	tsByListener map[string][]*nicv1.TransportServer
	// globalConfiguration is the one build.Options.GlobalConfiguration
	// names, nil when there is none.
	globalConfiguration *nicv1.GlobalConfiguration
	// all are the Ingresses of ours, links what each shares with others
	// (links.go).
	all   []*networkingv1.Ingress
	links map[*networkingv1.Ingress]*links
	// configMap is the controller's, and defaults those the build
	// translates Ingresses with.
	configMap *corev1.ConfigMap
	defaults  *model.Defaults
	// byService: Ingresses by "namespace/service" of every Service they
	// send traffic to.
	byService map[string][]*networkingv1.Ingress
	services  map[string]*corev1.Service
	slices    map[string][]*discoveryv1.EndpointSlice // by "namespace/service"
	secrets   map[string]*corev1.Secret
	maps      map[string]*corev1.ConfigMap
}

// newIndex indexes snap; prev, the index it replaces (nil for none), lends
// the links of the Ingresses that did not change.
func newIndex(snap *source.Snapshot, opts build.Options, prev *index) *index {
	x := &index{
		snap:         snap,
		opts:         opts,
		classes:      class.NewFilter(opts.Class, snap.IngressClasses),
		byHost:       map[string][]*networkingv1.Ingress{},
		byService:    map[string][]*networkingv1.Ingress{},
		byName:       map[string][]*networkingv1.Ingress{},
		regexHosts:   map[string]bool{},
		vsByHost:     map[string][]*nicv1.VirtualServer{},
		delegators:   map[string][]*nicv1.VirtualServer{},
		balancers:    map[string][]string{},
		ptByHost:     map[string][]*nicv1.TransportServer{},
		crUsers:      map[string][]string{},
		policies:     make(map[string]*nicv1.Policy, len(snap.Policies)),
		vsrs:         make(map[string]*nicv1.VirtualServerRoute, len(snap.VirtualServerRoutes)),
		tsByListener: map[string][]*nicv1.TransportServer{},
		services:     make(map[string]*corev1.Service, len(snap.Services)),
		slices:       make(map[string][]*discoveryv1.EndpointSlice, len(snap.Services)),
		secrets:      make(map[string]*corev1.Secret, len(snap.Secrets)),
		maps:         make(map[string]*corev1.ConfigMap, len(snap.ConfigMaps)),
	}
	for _, p := range snap.Policies {
		x.policies[p.Namespace+"/"+p.Name] = p
	}
	for _, r := range snap.VirtualServerRoutes {
		x.vsrs[r.Namespace+"/"+r.Name] = r
		x.addUpstreams("VirtualServerRoute/"+r.Namespace+"/"+r.Name, r.Namespace, r.Spec.Upstreams)
	}
	for _, v := range snap.VirtualServers {
		x.vsByHost[v.Spec.Host] = append(x.vsByHost[v.Spec.Host], v)
		x.addUpstreams("VirtualServer/"+v.Namespace+"/"+v.Name, v.Namespace, v.Spec.Upstreams)
		for _, key := range x.delegations(v) {
			x.delegators[key] = append(x.delegators[key], v)
		}
	}
	for _, t := range snap.TransportServers {
		x.tsByListener[t.Spec.Listener.Name] = append(x.tsByListener[t.Spec.Listener.Name], t)
		if nic.IsPassthroughListener(t.Spec.Listener) {
			x.ptByHost[t.Spec.Host] = append(x.ptByHost[t.Spec.Host], t)
		}
	}
	for _, g := range snap.GlobalConfigurations {
		if g.Namespace+"/"+g.Name == opts.GlobalConfiguration {
			x.globalConfiguration = g
		}
	}
	for _, s := range snap.Services {
		x.services[s.Namespace+"/"+s.Name] = s
	}
	for _, s := range snap.EndpointSlices {
		if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
			k := s.Namespace + "/" + svc
			x.slices[k] = append(x.slices[k], s)
		}
	}
	for _, s := range snap.Secrets {
		x.secrets[s.Namespace+"/"+s.Name] = s
	}
	for _, c := range snap.ConfigMaps {
		x.maps[c.Namespace+"/"+c.Name] = c
	}
	x.readConfig()
	for _, ing := range snap.Ingresses {
		if ingress.Class.IsOurs(x.classes, ing) {
			x.all = append(x.all, ing)
		}
	}
	x.translateAll(prev)
	for _, ing := range x.all {
		l := x.links[ing]
		for h := range ownHosts(ing) {
			x.byHost[h] = append(x.byHost[h], ing)
			if l.regex {
				x.regexHosts[h] = true
			}
		}
		for _, s := range l.services {
			x.byService[s] = append(x.byService[s], ing)
		}
		for n := range x.names(ing) {
			x.byName[n] = append(x.byName[n], ing)
		}
	}
	return x
}

func (x *index) addUpstreams(key, ns string, ups []nicv1.Upstream) {
	for _, u := range ups {
		svc := ns + "/" + u.Service
		x.crUsers[svc] = append(x.crUsers[svc], key)
		if balances(u) {
			x.balancers[svc] = append(x.balancers[svc], key)
		}
	}
}

// balances reports whether an upstream claims its Service's balancing.
func balances(u nicv1.Upstream) bool { return u.LBMethod != "" || u.SessionCookie != nil }

// balancingShared reports whether one of the upstreams of key (a
// VirtualServer or VirtualServerRoute in ns) claims the balancing of a
// Service someone else sends to. Who wins such a claim is the oldest of
// all of them that is served, which depends on their hosts: the review
// then builds the whole snapshot, as rare as it is costly.
func (x *index) balancingShared(key, ns string, ups []nicv1.Upstream) bool {
	for _, u := range ups {
		svc := ns + "/" + u.Service
		if balances(u) && (len(x.byService[svc]) > 0 || slices.ContainsFunc(x.crUsers[svc], func(k string) bool { return k != key })) {
			return true
		}
	}
	return false
}

// meetsBalancer reports whether an Ingress sends to a Service whose
// balancing a VirtualServer or VirtualServerRoute claims (see
// balancingShared).
func (x *index) meetsBalancer(ing *networkingv1.Ingress) bool {
	for _, s := range x.servicesOf(ing) {
		if len(x.balancers[s]) > 0 {
			return true
		}
	}
	return false
}

// claimsShared reports whether vs, or a VirtualServerRoute it delegates
// to, claims the balancing of a shared Service (see balancingShared).
func (x *index) claimsShared(vs *nicv1.VirtualServer) bool {
	if x.balancingShared("VirtualServer/"+vs.Namespace+"/"+vs.Name, vs.Namespace, vs.Spec.Upstreams) {
		return true
	}
	for _, key := range x.delegations(vs) {
		if r := x.vsrs[key]; r != nil && x.balancingShared("VirtualServerRoute/"+key, r.Namespace, r.Spec.Upstreams) {
			return true
		}
	}
	return false
}

// whole is the whole snapshot with the candidate in place of its
// namesake: replace puts it into the copy.
func (x *index) whole(replace func(*source.Snapshot)) *source.Snapshot {
	snap := *x.snap
	replace(&snap)
	return &snap
}

// replaced is list without the namesake of cand, and with cand.
func replaced[T metav1.Object](list []T, cand T) []T {
	out := slices.DeleteFunc(slices.Clone(list), func(o T) bool {
		return o.GetNamespace() == cand.GetNamespace() && o.GetName() == cand.GetName()
	})
	return append(out, cand)
}

// mayBeRegex reports whether an Ingress turns its hosts to regex mode.
func (x *index) mayBeRegex(ing *networkingv1.Ingress) bool { return x.linksOf(ing).regex }

// hostless reports whether an Ingress has a rule without a host.
func hostless(ing *networkingv1.Ingress) bool {
	return slices.ContainsFunc(ing.Spec.Rules, func(r networkingv1.IngressRule) bool { return r.Host == "" })
}

// ownHosts are the hosts an Ingress's rules claim.
func ownHosts(ing *networkingv1.Ingress) map[string]bool {
	hosts := map[string]bool{}
	if ing.Spec.DefaultBackend != nil {
		hosts[""] = true
	}
	for _, r := range ing.Spec.Rules {
		hosts[strings.ToLower(r.Host)] = true
	}
	return hosts
}

// names are the server names an Ingress can add to its hosts: the www
// twins of its hosts and its server aliases.
func (x *index) names(ing *networkingv1.Ingress) map[string]bool {
	out := map[string]bool{}
	for h := range ownHosts(ing) {
		if h == "" {
			continue
		}
		if t, ok := strings.CutPrefix(h, "www."); ok {
			out[t] = true
		} else {
			out["www."+h] = true
		}
	}
	for _, a := range x.linksOf(ing).aliases {
		out[a] = true
	}
	return out
}

// servicesOf are the "namespace/name" of the Services an Ingress names:
// its backends and its default-backend annotation.
func (x *index) servicesOf(ing *networkingv1.Ingress) []string { return x.linksOf(ing).services }

// routeTargets are the VirtualServerRoutes, "namespace/name", a route of
// vs names, or those of its host its routeSelector selects (in any
// namespace, as the build does).
func (x *index) routeTargets(vs *nicv1.VirtualServer, r *nicv1.Route) []string {
	switch {
	case r.Route != "":
		if !strings.Contains(r.Route, "/") {
			return []string{vs.Namespace + "/" + r.Route}
		}
		return []string{r.Route}
	case r.RouteSelector != nil:
		var out []string
		for _, vsr := range x.snap.VirtualServerRoutes {
			if vsr.Spec.Host == vs.Spec.Host && nic.SelectorSelects(r.RouteSelector, vsr.Labels) {
				out = append(out, vsr.Namespace+"/"+vsr.Name)
			}
		}
		return out
	}
	return nil
}
