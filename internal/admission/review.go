// Package admission provides the validating admission webhook: it answers
// "would this Ingress (or VirtualServer, VirtualServerRoute, Policy,
// TransportServer) raise a Problem?" before the object is stored, with the
// Problems the controller itself would report.
//
// A review never runs nginx, never writes a file and never loads anything:
// it runs the pure model (build.Build) on a small snapshot made of the
// object under review and the objects it can interact with, looked up in
// indexes of the controller's current snapshot. The interactions are
// exactly the ones the model has across objects: a host (its claims, its
// server-level annotations, use-regex, canaries), its www twin and server
// aliases, the catch-all server of default backends, and the Services
// whose balancing several Ingresses set. Everything else a review needs —
// Services, EndpointSlices, Secrets, ConfigMaps, Policies — is looked up by
// the names the objects use. What an object shares and names is read
// through its front-end, as the build reads it (links.go): an Ingress's
// translation and the references each front-end lists, never raw
// annotations. So a review costs the same with ten Ingresses in
// the cluster as with ten thousand.
package admission

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/ingress"
	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
)

// Fetcher reads, straight from the API, the ConfigMaps and Secrets an
// Ingress's annotations name when the snapshot does not hold them yet
// (the kube source caches a referenced object only once a stored Ingress
// names it).
type Fetcher interface {
	Referenced(ctx context.Context, ing *networkingv1.Ingress) ([]*corev1.ConfigMap, []*corev1.Secret, error)
}

// Reviewer checks Ingresses and VirtualServers against the current
// snapshot.
type Reviewer struct {
	opts    build.Options
	fetcher Fetcher
	now     func() time.Time
	current atomic.Pointer[index]
}

// NewReviewer returns a Reviewer that builds with opts; fetcher may be nil.
func NewReviewer(opts build.Options, fetcher Fetcher) *Reviewer {
	if opts.AnnotationsPrefix == "" {
		opts.AnnotationsPrefix = annotations.DefaultPrefix
	}
	return &Reviewer{opts: opts, fetcher: fetcher, now: time.Now}
}

// Update indexes a new snapshot; reviews use it from then on. The
// controller calls it after every sync, with the snapshot it built.
func (r *Reviewer) Update(snap *source.Snapshot) {
	r.current.Store(newIndex(snap, r.opts, r.current.Load()))
}

// Synced reports whether a snapshot was indexed: before that, a review
// would miss every collision.
func (r *Reviewer) Synced() bool { return r.current.Load() != nil }

// ErrNotSynced is returned by Review before the first snapshot.
var ErrNotSynced = fmt.Errorf("the controller has not read the cluster yet")

// Review returns the Problems ing would raise, in the context of the
// current snapshot where it replaces any Ingress of the same namespace and
// name. ours is false when the Ingress belongs to another controller (then
// there is nothing to check). Problems of other objects are not returned.
func (r *Reviewer) Review(ctx context.Context, ing *networkingv1.Ingress) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !ingress.Class.IsOurs(idx.classes, ing) {
		return nil, false, nil
	}
	cand := ing.DeepCopy()
	// A created object has its UID and creation time by the time
	// validating webhooks see it; these fallbacks only matter to callers
	// that review an object never submitted.
	if cand.CreationTimestamp.IsZero() {
		cand.CreationTimestamp = metav1.NewTime(r.now())
	}
	if cand.UID == "" {
		cand.UID = types.UID("admission-review")
	}
	snap := idx.context(cand)
	if idx.meetsBalancer(cand) {
		snap = idx.whole(func(s *source.Snapshot) { s.Ingresses = replaced(s.Ingresses, cand) })
	}
	if r.fetcher != nil {
		cms, secrets, err := r.fetcher.Referenced(ctx, cand)
		if err != nil {
			return nil, true, err
		}
		snap.ConfigMaps = addMissing(snap.ConfigMaps, cms)
		snap.Secrets = addMissing(snap.Secrets, secrets)
	}
	return r.problemsOf(snap, "Ingress", cand.Namespace, cand.Name), true, nil
}

// ReviewVirtualServer returns the Problems vs would raise, in the context
// of the current snapshot where it replaces any VirtualServer of the same
// namespace and name. ours is false when spec.ingressClassName names a
// class that is not ours. Problems of other objects are not returned.
func (r *Reviewer) ReviewVirtualServer(ctx context.Context, vs *nicv1.VirtualServer) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !nic.VirtualServerClass.IsOurs(idx.classes, vs) {
		return nil, false, nil
	}
	cand := vs.DeepCopy()
	// As for Ingresses: only an object never submitted lacks these.
	if cand.CreationTimestamp.IsZero() {
		cand.CreationTimestamp = metav1.NewTime(r.now())
	}
	if cand.UID == "" {
		cand.UID = types.UID("admission-review")
	}
	snap := idx.virtualServerContext(cand)
	if idx.claimsShared(cand) {
		snap = idx.whole(func(s *source.Snapshot) { s.VirtualServers = replaced(s.VirtualServers, cand) })
	}
	return r.problemsOf(snap, "VirtualServer", cand.Namespace, cand.Name), true, nil
}

// ReviewTransportServer returns the Problems ts would raise, in the
// context of the current snapshot where it replaces any TransportServer of
// the same namespace and name. ours is false when spec.ingressClassName
// names a class that is not ours. Problems of other objects are not
// returned.
func (r *Reviewer) ReviewTransportServer(_ context.Context, ts *nicv1.TransportServer) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !nic.TransportServerClass.IsOurs(idx.classes, ts) {
		return nil, false, nil
	}
	cand := ts.DeepCopy()
	// As for Ingresses: only an object never submitted lacks these.
	if cand.CreationTimestamp.IsZero() {
		cand.CreationTimestamp = metav1.NewTime(r.now())
	}
	if cand.UID == "" {
		cand.UID = types.UID("admission-review")
	}
	return r.problemsOf(idx.transportServerContext(cand), "TransportServer", cand.Namespace, cand.Name), true, nil
}

// ReviewVirtualServerRoute returns the Problems vsr would raise: it is
// checked in the context of each VirtualServer whose routes delegate to
// it; one that no VirtualServer names is checked beside the VirtualServers
// of its host, which decide whether it is Ignored or finds none. ours is
// false for another class.
func (r *Reviewer) ReviewVirtualServerRoute(ctx context.Context, vsr *nicv1.VirtualServerRoute) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !nic.VirtualServerRouteClass.IsOurs(idx.classes, vsr) {
		return nil, false, nil
	}
	key := vsr.Namespace + "/" + vsr.Name
	// Its context is that of every host involved: the VirtualServers
	// that name it (only each host's owner delegates) and those of its
	// own host (which decide whether an unused one is Ignored), each with
	// what decides who owns the host, in one build.
	snap := &source.Snapshot{IngressClasses: idx.snap.IngressClasses}
	hosts := map[string]bool{}
	for _, vs := range idx.snap.VirtualServers {
		if (vs.Spec.Host == vsr.Spec.Host || idx.delegatesTo(vs, key)) && !hosts[vs.Spec.Host] {
			hosts[vs.Spec.Host] = true
			merge(snap, idx.virtualServerContext(vs))
		}
	}
	snap = withRoute(snap, vsr)
	if idx.balancingShared("VirtualServerRoute/"+key, vsr.Namespace, vsr.Spec.Upstreams) ||
		slices.ContainsFunc(idx.delegators[key], idx.claimsShared) {
		snap = idx.whole(func(s *source.Snapshot) { s.VirtualServerRoutes = replaced(s.VirtualServerRoutes, vsr) })
	}
	// Its own upstreams' Services and Policies, as written now.
	n := newNamed()
	idx.add(snap, n, nic.VirtualServerRouteReferences(vsr))
	idx.addReferenced(snap, n)
	return r.problemsOf(snap, "VirtualServerRoute", vsr.Namespace, vsr.Name), true, nil
}

// merge adds to dst the objects of src it lacks.
func merge(dst, src *source.Snapshot) {
	dst.Ingresses = addMissing(dst.Ingresses, src.Ingresses)
	dst.Services = addMissing(dst.Services, src.Services)
	dst.EndpointSlices = addMissing(dst.EndpointSlices, src.EndpointSlices)
	dst.Secrets = addMissing(dst.Secrets, src.Secrets)
	dst.ConfigMaps = addMissing(dst.ConfigMaps, src.ConfigMaps)
	dst.VirtualServers = addMissing(dst.VirtualServers, src.VirtualServers)
	dst.VirtualServerRoutes = addMissing(dst.VirtualServerRoutes, src.VirtualServerRoutes)
	dst.Policies = addMissing(dst.Policies, src.Policies)
	dst.TransportServers = addMissing(dst.TransportServers, src.TransportServers)
}

// withRoute puts vsr into snap in place of its namesake.
func withRoute(snap *source.Snapshot, vsr *nicv1.VirtualServerRoute) *source.Snapshot {
	for i, o := range snap.VirtualServerRoutes {
		if o.Namespace == vsr.Namespace && o.Name == vsr.Name {
			snap.VirtualServerRoutes = slices.Delete(snap.VirtualServerRoutes, i, i+1)
			break
		}
	}
	snap.VirtualServerRoutes = append(snap.VirtualServerRoutes, vsr)
	return snap
}

// delegatesTo reports whether a VirtualServer route names or selects the
// VirtualServerRoute "namespace/name".
func (x *index) delegatesTo(vs *nicv1.VirtualServer, key string) bool {
	return slices.Contains(x.delegations(vs), key)
}

// delegations are the VirtualServerRoutes, "namespace/name", that the
// routes of vs name or select.
func (x *index) delegations(vs *nicv1.VirtualServer) []string {
	var out []string
	for i := range vs.Spec.Routes {
		out = append(out, x.routeTargets(vs, &vs.Spec.Routes[i])...)
	}
	return out
}

// ReviewPolicy returns the Problems a Policy raises on its own: whether it
// is valid does not depend on anything else.
func (r *Reviewer) ReviewPolicy(_ context.Context, p *nicv1.Policy) (problems []model.Problem, ours bool, err error) {
	idx := r.current.Load()
	if idx == nil {
		return nil, false, ErrNotSynced
	}
	if !nic.PolicyClass.IsOurs(idx.classes, p) {
		return nil, false, nil
	}
	// As one replica would: the count only divides a scaled rate.
	_, problems, err = nic.TranslatePolicy(p, 1)
	if err != nil {
		problems = append(problems, model.Problem{Object: nic.PolicyRef(p), Reason: model.ReasonInvalid, Message: err.Error(), Rejected: true})
	}
	return problems, true, nil
}

// ReviewGlobalConfiguration returns the Problems gc would raise: when it
// is the one --global-configuration names, those of its listeners (name,
// protocol, port, ssl; a port that is the controller's HTTP or HTTPS port
// or another listener's), which depend on nothing else but the options;
// any other GlobalConfiguration is not read and has none. It needs no
// snapshot.
func (r *Reviewer) ReviewGlobalConfiguration(_ context.Context, gc *nicv1.GlobalConfiguration) (problems []model.Problem, ours bool, err error) {
	if gc.Namespace+"/"+gc.Name != r.opts.GlobalConfiguration {
		return nil, true, nil
	}
	snap := &source.Snapshot{GlobalConfigurations: []*nicv1.GlobalConfiguration{gc.DeepCopy()}}
	return r.problemsOf(snap, "GlobalConfiguration", gc.Namespace, gc.Name), true, nil
}

// problemsOf builds snap and returns the Problems of one object.
func (r *Reviewer) problemsOf(snap *source.Snapshot, kind, namespace, name string) (problems []model.Problem) {
	_, all := build.Build(snap, r.opts)
	for _, p := range all {
		if p.Object.Kind == kind && p.Object.Namespace == namespace && p.Object.Name == name {
			problems = append(problems, p)
		}
	}
	return problems
}

// addMissing appends the objects of more that have no namesake in have.
func addMissing[T metav1.Object](have, more []T) []T {
	for _, m := range more {
		found := false
		for _, h := range have {
			if h.GetNamespace() == m.GetNamespace() && h.GetName() == m.GetName() {
				found = true
				break
			}
		}
		if !found {
			have = append(have, m)
		}
	}
	return have
}

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

// context is the snapshot a review builds: cand, the Ingresses it can
// interact with (minus its own stored version), and the objects they all
// name.
func (x *index) context(cand *networkingv1.Ingress) *source.Snapshot {
	snap := &source.Snapshot{IngressClasses: x.snap.IngressClasses}
	seen := map[*networkingv1.Ingress]bool{}
	add := func(ing *networkingv1.Ingress) {
		if seen[ing] || (ing.Namespace == cand.Namespace && ing.Name == cand.Name) {
			return
		}
		seen[ing] = true
		snap.Ingresses = append(snap.Ingresses, ing)
	}
	// The first ring: what the candidate meets directly. Ingresses with
	// rules without a host (or a defaultBackend) meet every other: their
	// paths serve every host. Then the candidate's hosts (claims,
	// server-level annotations, regex mode, canaries), the names it adds
	// (a host of that name, an Ingress adding the same name), the Services
	// it sends to (their balancing is set once).
	var ring []*networkingv1.Ingress
	meet := func(l []*networkingv1.Ingress) {
		for _, ing := range l {
			if !seen[ing] {
				ring = append(ring, ing)
			}
			add(ing)
		}
	}
	meet(x.byHost[""])
	for h := range ownHosts(cand) {
		meet(x.byHost[h])
	}
	for n := range x.names(cand) {
		meet(x.byHost[n])
		meet(x.byName[n])
	}
	for _, s := range x.servicesOf(cand) {
		meet(x.byService[s])
	}
	// The paths of a rule without a host are copied into every host,
	// where they can collide with the host's own paths once the host is
	// in regex mode. When the host-less paths may themselves be regexes,
	// every host is in regex mode: such a candidate meets everyone (a full
	// build; real clusters have few such Ingresses).
	if hostless(cand) {
		everyone := x.mayBeRegex(cand)
		for _, ing := range x.byHost[""] {
			if hostless(ing) && x.mayBeRegex(ing) && (ing.Namespace != cand.Namespace || ing.Name != cand.Name) {
				everyone = true
			}
		}
		if everyone {
			meet(x.all)
		} else {
			for h := range x.regexHosts {
				meet(x.byHost[h])
			}
		}
	}
	// A canary inherits the cookie affinity of the main it splits, which
	// is the balancing of the main's Service, set by whichever Ingress
	// sending to it won a claim first: those Ingresses meet a canary too.
	if x.linksOf(cand).canary {
		for h := range ownHosts(cand) {
			for _, main := range x.byHost[h] {
				for _, s := range x.servicesOf(main) {
					meet(x.byService[s])
				}
			}
		}
	}
	// The second ring: whether an Ingress of the first ring wins its
	// claims and its server-level annotations (and so sets a balancing, or
	// adds a name) depends on the Ingresses of its own hosts; their
	// claims, in turn, depend on nothing further.
	for _, ing := range ring {
		for h := range ownHosts(ing) {
			for _, other := range x.byHost[h] {
				add(other)
			}
		}
	}
	snap.Ingresses = append(snap.Ingresses, cand)
	// The VirtualServers of every host an Ingress of the context names,
	// or adds as a www twin or an alias: a VirtualServer owns its host
	// against Ingresses, and its host is a host of its own. Their
	// Services are not needed: their Problems are not the candidate's.
	vsSeen := map[*nicv1.VirtualServer]bool{}
	for _, ing := range snap.Ingresses {
		hosts := ownHosts(ing)
		maps.Copy(hosts, x.names(ing))
		for h := range hosts {
			for _, v := range x.vsByHost[h] {
				if !vsSeen[v] {
					vsSeen[v] = true
					snap.VirtualServers = append(snap.VirtualServers, v)
				}
			}
			snap.TransportServers = addMissing(snap.TransportServers, x.ptByHost[h])
		}
	}

	n := newNamed()
	for _, ing := range snap.Ingresses {
		x.add(snap, n, x.linksOf(ing).refs)
	}
	x.addReferenced(snap, n)
	return snap
}

// virtualServerContext is the snapshot a VirtualServer's review builds.
// What decides a VirtualServer's Problems is itself, whether its host is
// already owned (the older VirtualServers and Ingresses of that host: an
// Ingress claims a host by its rules, on nothing but its own translation
// and the VirtualServers of the host), the Services its upstreams name,
// its TLS Secret and the ConfigMap (its http-redirect-code). A www twin or
// server alias of an Ingress that names the VirtualServer's host raises
// its Problem on the Ingress, so such Ingresses are not needed.
func (x *index) virtualServerContext(cand *nicv1.VirtualServer) *source.Snapshot {
	snap := &source.Snapshot{IngressClasses: x.snap.IngressClasses}
	host := cand.Spec.Host
	for _, v := range x.vsByHost[host] {
		if v.Namespace != cand.Namespace || v.Name != cand.Name {
			snap.VirtualServers = append(snap.VirtualServers, v)
		}
	}
	snap.VirtualServers = append(snap.VirtualServers, cand)
	if host != "" {
		// "" would be the Ingresses without a host, which a
		// VirtualServer never meets (and a VirtualServer without a host
		// is invalid).
		snap.Ingresses = slices.Clone(x.byHost[strings.ToLower(host)])
	}
	snap.TransportServers = slices.Clone(x.ptByHost[host])
	// What it names (Services, its TLS Secret, Policies with what they
	// name), and the VirtualServerRoutes it delegates to with theirs.
	n := newNamed()
	x.add(snap, n, nic.VirtualServerReferences(cand))
	for _, key := range x.delegations(cand) {
		vsr := x.vsrs[key]
		if vsr == nil || slices.Contains(snap.VirtualServerRoutes, vsr) {
			continue
		}
		snap.VirtualServerRoutes = append(snap.VirtualServerRoutes, vsr)
		// A VirtualServerRoute serves one route: the other VirtualServers
		// that name it, with what decides whether they own their hosts,
		// decide whether it is still free.
		for _, other := range x.delegators[key] {
			if other.Namespace == cand.Namespace && other.Name == cand.Name {
				continue
			}
			// (The candidate is in snap already, under its new spec.)
			snap.VirtualServers = addMissing(snap.VirtualServers, append([]*nicv1.VirtualServer{other}, x.vsByHost[other.Spec.Host]...))
			if other.Spec.Host != "" {
				snap.Ingresses = addMissing(snap.Ingresses, x.byHost[strings.ToLower(other.Spec.Host)])
			}
		}
		x.add(snap, n, nic.VirtualServerRouteReferences(vsr))
	}
	x.addReferenced(snap, n)
	return snap
}

// transportServerContext is the snapshot a TransportServer's review
// builds. What decides a TransportServer's Problems is itself, the
// GlobalConfiguration whose listeners it claims, the other TransportServers
// claiming the same listener (the oldest wins it), and the Services (with
// their EndpointSlices) its upstreams name.
func (x *index) transportServerContext(cand *nicv1.TransportServer) *source.Snapshot {
	snap := &source.Snapshot{IngressClasses: x.snap.IngressClasses}
	if x.globalConfiguration != nil {
		snap.GlobalConfigurations = []*nicv1.GlobalConfiguration{x.globalConfiguration}
	}
	for _, t := range x.tsByListener[cand.Spec.Listener.Name] {
		if t.Namespace != cand.Namespace || t.Name != cand.Name {
			snap.TransportServers = append(snap.TransportServers, t)
		}
	}
	snap.TransportServers = append(snap.TransportServers, cand)
	if nic.IsPassthroughListener(cand.Spec.Listener) && cand.Spec.Host != "" {
		// A passthrough host belongs to the oldest Ingress, VirtualServer
		// or passthrough TransportServer naming it.
		snap.Ingresses = slices.Clone(x.byHost[strings.ToLower(cand.Spec.Host)])
		snap.VirtualServers = slices.Clone(x.vsByHost[cand.Spec.Host])
	}
	n := newNamed()
	x.add(snap, n, nic.TransportServerReferences(cand))
	x.addReferenced(snap, n)
	return snap
}

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
